package concurrent

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// trTimeout bounds every wait of these tests for something that must happen: a guard
// against a hang, generous enough that a slow, busy machine never reaches it.
const trTimeout = time.Minute

// trGoroutineID returns the id of the calling goroutine, read from its stack header
// ("goroutine 42 [running]:"); tests only.
func trGoroutineID() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i >= 0 {
		b = b[:i]
	}
	id, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		panic("trGoroutineID: " + err.Error())
	}
	return id
}

// trWatchers returns how many whenIdle calls wait on rc.
func trWatchers(tr *TaskLifecycleTracker, rc RecoveryContext) int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if c := tr.contexts[rc]; c != nil {
		return len(c.watchers)
	}
	return 0
}

// trUntil yields until cond holds, failing the test after trTimeout. It is for state that
// another goroutine is about to reach and that no channel announces (a watcher being
// registered inside Wait).
func trUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(trTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		runtime.Gosched()
	}
}

// trRecv receives from ch, failing the test after trTimeout.
func trRecv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(trTimeout):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

func TestTrackerRecoveryContextString(t *testing.T) {
	require.Equal(t, "producer 1, live", RecoveryContext{Producer: 1}.String())
	require.Equal(t, "producer 3, request 42", RecoveryContext{Producer: 3, RequestID: 42}.String())
	require.Equal(t, "producer 0, request -5", RecoveryContext{RequestID: -5}.String())
}

func TestTrackerCountsPerContext(t *testing.T) {
	tr := NewTaskLifecycleTracker()
	a := RecoveryContext{Producer: 1, RequestID: 7}
	b := RecoveryContext{Producer: 1}               // live, same producer
	c := RecoveryContext{Producer: 2, RequestID: 7} // same request id, other producer

	require.Empty(t, tr.Snapshot())
	require.Equal(t, TaskCounts{}, tr.Counts(a))
	require.Zero(t, tr.Pending(a))

	ka := make([]Ticket, 5)
	for i := range ka {
		ka[i] = tr.Allocate(a)
		require.Equal(t, a, ka[i].Context())
	}
	kb := []Ticket{tr.Allocate(b), tr.Allocate(b)}
	kc := tr.Allocate(c)
	require.Equal(t, c, kc.Context())

	require.Equal(t, TaskCounts{Allocated: 5}, tr.Counts(a))
	require.Equal(t, 5, tr.Pending(a))
	require.Equal(t, 2, tr.Pending(b))
	require.Equal(t, 1, tr.Pending(c))

	// a: 4 start, 2 complete, 1 abandoned unstarted.
	for _, k := range ka[:4] {
		k.Start()
	}
	ka[0].Complete()
	ka[1].Complete()
	ka[4].Abandon()
	want := TaskCounts{Allocated: 5, Started: 4, Completed: 2, Abandoned: 1}
	require.Equal(t, want, tr.Counts(a))
	require.Equal(t, 2, want.Pending())
	require.Equal(t, 2, tr.Pending(a))

	// b and c untouched by what happened to a.
	require.Equal(t, TaskCounts{Allocated: 2}, tr.Counts(b))
	require.Equal(t, TaskCounts{Allocated: 1}, tr.Counts(c))

	kb[0].Start()
	kb[0].Complete()
	kc.Abandon()
	require.Equal(t, 2, tr.Pending(a), "finishing tasks of other contexts changes nothing for a")
	require.Equal(t, 1, tr.Pending(b))
	require.Zero(t, tr.Pending(c))

	snap := tr.Snapshot()
	require.Equal(t, map[RecoveryContext]TaskCounts{
		a: {Allocated: 5, Started: 4, Completed: 2, Abandoned: 1},
		b: {Allocated: 2, Started: 1, Completed: 1},
		c: {Allocated: 1, Abandoned: 1},
	}, snap)

	// The snapshot is a copy.
	ka[2].Complete()
	require.Equal(t, uint64(2), snap[a].Completed)
	require.Equal(t, uint64(3), tr.Counts(a).Completed)

	ka[3].Complete()
	kb[1].Start()
	kb[1].Complete()
	for rc, counts := range tr.Snapshot() {
		require.Zero(t, counts.Pending(), "%v", rc)
		require.Zero(t, tr.Pending(rc), "%v", rc)
	}
	require.Equal(t, TaskCounts{Allocated: 5, Started: 4, Completed: 4, Abandoned: 1}, tr.Counts(a))

	// An unknown context reads as zero and is not created by reading it.
	unknown := RecoveryContext{Producer: 9, RequestID: 9}
	require.Equal(t, TaskCounts{}, tr.Counts(unknown))
	require.Zero(t, tr.Pending(unknown))
	require.NotContains(t, tr.Snapshot(), unknown)
}

