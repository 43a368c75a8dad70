package concurrent

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/feedkit/feedkit/feed"
)

// OddsFeedListener delivers the messages of a feed to a customer's feed.OddsFeedListener
// on a pool of workers: the messages of one match (event URN) in the order they arrived,
// the messages of different matches in parallel. Those who know the Java SDK's
// Concurrent Listener know it as ConcurrentOddsFeedListener.
//
// With a feed.Session, plug it in as SessionConfig.Dispatcher: the session's reading
// goroutine then only queues each raw message, and a worker decodes it and calls the
// customer's listener. Its own feed.OddsFeedListener methods queue messages that are
// decoded already, for callers that hold such messages.
//
// Every task is tracked by the TaskLifecycleTracker under the RecoveryContext of its
// message, so that a GlobalEventsListener sharing the tracker can hold a producer's up
// status back until the customer has seen every message of the recovery.
type OddsFeedListener struct {
	l       feed.OddsFeedListener
	hooked  *hooked // l, telling the tracker's call hooks
	tracker *TaskLifecycleTracker
	stream  *Stream // what Dispatch is given, for the tracker's processed point
	cfg     settings
	rep     *feed.DeliveryReporter
	sched   scheduler
	workers []worker

	ctx    context.Context // passed to the listener; cancelled when Close gives up
	cancel context.CancelFunc
	wg     sync.WaitGroup
	done   chan struct{} // closed when every worker has exited
	close  sync.Once

	dispatched, inline, abandoned atomic.Uint64
	inlineRunning                 atomic.Int32
}

var (
	_ feed.Dispatcher       = (*OddsFeedListener)(nil)
	_ feed.OddsFeedListener = (*OddsFeedListener)(nil)
)

// NewOddsFeedListener starts cfg.Threads workers that deliver to l, tracking every task in
// tracker. A bad Config is refused with the field named.
func NewOddsFeedListener(l feed.OddsFeedListener, tracker *TaskLifecycleTracker, cfg Config) (*OddsFeedListener, error) {
	if l == nil {
		return nil, errors.New("concurrent: NewOddsFeedListener: listener is nil")
	}
	if tracker == nil {
		return nil, errors.New("concurrent: NewOddsFeedListener: tracker is nil")
	}
	s, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	c := &OddsFeedListener{
		l:       l,
		hooked:  &hooked{l: l, t: tracker},
		tracker: tracker,
		stream:  tracker.NewStream(),
		cfg:     s,
		rep:     feed.NewDeliveryReporter(s.onError, s.logger),
		workers: make([]worker, s.threads),
		done:    make(chan struct{}),
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.sched.init(s.queueSize)
	c.wg.Add(s.threads)
	for i := range c.workers {
		go c.work(&c.workers[i])
	}
	go func() {
		c.wg.Wait()
		c.cancel()
		close(c.done)
	}()
	return c, nil
}

// Dispatch queues ev as a task of its match; a worker decodes it and calls the listener.
// It blocks while Config.QueueSize tasks wait, and returns ctx.Err() if ctx ends first,
// or feed.ErrDispatcherClosed after Close; ev is then not delivered.
//
// An event that cannot be routed (ev.Err set) is delivered at once, on the calling
// goroutine, when Config.HandleErrorsAsynchronously is false.
func (c *OddsFeedListener) Dispatch(ctx context.Context, ev feed.Event) error {
	if ev.Err != nil && !c.cfg.asyncErrors {
		return c.deliverNow(ctx, ev)
	}
	t := task{ev: ev}
	return c.submit(ctx, ev.Key.Event, true, RecoveryContext{Producer: ev.Producer, RequestID: ev.RequestID}, &t)
}

// Stream returns the stream of the messages given to Dispatch, for the tracker's
// processed point: report each alive the session reads to its Alive, on the goroutine
// that calls Dispatch (the session's reading goroutine).
func (c *OddsFeedListener) Stream() *Stream { return c.stream }

// deliverNow delivers an unroutable event on the calling goroutine, still tracked so
// that the counts of its context stay true.
func (c *OddsFeedListener) deliverNow(ctx context.Context, ev feed.Event) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	// The call holds the scheduler as a worker holds a lane: Close waits for it, and the
	// listener's context is not cancelled under it.
	if !c.sched.hold() {
		return feed.ErrDispatcherClosed
	}
	defer c.sched.unhold()
	c.dispatched.Add(1)
	k := c.stream.Allocate(RecoveryContext{Producer: ev.Producer, RequestID: ev.RequestID})
	k.Start()
	c.inlineRunning.Add(1)
	err := feed.Deliver(c.ctx, c.listener(), &ev)
	c.inlineRunning.Add(-1)
	k.Complete()
	c.inline.Add(1)
	c.rep.Report(c.ctx, err)
	return nil
}

