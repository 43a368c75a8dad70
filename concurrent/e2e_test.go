package concurrent_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// End to end on the embedded broker with the simulator: a session whose dispatcher is the
// concurrent Dispatcher delivers every event, each match's in the order it was sent,
// on several workers, and tracks every task.
func TestE2EConcurrentListenerDeliversEveryEventInOrderPerMatch(t *testing.T) {
	ctx := e2eContext(t)
	broker := e2eBroker(t)
	sim, err := feedtest.NewSimulator(broker, feedtest.SimulatorConfig{Matches: 200, Rate: feedtest.Unlimited, Seed: 7})
	require.NoError(t, err)
	const n = 20000
	rec := feedtest.NewRecorder()
	// The first call waits until a second one has begun: two calls at once are on two
	// workers (a match is on one worker at a time), so more than one worker does work
	// however the machine schedules them.
	var calls atomic.Int32
	second := make(chan struct{})
	rec.Hook = func(feed.Message) error {
		if calls.Add(1) == 2 {
			close(second)
		}
		<-second
		return nil
	}
	rig := e2eStart(t, broker, rec, feedtest.NewGlobalRecorder(), feed.SessionConfig{})
	assert.Equal(t, "connection up on session 0 (all messages)", rig.customer.RequireNext(t).String(), "the connection news passes through the StatusGate")

	require.NoError(t, sim.Publish(ctx, n))
	require.NoError(t, rec.Wait(ctx, n))

	unstamped := 0
	for _, m := range rec.Messages() {
		if m.MessageHeader().ReceivedAt.IsZero() {
			unstamped++
		}
	}
	assert.Zero(t, unstamped, "the session stamps every message with ReceivedAt")
	sent := sim.EventsByMatch()
	require.GreaterOrEqual(t, len(sent), 200, "the traffic spans at least the matches running at once")
	got := e2eReceivedByMatch(rec)
	require.Len(t, got, len(sent), "every match that was sent to was received")
	types := map[feed.MessageType]int{}
	for event, msgs := range sent {
		for _, m := range msgs {
			types[m.Key.Type]++
		}
		e2eRequireSameMessages(t, msgs, got[event], "messages of %s, in order", event)
	}
	assert.Len(t, types, 7, "the simulator sent every event message type: %v", types)
	for _, typ := range []feed.MessageType{feed.MessageOddsChange, feed.MessageBetStop, feed.MessageBetSettlement,
		feed.MessageRollbackBetSettlement, feed.MessageBetCancel, feed.MessageRollbackBetCancel, feed.MessageFixtureChange} {
		assert.Positive(t, types[typ], "%s sent and received", typ)
	}
	assert.Empty(t, rec.Unparsable())

	// Closing the session closes its dispatcher, which returns once every worker is done:
	// the counters are final.
	require.NoError(t, rig.session.Close(ctx))
	st := rig.odds.Stats()
	assert.Equal(t, uint64(n), st.Dispatched)
	assert.Equal(t, st.Dispatched, st.Completed, "every task dispatched completed")
	assert.Zero(t, st.Queued)
	assert.Zero(t, st.Running)
	assert.Zero(t, st.Matches)
	assert.Zero(t, st.Unparsable+st.Failed+st.Panicked+st.Abandoned)
	require.Len(t, st.Workers, 8)
	busy := 0
	var total uint64
	for _, done := range st.Workers {
		total += done
		if done > 0 {
			busy++
		}
	}
	assert.Equal(t, st.Completed, total)
	assert.Greater(t, busy, 1, "more than one worker did work: %v", st.Workers)
	assert.Equal(t, uint64(n), rig.session.Stats().Events)

	// Every task was tracked under the live context of its producer, and none is pending.
	snap := rig.tracker.Snapshot()
	var allocated uint64
	for rc, c := range snap {
		assert.Zero(t, rc.RequestID, "live traffic only: %s", rc)
		assert.Equal(t, c.Allocated, c.Started, "%s", rc)
		assert.Equal(t, c.Allocated, c.Completed, "%s", rc)
		assert.Zero(t, c.Abandoned, "%s", rc)
		assert.Zero(t, c.Pending(), "%s", rc)
		allocated += c.Allocated
	}
	assert.Equal(t, uint64(n), allocated)
	assert.Len(t, snap, 2, "the simulator's two producers: %v", snap)
	require.Empty(t, rig.errs.all(), "errors reported")
}