func TestTrackerWaitIdleOrUnknownReturnsAtOnce(t *testing.T) {
	tr := NewTaskLifecycleTracker()
	ctx, cancel := context.WithTimeout(context.Background(), trTimeout)
	defer cancel()

	// Never seen.
	require.NoError(t, tr.Wait(ctx, RecoveryContext{Producer: 1, RequestID: 1}))

	// Seen, all done.
	rc := RecoveryContext{Producer: 1, RequestID: 2}
	k := tr.Allocate(rc)
	k.Start()
	k.Complete()
	require.NoError(t, tr.Wait(ctx, rc))

	// Idle even with a context that has ended: nothing to wait for.
	done, cancelDone := context.WithCancel(context.Background())
	cancelDone()
	require.NoError(t, tr.Wait(done, rc))
	require.NoError(t, tr.Wait(done, RecoveryContext{Producer: 5}))
	require.Zero(t, trWatchers(tr, rc))
}

func TestTrackerWaitBlocksUntilLastComplete(t *testing.T) {
	tr := NewTaskLifecycleTracker()
	rc := RecoveryContext{Producer: 1, RequestID: 7}
	other := RecoveryContext{Producer: 1, RequestID: 8}
	ks := []Ticket{tr.Allocate(rc), tr.Allocate(rc), tr.Allocate(rc)}
	ko := tr.Allocate(other)

	var lastDone atomic.Bool
	result := make(chan error, 1)
	go func() {
		err := tr.Wait(context.Background(), rc)
		if !lastDone.Load() {
			err = errors.New("Wait returned before the last task completed")
		}
		result <- err
	}()
	trUntil(t, "Wait to register", func() bool { return trWatchers(tr, rc) == 1 })

	ks[0].Start()
	ks[0].Complete()
	ks[1].Abandon()
	ko.Start()
	ko.Complete() // another context: no effect on rc
	require.Equal(t, 1, tr.Pending(rc))
	require.Equal(t, 1, trWatchers(tr, rc), "the waiter is still registered")
	select {
	case err := <-result:
		t.Fatalf("Wait returned with a task pending: %v", err)
	default:
	}

	ks[2].Start()
	lastDone.Store(true)
	ks[2].Complete()
	require.NoError(t, trRecv(t, result, "Wait to return"))
	require.Zero(t, trWatchers(tr, rc))
}

func TestTrackerWaitCancelled(t *testing.T) {
	tr := NewTaskLifecycleTracker()
	rc := RecoveryContext{Producer: 2, RequestID: 3}
	k := tr.Allocate(rc)

	// Already cancelled.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, tr.Wait(ctx, rc), context.Canceled)
	require.Zero(t, trWatchers(tr, rc), "a cancelled Wait leaves no watcher behind")

	// Cancelled while waiting.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	result := make(chan error, 1)
	go func() { result <- tr.Wait(ctx, rc) }()
	trUntil(t, "Wait to register", func() bool { return trWatchers(tr, rc) == 1 })
	cancel()
	require.ErrorIs(t, trRecv(t, result, "Wait to return"), context.Canceled)
	require.Zero(t, trWatchers(tr, rc))

	// Deadline.
	dctx, dcancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer dcancel()
	require.ErrorIs(t, tr.Wait(dctx, rc), context.DeadlineExceeded)

	// The task is still tracked, and completing it wakes nobody and breaks nothing.
	require.Equal(t, 1, tr.Pending(rc))
	k.Complete()
	require.NoError(t, tr.Wait(context.Background(), rc))
}

