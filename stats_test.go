package feedkit_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/internal/jsoncheck"
	"github.com/feedkit/feedkit/recovery"
)

// Stats encodes to JSON in snake_case, every field of every section set, and decodes to
// the same values: the tasks keyed by recovery context included, whose struct key had no
// text form and failed json.Marshal.
func TestStatsEncodeToJSON(t *testing.T) {
	st := jsoncheck.Filled[feedkit.Stats]()
	st.Producers[0].Hold.Event = feed.URN{Prefix: "sr", Type: "match", ID: 1}
	st.Producers[0].Hold.Type = feed.MessageOddsChange
	st.Producers[0].RecoveryNodeID = feed.NodeID{}
	jsoncheck.RoundTrip(t, st)
}

// The Stats of a running SDK, with tasks and a producer state, encode: what a /stats
// handler serves.
func TestStatsOfARunningSDKEncode(t *testing.T) {
	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	t.Cleanup(broker.Close)
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	sim, err := feedtest.NewSimulator(broker, feedtest.SimulatorConfig{Producers: []feed.Producer{lo}})
	require.NoError(t, err)
	rec := feedtest.NewRecorder()
	sdk, err := feedkit.New(feedkit.Config{Transport: broker, Concurrent: &concurrent.Config{Threads: 2},
		Recovery: recovery.Config{Producers: []feed.Producer{lo}, Disabled: true}})
	require.NoError(t, err)
	require.NoError(t, sdk.AddSession(feed.AllMessages, rec))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	require.NoError(t, sdk.Open(ctx))
	t.Cleanup(func() { require.NoError(t, sdk.Close(context.Background())) })
	require.NoError(t, sim.Publish(ctx, 5))
	require.NoError(t, rec.Wait(ctx, 5))
	// The recorder has the messages while their calls are still returning: wait for the
	// tasks to complete, as an operator's test would.
	require.NoError(t, sdk.Flush(ctx))

	b, err := json.Marshal(sdk.Stats())
	require.NoError(t, err)
	var got struct {
		Tasks     map[string]concurrent.TaskCounts `json:"tasks"`
		Producers []map[string]any                 `json:"producers"`
		Delivery  []map[string]json.RawMessage     `json:"delivery"`
	}
	require.NoError(t, json.Unmarshal(b, &got), "%s", b)
	assert.Equal(t, uint64(5), got.Tasks["1:live"].Completed, "%s", b)
	require.Len(t, got.Producers, 1)
	assert.Equal(t, float64(1), got.Producers[0]["producer"])
	assert.Equal(t, "disconnected", got.Producers[0]["state"])
	require.Len(t, got.Delivery, 1)
	assert.Contains(t, got.Delivery[0], "concurrent")
	assert.NotContains(t, string(b), "Producer", "no Go field name")
}
