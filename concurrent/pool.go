package concurrent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/feedkit/feedkit/feed"
)

// Pool is the workers and the per-match scheduler that OddsFeedListeners share: one pool
// of Config.Threads workers for every session of an SDK, instead of a pool per session
// (two sessions with Threads 8 run 8 workers, not 16). The messages of one match go
// through one FIFO whichever listener dispatched them, so a match's order holds across
// sessions; a match whose listener call stalls holds one worker, as with a pool of one
// listener, and the match's messages from every session wait behind it. Config.QueueSize
// bounds the tasks waiting over all the pool's listeners.
//
// Each listener (Listener) keeps its own customer listener, Stream, stats and Close;
// close the pool after its listeners.
type Pool struct {
	tracker *TaskLifecycleTracker
	cfg     settings
	sched   scheduler
	workers []worker

	ctx    context.Context // the listeners' contexts derive from it; cancelled when Close gives up
	cancel context.CancelFunc
	wg     sync.WaitGroup
	done   chan struct{} // closed when every worker has exited
	close  sync.Once

	abandon           atomic.Bool            // Close ran out of time: drop what is queued, whoever queued it
	why               atomic.Pointer[reason] // why it is dropped, set before abandon
	inline, abandoned atomic.Uint64
	inlineRunning     atomic.Int32
}

// NewPool starts cfg.Threads workers, tracking every task in tracker. A bad Config is
// refused with the field named. Config.OnError, Config.Logger and
// Config.HandleErrorsAsynchronously apply to each of the pool's listeners.
func NewPool(tracker *TaskLifecycleTracker, cfg Config) (*Pool, error) {
	if tracker == nil {
		return nil, errors.New("concurrent: NewPool: tracker is nil")
	}
	s, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	p := &Pool{tracker: tracker, cfg: s, workers: make([]worker, s.threads), done: make(chan struct{})}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.sched.init(s.queueSize, s.sample)
	p.wg.Add(s.threads)
	for i := range p.workers {
		p.workers[i].index = i
		go p.work(&p.workers[i])
	}
	go func() {
		p.wg.Wait()
		p.cancel()
		close(p.done)
	}()
	return p, nil
}

// Dispatcher returns a new dispatcher of the pool that delivers to l, on a Stream of its own:
// one per session. It fails once the pool is closed.
func (p *Pool) Dispatcher(l feed.OddsFeedListener) (*Dispatcher, error) {
	if l == nil {
		return nil, errors.New("concurrent: Pool.Dispatcher: listener is nil")
	}
	_, cashouts := l.(feed.CashoutListener)
	c := &Dispatcher{
		l:        l,
		cashouts: cashouts,
		hooked:   (&hooked{l: l, t: p.tracker}).asListener(),
		tracker:  p.tracker,
		pool:     p,
		rep:      feed.NewDeliveryReporter(p.cfg.onError, p.cfg.logger),
		done:     make([]counter, len(p.workers)),
	}
	c.sh.drained = make(chan struct{})
	if !p.sched.join(c) {
		return nil, fmt.Errorf("concurrent: Pool.Dispatcher: %w", feed.ErrDispatcherClosed)
	}
	c.stream = p.tracker.NewStream()
	c.ctx, c.cancel = context.WithCancel(p.ctx)
	return c, nil
}

// work is one worker's loop: take a ready match, run a batch of its tasks in order, give
// the match back.
func (p *Pool) work(w *worker) {
	defer p.wg.Done()
	s := &p.sched
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
			batch[i].owner.run(w, &batch[i])
		}
		s.mu.Lock()
		batch = s.release(ln, batch)
	}
	s.mu.Unlock()
}

// Close stops taking tasks and listeners, lets the workers finish the queued tasks and
// returns once every worker has exited. If ctx ends first, the tasks not yet started are
// abandoned (and recorded so in the tracker, and told to their events' Handled), the
// context passed to every listener is cancelled, and Close returns ctx.Err() without
// waiting for a listener call that ignores its context.
//
// Close the listeners first: each delivers its own tasks, and a dispatch through a
// listener of a closed pool returns feed.ErrDispatcherClosed.
func (p *Pool) Close(ctx context.Context) error {
	p.close.Do(p.sched.close)
	select {
	case <-p.done:
		return nil
	default:
	}
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		giveUp(&p.why, ctx)
		p.abandon.Store(true)
		p.cancel()
		return ctx.Err()
	}
}

// PoolStats is a snapshot of a Pool's gauges and counters, over all its listeners: the
// sums of theirs (each listener's Stats), but for Matches, where a match with tasks of
// two listeners counts once, and Listeners.
type PoolStats struct {
	Listeners  int      `json:"listeners"`  // listeners not yet closed and drained
	Queued     int      `json:"queued"`     // tasks waiting in their match's queue (a worker's batch in hand is not counted)
	Running    int      `json:"running"`    // listener calls in progress
	Matches    int      `json:"matches"`    // matches with tasks queued or running
	Dispatched uint64   `json:"dispatched"` // tasks accepted
	Completed  uint64   `json:"completed"`  // tasks whose listener call returned, however it ended; Workers' sum, plus unroutable messages delivered inline
	Abandoned  uint64   `json:"abandoned"`  // tasks dropped because a Close ran out of time
	Blocked    uint64   `json:"blocked"`    // dispatches that waited because Config.QueueSize tasks were queued
	Workers    []uint64 `json:"workers"`    // tasks completed by each worker; len is Config.Threads
}

// Stats returns the pool's gauges and counters.
func (p *Pool) Stats() PoolStats {
	// The completions are read before the dispatches, so that a task dispatched and done
	// meanwhile never shows more completed than dispatched.
	st := PoolStats{Workers: make([]uint64, len(p.workers)), Completed: p.inline.Load(), Abandoned: p.abandoned.Load()}
	st.Running = int(p.inlineRunning.Load())
	for i := range p.workers {
		w := &p.workers[i]
		st.Workers[i] = w.completed.Load()
		st.Completed += st.Workers[i]
		if w.running.Load() != nil {
			st.Running++
		}
	}
	st.Blocked = p.sched.nBlocked.Load()
	s := &p.sched
	s.mu.Lock()
	st.Listeners, st.Queued, st.Matches, st.Dispatched = s.listeners, s.queued, len(s.lanes), s.dispatched
	s.mu.Unlock()
	return st
}

// runningFor counts the workers in a call of c's listener.
func (p *Pool) runningFor(c *Dispatcher) int {
	n := 0
	for i := range p.workers {
		if p.workers[i].running.Load() == c {
			n++
		}
	}
	return n
}
