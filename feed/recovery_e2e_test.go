package feed_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// End to end on the embedded broker: the connection drops while the simulator publishes,
// the messages sent meanwhile are lost to the session, a recovery through the API client
// replays them tagged with the request id, and snapshot_complete closes it. Live and
// replayed messages together cover everything the simulator sent: nothing is lost.
func TestRecoveryReplayCoversWhatAConnectionDropLost(t *testing.T) {
	broker := newBroker(t, feedtest.BrokerOptions{})
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	sim, err := feedtest.NewSimulator(broker, feedtest.SimulatorConfig{
		Matches: 30, Rate: feedtest.Unlimited, Seed: 11, Producers: []feed.Producer{lo}})
	require.NoError(t, err)
	api := httptest.NewServer(sim.RecoveryHandler())
	t.Cleanup(api.Close)

	rec := newRecorder(0)
	global := feedtest.NewGlobalRecorder()
	snapshots := feedtest.NewSnapshotWaiter()
	node := feed.Node(3)
	openSession(t, broker, feed.SessionConfig{Listener: rec, Global: global, System: snapshots, Node: node})
	require.Equal(t, "connection up on session 0 (all messages)", global.RequireNext(t).String())

	ctx := t.Context()
	require.NoError(t, sim.Publish(ctx, 500))
	rec.waitFor(t, 500)
	broker.Disconnect(nil)
	require.Equal(t, feedtest.CallConnectionDown, global.RequireNext(t).Kind)
	require.NoError(t, sim.Publish(ctx, 300)) // lost: the session's queue is gone
	broker.Reconnect()
	require.Equal(t, "connection up on session 0 (all messages)", global.RequireNext(t).String())
	lostWhileDown := broker.Stats().LostWhileDown
	require.Equal(t, uint64(300), lostWhileDown)

	// The recovery asks for everything since the last message received before the drop.
	last := rec.messages()[499].Timestamp
	client, err := feedapi.NewClient(feedapi.Config{
		BaseURL: api.URL, AccessToken: feedtest.DefaultAccessToken, Node: node})
	require.NoError(t, err)
	const requestID = 77
	require.NoError(t, client.InitiateRecovery(ctx, lo, last, requestID))
	assert.Equal(t, int64(requestID), snapshots.RequireNext(t))
	// snapshot_complete follows the replay on the same queue; the dispatcher may still be
	// delivering the replay's last messages, so wait for all of them.
	replayed := 0
	for _, s := range sim.Sent() {
		if s.Replay && !s.Key.Type.IsSystem() {
			replayed++
		}
	}
	rec.waitFor(t, 500+replayed)

	// Timestamps have millisecond precision, so several messages of a match can share one:
	// compare counts of (event, type, timestamp), not sets.
	type id struct {
		event feed.URN
		ts    time.Time
		typ   feed.MessageType
	}
	got := map[id]int{}
	fromReplay := 0
	for _, m := range rec.messages() {
		got[id{m.Event, m.Timestamp, m.Type}]++
		if m.RequestID == requestID {
			fromReplay++
		}
	}
	sent := map[id]int{}
	for event, msgs := range sim.EventsByMatch() {
		for _, m := range msgs {
			sent[id{event, m.Message.MessageHeader().Timestamp, m.Key.Type}]++
		}
	}
	for k, n := range sent {
		assert.GreaterOrEqual(t, got[k], n, "%s %s at %v: sent %d, received %d", k.event, k.typ, k.ts, n, got[k])
	}
	assert.GreaterOrEqual(t, fromReplay, 300, "the replay carried at least what the drop lost")
	reqs := sim.RecoveryRequests()
	require.Len(t, reqs, 1)
	assert.Equal(t, node, reqs[0].Node)
}
