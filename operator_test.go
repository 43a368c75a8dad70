package feedkit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/recovery"
)

// operator is an operator's program, as README's quick start leads one to write it: an
// SDK set up from an access token and an environment (the simulator's API, with the
// embedded broker as the transport), a live session and a prematch session on one pool
// of workers, Ctrl (producer 3) disabled, the producer records in a file. The simulator
// feeds LO (live) and Ctrl (prematch) on a fake clock that only the test moves, and a
// restart replaces the SDK as a new process would.
type operator struct {
	t        *testing.T
	ctx      context.Context
	clk      *clocktest.Fake
	broker   *feedtest.Broker
	sim      *feedtest.Simulator
	env      feedkit.Environment
	store    recovery.Store
	lo, ctrl feed.Producer
	live     *receipts // the live session's listener, kept over the restart
	prematch *receipts
	stamps   *replayStamps
	global   *feedtest.GlobalRecorder // the current process's
	sdk      *feedkit.SDK             // the current process's
	// listening is set while an SDK is open: its sessions' queues take what is published.
	listening bool
	// lastAlive is the feed's timestamp of LO's last alive.
	lastAlive time.Time
	// ctrlAlives counts Ctrl's alives the current process was sent.
	ctrlAlives uint64
}

const operatorThreads = 4

func newOperator(t *testing.T) *operator {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute) // a guard against a hang
	t.Cleanup(cancel)
	o := &operator{t: t, ctx: ctx, clk: clocktest.NewFake(e2eEpoch), broker: feedtest.NewBroker(feedtest.BrokerOptions{}),
		lo: mustProducer(t, 1), ctrl: mustProducer(t, 3), live: newReceipts(), prematch: newReceipts(), stamps: &replayStamps{}}
	t.Cleanup(o.broker.Close)
	var err error
	// The history reaches back over the long stop, for the restart's recovery.
	o.sim, err = feedtest.NewSimulator(o.broker, feedtest.SimulatorConfig{Matches: 20, Rate: feedtest.Unlimited, Seed: 17,
		Producers: []feed.Producer{o.lo, o.ctrl}, HistoryAge: time.Hour, Clock: o.clk})
	require.NoError(t, err)
	api := httptest.NewServer(o.sim.APIHandler(feedtest.Account{BookmakerID: 4242}))
	t.Cleanup(api.Close)
	o.env = feedkit.CustomEnvironment("", api.URL)
	o.store = recovery.NewFileStore(filepath.Join(t.TempDir(), "producers.json"))
	for _, r := range []*receipts{o.live, o.prematch} {
		r.setHook(o.stamps.take)
	}
	return o
}

// open starts a process: an SDK on the store, whose producers come from the API (LO and
// Ctrl are the account's; Ctrl is disabled), and waits for LO's initial state and both
// sessions' connections. Ctrl is never reported.
func (o *operator) open() {
	o.t.Helper()
	o.global = feedtest.NewGlobalRecorder()
	o.stamps.global.Store(o.global)
	sdk, err := feedkit.New(feedkit.Config{
		Environment: &o.env,
		AccessToken: feedtest.DefaultAccessToken,
		Transport:   o.broker,
		Node:        feed.Node(5),
		Global:      o.global,
		Recovery: recovery.Config{
			DisabledProducers: []int{o.ctrl.ID},
			HeartbeatLimits:   map[int]time.Duration{o.lo.ID: e2eHeartbeatLimit},
			CheckInterval:     e2eCheckInterval,
			Store:             o.store,
		},
		Clock:      o.clk,
		Concurrent: &concurrent.Config{Threads: operatorThreads},
	})
	require.NoError(o.t, err)
	require.NoError(o.t, sdk.AddSession(feed.LiveMessagesOnly, o.live))
	require.NoError(o.t, sdk.AddSession(feed.PrematchMessagesOnly, o.prematch))
	require.NoError(o.t, sdk.Open(o.ctx))
	o.sdk = sdk
	o.t.Cleanup(func() { _ = sdk.Close(context.Background()) })
	require.Equal(o.t, "producer 1 down (InitialState)", o.global.RequireNext(o.t).String(), "LO only: Ctrl is disabled")
	assert.ElementsMatch(o.t, []string{"connection up on session 0 (live messages only)", "connection up on session 1 (prematch messages only)"},
		[]string{o.global.RequireNext(o.t).String(), o.global.RequireNext(o.t).String()})
	o.listening, o.ctrlAlives = true, 0
}