func TestTrackerWhenIdleNotWaitingWhenIdle(t *testing.T) {
	tr := NewTaskLifecycleTracker()
	called := false
	stop, waiting, _ := tr.whenIdle(RecoveryContext{Producer: 1, RequestID: 1}, func(bool) { called = true })
	require.False(t, waiting)
	require.Nil(t, stop)

	rc := RecoveryContext{Producer: 1, RequestID: 2}
	tr.Allocate(rc).Complete()
	stop, waiting, _ = tr.whenIdle(rc, func(bool) { called = true })
	require.False(t, waiting)
	require.Nil(t, stop)

	// A later task of rc does not call a fn that was refused.
	tr.Allocate(rc).Complete()
	require.False(t, called)
}

func TestTrackerWhenIdleFiresOnceOnCompletingGoroutine(t *testing.T) {
	tr := NewTaskLifecycleTracker()
	rc := RecoveryContext{Producer: 4, RequestID: 44}
	ks := []Ticket{tr.Allocate(rc), tr.Allocate(rc)}

	var calls atomic.Int32
	var firedOn atomic.Uint64
	stop, waiting, _ := tr.whenIdle(rc, func(bool) {
		calls.Add(1)
		firedOn.Store(trGoroutineID())
	})
	require.True(t, waiting)
	require.NotNil(t, stop)

	ks[0].Complete()
	require.Zero(t, calls.Load(), "fn ran with a task pending")

	// A task allocated while waiting is waited for too.
	ks = append(ks, tr.Allocate(rc))
	ks[1].Complete()
	require.Zero(t, calls.Load(), "fn ran with a task allocated after whenIdle pending")

	// The last Complete, on its own goroutine, runs fn there, before it returns.
	type result struct {
		id    uint64
		calls int32
	}
	res := make(chan result, 1)
	go func() {
		ks[2].Complete()
		res <- result{id: trGoroutineID(), calls: calls.Load()}
	}()
	r := trRecv(t, res, "the completing goroutine")
	require.Equal(t, int32(1), r.calls, "fn had run when Complete returned")
	require.Equal(t, r.id, firedOn.Load(), "fn ran on the goroutine that completed the last task")
	require.NotEqual(t, trGoroutineID(), firedOn.Load())

	// Exactly once: the context going busy and idle again does not call it again.
	tr.Allocate(rc).Complete()
	require.Equal(t, int32(1), calls.Load())

	// stop after the call reports that it came too late.
	require.False(t, stop())
	require.False(t, stop())
	require.Equal(t, int32(1), calls.Load())
}

func TestTrackerWhenIdleStopBeforeFire(t *testing.T) {
	tr := NewTaskLifecycleTracker()
	rc := RecoveryContext{Producer: 5, RequestID: 55}
	k := tr.Allocate(rc)

	var stopped, kept atomic.Int32
	stop, waiting, _ := tr.whenIdle(rc, func(bool) { stopped.Add(1) })
	require.True(t, waiting)
	_, waiting, _ = tr.whenIdle(rc, func(bool) { kept.Add(1) })
	require.True(t, waiting)
	require.Equal(t, 2, trWatchers(tr, rc))

	require.True(t, stop())
	require.Equal(t, 1, trWatchers(tr, rc), "stop removes its watcher only")
	require.False(t, stop(), "a second stop has nothing left to stop")

	k.Complete()
	require.Zero(t, stopped.Load(), "a stopped fn never runs")
	require.Equal(t, int32(1), kept.Load(), "the other watcher still runs")
	require.Zero(t, trWatchers(tr, rc))
}

func TestTrackerWhenIdleManyWatchers(t *testing.T) {
	tr := NewTaskLifecycleTracker()
	rc := RecoveryContext{Producer: 6, RequestID: 66}
	k := tr.Allocate(rc)
	var order []int
	for i := range 5 {
		_, waiting, _ := tr.whenIdle(rc, func(bool) { order = append(order, i) })
		require.True(t, waiting)
	}
	k.Complete()
	require.Equal(t, []int{0, 1, 2, 3, 4}, order, "every watcher runs once, in the order registered")
}

