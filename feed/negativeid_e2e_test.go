package feed_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// A match with a negative id, as the feed gives some, goes the way of any other: its
// messages pass a SpecifiedMatchesOnly session's bindings, decode, reach the listener with
// the id intact, and an event recovery for it is requested through the API (the URN in the
// URL path), accepted, and closed by its snapshot_complete.
func TestNegativeEventIDEndToEnd(t *testing.T) {
	broker := newBroker(t, feedtest.BrokerOptions{})
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	sim, err := feedtest.NewSimulator(broker, feedtest.SimulatorConfig{Matches: 1, Rate: feedtest.Unlimited, Seed: 3, Producers: []feed.Producer{lo}})
	require.NoError(t, err)
	api := sim.NewRecoveryServer()
	t.Cleanup(api.Close)

	negative := feed.MustParseURN("sr:match:-1")
	other := feed.MustParseURN("sr:match:1")
	rec := newRecorder(0)
	snapshots := feedtest.NewSnapshotWaiter()
	node := feed.Node(-4)
	openSession(t, broker, feed.SessionConfig{Listener: rec, System: snapshots, Node: node,
		Interest: feed.SpecifiedMatchesOnly(negative)})

	ctx := t.Context()
	stamp := time.UnixMilli(1764159600000).UTC()
	publish := func(event feed.URN, odds float64) {
		t.Helper()
		m := &feed.OddsChange{Header: feed.Header{Producer: lo.ID, Event: event, Timestamp: stamp},
			Markets: []feed.OddsMarket{{ID: 1, Status: feed.MarketActive,
				Outcomes: []feed.OddsOutcome{{ID: "1", Odds: odds, HasOdds: true}}}}}
		key := feedtest.KeyFor(m, lo, 1)
		require.NoError(t, broker.Publish(ctx, key.String(), feedtest.Marshal(m)))
	}
	// The queue delivers in order: once the second message is in, the first would have
	// been too had the bindings let it through.
	publish(other, 2.5)
	publish(negative, 1.5)
	rec.waitFor(t, 1)
	got := rec.Messages()
	require.Len(t, got, 1)
	oc, ok := got[0].(*feed.OddsChange)
	require.True(t, ok, "%T", got[0])
	assert.Equal(t, negative, oc.Event)
	require.Len(t, oc.Markets, 1)
	assert.Equal(t, 1.5, oc.Markets[0].Outcomes[0].Odds)

	client, err := feedapi.NewClient(feedapi.Config{
		BaseURL: api.URL, AccessToken: feedtest.DefaultAccessToken, Node: node})
	require.NoError(t, err)
	const requestID = 41
	require.NoError(t, client.InitiateEventRecovery(ctx, lo, negative, requestID))
	assert.Equal(t, int64(requestID), snapshots.RequireNext(t))
	reqs := sim.RecoveryRequests()
	require.Len(t, reqs, 1)
	assert.Equal(t, negative, reqs[0].Event)
	assert.Equal(t, node, reqs[0].Node)
}