// flush returns once everything published has been processed, while a process listens.
func (o *operator) flush() {
	o.t.Helper()
	require.NoError(o.t, o.broker.Flush(o.ctx))
	if o.listening {
		require.NoError(o.t, o.sdk.Flush(o.ctx))
	}
}

// alive sends an alive of each producer, a step of fake time after what went before,
// and waits until the manager has acted on them: the fake clock must not run ahead of
// the reading.
func (o *operator) alive() {
	o.t.Helper()
	o.clk.Advance(lostMessageGap)
	require.NoError(o.t, o.sim.SendAlive(o.ctx, o.lo.ID, true))
	require.NoError(o.t, o.sim.SendAlive(o.ctx, o.ctrl.ID, true))
	o.lastAlive = o.clk.Now().Truncate(time.Millisecond)
	if o.listening {
		o.ctrlAlives++
	}
	o.flush()
}

// publish sends n event messages with alives every alivesEvery, ending with alives, and
// returns once all are processed.
func (o *operator) publish(n int) {
	o.t.Helper()
	for i := range n {
		o.clk.Advance(lostMessageGap)
		require.NoError(o.t, o.sim.Publish(o.ctx, 1))
		if (i+1)%alivesEvery == 0 {
			o.alive()
		}
	}
	o.alive()
}

// recover sends the alive that brings LO's recovery and returns its request, once LO is
// up again: after every replayed message was processed.
func (o *operator) recover() feedtest.RecoveryRequest {
	o.t.Helper()
	o.alive()
	initiated := o.global.RequireNext(o.t)
	require.Equal(o.t, feedtest.CallRecoveryInitiated, initiated.Kind, initiated.String())
	require.Equal(o.t, "producer 1 up (FirstRecoveryCompleted)", o.global.RequireNext(o.t).String())
	reqs := o.sim.RecoveryRequests()
	req := reqs[len(reqs)-1]
	require.Equal(o.t, initiated.Recovery.RequestID, req.RequestID)
	return req
}

// replayStamps notes, for each replayed message a listener processes, a stamp of the
// current process's global recorder's sequence taken in the call, by request id.
type replayStamps struct {
	global atomic.Pointer[feedtest.GlobalRecorder]
	mu     sync.Mutex
	stamps map[int64][]int64
}

func (s *replayStamps) take(m feed.Message) error {
	id := m.MessageHeader().RequestID
	if id == 0 {
		return nil
	}
	stamp := s.global.Load().Stamp()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stamps == nil {
		s.stamps = map[int64][]int64{}
	}
	s.stamps[id] = append(s.stamps[id], stamp)
	return nil
}

func (s *replayStamps) of(id int64) []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.stamps[id])
}

// count is how many replayed messages were processed, over all requests.
func (s *replayStamps) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, v := range s.stamps {
		n += len(v)
	}
	return n
}