func TestTrackerAbandonCountsTowardIdle(t *testing.T) {
	tr := NewTaskLifecycleTracker()
	rc := RecoveryContext{Producer: 3, RequestID: 9}
	ks := []Ticket{tr.Allocate(rc), tr.Allocate(rc), tr.Allocate(rc)}

	var fired atomic.Int32
	_, waiting, _ := tr.whenIdle(rc, func(bool) { fired.Add(1) })
	require.True(t, waiting)

	ks[0].Start()
	ks[0].Complete()
	ks[1].Abandon()
	require.Zero(t, fired.Load())
	ks[2].Abandon() // the last one is abandoned, not completed
	require.Equal(t, int32(1), fired.Load())
	require.Zero(t, tr.Pending(rc))
	require.Equal(t, TaskCounts{Allocated: 3, Started: 1, Completed: 1, Abandoned: 2}, tr.Counts(rc))
	require.NoError(t, tr.Wait(context.Background(), rc))

	// Only abandoned tasks.
	rc2 := RecoveryContext{Producer: 3, RequestID: 10}
	k := tr.Allocate(rc2)
	result := make(chan error, 1)
	go func() { result <- tr.Wait(context.Background(), rc2) }()
	trUntil(t, "Wait to register", func() bool { return trWatchers(tr, rc2) == 1 })
	k.Abandon()
	require.NoError(t, trRecv(t, result, "Wait to return"))
}

func TestTrackerConcurrentContexts(t *testing.T) {
	tr := NewTaskLifecycleTracker()
	const (
		workers   = 8
		contexts  = 5
		perWorker = 400 // tasks per worker and context
	)
	rcs := make([]RecoveryContext, contexts)
	for i := range rcs {
		rcs[i] = RecoveryContext{Producer: i % 3, RequestID: int64(i)} // includes live contexts
	}

	// One watcher per context, registered before any task: each must fire exactly once,
	// only when its context's last task is over.
	var fired [contexts]atomic.Int32
	var lastTask [contexts]atomic.Int64
	var finished [contexts]atomic.Int64
	hold := make([]Ticket, contexts) // keeps each context busy until every worker is done
	for i, rc := range rcs {
		hold[i] = tr.Allocate(rc)
		_, waiting, _ := tr.whenIdle(rc, func(bool) {
			fired[i].Add(1)
			lastTask[i].Store(finished[i].Load())
		})
		require.True(t, waiting)
	}

	start := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			<-start
			pending := make([]Ticket, 0, 16)
			for n := range perWorker * contexts {
				i := (n + w) % contexts
				pending = append(pending, tr.Allocate(rcs[i]))
				if len(pending) == cap(pending) || n == perWorker*contexts-1 {
					for j, k := range pending {
						ci := k.Context().RequestID
						if j%7 == 3 {
							k.Abandon()
						} else {
							k.Start()
							k.Complete()
						}
						finished[ci].Add(1)
					}
					pending = pending[:0]
				}
			}
		})
	}
	// Readers racing with the writers.
	readersDone := make(chan struct{})
	var readers sync.WaitGroup
	for r := range 2 {
		readers.Go(func() {
			for {
				select {
				case <-readersDone:
					return
				default:
				}
				for rc, c := range tr.Snapshot() {
					if c.Completed+c.Abandoned > c.Allocated || c.Started > c.Allocated {
						t.Errorf("inconsistent counts for %v: %+v", rc, c)
						return
					}
				}
				_ = tr.Pending(rcs[r])
				_ = tr.Counts(rcs[r+1])
			}
		})
	}
	close(start)
	wg.Wait()
	close(readersDone)
	readers.Wait()

	for i, rc := range rcs {
		require.Zero(t, fired[i].Load(), "%v: fired while its hold task is pending", rc)
		require.Equal(t, 1, tr.Pending(rc), "%v", rc)
	}
	for i, k := range hold {
		k.Complete()
		require.Equal(t, int32(1), fired[i].Load(), "%v", rcs[i])
		require.Equal(t, int64(workers*perWorker), lastTask[i].Load(), "%v: fired before every task finished", rcs[i])
	}

	total := uint64(workers*perWorker) + 1
	snap := tr.Snapshot()
	require.Len(t, snap, contexts)
	for _, rc := range rcs {
		c := snap[rc]
		require.Equal(t, total, c.Allocated, "%v", rc)
		require.Equal(t, total, c.Completed+c.Abandoned, "%v", rc)
		require.Equal(t, c.Completed-1, c.Started, "%v: the hold task never started", rc)
		require.NotZero(t, c.Abandoned, "%v", rc)
		require.Zero(t, c.Pending(), "%v", rc)
		require.Zero(t, tr.Pending(rc), "%v", rc)
		require.NoError(t, tr.Wait(context.Background(), rc))
	}
}

