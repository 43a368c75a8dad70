package rabbitmq_test

import (
	"bytes"
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/rabbitmq"
	"github.com/feedkit/feedkit/internal/testenv"
)

func TestSubscriptionReceivesWhatItsBindingsMatch(t *testing.T) {
	b := newBroker(t)
	tr := b.transport(t, b.config(t))
	r := feedtest.NewReceiverRecorder()
	sub, err := tr.Subscribe(t.Context(), []string{"*.*.live.bet_stop.#", "#.sr:match.7.-"}, r)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, sub.Close(context.Background())) })
	expectUp(t, r) // ConnectionUp comes first, once the queue consumes

	pub := b.publisher(t)
	keys := []string{
		"hi.-.live.bet_stop.1.sr:match.1.-",    // first binding
		"hi.-.pre.bet_stop.3.sr:match.2.-",     // neither
		"lo.-.pre.odds_change.3.sr:match.7.-",  // second binding
		"hi.-.live.odds_change.1.sr:match.8.-", // neither
		"hi.-.live.bet_stop.1.sr:match.7.-",    // both: delivered once
	}
	for _, k := range keys {
		require.NoError(t, pub.Publish(t.Context(), k, []byte("<x/>")))
	}
	require.NoError(t, pub.Flush(t.Context()))
	for _, k := range []string{keys[0], keys[2], keys[4]} {
		expectReceive(t, r, k)
	}
	// A marker after the rest proves nothing more is coming.
	require.NoError(t, pub.Publish(t.Context(), "hi.-.live.bet_stop.1.sr:match.99.-", []byte("<x/>")))
	expectReceive(t, r, "hi.-.live.bet_stop.1.sr:match.99.-")
	r.RequireNone(t)
	// The reading goroutine counts a delivery once the receiver has returned: Close, which
	// waits for that goroutine, makes the counts final.
	require.NoError(t, sub.Close(t.Context()))
	st := tr.Stats()
	assert.Equal(t, uint64(1), st.Connects)
	assert.Equal(t, uint64(4), st.Delivered)
	assert.Equal(t, uint64(4*len("<x/>")), st.Bytes)
	assert.Zero(t, st.Connected, "closed")
}

// TestSimulatorThroughRabbitMQ runs the whole path: simulator → RabbitMQ → transport →
// session → listener, and compares every message per match, in order.
func TestSimulatorThroughRabbitMQ(t *testing.T) {
	b := newBroker(t)
	pub := b.publisher(t)
	sim, err := feedtest.NewSimulator(pub, feedtest.SimulatorConfig{Matches: 40, Rate: feedtest.Unlimited, Seed: 3})
	require.NoError(t, err)
	rec := feedtest.NewRecorder()
	s := openSession(t, b.transport(t, b.config(t)), feed.SessionConfig{Listener: rec})

	const n = 5000
	require.NoError(t, sim.Publish(t.Context(), n))
	require.NoError(t, pub.Flush(t.Context()))
	require.NoError(t, rec.Wait(waitCtx(t), n))

	got := rec.ByEvent()
	sent := sim.EventsByMatch()
	require.Len(t, got, len(sent))
	types := map[feed.MessageType]int{}
	for event, msgs := range sent {
		var want, have []string
		for _, m := range msgs {
			want = append(want, string(feedtest.Marshal(m.Message)))
			types[m.Key.Type]++
		}
		for _, m := range got[event] {
			have = append(have, string(feedtest.Marshal(m)))
		}
		require.Equal(t, want, have, "messages of %s, in order", event)
	}
	assert.Len(t, types, 7, "every event message type went through: %v", types)
	assert.Empty(t, rec.Unparsable())
	assert.Equal(t, uint64(n), s.Stats().Events)
}

