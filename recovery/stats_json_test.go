package recovery_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/internal/jsoncheck"
	"github.com/feedkit/feedkit/recovery"
)

// The manager's counters and producer states encode to JSON in snake_case, every field
// set, and decode to the same values.
func TestStatsEncodeToJSON(t *testing.T) {
	jsoncheck.RoundTrip(t, jsoncheck.Filled[recovery.Stats]())

	ps := jsoncheck.Filled[recovery.ProducerState]()
	ps.Hold.Event = feed.URN{Prefix: "sr", Type: "match", ID: 42}
	ps.Hold.Type = feed.MessageBetSettlement
	ps.RecoveryNodeID = feed.NodeID{}
	ps.ClockDrift = 1500 * time.Millisecond
	b := jsoncheck.RoundTrip(t, ps)
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &m))
	// The record's fields and the state's, side by side in one style.
	for _, k := range []string{"producer", "state", "last_subscribed_at", "up", "recovery_pending", "retry_at", "hold"} {
		assert.Contains(t, m, k)
	}
	assert.JSONEq(t, `1500000000`, string(m["clock_drift_ns"]))
	assert.JSONEq(t, `"`+ps.LastSubscribedAt.Format(time.RFC3339)+`"`, string(m["last_subscribed_at"]), "RFC 3339")
	assert.Contains(t, string(m["hold"]), `"event":"sr:match:42","type":"bet_settlement"`)
}
