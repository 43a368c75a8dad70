package feedkit_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/recovery"
)

// recordingForwarder is a Forwarder that records every message it is handed, in order,
// and finishes the tickets of its events only when the test says.
type recordingForwarder struct {
	stream *concurrent.Stream

	mu        sync.Mutex
	got       []*forwarded
	closed    bool
	abandoned int
	downs     int
}

// forwarded is one message a recordingForwarder was handed.
type forwarded struct {
	system    bool
	key       string
	body      []byte
	requestID int64
	ticket    concurrent.Ticket // events only
	done      bool              // its ticket is finished
}

func newRecordingForwarder(st *concurrent.Stream) (feedkit.Forwarder, error) {
	return &recordingForwarder{stream: st}, nil
}

func (f *recordingForwarder) Dispatch(_ context.Context, ev feed.Event) error {
	k := f.stream.Allocate(concurrent.RecoveryContext{Producer: ev.Producer, RequestID: ev.RequestID})
	k.Start()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		k.Abandon()
		return feed.ErrDispatcherClosed
	}
	f.got = append(f.got, &forwarded{key: ev.RawKey, body: ev.Body, requestID: ev.RequestID, ticket: k})
	return nil
}

func (f *recordingForwarder) HandleSystem(ev feed.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, &forwarded{system: true, key: ev.RawKey, body: ev.Body, requestID: ev.RequestID})
}

func (f *recordingForwarder) HandleConnectionDown(feed.SessionRef, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.downs++
}

// Close abandons the tickets still open: their events were never handed on.
func (f *recordingForwarder) Close(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	for _, m := range f.got {
		if !m.system && !m.done {
			m.ticket.Abandon()
			m.done = true
			f.abandoned++
		}
	}
	return nil
}

// complete finishes the open tickets of the events that pick selects, in arrival order,
// and returns how many.
func (f *recordingForwarder) complete(pick func(m *forwarded) bool) int {
	f.mu.Lock()
	var ks []concurrent.Ticket
	for _, m := range f.got {
		if !m.system && !m.done && pick(m) {
			m.done = true
			ks = append(ks, m.ticket)
		}
	}
	f.mu.Unlock()
	for _, k := range ks {
		k.Complete()
	}
	return len(ks)
}

// all selects every message.
func all(*forwarded) bool { return true }

// messages returns what the forwarder was handed so far.
func (f *recordingForwarder) messages() []*forwarded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*forwarded(nil), f.got...)
}

// fwdRig is an SDK whose one session forwards to a recordingForwarder, on the embedded
// broker and the simulator, on a fake clock that only the test moves.
type fwdRig struct {
	t      *testing.T
	ctx    context.Context
	clk    *clocktest.Fake
	broker *feedtest.Broker
	sim    *feedtest.Simulator
	lo     feed.Producer
	store  *recovery.FileStore
	global *feedtest.GlobalRecorder
	sdk    *feedkit.SDK
	fwd    *recordingForwarder
}

func newFwdRig(t *testing.T, cfg feedkit.Config) *fwdRig {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	r := &fwdRig{t: t, ctx: ctx, clk: clocktest.NewFake(e2eEpoch), global: feedtest.NewGlobalRecorder(),
		store: recovery.NewFileStore(filepath.Join(t.TempDir(), "producers.json"))}
	r.broker = feedtest.NewBroker(feedtest.BrokerOptions{})
	t.Cleanup(r.broker.Close)
	r.lo, _ = feed.LookupProducer(feed.DefaultProducers(), 1)
	var err error
	r.sim, err = feedtest.NewSimulator(r.broker, feedtest.SimulatorConfig{
		Matches: 8, Rate: feedtest.Unlimited, Seed: 35, Producers: []feed.Producer{r.lo}, Clock: r.clk})
	require.NoError(t, err)
	api := r.sim.NewRecoveryServer()
	t.Cleanup(api.Close)
	cfg.Transport, cfg.Node, cfg.Global, cfg.Clock = r.broker, feed.Node(3), r.global, r.clk
	cfg.API = feedapi.Config{BaseURL: api.URL, AccessToken: feedtest.DefaultAccessToken}
	cfg.Recovery.Producers = []feed.Producer{r.lo}
	if cfg.Recovery.HeartbeatLimits == nil {
		cfg.Recovery.HeartbeatLimits = map[int]time.Duration{r.lo.ID: e2eHeartbeatLimit}
	}
	if cfg.Recovery.CheckInterval == 0 {
		cfg.Recovery.CheckInterval = e2eCheckInterval
	}
	cfg.Recovery.Store = r.store
	r.sdk, err = feedkit.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.sdk.Close(context.Background()) })
	return r
}

