package concurrent

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// RecoveryContext names the tasks of one recovery: the producer, and the request id the
// feed puts on every message it replays for that recovery. Live messages carry no request
// id, so the live tasks of a producer share the context {Producer, 0}.
type RecoveryContext struct {
	Producer  int
	RequestID int64
}

// String formats rc as "producer 1, request 42", or "producer 1, live".
func (rc RecoveryContext) String() string {
	if rc.RequestID == 0 {
		return fmt.Sprintf("producer %d, live", rc.Producer)
	}
	return fmt.Sprintf("producer %d, request %d", rc.Producer, rc.RequestID)
}

// MarshalText implements encoding.TextMarshaler, so that a map keyed by RecoveryContext
// (the SDK's Stats.Tasks) encodes to JSON: "1:live" for the live tasks of producer 1,
// "1:42" for those of its request 42.
func (rc RecoveryContext) MarshalText() ([]byte, error) {
	b := strconv.AppendInt(nil, int64(rc.Producer), 10)
	if rc.RequestID == 0 {
		return append(b, ":live"...), nil
	}
	return strconv.AppendInt(append(b, ':'), rc.RequestID, 10), nil
}

// UnmarshalText implements encoding.TextUnmarshaler, reading what MarshalText writes.
func (rc *RecoveryContext) UnmarshalText(b []byte) error {
	p, r, ok := strings.Cut(string(b), ":")
	producer, err := strconv.Atoi(p)
	if !ok || err != nil {
		return fmt.Errorf("concurrent: recovery context %q is not producer:request or producer:live", b)
	}
	var request int64
	if r != "live" {
		if request, err = strconv.ParseInt(r, 10, 64); err != nil || request == 0 {
			return fmt.Errorf("concurrent: recovery context %q is not producer:request or producer:live", b)
		}
	}
	*rc = RecoveryContext{Producer: producer, RequestID: request}
	return nil
}

// TaskCounts is the life so far of the tasks of one RecoveryContext.
type TaskCounts struct {
	Allocated uint64 `json:"allocated"` // tasks handed to a scheduler
	Started   uint64 `json:"started"`   // tasks a worker began
	Completed uint64 `json:"completed"` // tasks whose listener call returned, whether it succeeded, failed or panicked
	Abandoned uint64 `json:"abandoned"` // tasks dropped unstarted because a Close ran out of time
}

// Pending returns the tasks allocated and not yet completed or abandoned.
func (c TaskCounts) Pending() int { return int(c.Allocated - c.Completed - c.Abandoned) }

// maxIdleContexts bounds the finished recovery contexts a tracker remembers: past it, the
// counts of finished recoveries are forgotten (the live contexts are always kept).
const maxIdleContexts = 1024

// TaskLifecycleTracker follows every task from allocation through start to completion,
// per RecoveryContext, so that the news that a recovery is over (the producer is up) can
// wait until the customer's listener has seen every message of that recovery: with
// matches running in parallel, the feed's last replayed message is not the last one
// processed.
//
// One tracker is shared by every Dispatcher of an SDK and by its
// StatusGate. It is safe for concurrent use, and its zero value is an empty
// tracker.
type TaskLifecycleTracker struct {
	mu       sync.Mutex
	contexts map[RecoveryContext]*tracked
	pruneAt  int // the number of contexts at which finished recoveries are forgotten

	streams     []*Stream            // the processed point's streams, one per session
	points      map[int]time.Time    // processed point by producer
	onProcessed func(int, time.Time) // told when a point moves on

	calls atomic.Pointer[callHooks] // told of each listener call; nil for none
}

// tracked holds one context's counts. allocated and pending change under the tracker's
// lock when they grow, so that a context seen idle under the lock can be forgotten safely;
// the other counts change without it, as tasks finish on many workers. A live context
// ({Producer, 0}) is never forgotten, so a Stream grows its counts without the lock.
type tracked struct {
	rc                          RecoveryContext
	allocated                   atomic.Uint64
	started, completed, abandon atomic.Uint64
	pending                     atomic.Int64
	watchers                    []*watcher // under TaskLifecycleTracker.mu
}

// watcher is a call waiting for a context to become idle.
type watcher struct {
	fired atomic.Bool
	fn    func(complete bool)
}

// NewTaskLifecycleTracker returns a tracker with no task.
func NewTaskLifecycleTracker() *TaskLifecycleTracker {
	return &TaskLifecycleTracker{contexts: make(map[RecoveryContext]*tracked), pruneAt: maxIdleContexts}
}

// Ticket is one allocated task's handle: the worker that runs it calls Start, then
// Complete, or Abandon for a task dropped unstarted. A ticket is finished once: finishing
// it twice would corrupt the counts, so it panics.
type Ticket struct {
	t *TaskLifecycleTracker
	c *tracked
	e *epoch // the stream's epoch the task counts in; nil for a ticket not allocated on a Stream
}

// Allocate records a new task of rc and returns its ticket.
func (t *TaskLifecycleTracker) Allocate(rc RecoveryContext) Ticket {
	t.mu.Lock()
	c := t.contexts[rc]
	if c == nil {
		c = t.addLocked(rc)
	}
	c.allocated.Add(1)
	c.pending.Add(1)
	t.mu.Unlock()
	return Ticket{t: t, c: c}
}

