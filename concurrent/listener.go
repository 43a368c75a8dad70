package concurrent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// Dispatcher delivers the messages of a feed to a customer's feed.OddsFeedListener
// on a pool of workers: the messages of one match (event URN) in the order they arrived,
// the messages of different matches in parallel. Those who know the Java SDK's
// Concurrent Listener know it as ConcurrentOddsFeedListener.
//
// With a feed.Session, plug it in as SessionConfig.Dispatcher: the session's reading
// goroutine then only queues each raw message, and a worker decodes it and calls the
// customer's listener. Its own feed.OddsFeedListener methods queue messages that are
// decoded already, for callers that hold such messages.
//
// NewDispatcher gives it a Pool of its own; Pool.Dispatcher makes one of a Pool that
// several sessions share. Either way it has its own Stream, Stats and Close.
//
// Every task is tracked by the TaskLifecycleTracker under the RecoveryContext of its
// message, so that a StatusGate sharing the tracker can hold a producer's up
// status back until the customer has seen every message of the recovery.
type Dispatcher struct {
	l        feed.OddsFeedListener
	cashouts bool                  // l is a feed.CashoutListener
	hooked   feed.OddsFeedListener // l, telling the tracker's call hooks (hooked.asListener)
	tracker  *TaskLifecycleTracker
	stream   *Stream // what Dispatch is given, for the tracker's processed point
	pool     *Pool
	ownPool  bool // made by NewDispatcher: Close closes the pool too
	rep      *feed.DeliveryReporter
	sh       ownerState // under pool.sched.mu
	done     []counter  // tasks completed, by worker

	ctx    context.Context // passed to the listener; cancelled when Close gives up or the pool's does
	cancel context.CancelFunc
	close  sync.Once

	abandon                                atomic.Bool            // Close ran out of time: drop this listener's queued tasks
	why                                    atomic.Pointer[reason] // why they are dropped, set before abandon
	dispatched, inline, abandoned, blocked atomic.Uint64
	inlineRunning                          atomic.Int32
}

var (
	_ feed.Dispatcher       = (*Dispatcher)(nil)
	_ feed.OddsFeedListener = (*Dispatcher)(nil)
	_ feed.CashoutListener  = (*Dispatcher)(nil)
)

// NewDispatcher starts cfg.Threads workers that deliver to l, tracking every task in
// tracker: a Pool of its own, closed with it. A bad Config is refused with the field
// named.
func NewDispatcher(l feed.OddsFeedListener, tracker *TaskLifecycleTracker, cfg Config) (*Dispatcher, error) {
	if l == nil {
		return nil, errors.New("concurrent: NewDispatcher: listener is nil")
	}
	if tracker == nil {
		return nil, errors.New("concurrent: NewDispatcher: tracker is nil")
	}
	p, err := NewPool(tracker, cfg)
	if err != nil {
		return nil, err
	}
	c, err := p.Dispatcher(l)
	if err != nil { // not reached: the pool is new
		_ = p.Close(context.Background())
		return nil, err
	}
	c.ownPool = true
	return c, nil
}

// Dispatch queues ev as a task of its match; a worker decodes it and calls the listener.
// It blocks while Config.QueueSize tasks wait, and returns ctx.Err() if ctx ends first,
// or feed.ErrDispatcherClosed after Close; ev is then not delivered, and its Handled is
// not called.
//
// An event that cannot be routed (ev.Err set) is delivered at once, on the calling
// goroutine, when Config.HandleErrorsAsynchronously is false.
//
// ev.Handled, when set, is called once the worker is done with ev: after its listener
// call, or as the worker drops it when a Close (the Dispatcher's or the Pool's) ran out
// of time, then with an error matching feed.ErrDispatcherClosed and that Close's
// context error (see feed.Event.Handled).
func (c *Dispatcher) Dispatch(ctx context.Context, ev feed.Event) error {
	if ev.Err != nil && !c.pool.cfg.asyncErrors {
		return c.deliverNow(ctx, ev)
	}
	t := task{ev: ev}
	return c.submit(ctx, ev.Key.Event, true, RecoveryContext{Producer: ev.Producer, RequestID: ev.RequestID}, &t)
}

// Stream returns the stream of the messages given to Dispatch, for the tracker's
// processed point: report each alive the session reads to its Alive, on the goroutine
// that calls Dispatch (the session's reading goroutine).
func (c *Dispatcher) Stream() *Stream { return c.stream }