// addForwarder adds the forwarding session of the rig's forwarder.
func (r *fwdRig) addForwarder() {
	require.NoError(r.t, r.sdk.AddForwardingSession(feed.AllMessages, func(st *concurrent.Stream) (feedkit.Forwarder, error) {
		f, err := newRecordingForwarder(st)
		r.fwd = f.(*recordingForwarder)
		return f, err
	}))
}

// open opens the SDK and reads the news of its opening.
func (r *fwdRig) open(sessions ...string) {
	r.t.Helper()
	require.NoError(r.t, r.sdk.Open(r.ctx))
	require.Equal(r.t, "producer 1 down (InitialState)", r.global.RequireNext(r.t).String())
	var ups []string
	for range sessions {
		ups = append(ups, r.global.RequireNext(r.t).String())
	}
	require.ElementsMatch(r.t, sessions, ups)
}

// publish sends n event messages, a step of fake time apart, with an alive after every
// tenth, and waits until the session has read them.
func (r *fwdRig) publish(n int) {
	r.t.Helper()
	for i := range n {
		r.clk.Advance(lostMessageGap)
		require.NoError(r.t, r.sim.Publish(r.ctx, 1))
		if (i+1)%10 == 0 {
			r.alive()
		}
	}
	require.NoError(r.t, r.broker.Flush(r.ctx))
}

// alive sends an alive and waits until the session has read it.
func (r *fwdRig) alive() {
	r.t.Helper()
	r.clk.Advance(lostMessageGap)
	require.NoError(r.t, r.sim.SendAlive(r.ctx, r.lo.ID, true))
	require.NoError(r.t, r.broker.Flush(r.ctx))
}

// settle waits until the replays asked for are published and read, and the recovery
// manager has acted on all of it; the tasks are not waited for.
func (r *fwdRig) settle() {
	r.t.Helper()
	r.sim.WaitReplays()
	require.NoError(r.t, r.broker.Flush(r.ctx))
	require.NoError(r.t, feedkit.FlushManager(r.ctx, r.sdk))
}

// point returns the producer's recovery point once the manager has acted on what was
// reported to it.
func (r *fwdRig) point() time.Time {
	r.t.Helper()
	require.NoError(r.t, feedkit.FlushManager(r.ctx, r.sdk))
	st, ok := r.sdk.Producer(r.lo.ID)
	require.True(r.t, ok)
	return st.LastSubscribedAt
}

// aliveStamps returns the timestamps of the alives the forwarder was handed, in order.
func aliveStamps(t *testing.T, ms []*forwarded) []time.Time {
	var out []time.Time
	for _, m := range ms {
		if k, err := feed.ParseRoutingKey(m.key); err == nil && k.Type == feed.MessageAlive {
			a, err := feed.DecodeAlive(m.body)
			require.NoError(t, err)
			out = append(out, a.Timestamp)
		}
	}
	return out
}

