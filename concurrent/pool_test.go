package concurrent_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// newPool returns a pool on a new tracker, closed at the end of the test after its
// listeners (cleanups run last first).
func newPool(t *testing.T, cfg concurrent.Config) (*concurrent.Pool, *concurrent.TaskLifecycleTracker) {
	t.Helper()
	tracker := concurrent.NewTaskLifecycleTracker()
	p, err := concurrent.NewPool(tracker, cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		assert.NoError(t, p.Close(ctx))
	})
	return p, tracker
}

// poolListener returns a listener of p that delivers to l, closed at the end of the test.
func poolListener(t *testing.T, p *concurrent.Pool, l feed.OddsFeedListener) *concurrent.Dispatcher {
	t.Helper()
	c, err := p.Dispatcher(l)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		_ = c.Close(ctx)
	})
	return c
}

// betStop returns bet_stop number n of event id for producer, as a session dispatches it.
func betStop(t testing.TB, id, producer int, requestID int64, n int) feed.Event {
	return rawEvent(t, message(feed.MessageBetStop, match(id), producer, requestID, n))
}

func TestPoolRefusesWithTheFieldNamed(t *testing.T) {
	_, err := concurrent.NewPool(concurrent.NewTaskLifecycleTracker(), concurrent.Config{Threads: -3})
	assert.ErrorContains(t, err, "Config.Threads -3")
	_, err = concurrent.NewPool(nil, concurrent.Config{})
	assert.ErrorContains(t, err, "tracker is nil")
	p, _ := newPool(t, concurrent.Config{Threads: 1})
	_, err = p.Dispatcher(nil)
	assert.ErrorContains(t, err, "listener is nil")
	require.NoError(t, p.Close(testContext(t)))
	_, err = p.Dispatcher(feed.BaseOddsFeedListener{})
	assert.ErrorIs(t, err, feed.ErrDispatcherClosed, "a closed pool makes no listener")
}