// deliverNow delivers an unroutable event on the calling goroutine, still tracked so
// that the counts of its context stay true.
func (c *Dispatcher) deliverNow(ctx context.Context, ev feed.Event) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	// The call holds the scheduler as a worker holds a lane: Close waits for it, and the
	// listener's context is not cancelled under it.
	p := c.pool
	ok, timed := p.sched.hold(c)
	if !ok {
		return feed.ErrDispatcherClosed
	}
	defer p.sched.unhold(c)
	c.dispatched.Add(1)
	k := c.stream.Allocate(RecoveryContext{Producer: ev.Producer, RequestID: ev.RequestID})
	k.Start()
	c.inlineRunning.Add(1)
	p.inlineRunning.Add(1)
	var start, end int64
	if timed {
		start = monotonic()
	}
	err := feed.Deliver(c.ctx, c.listener(), &ev)
	if timed {
		end = monotonic()
	}
	p.inlineRunning.Add(-1)
	c.inlineRunning.Add(-1)
	k.Complete()
	c.inline.Add(1)
	p.inline.Add(1)
	if obs := p.cfg.observer; obs != nil {
		c.observe(obs, nil, &ev, err, start, start, end) // no queue: it waited for nothing
	}
	c.rep.Report(c.ctx, err)
	if ev.Handled != nil {
		ev.Handled(err)
	}
	return nil
}

// submit queues t; onStream allocates its ticket on the listener's Stream (Dispatch).
func (c *Dispatcher) submit(ctx context.Context, match feed.URN, onStream bool, rc RecoveryContext, t *task) error {
	if onStream {
		t.ticket = c.stream.Allocate(rc)
	} else {
		t.ticket = c.tracker.Allocate(rc)
	}
	t.owner = c
	c.dispatched.Add(1) // before a worker can complete it, so Stats never shows more completed than dispatched
	if err := c.pool.sched.put(ctx, match, t); err != nil {
		t.ticket.Abandon()
		c.dispatched.Add(^uint64(0))
		return err
	}
	return nil
}

// submitMessage queues a decoded message as a task of its event. Such messages may come
// from any goroutine, so they are tracked outside the Stream, which follows one reader.
func (c *Dispatcher) submitMessage(ctx context.Context, m feed.Message) error {
	h := m.MessageHeader()
	t := task{msg: m}
	return c.submit(ctx, h.Event, false, RecoveryContext{Producer: h.Producer, RequestID: h.RequestID}, &t)
}

// run delivers one task on worker w, unless a Close has given up on the queue.
func (c *Dispatcher) run(w *worker, t *task) {
	if c.abandon.Load() || c.pool.abandon.Load() {
		t.ticket.Abandon()
		c.abandoned.Add(1)
		c.pool.abandoned.Add(1)
		if t.ev.Handled != nil {
			t.ev.Handled(c.abandonReason())
		}
		return
	}
	t.ticket.Start()
	w.running.Store(c)
	// Only a task picked for timing when it was queued reads the clock: at 30 to 50 ns
	// a reading, timing every task would add a fifth to a third to the pool's own work.
	var start, end int64
	if t.at != 0 {
		start = monotonic()
	}
	var err error
	if l := c.listener(); t.msg != nil {
		err = feed.Call(c.ctx, l, t.msg)
	} else {
		err = feed.Deliver(c.ctx, l, &t.ev)
	}
	if t.at != 0 {
		end = monotonic()
	}
	w.running.Store(nil)
	t.ticket.Complete()
	w.completed.Add(1)
	c.done[w.index].Add(1)
	if obs := c.pool.cfg.observer; obs != nil {
		c.observe(obs, t.msg, &t.ev, err, t.at, start, end)
	}
	c.rep.Report(c.ctx, err)
	if t.ev.Handled != nil { // a decoded message's task has none
		t.ev.Handled(err)
	}
}

// reason is why a Close dropped the tasks it did not wait for.
type reason struct{ err error }

// giveUp records why the tasks not yet started are dropped, once: ctx, the context of
// the first Close that ran out of time.
func giveUp(why *atomic.Pointer[reason], ctx context.Context) {
	why.CompareAndSwap(nil, &reason{fmt.Errorf("%w before the event was delivered: %w",
		feed.ErrDispatcherClosed, context.Cause(ctx))})
}

// abandonReason is why a task of c was dropped: its own Close ran out of time, or its
// pool's did.
func (c *Dispatcher) abandonReason() error {
	if r := c.why.Load(); r != nil {
		return r.err
	}
	if r := c.pool.why.Load(); r != nil {
		return r.err
	}
	return feed.ErrDispatcherClosed // not reached: abandon is set after why
}