func TestTrackerConcurrentWaiters(t *testing.T) {
	tr := NewTaskLifecycleTracker()
	rc := RecoveryContext{Producer: 8, RequestID: 80}
	const tasks = 200
	ks := make([]Ticket, tasks)
	for i := range ks {
		ks[i] = tr.Allocate(rc)
	}
	var finished atomic.Int64
	const waiters = 10
	results := make(chan int64, waiters)
	for range waiters {
		go func() {
			if err := tr.Wait(context.Background(), rc); err != nil {
				results <- -1
				return
			}
			results <- finished.Load()
		}()
	}
	trUntil(t, "every Wait to register", func() bool { return trWatchers(tr, rc) == waiters })

	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := g; i < tasks; i += 4 {
				finished.Add(1)
				ks[i].Start()
				ks[i].Complete()
			}
		})
	}
	wg.Wait()
	for range waiters {
		require.Equal(t, int64(tasks), trRecv(t, results, "a waiter"), "a Wait returned before the last task was over")
	}
}

func TestTrackerPrunesFinishedRecoveries(t *testing.T) {
	tr := NewTaskLifecycleTracker()
	live := RecoveryContext{Producer: 1}
	busy := RecoveryContext{Producer: 2, RequestID: 1}
	first := RecoveryContext{Producer: 3, RequestID: 1}

	// A finished live context, a recovery with a task pending (and a watcher), and a
	// finished recovery, before many more finished recoveries.
	lk := tr.Allocate(live)
	lk.Start()
	lk.Complete()
	bk := tr.Allocate(busy)
	bk.Start()
	var fired atomic.Int32
	_, waiting, _ := tr.whenIdle(busy, func(bool) { fired.Add(1) })
	require.True(t, waiting)
	tr.Allocate(first).Complete()

	const extra = 3 * maxIdleContexts
	for i := range extra {
		k := tr.Allocate(RecoveryContext{Producer: 4, RequestID: int64(i + 1)})
		k.Start()
		k.Complete()
	}

	snap := tr.Snapshot()
	require.LessOrEqual(t, len(snap), maxIdleContexts, "finished recoveries are not kept without bound")
	require.NotContains(t, snap, first, "the oldest finished recovery is forgotten")
	require.Equal(t, TaskCounts{}, tr.Counts(first))

	require.Equal(t, TaskCounts{Allocated: 1, Started: 1, Completed: 1}, tr.Counts(live), "live contexts are kept")
	require.Equal(t, TaskCounts{Allocated: 1, Started: 1}, tr.Counts(busy), "a context with a pending task is kept")
	require.Equal(t, 1, tr.Pending(busy))
	require.Equal(t, 1, trWatchers(tr, busy))
	// The last recovery, the newest one, is remembered.
	require.Equal(t, TaskCounts{Allocated: 1, Started: 1, Completed: 1}, tr.Counts(RecoveryContext{Producer: 4, RequestID: extra}))

	// The pending task's ticket still counts on the kept context, and its watcher fires.
	bk.Complete()
	require.Equal(t, int32(1), fired.Load())
	require.Equal(t, TaskCounts{Allocated: 1, Started: 1, Completed: 1}, tr.Counts(busy))

	// A forgotten context starts again from zero.
	tr.Allocate(first).Complete()
	require.Equal(t, TaskCounts{Allocated: 1, Completed: 1}, tr.Counts(first))
}

func TestTrackerPruneKeepsManyLiveContexts(t *testing.T) {
	tr := NewTaskLifecycleTracker()
	// More live contexts than the bound: none of them is ever forgotten.
	for p := range maxIdleContexts + 10 {
		tr.Allocate(RecoveryContext{Producer: p}).Complete()
	}
	for i := range 10 {
		tr.Allocate(RecoveryContext{Producer: 1, RequestID: int64(i + 1)}).Complete()
	}
	for p := range maxIdleContexts + 10 {
		require.Equal(t, uint64(1), tr.Counts(RecoveryContext{Producer: p}).Completed, "live context of producer %d", p)
	}
}