// The operator's program, in one run: set up from a token and the simulator's
// environment (Open reads whoami and the account's producers from its API); a live and
// a prematch session on one pool of 4 workers; Ctrl, which the account has, disabled in
// the config, so never recovered nor reported though its alives and messages arrive; an
// event recovery whose replayed messages are counted exactly and reach the listener
// before OnEventRecoveryCompleted; a stop longer than recovery.DefaultAssumedDowntime and
// a restart on a recovery.FileStore that recovers LO from its last record, so that every
// LO message sent is received, live or replayed, and of Ctrl's exactly those sent while
// the process was stopped are missing; and json.Marshal(sdk.Stats()) in snake_case with
// the sessions, pool and producers. Everything is counted after Broker.Flush and
// SDK.Flush, with nothing to poll but the recovery point the existing restart test
// waits for too.
func TestOperatorProgram(t *testing.T) {
	o := newOperator(t)

	// The first process: LO recovered on start, then traffic on both sessions.
	o.open()
	o.recover()
	o.publish(phaseMessages)

	// An event recovery of a live match, as an operator asks for one.
	ev := firstOddsChangeOf(t, o.sim.Sent(), o.lo.ID)
	id, err := o.sdk.RecoverEvent(o.ctx, o.lo.ID, ev)
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("event recovery #%d of producer 1 initiated for %s", id, ev), o.global.RequireNext(t).String())
	done := o.global.RequireNext(t)
	require.Equal(t, fmt.Sprintf("event recovery #%d of producer 1 completed for %s", id, ev), done.String())
	replayed := replayedOf(o.sim.Sent(), id)
	require.Len(t, replayed, len(expectedReplay(o.sim.Sent(), ev, false)), "the simulator resent the event's latest odds_change")
	stamps := o.stamps.of(id)
	require.Len(t, stamps, len(replayed), "every replayed message of the event recovery was processed, once")
	for _, s := range stamps {
		assert.Less(t, s, done.Seq, "OnEventRecoveryCompleted comes after the replayed messages were processed")
	}

	// The process stops; the feed goes on, and then the stop lasts 15 minutes in all.
	o.waitPoint(o.lastAlive)
	processed := o.lastAlive
	require.NoError(t, o.sdk.Close(o.ctx))
	o.global.RequireNone(t)
	assertCtrlNeverReported(t, o.global.Calls())
	// Each session's queue takes every alive, and the manager hears each session's.
	assert.Equal(t, 2*o.ctrlAlives, o.sdk.Stats().Recovery.DisabledProducer, "each of Ctrl's alives counted and ignored, on both sessions")
	o.listening = false
	stopFrom := len(o.sim.Sent())
	o.publish(faultMessages) // to nobody
	stopTo := len(o.sim.Sent())
	const stop = 15 * time.Minute
	o.clk.Advance(stop - faultMessages*lostMessageGap)
	require.Greater(t, stop, recovery.DefaultAssumedDowntime, "longer than a process that knows nothing recovers")

	recs, err := o.store.Load(o.ctx)
	require.NoError(t, err)
	require.Len(t, recs, 1, "a record of LO only: Ctrl is disabled")
	saved := recs[0].LastSubscribedAt
	assert.False(t, saved.After(processed), "saved %v, processed through %v", saved, processed)
	assert.False(t, saved.Before(processed.Add(-e2eCheckInterval)), "saved %v, processed through %v", saved, processed)

	// The restart: a new process on the same file recovers LO from the record, past the
	// assumed downtime, over the whole stop.
	liveBefore, prematchBefore := total(o.live), total(o.prematch)
	o.open()
	req := o.recover()
	assert.Equal(t, saved.UnixMilli(), req.After.UnixMilli(), "from the last record")
	assert.Greater(t, o.clk.Now().Sub(req.After), recovery.DefaultAssumedDowntime)
	o.publish(phaseMessages)
	o.sim.WaitReplays()
	o.flush()

	// What was sent is what was received: every LO message, live or replayed; every
	// Ctrl message but those sent while the process was stopped, which nothing recovers.
	sent := o.sim.Sent()
	require.Zero(t, o.sim.Forgotten(), "the simulator kept everything it sent")
	var liveSent, ctrlSent, replays int
	ctrlStopped := map[string]bool{}
	for i, s := range sent {
		switch {
		case s.Key.Type.IsSystem():
		case s.Replay:
			replays++
		case s.Message.MessageHeader().Producer == o.lo.ID:
			liveSent++
			assert.Positive(t, o.live.count(identity(s.Message)), "LO's %s was received", identity(s.Message))
		default:
			ctrlSent++
			n := o.prematch.count(identity(s.Message))
			if i >= stopFrom && i < stopTo {
				ctrlStopped[identity(s.Message)] = true
				assert.Zero(t, n, "Ctrl's %s, sent during the stop, is never recovered", identity(s.Message))
			} else {
				assert.Equal(t, 1, n, "Ctrl's %s received once", identity(s.Message))
			}
		}
	}
	require.Positive(t, len(ctrlStopped), "Ctrl sent during the stop")
	liveStopped := (stopTo - stopFrom) - len(ctrlStopped) - countSystem(sent[stopFrom:stopTo])
	require.Positive(t, liveStopped, "LO sent during the stop")
	assert.Equal(t, liveSent-liveStopped+replays, total(o.live), "LO's messages sent to a listening process, and every replayed one")
	assert.Equal(t, ctrlSent-len(ctrlStopped), total(o.prematch), "Ctrl's messages sent to a listening process")
	assert.Equal(t, replays, o.stamps.count(), "replayed messages reach the listener with their request id")
	t.Logf("LO sent %d (%d during the stop), Ctrl sent %d (%d during the stop), replayed %d (event recovery %d); received live session %d, prematch session %d",
		liveSent, liveStopped, ctrlSent, len(ctrlStopped), replays, len(replayed), total(o.live), total(o.prematch))

	// The second process's stats, as a /stats handler serves them.
	require.NoError(t, o.sdk.Close(o.ctx))
	o.global.RequireNone(t)
	assertCtrlNeverReported(t, o.global.Calls())
	for _, r := range o.sim.RecoveryRequests() {
		assert.Equal(t, o.lo.ID, r.Producer, "only LO is recovered")
	}
	st := o.sdk.Stats()
	b, err := json.Marshal(st)
	require.NoError(t, err)
	var got struct {
		Sessions  []map[string]any `json:"sessions"`
		Pool      map[string]any   `json:"pool"`
		Producers []map[string]any `json:"producers"`
	}
	require.NoError(t, json.Unmarshal(b, &got), "%s", b)
	require.Len(t, got.Sessions, 2, "%s", b)
	require.NotNil(t, got.Pool, "%s", b)
	require.Len(t, got.Producers, 1, "LO only: %s", b)
	assert.Equal(t, float64(o.lo.ID), got.Producers[0]["producer"])
	liveNow, prematchNow := total(o.live)-liveBefore, total(o.prematch)-prematchBefore
	assert.Equal(t, float64(liveNow+prematchNow), got.Pool["completed"], "the pool ran both sessions' messages: %s", b)
	assert.Len(t, got.Pool["workers"], operatorThreads, "one pool of Threads workers: %s", b)
	assertSnakeCase(t, b)
	// On the embedded broker the transport section is left out: it is RabbitMQ's.
	assert.Nil(t, st.Transport)
}

