package concurrent_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/internal/jsoncheck"
)

// Every Stats type of the package encodes to JSON in snake_case, every field set, and
// decodes to the same values; the tasks, keyed by recovery context, too.
func TestStatsEncodeToJSON(t *testing.T) {
	jsoncheck.RoundTrip(t, jsoncheck.Filled[concurrent.Stats]())
	jsoncheck.RoundTrip(t, jsoncheck.Filled[concurrent.PoolStats]())
	jsoncheck.RoundTrip(t, jsoncheck.Filled[concurrent.GateStats]())
	tasks := map[concurrent.RecoveryContext]concurrent.TaskCounts{
		{Producer: 1}:                jsoncheck.Filled[concurrent.TaskCounts](),
		{Producer: 3, RequestID: 42}: {Allocated: 7, Started: 6, Completed: 5, Abandoned: 1},
	}
	b := jsoncheck.RoundTrip(t, tasks)
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &m))
	assert.JSONEq(t, `{"allocated":7,"started":6,"completed":5,"abandoned":1}`, string(m["3:42"]))
	assert.Contains(t, m, "1:live")
}

func TestRecoveryContextTextForm(t *testing.T) {
	for _, c := range []struct {
		rc   concurrent.RecoveryContext
		text string
	}{{concurrent.RecoveryContext{Producer: 1}, "1:live"}, {concurrent.RecoveryContext{Producer: 3, RequestID: 42}, "3:42"}} {
		b, err := c.rc.MarshalText()
		require.NoError(t, err)
		assert.Equal(t, c.text, string(b))
		var back concurrent.RecoveryContext
		require.NoError(t, back.UnmarshalText(b))
		assert.Equal(t, c.rc, back)
	}
	for _, bad := range []string{"", "1", "x:live", "1:x", "1:0"} {
		var rc concurrent.RecoveryContext
		assert.ErrorContains(t, rc.UnmarshalText([]byte(bad)), "is not producer:request or producer:live", bad)
	}
}