// A match whose listener call stalls holds one worker: the messages of every other match
// keep arriving meanwhile, and once it is released its own arrive, in order.
func TestE2EStalledMatchDelaysNoOtherMatch(t *testing.T) {
	ctx := e2eContext(t)
	broker := e2eBroker(t)
	sim, err := feedtest.NewSimulator(broker, feedtest.SimulatorConfig{Matches: 200, Rate: feedtest.Unlimited, Seed: 21})
	require.NoError(t, err)
	const n = 5000

	// The first match the listener hears of stalls: each of its calls waits for release.
	var (
		mu      sync.Mutex
		stalled feed.URN
	)
	started, release := make(chan struct{}), make(chan struct{})
	var releaseOnce sync.Once
	rec := feedtest.NewRecorder()
	rec.Hook = func(m feed.Message) error {
		event := m.MessageHeader().Event
		mu.Lock()
		first := stalled.IsZero()
		if first {
			stalled = event
		}
		stall := event == stalled
		mu.Unlock()
		if first {
			close(started)
		}
		if stall {
			<-release
		}
		return nil
	}
	rig := e2eStart(t, broker, rec, feedtest.NewGlobalRecorder(), feed.SessionConfig{})
	// Registered after the session's cleanup, so it runs first: a failing test does not leave
	// the session's Close waiting on the stalled call.
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })

	require.NoError(t, sim.Publish(ctx, n))
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("the listener was never called")
	}
	mu.Lock()
	slow := stalled
	mu.Unlock()
	sent := sim.EventsByMatch()
	require.Contains(t, sent, slow)
	require.Greater(t, len(sent[slow]), 1, "the stalled match has messages queued behind its first")

	// Everything but the stalled match arrives while it is stalled.
	require.NoError(t, rec.Wait(ctx, n-len(sent[slow])), "the other matches' messages, with %s stalled", slow)
	got := e2eReceivedByMatch(rec)
	assert.Empty(t, got[slow], "nothing of the stalled match was recorded yet")
	for event, msgs := range sent {
		if event != slow {
			e2eRequireSameMessages(t, msgs, got[event], "messages of %s, in order, while %s is stalled", event, slow)
		}
	}
	st := rig.odds.Stats()
	assert.GreaterOrEqual(t, st.Running, 1, "the stalled call is still running")
	assert.GreaterOrEqual(t, st.Matches, 1, "the stalled match still has its worker")
	assert.Less(t, st.Completed, uint64(n))

	releaseOnce.Do(func() { close(release) })
	require.NoError(t, rec.Wait(ctx, n))
	got = e2eReceivedByMatch(rec)
	require.Len(t, got, len(sent))
	for event, msgs := range sent {
		e2eRequireSameMessages(t, msgs, got[event], "messages of %s, in order", event)
	}

	require.NoError(t, rig.session.Close(ctx))
	st = rig.odds.Stats()
	assert.Equal(t, uint64(n), st.Dispatched)
	assert.Equal(t, st.Dispatched, st.Completed)
	assert.Zero(t, st.Queued)
	require.Empty(t, rig.errs.all(), "errors reported")
}