// TestReconnectAfterTheBrokerClosesTheConnection closes the session's connection from
// the broker between two batches, holds the reconnection (a fake clock) while a third
// batch is published, and checks exactly that batch is lost.
func TestReconnectAfterTheBrokerClosesTheConnection(t *testing.T) {
	b := newBroker(t)
	clk := clocktest.NewFake(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	cfg := b.config(t)
	cfg.Clock = clk
	global := feedtest.NewGlobalRecorder()
	rec := feedtest.NewRecorder()
	tr := b.transport(t, cfg)
	s := openSession(t, tr, feed.SessionConfig{Listener: rec, Global: global})
	require.Equal(t, "connection up on session 0 (all messages)", global.RequireNext(t).String())
	pub := b.publisher(t)
	publish := func(from, to int64) {
		for id := from; id < to; id++ {
			key, body := betStop(id)
			require.NoError(t, pub.Publish(t.Context(), key, body))
		}
		require.NoError(t, pub.Flush(t.Context()))
	}

	publish(1, 101)
	require.NoError(t, rec.Wait(waitCtx(t), 100))
	require.Equal(t, 1, testenv.CloseAMQPConnections(t, b.name, "feedkit test: broker closes the connection"))
	down := global.RequireNext(t).String()
	assert.Contains(t, down, "CONNECTION_FORCED", "the broker's reason reaches the listener")

	clk.BlockUntil(1) // the transport waits to reconnect
	publish(101, 151) // no queue is bound: lost, for recovery to fetch
	clk.Advance(cfg.MaxReconnectDelay + rabbitmq.DefaultMaxReconnectDelay)
	require.Equal(t, "connection up on session 0 (all messages)", global.RequireNext(t).String())
	publish(151, 251)
	require.NoError(t, rec.Wait(waitCtx(t), 200))

	var ids []int64
	for _, m := range rec.Messages() {
		ids = append(ids, m.MessageHeader().Event.ID)
	}
	want := slices.Concat(seq(1, 101), seq(151, 251))
	assert.Equal(t, want, ids, "the 50 messages of the gap are lost; none before or after")
	st := tr.Stats()
	assert.Equal(t, uint64(2), st.Connects)
	assert.Equal(t, uint64(1), st.ConnectionDrops)
	assert.LessOrEqual(t, st.AckErrors, uint64(1), "only an acknowledgement racing the close may fail")
	assert.Equal(t, uint64(1), s.Stats().ConnectionDowns)
}

func seq(from, to int64) []int64 {
	var s []int64
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

// TestReconnectMidStream closes the connection while the simulator publishes without
// pause, and shows what a real loss looks like: a run of messages around the drop is
// lost (the queue went with the connection), everything before and after arrives, in
// order per match, and no delivery tag of the old channel is ever acknowledged.
func TestReconnectMidStream(t *testing.T) {
	b := newBroker(t)
	pub := b.publisher(t)
	sim, err := feedtest.NewSimulator(wholeWrites{pub}, feedtest.SimulatorConfig{Matches: 30, Rate: 3000, Seed: 11, HistoryBytes: 1 << 30})
	require.NoError(t, err)
	global := feedtest.NewGlobalRecorder()
	rec := feedtest.NewRecorder()
	tr := b.transport(t, b.config(t))
	openSession(t, tr, feed.SessionConfig{Listener: rec, Global: global})
	require.Equal(t, "connection up on session 0 (all messages)", global.RequireNext(t).String())

	ctx, stop := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- sim.Run(ctx) }()
	require.NoError(t, rec.Wait(waitCtx(t), 500))
	require.Equal(t, 1, testenv.CloseAMQPConnections(t, b.name, "feedkit test: mid-stream"))
	assert.Contains(t, global.RequireNext(t).String(), "CONNECTION_FORCED")
	require.Equal(t, "connection up on session 0 (all messages)", global.RequireNext(t).String())
	after := rec.Len()
	require.NoError(t, rec.Wait(waitCtx(t), after+500), "consumption goes on after the reconnection")
	stop()
	require.NoError(t, <-done)
	require.NoError(t, pub.Flush(t.Context()))

	// Everything the simulator published, in publishing order.
	var sent []feedtest.Sent
	for _, m := range sim.Sent() {
		if !m.Key.Type.IsSystem() {
			sent = append(sent, m)
		}
	}
	// The last message published must arrive: wait for it, then match each match's
	// received messages against what was sent to it, in order.
	last := sent[len(sent)-1].Message
	waitForMessage(t, rec, last)
	got := rec.ByEvent()
	lost := make([]bool, len(sent))
	next := map[feed.URN]int{}
	for i, m := range sent {
		ev := m.Message.MessageHeader().Event
		k := next[ev]
		if k < len(got[ev]) && sameMessage(m.Message, got[ev][k]) {
			next[ev] = k + 1
			continue
		}
		lost[i] = true
	}
	for ev, k := range next {
		require.Equal(t, len(got[ev]), k, "every message received for %s was sent to it, in order", ev)
	}
	first, end := slices.Index(lost, true), slices.Index(lost, true)
	for i, l := range lost {
		if l {
			end = i + 1
		}
	}
	if first < 0 {
		t.Logf("no message was lost (the close fell between two messages)")
	} else {
		for i := first; i < end; i++ {
			require.True(t, lost[i], "the lost messages form one run, around the drop: message %d of %d arrived within it", i, len(sent))
		}
		t.Logf("published %d events; %d lost in one run while the connection was down (messages %d..%d), the recovery API's to fetch; the %d after it all arrived",
			len(sent), end-first, first, end-1, len(sent)-end)
	}
	st := tr.Stats()
	assert.Equal(t, uint64(1), st.ConnectionDrops, "a stale acknowledgement would have closed the new channel: a second drop")
	// An acknowledgement in flight when the broker closed the connection fails (and its
	// messages are the broker's to redeliver); no later one may.
	assert.LessOrEqual(t, st.AckErrors, uint64(1), "only an acknowledgement racing the close may fail")
}

// sameMessage reports whether a and b say the same, whenever they were received.
func sameMessage(a, b feed.Message) bool {
	return bytes.Equal(feedtest.Marshal(a), feedtest.Marshal(b))
}

// waitForMessage blocks until rec has received m.
func waitForMessage(t *testing.T, rec *feedtest.Recorder, m feed.Message) {
	t.Helper()
	ctx := waitCtx(t)
	for n := 1; ; n = rec.Len() + 1 {
		if slices.ContainsFunc(rec.Messages(), func(g feed.Message) bool { return sameMessage(m, g) }) {
			return
		}
		require.NoError(t, rec.Wait(ctx, n), "waiting for the last message published")
	}
}

// TestBadInputOnTheWire sends what a broker may carry but a session cannot read: the
// listener hears of each through OnUnparsableMessage, and the stream goes on.
func TestBadInputOnTheWire(t *testing.T) {
	b := newBroker(t)
	rec := feedtest.NewRecorder()
	// The bindings of a session take any key of eight segments; a key of another shape
	// reaches it only through a binding of its own.
	s := openSession(t, b.transport(t, b.config(t)), feed.SessionConfig{Listener: rec, MaxBodySize: 4096})
	pub := b.publisher(t)
	ctx := t.Context()
	k1, good1 := betStop(1)
	k2, good2 := betStop(2)
	k3, good3 := betStop(3)
	oversized := bytes.Repeat([]byte("x"), 8192)
	msgs := []struct {
		key  string
		body []byte
	}{
		{k1, good1},
		{"hi.-.live.bet_stop.1.sr:match.10.-", []byte("\x00\xffnot xml at all")},
		{"hi.-.live.bet_stop.1.sr:match.11.-", append([]byte(`<bet_stop event_id="sr:match:11" product="1" timestamp="1">`), oversized...)},
		{k2, good2},
		{"hi.-.live.odds_change.x.sr:match.12.-", []byte(`<odds_change event_id="sr:match:12" product="1" timestamp="1"/>`)}, // sport id not a number
		{"hi.-.live.no_such_type.1.sr:match.13.-", []byte(`<no_such_type/>`)},
		{k3, good3},
	}
	for _, m := range msgs {
		require.NoError(t, pub.Publish(ctx, m.key, m.body))
	}
	require.NoError(t, pub.Flush(ctx))
	require.NoError(t, rec.Wait(waitCtx(t), len(msgs)))

	var ids []int64
	for _, m := range rec.Messages() {
		ids = append(ids, m.MessageHeader().Event.ID)
	}
	assert.Equal(t, []int64{1, 2, 3}, ids, "the good messages around the bad ones arrive, in order")
	bad := rec.Unparsable()
	require.Len(t, bad, 4)
	assert.ErrorIs(t, bad[0].Err, feed.ErrMalformedMessage, "garbage body")
	assert.Equal(t, []byte("\x00\xffnot xml at all"), bad[0].Body, "the raw bytes are kept")
	assert.ErrorIs(t, bad[1].Err, feed.ErrBodyTooLarge, "oversized body")
	assert.Equal(t, int64(11), bad[1].Event.ID)
	var keyErr *feed.RoutingKeyError
	assert.ErrorAs(t, bad[2].Err, &keyErr, "bad sport id in the key")
	assert.ErrorAs(t, bad[3].Err, &keyErr, "unknown message type in the key")
	assert.Equal(t, "hi.-.live.no_such_type.1.sr:match.13.-", bad[3].RoutingKey)
	assert.Equal(t, uint64(len(msgs)), s.Stats().Received)
}

func TestSubscribeRefusesBadCredentialsAtOnce(t *testing.T) {
	b := newBroker(t)
	cfg := b.config(t)
	cfg.URL = strings.Replace(b.url, "guest:guest@", "guest:wrong@", 1)
	require.NotEqual(t, b.url, cfg.URL, "the test URL has guest credentials")
	tr := b.transport(t, cfg)
	_, err := tr.Subscribe(t.Context(), []string{"#"}, feedtest.NewReceiverRecorder())
	require.Error(t, err)
	assert.ErrorIs(t, err, amqp.ErrCredentials)
	assert.NotContains(t, err.Error(), "wrong", "the password is not in the error")
	assert.Zero(t, tr.Stats().Connects)

	cfg = b.config(t)
	cfg.VirtualHost = "feedkit-no-such-vhost"
	_, err = b.transport(t, cfg).Subscribe(t.Context(), []string{"#"}, feedtest.NewReceiverRecorder())
	require.Error(t, err, "a virtual host we may not use is refused at once")
}

// TestPrefetchBoundsWhatABlockedConsumerHolds blocks the receiver: the transport stops
// acknowledging, the broker stops sending once Prefetch messages are unacknowledged and
// keeps the rest in the queue, and nothing is lost when the receiver goes on.
func TestPrefetchBoundsWhatABlockedConsumerHolds(t *testing.T) {
	b := newBroker(t)
	cfg := b.config(t)
	cfg.Prefetch = 10
	r := feedtest.NewReceiverRecorder()
	r.Hold()
	subscribeAll(t, b.transport(t, cfg), r)
	pub := b.publisher(t)
	var keys []string
	for id := range int64(100) {
		key, body := betStop(id + 1)
		require.NoError(t, pub.Publish(t.Context(), key, body))
		keys = append(keys, key)
	}
	require.NoError(t, pub.Flush(t.Context()))

	vhost := b.url[strings.LastIndex(b.url, "/")+1:]
	out := testenv.RabbitMQCtl(t, "list_queues", "-p", vhost, "--silent", "messages_ready", "messages_unacknowledged")
	fields := strings.Fields(out)
	require.Len(t, fields, 2, "one queue: %q", out)
	ready, _ := strconv.Atoi(fields[0])
	unacked, _ := strconv.Atoi(fields[1])
	assert.Equal(t, 10, unacked, "the broker sent Prefetch messages ahead, no more")
	assert.Equal(t, 90, ready, "and holds the rest")

	r.Release()
	for _, k := range keys { // all of them, in order
		expectReceive(t, r, k)
	}
}

func TestPublisherReportsAMissingExchange(t *testing.T) {
	b := newBroker(t)
	p, err := rabbitmq.NewPublisher(t.Context(), rabbitmq.Config{URL: b.url, Exchange: "feedkit-missing"})
	require.NoError(t, err)
	defer func() { _ = p.Close(context.Background()) }()
	key, body := betStop(1)
	err = p.Publish(t.Context(), key, body)
	if err == nil {
		err = p.Flush(t.Context())
	}
	require.Error(t, err)
	assert.Contains(t, err.Error(), "NOT_FOUND", "the broker's reason is in the error")
	assert.Equal(t, err, p.Publish(t.Context(), key, body), "every later call fails the same way")
}

func TestCloseEndsTheSubscription(t *testing.T) {
	b := newBroker(t)
	r := feedtest.NewReceiverRecorder()
	tr := b.transport(t, b.config(t))
	sub, err := tr.Subscribe(t.Context(), []string{"#"}, r)
	require.NoError(t, err)
	expectUp(t, r)
	require.NoError(t, sub.Close(t.Context()))
	require.NoError(t, sub.Close(t.Context()), "a second Close is harmless")
	// The queue went with the connection: the vhost has none.
	vhost := b.url[strings.LastIndex(b.url, "/")+1:]
	assert.Empty(t, strings.TrimSpace(testenv.RabbitMQCtl(t, "list_queues", "-p", vhost, "--silent", "name")))
	r.RequireNone(t) // no connection change after Close
}