// submit queues t; onStream allocates its ticket on the listener's Stream (Dispatch).
func (c *OddsFeedListener) submit(ctx context.Context, match feed.URN, onStream bool, rc RecoveryContext, t *task) error {
	if onStream {
		t.ticket = c.stream.Allocate(rc)
	} else {
		t.ticket = c.tracker.Allocate(rc)
	}
	c.dispatched.Add(1) // before a worker can complete it, so Stats never shows more completed than dispatched
	if err := c.sched.put(ctx, match, t); err != nil {
		t.ticket.Abandon()
		c.dispatched.Add(^uint64(0))
		return err
	}
	return nil
}

// submitMessage queues a decoded message as a task of its event. Such messages may come
// from any goroutine, so they are tracked outside the Stream, which follows one reader.
func (c *OddsFeedListener) submitMessage(ctx context.Context, m feed.Message) error {
	h := m.MessageHeader()
	t := task{msg: m}
	return c.submit(ctx, h.Event, false, RecoveryContext{Producer: h.Producer, RequestID: h.RequestID}, &t)
}

// work is one worker's loop: take a ready match, run a batch of its tasks in order, give
// the match back.
func (c *OddsFeedListener) work(w *worker) {
	defer c.wg.Done()
	s := &c.sched
	batch := make([]task, 0, maxBatch)
	s.mu.Lock()
	for {
		var ln *lane
		ln, batch = s.take(batch)
		if ln == nil {
			break
		}
		s.mu.Unlock()
		for i := range batch {
			c.run(w, &batch[i])
			batch[i] = task{} // let the message be collected
		}
		batch = batch[:0]
		s.mu.Lock()
		s.release(ln)
	}
	s.mu.Unlock()
}

// run delivers one task, unless Close has given up on the queue.
func (c *OddsFeedListener) run(w *worker, t *task) {
	if c.sched.abandon.Load() {
		t.ticket.Abandon()
		c.abandoned.Add(1)
		return
	}
	t.ticket.Start()
	w.busy.Store(true)
	var err error
	if l := c.listener(); t.msg != nil {
		err = feed.Call(c.ctx, l, t.msg)
	} else {
		err = feed.Deliver(c.ctx, l, &t.ev)
	}
	w.busy.Store(false)
	t.ticket.Complete()
	w.completed.Add(1)
	c.rep.Report(c.ctx, err)
}

// listener returns the customer's listener as the workers call it: through hooked once the
// tracker has call hooks, so that without them a call costs nothing more.
func (c *OddsFeedListener) listener() feed.OddsFeedListener {
	if c.tracker.calls.Load() != nil {
		return c.hooked
	}
	return c.l
}

// Close stops taking tasks, lets the workers finish the queued ones and returns once every
// worker has exited. If ctx ends first, the tasks not yet started are abandoned (and
// recorded so in the tracker), the context passed to the listener is cancelled, and Close
// returns ctx.Err() without waiting for a listener call that ignores its context.
//
// Close waits for the listener calls in progress, so a listener must not call it (it would
// wait for its own return); to stop from a listener, call Close on a new goroutine.
func (c *OddsFeedListener) Close(ctx context.Context) error {
	c.close.Do(c.sched.close)
	select {
	case <-c.done:
		return nil
	default:
	}
	select {
	case <-c.done:
		return nil
	case <-ctx.Done():
		c.sched.abandon.Store(true)
		c.cancel()
		return ctx.Err()
	}
}

// Stats is a snapshot of an OddsFeedListener's gauges and counters.
type Stats struct {
	Queued     int      // tasks waiting in their match's queue (a worker's batch in hand, up to 16, is not counted)
	Running    int      // listener calls in progress
	Matches    int      // matches with tasks queued or running
	Dispatched uint64   // tasks accepted
	Completed  uint64   // tasks whose listener call returned, however it ended; Workers' sum, plus unroutable messages delivered inline
	Unparsable uint64   // messages given to OnUnparsableMessage
	Failed     uint64   // listener calls that returned an error
	Panicked   uint64   // listener calls that panicked
	Abandoned  uint64   // tasks dropped because Close ran out of time
	Blocked    uint64   // dispatches that waited because Config.QueueSize tasks were queued
	Workers    []uint64 // tasks completed by each worker
}

// Stats returns the listener's gauges and counters.
func (c *OddsFeedListener) Stats() Stats {
	errs := c.rep.Counts()
	st := Stats{
		Dispatched: c.dispatched.Load(),
		Unparsable: errs.Unparsable,
		Failed:     errs.Failed,
		Panicked:   errs.Panicked,
		Abandoned:  c.abandoned.Load(),
		Blocked:    c.sched.nBlocked.Load(),
		Completed:  c.inline.Load(),
		Workers:    make([]uint64, len(c.workers)),
	}
	st.Queued, st.Matches = c.sched.stats()
	st.Running = int(c.inlineRunning.Load())
	for i := range c.workers {
		w := &c.workers[i]
		st.Workers[i] = w.completed.Load()
		st.Completed += st.Workers[i]
		if w.busy.Load() {
			st.Running++
		}
	}
	return st
}