// A recovery replay on the embedded broker: the connection drops, a recovery through the
// simulator's API replays what was lost, tagged with the request id, and every replayed
// message is tracked under {producer, request id}. The producer's up, sent to the
// StatusGate after snapshot_complete, is held back while the customer's listener
// is still busy with the replay, and reaches the customer only once that context has no
// pending task and every replayed message has been recorded.
func TestE2EProducerUpWaitsForTheRecoveryReplay(t *testing.T) {
	ctx := e2eContext(t)
	broker := e2eBroker(t)
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	sim, err := feedtest.NewSimulator(broker, feedtest.SimulatorConfig{
		Matches: 30, Rate: feedtest.Unlimited, Seed: 11, Producers: []feed.Producer{lo}})
	require.NoError(t, err)
	api := httptest.NewServer(sim.RecoveryHandler())
	t.Cleanup(api.Close)

	const requestID = 77
	recovery := concurrent.RecoveryContext{Producer: lo.ID, RequestID: requestID}
	live := concurrent.RecoveryContext{Producer: lo.ID}

	// The customer's listener holds every replayed message until the gate opens, so the
	// replay is certainly still being processed when the up arrives.
	gate := make(chan struct{})
	var gateOnce sync.Once
	rec := feedtest.NewRecorder()
	rec.Hook = func(m feed.Message) error {
		if m.MessageHeader().RequestID == requestID {
			<-gate
		}
		return nil
	}
	snapshots := feedtest.NewSnapshotWaiter()
	node := feed.Node(3)
	// What the customer sees when the up reaches it. The test sends the up once rig is
	// set.
	customer := feedtest.NewGlobalRecorder()
	var rig *e2eRig
	customer.Hook = func(_ context.Context, c feedtest.GlobalCall) string {
		if c.Kind != feedtest.CallProducerStatus || !c.Status.Reason.IsUp() {
			return ""
		}
		return fmt.Sprintf("pending %d, received %d", rig.tracker.Pending(recovery), rec.Len())
	}
	rig = e2eStart(t, broker, rec, customer, feed.SessionConfig{System: snapshots, Node: node})
	t.Cleanup(func() { gateOnce.Do(func() { close(gate) }) })
	require.Equal(t, "connection up on session 0 (all messages)", rig.customer.RequireNext(t).String())

	require.NoError(t, sim.Publish(ctx, 500))
	require.NoError(t, rec.Wait(ctx, 500))
	broker.Disconnect(nil)
	require.Equal(t, feedtest.CallConnectionDown, rig.customer.RequireNext(t).Kind)
	require.NoError(t, sim.Publish(ctx, 300)) // lost: the session's queue is gone
	broker.Reconnect()
	require.Equal(t, "connection up on session 0 (all messages)", rig.customer.RequireNext(t).String())
	require.Equal(t, uint64(300), broker.Stats().LostWhileDown)

	// The recovery manager's part, played by the test: announce the recovery, then ask the
	// API for everything since the last message received (the latest: with the matches in
	// parallel, the last to arrive need not be the last sent).
	var last time.Time
	for _, m := range rec.Messages() {
		if ts := m.MessageHeader().Timestamp; ts.After(last) {
			last = ts
		}
	}
	rig.global.OnRecoveryInitiated(ctx, feed.RecoveryInitiated{Producer: lo.ID, RequestID: requestID, After: last})
	initiated := rig.customer.RequireNext(t)
	require.Equal(t, feedtest.CallRecoveryInitiated, initiated.Kind, initiated.String())
	require.Equal(t, int64(requestID), initiated.Recovery.RequestID)
	client, err := feedapi.NewClient(feedapi.Config{
		BaseURL: api.URL, AccessToken: feedtest.DefaultAccessToken, Node: node})
	require.NoError(t, err)
	require.NoError(t, client.InitiateRecovery(ctx, lo, last, requestID))
	id, err := snapshots.Next(ctx)
	require.NoError(t, err, "no snapshot_complete")
	require.Equal(t, int64(requestID), id)

	// snapshot_complete follows the replay on the session's queue, so every replayed message
	// has been dispatched, and tracked under the recovery's context; none has completed.
	replay := map[feed.URN][]feedtest.Sent{}
	replayed := 0
	for _, s := range sim.Sent() {
		if s.Replay && !s.Key.Type.IsSystem() {
			replay[s.Key.Event] = append(replay[s.Key.Event], s)
			replayed++
		}
	}
	require.GreaterOrEqual(t, replayed, 300, "the replay carries at least what the drop lost")
	c := rig.tracker.Counts(recovery)
	assert.Equal(t, uint64(replayed), c.Allocated, "every replayed message is a task of %s", recovery)
	assert.Zero(t, c.Completed, "the listener holds the replay")
	assert.Equal(t, replayed, rig.tracker.Pending(recovery))
	assert.Equal(t, uint64(500), rig.tracker.Counts(live).Allocated, "the live messages are tracked apart")

	// The producer is up as far as the feed goes; the customer must not hear of it yet.
	rig.global.OnProducerStatusChange(ctx, feed.ProducerStatus{Producer: lo.ID, Reason: feed.FirstRecoveryCompleted})
	gs := rig.global.Stats()
	assert.Equal(t, 1, gs.Held, "the up is held back")
	assert.Equal(t, uint64(1), gs.Deferred)
	rig.customer.RequireNone(t) // the customer hears nothing while the replay is pending

	gateOnce.Do(func() { close(gate) })
	assert.Equal(t, fmt.Sprintf("producer 1 up (FirstRecoveryCompleted): pending 0, received %d", 500+replayed),
		rig.customer.RequireNext(t).String(), "the up arrives once the replay is done, and not before")
	c = rig.tracker.Counts(recovery)
	assert.Equal(t, uint64(replayed), c.Allocated)
	assert.Equal(t, uint64(replayed), c.Started)
	assert.Equal(t, uint64(replayed), c.Completed)
	assert.Zero(t, c.Abandoned)
	gs = rig.global.Stats()
	assert.Zero(t, gs.Held)
	assert.Equal(t, uint64(1), gs.Released)

	// What the customer received of the replay, per match, is what the simulator replayed,
	// in order; the live messages are the 500 sent before the drop.
	var fromReplay, fromLive []feed.Message
	for _, m := range rec.Messages() {
		if m.MessageHeader().RequestID == requestID {
			fromReplay = append(fromReplay, m)
		} else {
			fromLive = append(fromLive, m)
		}
	}
	require.Len(t, fromReplay, replayed)
	require.Len(t, fromLive, 500)
	gotReplay := e2eByMatch(fromReplay)
	require.Len(t, gotReplay, len(replay))
	for event, msgs := range replay {
		e2eRequireSameMessages(t, msgs, gotReplay[event], "replayed messages of %s, in order", event)
	}
	var before []feedtest.Sent
	for _, s := range sim.Sent() {
		if !s.Replay && !s.Key.Type.IsSystem() && len(before) < 500 {
			before = append(before, s)
		}
	}
	gotLive := e2eByMatch(fromLive)
	for event, msgs := range e2eSentByMatch(before) {
		e2eRequireSameMessages(t, msgs, gotLive[event], "live messages of %s, in order", event)
	}
	require.Empty(t, rig.errs.all(), "errors reported")
}