// observe tells obs of the call for m (or, when m is nil, for ev) that returned err;
// at, start and end are the clock readings of a timed call (all 0 for one that is not):
// when it was queued, when the call began and when it returned. A cashout for a
// listener that takes none was no call: nothing is told.
func (c *Dispatcher) observe(obs Observer, m feed.Message, ev *feed.Event, err error, at, start, end int64) {
	call := Call{Pool: c.pool.cfg.name}
	// What Deliver and Call return tells the call: a *feed.ListenerError for the
	// message's method that failed or panicked, any other error for a raw message that
	// went to OnUnparsableMessage (however that call ended: it is the message's one call).
	le, failed := err.(*feed.ListenerError)
	switch {
	case err == nil:
		call.Result = CallReturned
	case failed && le.Panic != nil:
		call.Result = CallPanicked
	case failed || m != nil:
		call.Result = CallFailed
	default:
		call.Result, call.Type = CallUnparsable, unparsableType(err)
	}
	switch {
	case call.Result == CallUnparsable:
	case m != nil:
		call.Producer, call.Type = m.MessageHeader().Producer, m.Type()
	default:
		call.Producer, call.Type = ev.Producer, ev.Key.Type
	}
	if call.Type == feed.MessageCashout && !c.cashouts && call.Result == CallReturned {
		return
	}
	if start != 0 {
		call.Timed, call.Wait, call.Duration = true, time.Duration(start-at), time.Duration(end-start)
	}
	obs.ListenerCalled(call)
}

// listener returns the customer's listener as the workers call it: through hooked once the
// tracker has call hooks, so that without them a call costs nothing more.
func (c *Dispatcher) listener() feed.OddsFeedListener {
	if c.tracker.calls.Load() != nil {
		return c.hooked
	}
	return c.l
}

// Close stops taking tasks, lets the workers finish this listener's queued ones and
// returns once they are done; with a Pool of its own (NewDispatcher) it then closes
// the pool, and returns once every worker has exited. The pool's other listeners keep
// working. If ctx ends first, this listener's tasks not yet started are abandoned (and
// recorded so in the tracker), the context passed to its listener is cancelled, and
// Close returns ctx.Err() without waiting for a listener call that ignores its context;
// a later Close waits for the tasks to be done or dropped.
//
// A match's messages from all of a pool's listeners share one queue, so the tasks of a
// listener being closed can wait behind another listener's tasks of the same match.
//
// Close waits for the listener calls in progress, so a listener must not call it (it would
// wait for its own return); to stop from a listener, call Close on a new goroutine.
func (c *Dispatcher) Close(ctx context.Context) error {
	c.close.Do(func() { c.pool.sched.closeOwner(c) })
	err := c.drain(ctx)
	if c.ownPool {
		if perr := c.pool.Close(ctx); err == nil {
			err = perr
		}
	}
	return err
}

// drain waits for the listener's tasks to be over.
func (c *Dispatcher) drain(ctx context.Context) error {
	select {
	case <-c.sh.drained:
		c.cancel()
		return nil
	default:
	}
	select {
	case <-c.sh.drained:
		c.cancel()
		return nil
	case <-ctx.Done():
		giveUp(&c.why, ctx)
		c.abandon.Store(true)
		c.cancel()
		return ctx.Err()
	}
}

// Stats is a snapshot of a Dispatcher's gauges and counters: its own tasks, on its
// pool's workers.
type Stats struct {
	Queued     int      `json:"queued"`     // tasks waiting in their match's queue (a worker's batch in hand, up to 16, is not counted)
	Running    int      `json:"running"`    // listener calls in progress
	Matches    int      `json:"matches"`    // matches with tasks queued or running
	Dispatched uint64   `json:"dispatched"` // tasks accepted
	Completed  uint64   `json:"completed"`  // tasks whose listener call returned, however it ended; Workers' sum, plus unroutable messages delivered inline
	Unparsable uint64   `json:"unparsable"` // messages given to OnUnparsableMessage
	Failed     uint64   `json:"failed"`     // listener calls that returned an error
	Panicked   uint64   `json:"panicked"`   // listener calls that panicked
	Abandoned  uint64   `json:"abandoned"`  // tasks dropped because Close ran out of time
	Blocked    uint64   `json:"blocked"`    // dispatches that waited because Config.QueueSize tasks were queued
	Workers    []uint64 `json:"workers"`    // tasks completed by each of the pool's workers
}

// Stats returns the listener's gauges and counters.
func (c *Dispatcher) Stats() Stats {
	// The completions are read before the dispatches, so that a task dispatched and done
	// meanwhile never shows more completed than dispatched.
	st := Stats{
		Abandoned: c.abandoned.Load(),
		Completed: c.inline.Load(),
		Running:   int(c.inlineRunning.Load()) + c.pool.runningFor(c),
		Workers:   make([]uint64, len(c.done)),
	}
	for i := range c.done {
		st.Workers[i] = c.done[i].Load()
		st.Completed += st.Workers[i]
	}
	errs := c.rep.Counts()
	st.Unparsable, st.Failed, st.Panicked = errs.Unparsable, errs.Failed, errs.Panicked
	st.Dispatched = c.dispatched.Load()
	st.Blocked = c.blocked.Load()
	st.Queued, st.Matches = c.pool.sched.ownerStats(c)
	return st
}