// A forwarding session hands a Forwarder every message, in the order the feed sent it;
// the producer's up waits until the Forwarder has finished the tickets of the recovery's
// events, and follows the last at once; the recovery point never passes an event whose
// ticket is open, neither while the SDK runs nor in the store it leaves at Close.
func TestForwardingSessionHoldsTheUpAndThePointOnItsTickets(t *testing.T) {
	r := newFwdRig(t, feedkit.Config{})
	r.addForwarder()
	// Sent before the SDK opens: in no queue, and in the first recovery's replay.
	const replayed = 20
	for range replayed {
		r.clk.Advance(lostMessageGap)
		require.NoError(t, r.sim.Publish(r.ctx, 1))
	}
	unseen := len(r.sim.Sent())
	r.open("connection up on session 0 (all messages)")

	// The first alive brings the recovery; its replay is forwarded, its up held.
	r.alive()
	initiated := r.global.RequireNext(t)
	require.Equal(t, feedtest.CallRecoveryInitiated, initiated.Kind, initiated.String())
	rc := concurrent.RecoveryContext{Producer: r.lo.ID, RequestID: initiated.Recovery.RequestID}
	r.settle()
	st := r.sdk.Stats()
	require.Equal(t, uint64(1), st.Recovery.RecoveriesCompleted, "the snapshot_complete came")
	require.Equal(t, 1, st.Global.Held, "the up is held back")
	require.Equal(t, concurrent.TaskCounts{Allocated: replayed, Started: replayed}, st.Tasks[rc])

	// Every replayed event but the last: still held.
	left := replayed - 1
	require.Equal(t, replayed-1, r.fwd.complete(func(m *forwarded) bool {
		if m.requestID != rc.RequestID || left == 0 {
			return false
		}
		left--
		return true
	}))
	require.NoError(t, feedkit.FlushManager(r.ctx, r.sdk))
	require.Equal(t, 1, r.sdk.Stats().Global.Held, "one replayed event is not handed on yet")
	r.global.RequireNone(t)

	// The last: the up follows it.
	beforeLast := r.global.Stamp()
	require.Equal(t, 1, r.fwd.complete(func(m *forwarded) bool { return m.requestID == rc.RequestID }))
	assert.Zero(t, r.sdk.Stats().Global.Held, "released by the last Complete, before it returned")
	up := r.global.RequireNext(t)
	assert.Equal(t, "producer 1 up (FirstRecoveryCompleted)", up.String())
	assert.Greater(t, up.Seq, beforeLast, "the up reached Global after the last ticket was completed")

	// Live traffic, E1..E10 A1 E11..E20 A2 ... E41..E50 A5, with E15's ticket open: the
	// point stops at A1, the last alive before it.
	r.publish(50)
	live := r.fwd.messages()[replayed+2:] // after A0, the replay and its snapshot_complete
	stamps := aliveStamps(t, live)
	require.Len(t, stamps, 5)
	e15 := nthEvent(live, 15)
	require.Equal(t, 49, r.fwd.complete(func(m *forwarded) bool { return m != e15 }))
	assert.Equal(t, stamps[0], r.point(), "not past the open ticket of E15")
	require.Equal(t, 1, r.fwd.complete(all))
	assert.Equal(t, stamps[4], r.point(), "E15 handed on: the point reaches the last alive")

	// E51..E60 A6, with E53's ticket open when the SDK closes: the Forwarder abandons it,
	// and the point saved is A5's.
	r.publish(10)
	e53 := nthEvent(r.fwd.messages()[replayed+2:], 53)
	require.Equal(t, 9, r.fwd.complete(func(m *forwarded) bool { return m != e53 }))
	require.NoError(t, r.sdk.Close(r.ctx))
	recs, err := r.store.Load(r.ctx)
	require.NoError(t, err)
	require.Len(t, recs, 1)
	assert.Equal(t, stamps[4], recs[0].LastSubscribedAt, "the point saved at Close is the last alive before the abandoned event")
	assert.Equal(t, recovery.Healthy, recs[0].State)

	// The Forwarder saw every message read, in the order the feed sent it, the alives
	// between the events as they were sent.
	var want []string
	for _, s := range r.sim.Sent()[unseen:] {
		want = append(want, describe(s.Key.Type.IsSystem(), s.Key.String(), s.Body))
	}
	var got []string
	for _, m := range r.fwd.messages() {
		got = append(got, describe(m.system, m.key, m.body))
	}
	require.Zero(t, r.sim.Forgotten())
	require.Equal(t, want, got)

	// Exact counts.
	const liveEvents = 60
	st = r.sdk.Stats()
	assert.Equal(t, uint64(replayed+liveEvents), st.Sessions[0].Events)
	assert.Equal(t, uint64(1+1+6), st.Sessions[0].System, "A0, the snapshot_complete, A1..A6")
	assert.Equal(t, []feedkit.DeliveryStats{{Forwarding: true}}, st.Delivery)
	assert.Equal(t, concurrent.TaskCounts{Allocated: replayed, Started: replayed, Completed: replayed}, st.Tasks[rc])
	assert.Equal(t, concurrent.TaskCounts{Allocated: liveEvents, Started: liveEvents, Completed: liveEvents - 1, Abandoned: 1},
		st.Tasks[concurrent.RecoveryContext{Producer: r.lo.ID}])
	assert.Equal(t, uint64(1), st.Global.Deferred)
	assert.Equal(t, uint64(1), st.Global.Released)
	assert.Equal(t, uint64(1), st.Recovery.RecoveriesRequested)
	assert.Len(t, r.sim.RecoveryRequests(), 1)
	assert.Equal(t, 1, r.fwd.abandoned)
	assert.Zero(t, r.fwd.downs)
	r.global.RequireNone(t)
}