// e2eTimeout bounds each end-to-end test: a hang is a bug, not slowness.
const e2eTimeout = 60 * time.Second

func e2eContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), e2eTimeout)
	t.Cleanup(cancel)
	return ctx
}

func e2eBroker(t *testing.T) *feedtest.Broker {
	b := feedtest.NewBroker(feedtest.BrokerOptions{})
	t.Cleanup(b.Close)
	return b
}

// e2eRig is a session on the broker whose dispatcher is a concurrent Dispatcher
// around the customer's listener, and whose global listener is a StatusGate
// around a feedtest.GlobalRecorder, both sharing one tracker.
type e2eRig struct {
	tracker  *concurrent.TaskLifecycleTracker
	odds     *concurrent.Dispatcher
	global   *concurrent.StatusGate
	customer *feedtest.GlobalRecorder
	session  *feed.Session
	errs     *errorLog
}

// e2eStart opens a session with cfg, its Dispatcher and Global set to concurrent listeners
// (8 workers) around l and customer.
func e2eStart(t *testing.T, tr feed.Transport, l feed.OddsFeedListener, customer *feedtest.GlobalRecorder, cfg feed.SessionConfig) *e2eRig {
	t.Helper()
	r := &e2eRig{
		tracker:  concurrent.NewTaskLifecycleTracker(),
		customer: customer,
		errs:     &errorLog{},
	}
	var err error
	r.odds, err = concurrent.NewDispatcher(l, r.tracker, concurrent.Config{Threads: 8, OnError: r.errs.add})
	require.NoError(t, err)
	r.global, err = concurrent.NewStatusGate(r.customer, r.tracker, concurrent.GateConfig{OnError: r.errs.add})
	require.NoError(t, err)
	// Cleanups run last first: the session (and with it the Dispatcher), then the
	// StatusGate, which the session does not close.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
		defer cancel()
		assert.NoError(t, r.global.Close(ctx))
	})
	cfg.Dispatcher, cfg.Global, cfg.OnError = r.odds, r.global, r.errs.add
	r.session, err = feed.NewSession(tr, cfg)
	require.NoError(t, err)
	require.NoError(t, r.session.Open(t.Context()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
		defer cancel()
		assert.NoError(t, r.session.Close(ctx))
	})
	return r
}

// e2eReceivedByMatch returns the messages the recorder received, per match in arrival
// order, with ReceivedAt (which the session sets) cleared so that they compare equal to
// what the simulator sent.
func e2eReceivedByMatch(rec *feedtest.Recorder) map[feed.URN][]feed.Message {
	by := rec.ByEvent()
	for _, msgs := range by {
		for _, m := range msgs {
			m.MessageHeader().ReceivedAt = time.Time{}
		}
	}
	return by
}

// e2eByMatch groups msgs by event, in order, clearing their ReceivedAt.
func e2eByMatch(msgs []feed.Message) map[feed.URN][]feed.Message {
	by := map[feed.URN][]feed.Message{}
	for _, m := range msgs {
		h := m.MessageHeader()
		h.ReceivedAt = time.Time{}
		by[h.Event] = append(by[h.Event], m)
	}
	return by
}

func e2eSentByMatch(sent []feedtest.Sent) map[feed.URN][]feedtest.Sent {
	by := map[feed.URN][]feedtest.Sent{}
	for _, s := range sent {
		by[s.Key.Event] = append(by[s.Key.Event], s)
	}
	return by
}

// e2eRequireSameMessages compares whole messages, not just timestamps: several messages of
// a match can share a millisecond, and a swap among them must not go unnoticed.
func e2eRequireSameMessages(t *testing.T, sent []feedtest.Sent, got []feed.Message, msgAndArgs ...any) {
	t.Helper()
	want := make([]feed.Message, len(sent))
	for i, s := range sent {
		want[i] = s.Message
	}
	require.Len(t, got, len(want), msgAndArgs...)
	require.Equal(t, want, got, msgAndArgs...)
}
