package rabbitmq_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed/rabbitmq"
	"github.com/feedkit/feedkit/internal/jsoncheck"
)

// The transport's counters encode to JSON in snake_case, every field set, the time of
// the last error in RFC 3339, and decode to the same values; with no error, its fields
// are left out.
func TestStatsEncodeToJSON(t *testing.T) {
	st := jsoncheck.Filled[rabbitmq.Stats]()
	b := jsoncheck.RoundTrip(t, st)
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &m))
	assert.JSONEq(t, `"`+st.LastErrorAt.Format(time.RFC3339)+`"`, string(m["last_error_at"]))
	b, err := json.Marshal(rabbitmq.Stats{Connected: 1, Connects: 1})
	require.NoError(t, err)
	assert.JSONEq(t, `{"connected":1,"connects":1,"reconnect_attempts":0,"failed_attempts":0,"connection_drops":0,
		"delivered":0,"bytes":0,"ack_errors":0,"blocked":0}`, string(b))
}