// nthEvent returns the n-th event message (from 1) of ms.
func nthEvent(ms []*forwarded, n int) *forwarded {
	for _, m := range ms {
		if !m.system {
			if n--; n == 0 {
				return m
			}
		}
	}
	return nil
}

// describe names a message by what the feed put in it, for an exact comparison.
func describe(system bool, key string, body []byte) string {
	kind := "event"
	if system {
		kind = "system"
	}
	return fmt.Sprintf("%s %s %s", kind, key, body)
}

// An SDK may mix a forwarding session with a listener's: the up waits for the recovery's
// events on both, and the recovery point for the slower.
func TestMixedSessionsHoldTheUpForBoth(t *testing.T) {
	r := newFwdRig(t, feedkit.Config{})
	ledger := newReceipts()
	t.Cleanup(ledger.openGate)
	ledger.setHook(func(feed.Message) error { <-ledger.gate; return nil })
	require.NoError(t, r.sdk.AddSession(feed.AllMessages, ledger))
	r.addForwarder()
	const replayed = 10
	for range replayed {
		r.clk.Advance(lostMessageGap)
		require.NoError(t, r.sim.Publish(r.ctx, 1))
	}
	r.open("connection up on session 0 (all messages)", "connection up on session 1 (all messages)")

	r.alive()
	require.Equal(t, feedtest.CallRecoveryInitiated, r.global.RequireNext(t).Kind)
	r.settle()
	require.Equal(t, 1, r.sdk.Stats().Global.Held)
	require.Equal(t, replayed, r.fwd.complete(all))
	require.NoError(t, feedkit.FlushManager(r.ctx, r.sdk))
	require.Equal(t, 1, r.sdk.Stats().Global.Held, "the listener has not processed the replay yet")
	r.global.RequireNone(t)

	ledger.openGate()
	assert.Equal(t, "producer 1 up (FirstRecoveryCompleted)", r.global.RequireNext(t).String())
	r.publish(20)
	require.Equal(t, 20, r.fwd.complete(all))
	require.NoError(t, r.sdk.Flush(r.ctx))
	stamps := aliveStamps(t, r.fwd.messages())
	assert.Equal(t, stamps[len(stamps)-1], r.point(), "both sessions are through the last alive")

	st := r.sdk.Stats()
	require.Len(t, st.Delivery, 2)
	assert.NotNil(t, st.Delivery[0].Serial)
	assert.False(t, st.Delivery[0].Forwarding)
	assert.Equal(t, feedkit.DeliveryStats{Forwarding: true}, st.Delivery[1])
	assert.Equal(t, st.Sessions[0].Events, st.Sessions[1].Events)
	assert.Equal(t, uint64(replayed+20), st.Sessions[1].Events)
	assert.Equal(t, st.Sessions[0].Events, st.Delivery[0].Serial.Delivered)
	r.global.RequireNone(t)
}