// waitPoint waits until LO's recovery point is want, as the restart test does.
func (o *operator) waitPoint(want time.Time) {
	o.t.Helper()
	o.flush()
	st, _ := o.sdk.Producer(o.lo.ID)
	require.Equal(o.t, want, st.LastSubscribedAt)
}

func firstOddsChangeOf(t *testing.T, sent []feedtest.Sent, producer int) feed.URN {
	t.Helper()
	for _, s := range sent {
		if !s.Replay && s.Key.Type == feed.MessageOddsChange && s.Message.MessageHeader().Producer == producer {
			return s.Key.Event
		}
	}
	t.Fatalf("no odds_change of producer %d", producer)
	return feed.URN{}
}

// replayedOf returns the event messages the simulator resent for request id.
func replayedOf(sent []feedtest.Sent, id int64) []feedtest.Sent {
	var out []feedtest.Sent
	for _, s := range sent {
		if s.Replay && !s.Key.Type.IsSystem() && s.Message.MessageHeader().RequestID == id {
			out = append(out, s)
		}
	}
	return out
}

func countSystem(sent []feedtest.Sent) int {
	n := 0
	for _, s := range sent {
		if s.Key.Type.IsSystem() {
			n++
		}
	}
	return n
}

// total is how many listener calls a receipts took.
func total(r *receipts) int {
	n := 0
	for _, c := range r.received() {
		n += c
	}
	return n
}

func assertCtrlNeverReported(t *testing.T, calls []feedtest.GlobalCall) {
	t.Helper()
	for _, c := range calls {
		assert.NotEqual(t, 3, c.Status.Producer, c.String())
		assert.NotEqual(t, 3, c.Recovery.Producer, c.String())
	}
}

var snakeKey = regexp.MustCompile(`^([a-z0-9_]+|\d+:(live|\d+))$`)

// assertSnakeCase checks every key of the JSON document b: snake_case, or a task's
// recovery context ("1:live", "1:42").
func assertSnakeCase(t *testing.T, b []byte) {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(b, &v))
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				assert.Regexp(t, snakeKey, k)
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
}