// TestPoolRunsThreadsWorkersForAllListeners: two listeners on a pool of 4 workers, with
// calls that block until the test releases them, run 4 calls at once, never more: the
// 4 workers are all the sessions'. Each match has one message, so that a worker holds one
// task at a time and every other task is counted queued.
func TestPoolRunsThreadsWorkersForAllListeners(t *testing.T) {
	const threads, perListener = 4, 30
	var inFlight, most atomic.Int32
	full := make(chan struct{})
	release := make(chan struct{})
	var fullOnce sync.Once
	gate := func(ctx context.Context, _ feed.Message) error {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		if n == threads {
			fullOnce.Do(func() { close(full) })
		}
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	p, tracker := newPool(t, concurrent.Config{Threads: threads})
	recA, recB := newOrderRecorder(perListener), newOrderRecorder(perListener)
	recA.gate, recB.gate = gate, gate
	a, b := poolListener(t, p, recA), poolListener(t, p, recB)
	ctx := testContext(t)
	for i := range perListener {
		require.NoError(t, a.Dispatch(ctx, betStop(t, i, 1, 0, 0)))
		require.NoError(t, b.Dispatch(ctx, betStop(t, perListener+i, 1, 0, 0)))
	}
	waitFor(t, full, "4 calls at once")

	st := p.Stats()
	assert.Equal(t, threads, st.Running, "every worker in a call")
	assert.Equal(t, 2*perListener-threads, st.Queued, "the other tasks wait: there is no fifth worker")
	assert.Len(t, st.Workers, threads)
	sa, sb := a.Stats(), b.Stats()
	assert.Equal(t, threads, sa.Running+sb.Running)
	assert.Len(t, sa.Workers, threads, "a listener's tasks run on the pool's workers")

	close(release)
	waitFor(t, recA.all, "listener A's messages")
	waitFor(t, recB.all, "listener B's messages")
	require.NoError(t, tracker.Wait(ctx, live(1)))
	assert.Equal(t, int32(threads), most.Load(), "never more calls at once than the pool has workers")
}

// sharedLog records, per match, which listener got which message, in the order the calls
// were made, over every listener it is given to.
type sharedLog struct {
	mu   sync.Mutex
	got  map[feed.URN][]string
	n    int
	want int
	all  chan struct{}
}

func newSharedLog(want int) *sharedLog {
	return &sharedLog{got: map[feed.URN][]string{}, want: want, all: make(chan struct{})}
}

// as returns a listener that records its bet_stops in the log under name.
func (s *sharedLog) as(name string) feed.OddsFeedListener { return &named{log: s, name: name} }

type named struct {
	feed.BaseOddsFeedListener
	log  *sharedLog
	name string
}

func (l *named) OnBetStop(_ context.Context, m *feed.BetStop) error {
	l.log.mu.Lock()
	defer l.log.mu.Unlock()
	l.log.got[m.Event] = append(l.log.got[m.Event], fmt.Sprintf("%s#%d", l.name, seq(m)))
	if l.log.n++; l.log.n == l.log.want {
		close(l.log.all)
	}
	return nil
}

// TestPoolKeepsMatchOrderAcrossListeners: each match's messages, dispatched alternately
// through two listeners of one pool, reach the two customer listeners in dispatch order:
// the match has one queue, whichever session its messages come from.
func TestPoolKeepsMatchOrderAcrossListeners(t *testing.T) {
	const matches, perMatch = 100, 20
	log := newSharedLog(matches * perMatch)
	p, _ := newPool(t, concurrent.Config{Threads: 4})
	a, b := poolListener(t, p, log.as("a")), poolListener(t, p, log.as("b"))
	ctx := testContext(t)
	for n := range perMatch {
		for id := range matches {
			c := a
			if n%2 == 1 {
				c = b
			}
			require.NoError(t, c.Dispatch(ctx, betStop(t, id, 1, 0, n)))
		}
	}
	waitFor(t, log.all, "every message")
	want := make([]string, perMatch)
	for n := range want {
		want[n] = fmt.Sprintf("%s#%d", map[bool]string{false: "a", true: "b"}[n%2 == 1], n)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	for id := range matches {
		require.Equal(t, want, log.got[match(id)], "match %d", id)
	}
}

// TestPoolStalledMatchHoldsOneWorker: a match whose calls stall on one listener holds one
// worker of the pool; every other match of both listeners is delivered meanwhile, and the
// stalled match's messages from the other listener wait behind it, in order.
func TestPoolStalledMatchHoldsOneWorker(t *testing.T) {
	const matches, perMatch = 100, 4
	const stalled = 0
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	recA := newOrderRecorder(matches * perMatch)
	recA.gate = func(_ context.Context, m feed.Message) error {
		if m.MessageHeader().Event == match(stalled) {
			select {
			case entered <- struct{}{}:
			default:
			}
			<-release
		}
		return nil
	}
	recB := newOrderRecorder(matches * perMatch)
	p, tracker := newPool(t, concurrent.Config{Threads: 3})
	a, b := poolListener(t, p, recA), poolListener(t, p, recB)
	ctx := testContext(t)
	for n := range perMatch {
		for id := range matches {
			producer := 1
			if id == stalled {
				producer = 2 // its own tracker context, so the test can wait for the others alone
			}
			// Listener A's message n, then B's: the stalled match's order is a0 b0 a1 b1 ...
			require.NoError(t, a.Dispatch(ctx, betStop(t, id, producer, 0, 2*n)))
			require.NoError(t, b.Dispatch(ctx, betStop(t, id, producer, 0, 2*n+1)))
		}
	}
	waitFor(t, entered, "the stalled match's first call")
	require.NoError(t, tracker.Wait(ctx, live(1)), "the other matches of both listeners")
	assert.Equal(t, (matches-1)*perMatch, recA.count())
	assert.Equal(t, (matches-1)*perMatch, recB.count())
	assert.Empty(t, recB.got[match(stalled)], "B's messages of the stalled match wait behind A's stalled call")
	assert.Equal(t, 2*perMatch, tracker.Pending(live(2)))
	st := p.Stats()
	assert.Equal(t, 1, st.Running, "the stalled call holds one worker")
	assert.Equal(t, 1, a.Stats().Running)
	assert.Zero(t, b.Stats().Running)

	close(release)
	waitFor(t, recA.all, "A's stalled messages")
	waitFor(t, recB.all, "B's stalled messages")
	var wantA, wantB []string
	for n := range perMatch {
		wantA = append(wantA, fmt.Sprintf("bet_stop#%d", 2*n))
		wantB = append(wantB, fmt.Sprintf("bet_stop#%d", 2*n+1))
	}
	assert.Equal(t, wantA, recA.got[match(stalled)])
	assert.Equal(t, wantB, recB.got[match(stalled)])
}

// failOdd fails the listener call of every odd-numbered message.
func failOdd(_ context.Context, m feed.Message) error {
	if seq(m)%2 == 1 {
		return fmt.Errorf("message %d refused", seq(m))
	}
	return nil
}

// TestPoolStatsAddUp: each listener counts its own tasks, and the pool's figures are their
// sums, gauges (while calls block) and counters alike; a match with tasks of both
// listeners counts once in the pool.
func TestPoolStatsAddUp(t *testing.T) {
	const threads = 2
	recA, recB := newOrderRecorder(5), newOrderRecorder(7)
	startedA, releaseA := blockAll(recA)
	_, releaseB := blockAll(recB)
	p, tracker := newPool(t, concurrent.Config{Threads: threads})
	a, b := poolListener(t, p, recA), poolListener(t, p, recB)
	ctx := testContext(t)
	// A: matches 0-3 and the shared match 9; B: matches 4-8, and two in the shared match.
	for id := range 4 {
		require.NoError(t, a.Dispatch(ctx, betStop(t, id, 1, 0, id)))
	}
	require.NoError(t, a.Dispatch(ctx, betStop(t, 9, 1, 0, 4)))
	for id := 4; id < 9; id++ {
		require.NoError(t, b.Dispatch(ctx, betStop(t, id, 1, 0, id)))
	}
	require.NoError(t, b.Dispatch(ctx, betStop(t, 9, 1, 0, 9)))
	require.NoError(t, b.Dispatch(ctx, betStop(t, 9, 1, 0, 10)))
	// The two workers take match 0 (A's) and match 1 (A's), the heads of the ready list.
	waitFor(t, startedA, "a call")
	waitFor(t, startedA, "a second call")

	sa, sb, sp := a.Stats(), b.Stats(), p.Stats()
	assert.Equal(t, concurrent.Stats{Queued: 3, Running: 2, Matches: 5, Dispatched: 5, Workers: []uint64{0, 0}}, sa)
	assert.Equal(t, concurrent.Stats{Queued: 7, Running: 0, Matches: 6, Dispatched: 7, Workers: []uint64{0, 0}}, sb)
	assert.Equal(t, concurrent.PoolStats{Listeners: 2, Queued: 10, Running: 2, Matches: 10, Dispatched: 12, Workers: []uint64{0, 0}}, sp,
		"match 9 has tasks of both listeners: 10 matches, not 11")

	close(releaseA)
	close(releaseB)
	require.NoError(t, tracker.Wait(ctx, live(1)))
	require.NoError(t, a.Close(ctx))
	require.NoError(t, b.Close(ctx))
	require.NoError(t, p.Close(ctx)) // the workers are gone: every counter is final

	sa, sb, sp = a.Stats(), b.Stats(), p.Stats()
	assert.Equal(t, uint64(5), sa.Completed)
	assert.Equal(t, uint64(7), sb.Completed)
	assert.Zero(t, sp.Listeners)
	assert.Equal(t, sa.Dispatched+sb.Dispatched, sp.Dispatched)
	assert.Equal(t, sa.Completed+sb.Completed, sp.Completed)
	assert.Equal(t, sa.Abandoned+sb.Abandoned, sp.Abandoned)
	assert.Equal(t, sa.Blocked+sb.Blocked, sp.Blocked)
	for i := range threads {
		assert.Equal(t, sa.Workers[i]+sb.Workers[i], sp.Workers[i], "worker %d", i)
	}
	assert.Zero(t, sp.Queued+sp.Running+sp.Matches)
}

// TestPoolListenerErrorsAreItsOwn: a listener's failed calls are counted in its own Stats,
// not in the other's.
func TestPoolListenerErrorsAreItsOwn(t *testing.T) {
	recA, recB := newOrderRecorder(10), newOrderRecorder(10)
	recA.gate = failOdd
	var log errorLog
	p, tracker := newPool(t, concurrent.Config{Threads: 2, OnError: log.add})
	a, b := poolListener(t, p, recA), poolListener(t, p, recB)
	ctx := testContext(t)
	for n := range 10 {
		require.NoError(t, a.Dispatch(ctx, betStop(t, n, 1, 0, n)))
		require.NoError(t, b.Dispatch(ctx, betStop(t, n, 1, 0, n)))
	}
	require.NoError(t, tracker.Wait(ctx, live(1)))
	require.NoError(t, a.Close(ctx))
	require.NoError(t, b.Close(ctx))
	assert.Equal(t, uint64(5), a.Stats().Failed)
	assert.Zero(t, b.Stats().Failed)
	assert.Len(t, log.all(), 5)
	assert.Equal(t, uint64(10), a.Stats().Completed, "a failed call is completed")
}

// TestPoolClosingOneListenerLeavesTheOthers: Close of one listener delivers its queued
// tasks and returns once they are done, while the other listener's messages flow; after
// it, the closed listener refuses messages and the other takes them.
func TestPoolClosingOneListenerLeavesTheOthers(t *testing.T) {
	const queued = 10
	recA := newOrderRecorder(queued)
	startedA, releaseA := blockAll(recA)
	recB := newOrderRecorder(2 * queued)
	p, tracker := newPool(t, concurrent.Config{Threads: 2})
	a, b := poolListener(t, p, recA), poolListener(t, p, recB)
	ctx := testContext(t)
	for n := range queued {
		require.NoError(t, a.Dispatch(ctx, betStop(t, 1, 1, 0, n))) // one match: one worker
	}
	waitFor(t, startedA, "A's first call")
	closed := make(chan error, 1)
	go func() { closed <- a.Close(ctx) }()

	// A's Close waits for its tasks; B's flow on the other worker meanwhile.
	for n := range queued {
		require.NoError(t, b.Dispatch(ctx, betStop(t, 2+n, 2, 0, n)))
	}
	waitFor(t, recB.reached(queued), "B's messages while A closes")
	select {
	case err := <-closed:
		t.Fatalf("A's Close returned (%v) with its tasks still queued", err)
	default:
	}
	close(releaseA)
	require.NoError(t, <-closed)
	assert.Equal(t, queued, recA.count(), "A's Close delivered what was queued")
	assert.Zero(t, tracker.Pending(live(1)))
	assert.ErrorIs(t, a.Dispatch(ctx, betStop(t, 1, 1, 0, 99)), feed.ErrDispatcherClosed)

	for n := range queued {
		require.NoError(t, b.Dispatch(ctx, betStop(t, 2+n, 2, 0, queued+n)))
	}
	waitFor(t, recB.all, "B's messages after A closed")
	st := p.Stats()
	assert.Equal(t, 1, st.Listeners)
	assert.Equal(t, uint64(queued), a.Stats().Completed)
}

// TestPoolCloseOutOfTimeAbandonsOnlyItsOwn: when one listener's Close runs out of time,
// its queued tasks are abandoned and its calls' context cancelled; the other listener's
// tasks, in the same matches too, are delivered, with a context that is not cancelled.
func TestPoolCloseOutOfTimeAbandonsOnlyItsOwn(t *testing.T) {
	const perListener = 6
	recA := newOrderRecorder(perListener)
	startedA, _ := blockAll(recA) // never released: only a cancelled context ends a call
	var cancelledB atomic.Int32
	recB := newOrderRecorder(perListener)
	recB.gate = func(ctx context.Context, _ feed.Message) error {
		if ctx.Err() != nil {
			cancelledB.Add(1)
		}
		return nil
	}
	p, tracker := newPool(t, concurrent.Config{Threads: 2})
	a, b := poolListener(t, p, recA), poolListener(t, p, recB)
	ctx := testContext(t)
	for n := range perListener {
		require.NoError(t, a.Dispatch(ctx, betStop(t, 1, 1, 0, n))) // match 1: held by A's first call
	}
	waitFor(t, startedA, "A's first call")
	expired, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, a.Close(expired), context.Canceled)
	for n := range perListener {
		require.NoError(t, b.Dispatch(ctx, betStop(t, 1, 2, 0, n)), "B queues behind A's abandoned tasks of match 1")
	}
	require.NoError(t, a.Close(ctx), "A's tasks are done or dropped once its call sees the cancelled context")
	waitFor(t, recB.all, "B's messages")
	require.NoError(t, tracker.Wait(ctx, live(2)))

	counts := tracker.Counts(live(1))
	assert.Equal(t, concurrent.TaskCounts{Allocated: perListener, Started: 1, Completed: 1, Abandoned: perListener - 1}, counts)
	assert.Equal(t, uint64(perListener-1), a.Stats().Abandoned)
	assert.Zero(t, b.Stats().Abandoned)
	assert.Zero(t, cancelledB.Load(), "B's calls ran with a live context")
	assert.Equal(t, concurrent.TaskCounts{Allocated: perListener, Started: perListener, Completed: perListener}, tracker.Counts(live(2)))
}

// TestPoolProcessedPointAndHeldUpWithTwoListeners: with two listeners of one pool, each
// with its own Stream, the processed point waits for the messages read before the alive
// on both streams, and a producer's up is held until the recovery's messages of both
// listeners are done.
func TestPoolProcessedPointAndHeldUpWithTwoListeners(t *testing.T) {
	p, tracker := newPool(t, concurrent.Config{Threads: 4})
	moved := make(chan time.Time, 16)
	tracker.OnProcessed(func(producer int, through time.Time) {
		if producer == 1 {
			moved <- through
		}
	})
	customer := feedtest.NewGlobalRecorder()
	g, err := concurrent.NewStatusGate(customer, tracker, concurrent.GateConfig{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close(context.Background()) })
	recA, recB := newOrderRecorder(3), newOrderRecorder(3)
	startedA, releaseA := blockAll(recA)
	startedB, releaseB := blockAll(recB)
	a, b := poolListener(t, p, recA), poolListener(t, p, recB)
	ctx := testContext(t)

	// The processed point: one live message on each stream before its alive.
	require.NoError(t, a.Dispatch(ctx, betStop(t, 1, 1, 0, 0)))
	a.Stream().Alive(1, at(10))
	require.NoError(t, b.Dispatch(ctx, betStop(t, 2, 1, 0, 0)))
	b.Stream().Alive(1, at(10))
	waitFor(t, startedA, "A's live call")
	waitFor(t, startedB, "B's live call")
	_, ok := tracker.Processed(1)
	assert.False(t, ok, "both messages before the alives are pending")
	releaseA <- struct{}{}
	waitFor(t, recA.reached(1), "A's live message")
	_, ok = tracker.Processed(1)
	assert.False(t, ok, "B's message before its alive is pending")
	releaseB <- struct{}{}
	select {
	case through := <-moved:
		assert.Equal(t, at(10), through)
	case <-time.After(testTimeout):
		t.Fatal("the processed point did not move")
	}

	// The held-back up: a recovery's messages on both listeners.
	const request = 7
	g.OnRecoveryInitiated(ctx, feed.RecoveryInitiated{Producer: 1, RequestID: request})
	require.Equal(t, feedtest.CallRecoveryInitiated, customer.RequireNext(t).Kind)
	require.NoError(t, a.Dispatch(ctx, betStop(t, 3, 1, request, 1)))
	require.NoError(t, a.Dispatch(ctx, betStop(t, 3, 1, request, 2)))
	require.NoError(t, b.Dispatch(ctx, betStop(t, 4, 1, request, 1)))
	require.NoError(t, b.Dispatch(ctx, betStop(t, 4, 1, request, 2)))
	waitFor(t, startedA, "A's replayed call")
	waitFor(t, startedB, "B's replayed call")
	g.OnProducerStatusChange(ctx, feed.ProducerStatus{Producer: 1, Reason: feed.FirstRecoveryCompleted})
	assert.Equal(t, 1, g.Stats().Held)
	close(releaseA)
	waitFor(t, recA.all, "A's replayed messages")
	assert.Equal(t, 2, tracker.Pending(concurrent.RecoveryContext{Producer: 1, RequestID: request}), "B's replay")
	assert.Equal(t, 1, g.Stats().Held, "held while B's replay is pending")
	customer.RequireNone(t)
	close(releaseB)
	assert.Equal(t, feedtest.CallProducerStatus, customer.RequireNext(t).Kind, "the up, once both replays are done")
	assert.Equal(t, 3, recB.count())
}