// A session feed.NewSession would refuse is refused before anything is built for it, and
// the SDK goes on: its recoveries complete and its recovery point moves. A Forwarder that
// cannot be made leaves its Stream in the SDK's tracker, so Open refuses the SDK then.
func TestAddForwardingSessionRefuses(t *testing.T) {
	r := newFwdRig(t, feedkit.Config{})
	assert.EqualError(t, r.sdk.AddForwardingSession(feed.AllMessages, nil), "feedkit: AddForwardingSession(all messages): newForwarder is nil")
	made := false
	err := r.sdk.AddForwardingSession(feed.SpecifiedMatchesOnly(), func(*concurrent.Stream) (feedkit.Forwarder, error) {
		made = true
		return nil, nil
	})
	assert.EqualError(t, err, "feedkit: AddForwardingSession(specified matches only (0)): feed: SessionConfig.Interest: SpecifiedMatchesOnly needs at least one event")
	assert.False(t, made, "refused before the Forwarder is made")
	assert.EqualError(t, r.sdk.AddSession(feed.SpecifiedMatchesOnly(), newReceipts()),
		"feedkit: AddSession(specified matches only (0)): feed: SessionConfig.Interest: SpecifiedMatchesOnly needs at least one event")

	r.addForwarder()
	r.open("connection up on session 0 (all messages)")
	r.alive()
	require.Equal(t, feedtest.CallRecoveryInitiated, r.global.RequireNext(t).Kind)
	r.settle()
	r.fwd.complete(all)
	assert.Equal(t, "producer 1 up (FirstRecoveryCompleted)", r.global.RequireNext(t).String(), "no session refused waits for the snapshot_complete")
	r.publish(10)
	r.fwd.complete(all)
	stamps := aliveStamps(t, r.fwd.messages())
	assert.Equal(t, stamps[len(stamps)-1], r.point(), "no stream of a session refused holds the point")
	assert.EqualError(t, r.sdk.AddForwardingSession(feed.AllMessages, newRecordingForwarder),
		"feedkit: AddForwardingSession after Open: the sessions are fixed when the SDK opens")
	assert.Len(t, r.sdk.Stats().Sessions, 1)

	for _, tt := range []struct {
		name string
		make func(*concurrent.Stream) (feedkit.Forwarder, error)
		want string
	}{
		{"error", func(*concurrent.Stream) (feedkit.Forwarder, error) { return nil, errors.New("boom") }, "boom"},
		{"nil", func(*concurrent.Stream) (feedkit.Forwarder, error) { return nil, nil }, "newForwarder returned no Forwarder and no error"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newFwdRig(t, feedkit.Config{})
			r.addForwarder()
			assert.EqualError(t, r.sdk.AddForwardingSession(feed.LiveMessagesOnly, tt.make),
				"feedkit: AddForwardingSession(live messages only): "+tt.want+" (the SDK cannot be opened now: make a new one)")
			assert.EqualError(t, r.sdk.Open(r.ctx),
				"feedkit: Open: AddForwardingSession(live messages only) failed: "+tt.want+", leaving a part of it in the SDK: make a new SDK")
		})
	}
}

// Config.MaxUpHold bounds how long an up is held for a recovery whose messages a stuck
// listener does not process: past it the producer is reported down (ProcessingStalled)
// and recovered again; once the listener goes on, the new recovery's up goes out, once.
func TestMaxUpHoldRecoversAProducerWhoseRecoveryIsStuck(t *testing.T) {
	const hold = 30 * time.Second
	r, ledger, first := newStuckRig(t, hold, 10*time.Minute)

	r.clk.Advance(hold - time.Nanosecond)
	r.settle()
	r.global.RequireNone(t)
	require.Len(t, r.sim.RecoveryRequests(), 1, "not yet")
	require.Zero(t, r.sdk.Stats().Global.PastLimit)

	r.clk.Advance(time.Nanosecond)
	assert.Equal(t, "producer 1 down (ProcessingStalled)", r.global.RequireNext(t).String())
	second := r.global.RequireNext(t)
	require.Equal(t, feedtest.CallRecoveryInitiated, second.Kind, second.String())
	assert.Greater(t, second.Recovery.RequestID, first.Recovery.RequestID)
	assert.Equal(t, first.Recovery.After, second.Recovery.After, "from the recovery point, where the stuck recovery went back to")
	r.settle()
	st := r.sdk.Stats()
	assert.Equal(t, 1, st.Global.Held, "the new recovery's up, held back behind the stuck listener")
	assert.Equal(t, uint64(1), st.Global.Cancelled, "the first up, dropped by the down")
	assert.Equal(t, uint64(1), st.Global.PastLimit)
	assert.Len(t, r.sim.RecoveryRequests(), 2)

	// The listener goes on: both replays are processed, and the up goes out once. (The
	// first recovery's up, FirstRecoveryCompleted, never did.)
	ledger.openGate()
	assert.Equal(t, "producer 1 up (ReturnedFromInactivity)", r.global.RequireNext(t).String())
	require.NoError(t, r.sdk.Flush(r.ctx))
	r.global.RequireNone(t)
	st = r.sdk.Stats()
	// InitialState, connection up, two initiations, the down and the up.
	assert.Equal(t, concurrent.GateStats{Forwarded: 6, Deferred: 2, Released: 1, Cancelled: 1, PastLimit: 1}, st.Global)
	assert.Len(t, r.global.Calls(), 6)
	assert.Equal(t, uint64(1), st.Recovery.RecoveriesForced)
	assert.Equal(t, uint64(2), st.Recovery.RecoveriesRequested)
	assert.Equal(t, uint64(2), st.Recovery.RecoveriesCompleted)
	assert.Len(t, r.sim.RecoveryRequests(), 2)
	for id, n := range ledger.received() {
		assert.Equal(t, 2, n, "%s is in both replays", id)
	}
	assert.Len(t, ledger.received(), 5, "the events published before Open")
}