func (t *TaskLifecycleTracker) addLocked(rc RecoveryContext) *tracked {
	if t.contexts == nil {
		t.contexts = make(map[RecoveryContext]*tracked)
	}
	if len(t.contexts) >= max(t.pruneAt, maxIdleContexts) {
		for k, c := range t.contexts {
			// Never a live context: Streams hold on to them (Stream.Allocate).
			if k.RequestID != 0 && c.pending.Load() == 0 && len(c.watchers) == 0 {
				delete(t.contexts, k)
			}
		}
		// If most contexts are busy, the next scan waits until the map has doubled: the
		// scans stay amortised however many contexts are in use.
		t.pruneAt = max(maxIdleContexts, 2*len(t.contexts))
	}
	c := &tracked{rc: rc}
	t.contexts[rc] = c
	return c
}

// Start records that a worker began the task.
func (k Ticket) Start() { k.c.started.Add(1) }

// Complete records that the task is over, however its listener call ended. The processed
// point moves first (OnProcessed is called), then the task counts as completed: whoever
// waits for the task (Wait, SDK.Flush) finds the point's news already passed on.
func (k Ticket) Complete() {
	if k.e != nil {
		k.t.release(k.e)
	}
	k.t.finish(k.c, &k.c.completed)
}

// Abandon records that the task was dropped without running. On a Stream, its message
// holds the processed point where it is, since it was never processed.
func (k Ticket) Abandon() { k.t.finish(k.c, &k.c.abandon) }

// Context returns the recovery context the task belongs to.
func (k Ticket) Context() RecoveryContext { return k.c.rc }

func (t *TaskLifecycleTracker) finish(c *tracked, counter *atomic.Uint64) {
	counter.Add(1)
	if n := c.pending.Add(-1); n != 0 {
		if n < 0 {
			panic("concurrent: a Ticket of " + c.rc.String() + " was completed or abandoned twice")
		}
		return
	}
	t.mu.Lock()
	// A task allocated since the count reached zero keeps the context busy: the watchers
	// wait for that one too.
	if c.pending.Load() != 0 || len(c.watchers) == 0 {
		t.mu.Unlock()
		return
	}
	ws := c.watchers
	c.watchers = nil
	complete := c.abandon.Load() == 0
	t.mu.Unlock()
	for _, w := range ws {
		if w.fired.CompareAndSwap(false, true) {
			w.fn(complete)
		}
	}
}

// whenIdle arranges for fn to be called, on the goroutine that finishes rc's last pending
// task, once rc has none; complete tells fn whether every task of rc ran (none was
// abandoned). When rc has no pending task now, whenIdle reports waiting false, with
// complete as it stands, and never calls fn. stop cancels the call; it reports whether it
// did so before fn was called.
func (t *TaskLifecycleTracker) whenIdle(rc RecoveryContext, fn func(complete bool)) (stop func() bool, waiting, complete bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.contexts[rc]
	if c == nil {
		return nil, false, true
	}
	if c.pending.Load() == 0 {
		return nil, false, c.abandon.Load() == 0
	}
	w := &watcher{fn: fn}
	c.watchers = append(c.watchers, w)
	return func() bool {
		if !w.fired.CompareAndSwap(false, true) {
			return false
		}
		t.mu.Lock()
		for i, x := range c.watchers {
			if x == w {
				c.watchers = append(c.watchers[:i], c.watchers[i+1:]...)
				break
			}
		}
		t.mu.Unlock()
		return true
	}, true, false
}

// Wait blocks until rc has no pending task, or returns ctx.Err() when ctx ends first.
func (t *TaskLifecycleTracker) Wait(ctx context.Context, rc RecoveryContext) error {
	idle := make(chan struct{})
	stop, waiting, _ := t.whenIdle(rc, func(bool) { close(idle) })
	if !waiting {
		return nil
	}
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		if stop() {
			return ctx.Err()
		}
		return nil // became idle while ctx ended
	}
}

// Pending returns the number of tasks of rc allocated and not yet finished.
func (t *TaskLifecycleTracker) Pending(rc RecoveryContext) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c := t.contexts[rc]; c != nil {
		return int(c.pending.Load())
	}
	return 0
}

// Counts returns the counts of rc; zero for a context the tracker has never seen or has
// forgotten (a finished recovery, once more than a thousand contexts are tracked).
func (t *TaskLifecycleTracker) Counts(rc RecoveryContext) TaskCounts {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c := t.contexts[rc]; c != nil {
		return c.countsLocked()
	}
	return TaskCounts{}
}

// Snapshot returns the counts of every context the tracker knows.
func (t *TaskLifecycleTracker) Snapshot() map[RecoveryContext]TaskCounts {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := make(map[RecoveryContext]TaskCounts, len(t.contexts))
	for rc, c := range t.contexts {
		m[rc] = c.countsLocked()
	}
	return m
}

// countsLocked reads the finishing counts before allocated, so that a task finishing
// meanwhile can only make Pending look larger, never wrap below zero.
func (c *tracked) countsLocked() TaskCounts {
	completed, abandoned, started := c.completed.Load(), c.abandon.Load(), c.started.Load()
	return TaskCounts{Allocated: c.allocated.Load(), Started: started, Completed: completed, Abandoned: abandoned}
}
