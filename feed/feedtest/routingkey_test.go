package feedtest_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
)

func producer(t *testing.T, id int) feed.Producer {
	t.Helper()
	p, ok := feed.LookupProducer(feed.DefaultProducers(), id)
	require.True(t, ok)
	return p
}

// KeyFor keys a message as the feed does: by the type, the event, the producer's scope
// and the sport; system messages get the system key.
func TestKeyForKeysAsTheFeed(t *testing.T) {
	match := feed.MustParseURN("sr:match:1234")
	h := feed.Header{Producer: 1, Event: match, Timestamp: time.UnixMilli(1764152400000).UTC()}
	lo, ctrl, vf := producer(t, 1), producer(t, 3), producer(t, 6)
	cases := []struct {
		m    feed.Message
		p    feed.Producer
		want string
	}{
		{&feed.OddsChange{Header: h}, lo, "hi.-.live.odds_change.1.sr:match.1234.-"},
		{&feed.BetStop{Header: h}, lo, "hi.-.live.bet_stop.1.sr:match.1234.-"},
		{&feed.BetSettlement{Header: h}, lo, "lo.-.live.bet_settlement.1.sr:match.1234.-"},
		{&feed.OddsChange{Header: h}, ctrl, "lo.pre.-.odds_change.1.sr:match.1234.-"},
		{&feed.BetCancel{Header: h}, ctrl, "lo.pre.-.bet_cancel.1.sr:match.1234.-"},
		{&feed.OddsChange{Header: h}, vf, "hi.virt.live.odds_change.1.sr:match.1234.-"},
		{&feed.Alive{Header: feed.Header{Producer: 1}}, lo, "-.-.-.alive.-.-.-.-"},
		{&feed.SnapshotComplete{Header: feed.Header{Producer: 1, RequestID: 9}}, lo, "-.-.-.snapshot_complete.-.-.-.-"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, feedtest.KeyFor(c.m, c.p, 1).String(), "%T from %s", c.m, c.p.Name)
	}
}

// The simulator's keys are KeyFor's: every message it publishes, decoded, gets back the
// key it was published with.
func TestKeyForAgreesWithTheSimulator(t *testing.T) {
	pub := &keys{}
	sim, err := feedtest.NewSimulator(pub, feedtest.SimulatorConfig{Matches: 20, Rate: feedtest.Unlimited, Producers: []feed.Producer{producer(t, 1), producer(t, 3), producer(t, 6)}})
	require.NoError(t, err)
	require.NoError(t, sim.Publish(t.Context(), 500))
	byID := map[int]feed.Producer{}
	for _, p := range sim.Producers() {
		byID[p.ID] = p
	}
	require.Len(t, pub.sent, 500)
	for _, s := range pub.sent {
		k, err := feed.ParseRoutingKey(s.key)
		require.NoError(t, err)
		m, err := feed.Decode(k.Type, s.body)
		require.NoError(t, err)
		assert.Equal(t, s.key, feedtest.KeyFor(m, byID[m.MessageHeader().Producer], k.SportID).String())
	}
}

// A session keeps the messages its interest asks for: a live-only session gets what
// KeyFor keys for the live producer, and not the prematch producer's.
func TestKeyForRoutesToTheSessionsInterest(t *testing.T) {
	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	t.Cleanup(broker.Close)
	rec := feedtest.NewRecorder()
	session, err := feed.NewSession(broker, feed.SessionConfig{Interest: feed.LiveMessagesOnly, Listener: rec})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a guard against a hang
	defer cancel()
	require.NoError(t, session.Open(ctx))
	t.Cleanup(func() { _ = session.Close(context.Background()) })
	stamp := time.UnixMilli(1764152400000).UTC()
	pre := &feed.BetStop{Header: feed.Header{Producer: 3, Event: feed.MustParseURN("sr:match:1"), Timestamp: stamp}}
	live := &feed.BetStop{Header: feed.Header{Producer: 1, Event: feed.MustParseURN("sr:match:2"), Timestamp: stamp}}
	require.NoError(t, broker.Publish(ctx, feedtest.KeyFor(pre, producer(t, 3), 1).String(), feedtest.Marshal(pre)))
	require.NoError(t, broker.Publish(ctx, feedtest.KeyFor(live, producer(t, 1), 1).String(), feedtest.Marshal(live)))
	require.NoError(t, rec.Wait(ctx, 1))
	require.NoError(t, session.Close(ctx)) // delivers what it holds: nothing else may come
	require.Len(t, rec.Messages(), 1)
	got := rec.Messages()[0].MessageHeader()
	assert.Equal(t, live.Event, got.Event)
	assert.Equal(t, 1, got.Producer)
	assert.Equal(t, uint64(1), broker.Stats().Unrouted, "the prematch message reached no queue")
}

// keys is a Publisher that keeps what it is given.
type keys struct {
	mu   sync.Mutex
	sent []struct {
		key  string
		body []byte
	}
}

func (k *keys) Publish(_ context.Context, key string, body []byte) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.sent = append(k.sent, struct {
		key  string
		body []byte
	}{key, append([]byte(nil), body...)})
	return nil
}