// stuckRig is an SDK with Config.MaxUpHold hold whose listener is stuck on the first
// message of the producer's first recovery, the producer's up held back; heartbeat is the
// producer's heartbeat limit, past any time the test moves the clock by, as alives are
// not sent meanwhile. It returns the recovery's initiation.
func newStuckRig(t *testing.T, hold, heartbeat time.Duration) (*fwdRig, *receipts, feedtest.GlobalCall) {
	t.Helper()
	r := newFwdRig(t, feedkit.Config{MaxUpHold: hold,
		Recovery: recovery.Config{HeartbeatLimits: map[int]time.Duration{1: heartbeat}}})
	ledger := newReceipts()
	t.Cleanup(ledger.openGate)
	stuck := make(chan struct{})
	var once sync.Once
	ledger.setHook(func(m feed.Message) error {
		if m.MessageHeader().RequestID != 0 {
			once.Do(func() { close(stuck); <-ledger.gate }) // the first replayed message
		}
		return nil
	})
	require.NoError(t, r.sdk.AddSession(feed.AllMessages, ledger))
	for range 5 {
		r.clk.Advance(lostMessageGap)
		require.NoError(t, r.sim.Publish(r.ctx, 1))
	}
	r.open("connection up on session 0 (all messages)")
	r.alive()
	first := r.global.RequireNext(t)
	require.Equal(t, feedtest.CallRecoveryInitiated, first.Kind)
	r.settle()
	<-stuck
	require.Equal(t, 1, r.sdk.Stats().Global.Held)
	return r, ledger, first
}

// Config.MaxUpHold is DefaultMaxUpHold when 0, and no bound when negative.
func TestMaxUpHoldDefaultAndOff(t *testing.T) {
	t.Run("default", func(t *testing.T) {
		r, _, _ := newStuckRig(t, 0, 3*time.Hour)
		r.clk.Advance(feedkit.DefaultMaxUpHold - time.Nanosecond)
		r.settle()
		r.global.RequireNone(t)
		r.clk.Advance(time.Nanosecond)
		assert.Equal(t, "producer 1 down (ProcessingStalled)", r.global.RequireNext(t).String())
	})
	t.Run("off", func(t *testing.T) {
		r, _, _ := newStuckRig(t, -1, 3*time.Hour)
		r.clk.Advance(2 * feedkit.DefaultMaxUpHold)
		r.settle()
		r.global.RequireNone(t)
		st := r.sdk.Stats()
		assert.Equal(t, 1, st.Global.Held, "held for as long as the listener takes")
		assert.Zero(t, st.Global.PastLimit)
		assert.Len(t, r.sim.RecoveryRequests(), 1)
	})
}

// RecoverProducer is the same, on an operator's word: a healthy producer is taken down
// with the reason given and recovered again at once.
func TestSDKRecoverProducer(t *testing.T) {
	r := newFwdRig(t, feedkit.Config{})
	r.addForwarder()
	assert.EqualError(t, r.sdk.RecoverProducer(1, feed.Other), "feedkit: recovery: RecoverProducer before Open")
	r.open("connection up on session 0 (all messages)")
	r.alive()
	first := r.global.RequireNext(t)
	r.settle()
	r.fwd.complete(all)
	require.Equal(t, "producer 1 up (FirstRecoveryCompleted)", r.global.RequireNext(t).String())

	require.NoError(t, r.sdk.RecoverProducer(1, feed.Other))
	assert.Equal(t, "producer 1 down (Other)", r.global.RequireNext(t).String())
	second := r.global.RequireNext(t)
	require.Equal(t, feedtest.CallRecoveryInitiated, second.Kind, second.String())
	assert.Greater(t, second.Recovery.RequestID, first.Recovery.RequestID)
	r.settle()
	r.fwd.complete(all)
	assert.Equal(t, "producer 1 up (ReturnedFromInactivity)", r.global.RequireNext(t).String())
	assert.EqualError(t, r.sdk.RecoverProducer(2, feed.Other), "feedkit: recovery: RecoverProducer: producer 2 is not followed")
	assert.ErrorContains(t, r.sdk.RecoverProducer(1, feed.FirstRecoveryCompleted), "does not take a producer down")
	assert.Len(t, r.sim.RecoveryRequests(), 2)
}
