package concurrent

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/internal/queue"
)

// The scheduler of a Pool keeps a FIFO of tasks per active match (a lane), shared by the
// pool's listeners, and a ready list of the lanes that have tasks and no worker. An idle worker takes the lane at the head of the
// ready list, runs a few of its tasks, and puts it back at the tail if more have come:
// a match is never on two workers at once (its order holds), and a match whose listener
// call stalls holds one worker, never the matches behind it.
//
// Hashing each match onto one of Threads single-worker queues instead, as the Java SDK's
// Concurrent Listener does, lets a stalled match stop every match that shares its queue
// (see BenchmarkHeadOfLine).

// maxBatch is how many tasks of one lane a worker takes at once: enough to spare the lock
// for a busy match, few enough that the other ready matches get their turn soon.
const maxBatch = 16

// maxFreeLanes bounds the idle lanes kept for reuse, so a burst of many matches does not
// hold its memory for ever.
const maxFreeLanes = 4096

// maxKeptRing is the largest task buffer a freed lane keeps.
const maxKeptRing = 64

// task is one message to deliver: a raw event that the worker decodes, or a message that
// came decoded through the feed.OddsFeedListener methods.
type task struct {
	ev     feed.Event
	msg    feed.Message // set for a decoded message; ev is then unused
	ticket Ticket
	owner  *Dispatcher // the listener that queued it, whose customer listener it goes to
	at     int64       // when it was queued (monotonic), if its call is timed for the Observer; 0 if not
}

// lane is the FIFO of one match's tasks, whichever listener of the pool queued them, so
// that a match's order holds across sessions. It is in the scheduler's map while it has
// tasks or a worker holds it.
type lane struct {
	key    feed.URN
	tasks  ring[task]
	state  laneState
	owners []laneOwner // the listeners with tasks in the lane (queued or in a worker's batch)
}

// laneOwner counts one listener's tasks in a lane, so that each listener's Stats can
// count its matches. A lane has one owner or two (a match in two sessions): a slice
// scanned under the scheduler's lock is cheaper than a map.
type laneOwner struct {
	c *Dispatcher
	n int
}

// addOwner counts one more task of c in ln.
func (ln *lane) addOwner(c *Dispatcher) {
	for i := range ln.owners {
		if ln.owners[i].c == c {
			ln.owners[i].n++
			return
		}
	}
	ln.owners = append(ln.owners, laneOwner{c: c, n: 1})
	c.sh.matches++
}

// dropOwner counts one task of c out of ln.
func (ln *lane) dropOwner(c *Dispatcher) {
	for i := range ln.owners {
		if ln.owners[i].c != c {
			continue
		}
		if ln.owners[i].n--; ln.owners[i].n == 0 {
			last := len(ln.owners) - 1
			ln.owners[i] = ln.owners[last]
			ln.owners[last] = laneOwner{}
			ln.owners = ln.owners[:last]
			c.sh.matches--
		}
		return
	}
}

// ownerState is what the scheduler keeps of one listener, under its lock: Close waits for
// active to reach zero.
type ownerState struct {
	closed  bool          // the listener takes no new task
	queued  int           // its tasks in lanes, not yet taken by a worker
	active  int           // its tasks queued or in a worker's batch, and its inline deliveries
	matches int           // lanes holding tasks of it
	drained chan struct{} // closed once closed and active is zero
}

type laneState uint8

const (
	laneFresh laneState = iota // just made: no task, no worker
	laneReady                  // in the ready list
	laneHeld                   // a worker runs its tasks
)

// worker is one worker's counters, padded so that workers do not share a cache line.
type worker struct {
	index     int
	completed atomic.Uint64
	running   atomic.Pointer[Dispatcher] // whose listener call is in progress; nil between calls
	_         [40]byte
}

// counter is a per-worker count of one listener, padded as worker is.
type counter struct {
	atomic.Uint64
	_ [56]byte
}

// scheduler is the state shared by the dispatching side and the workers.
type scheduler struct {
	limit int

	mu         sync.Mutex
	work       sync.Cond // signalled when a lane becomes ready, and on close
	space      sync.Cond // signalled when tasks leave the queue while a put waits for room
	lanes      map[feed.URN]*lane
	ready      ring[*lane]
	free       []*lane
	queued     int     // tasks in lanes, not yet taken by a worker
	holding    int     // workers holding a lane, and inline deliveries in progress
	idle       int     // workers waiting for a ready lane
	waking     bool    // a worker was signalled and has not yet looked at the ready list
	blocked    int     // puts waiting for room
	closed     bool    // no new task is accepted; workers exit once every lane is done
	listeners  int     // listeners not yet closed and drained
	dispatched uint64  // tasks accepted, inline deliveries included
	timing     sampler // picks the calls timed for the Observer, over all the pool's listeners

	nBlocked atomic.Uint64
}

func (s *scheduler) init(limit, timingSample int) {
	s.limit = limit
	s.timing.n = timingSample
	s.work.L = &s.mu
	s.space.L = &s.mu
	s.lanes = make(map[feed.URN]*lane)
}

// put appends t to the lane of match key, waiting while the queue is full.
func (s *scheduler) put(ctx context.Context, key feed.URN, t *task) error {
	o := t.owner
	s.mu.Lock()
	if s.queued >= s.limit && !s.closed && !o.sh.closed {
		s.nBlocked.Add(1)
		o.blocked.Add(1)
		s.blocked++
		for s.queued >= s.limit && !s.closed && !o.sh.closed {
			if err := queue.Wait(ctx, &s.space); err != nil {
				s.blocked--
				s.mu.Unlock()
				return err
			}
		}
		s.blocked--
	}
	if s.closed || o.sh.closed {
		s.mu.Unlock()
		return feed.ErrDispatcherClosed
	}
	ln := s.lanes[key]
	if ln == nil {
		ln = s.laneLocked(key)
	}
	if s.timing.next() {
		t.at = monotonic()
	}
	ln.tasks.push(*t)
	ln.addOwner(o)
	s.queued++
	s.dispatched++
	o.sh.queued++
	o.sh.active++
	if ln.state == laneFresh {
		s.readyLocked(ln)
	}
	s.mu.Unlock()
	return nil
}

// laneLocked returns an empty lane for key, reusing a freed one when it can.
func (s *scheduler) laneLocked(key feed.URN) *lane {
	var ln *lane
	if n := len(s.free); n > 0 {
		ln = s.free[n-1]
		s.free[n-1] = nil
		s.free = s.free[:n-1]
	} else {
		ln = new(lane)
	}
	ln.key, ln.state = key, laneFresh
	s.lanes[key] = ln
	return ln
}

// readyLocked puts ln at the tail of the ready list and makes sure a worker will look.
// One signal at a time: the worker it wakes passes the signal on if more lanes are ready
// (see take), so a burst of tasks costs one wake-up per worker, not one per task.
func (s *scheduler) readyLocked(ln *lane) {
	ln.state = laneReady
	s.ready.push(ln)
	s.wakeLocked()
}

func (s *scheduler) wakeLocked() {
	if s.idle > 0 && !s.waking && s.ready.len() > 0 {
		s.waking = true
		s.work.Signal()
	}
}

// take waits for a ready lane and moves up to maxBatch of its tasks into batch. It returns
// nil once the scheduler is closed and every lane is done.
func (s *scheduler) take(batch []task) (*lane, []task) {
	for s.ready.len() == 0 {
		if s.closed && s.holding == 0 {
			return nil, batch
		}
		s.idle++
		s.work.Wait()
		s.idle--
		s.waking = false
	}
	ln := s.ready.pop()
	ln.state = laneHeld
	s.holding++
	n := min(ln.tasks.len(), maxBatch)
	for range n {
		t := ln.tasks.pop()
		t.owner.sh.queued--
		batch = append(batch, t)
	}
	s.queued -= n
	if s.blocked > 0 {
		s.space.Broadcast()
	}
	s.wakeLocked()
	return ln, batch
}

// release gives ln back after its batch ran: to the ready list if tasks came meanwhile,
// otherwise out of the map. It counts the batch's tasks out of their listeners, and
// returns batch emptied, its messages let go.
func (s *scheduler) release(ln *lane, batch []task) []task {
	for i := range batch {
		o := batch[i].owner
		ln.dropOwner(o)
		s.doneLocked(o)
		batch[i] = task{}
	}
	batch = batch[:0]
	s.holding--
	if ln.tasks.len() > 0 {
		// No wake-up: the releasing worker looks at the ready list next, and take wakes
		// another worker if it leaves lanes behind.
		ln.state = laneReady
		s.ready.push(ln)
		return batch
	}
	delete(s.lanes, ln.key)
	ln.key = feed.URN{}
	if len(ln.tasks.buf) > maxKeptRing {
		ln.tasks = ring[task]{} // a burst's buffer is not worth keeping for the next match
	}
	if len(s.free) < maxFreeLanes {
		s.free = append(s.free, ln)
	}
	s.exitIfDoneLocked()
	return batch
}

// doneLocked counts one task (or inline delivery) of o as over, and tells o's Close when
// it was the last one.
func (s *scheduler) doneLocked(o *Dispatcher) {
	if o.sh.active--; o.sh.active == 0 && o.sh.closed {
		s.drainedLocked(o)
	}
}

func (s *scheduler) drainedLocked(o *Dispatcher) {
	s.listeners--
	close(o.sh.drained)
}

// exitIfDoneLocked lets the idle workers exit once the scheduler is closed and nothing is
// left to run or held.
func (s *scheduler) exitIfDoneLocked() {
	if s.closed && s.holding == 0 && s.ready.len() == 0 {
		s.work.Broadcast()
	}
}

// hold registers work of o done outside the workers (an inline delivery) that Close must
// wait for, as for a held lane; it reports false once o or the scheduler is closed, and
// whether the call is timed for the Observer.
func (s *scheduler) hold(o *Dispatcher) (ok, timed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || o.sh.closed {
		return false, false
	}
	s.holding++
	s.dispatched++
	o.sh.active++
	return true, s.timing.next()
}

// unhold ends what hold registered.
func (s *scheduler) unhold(o *Dispatcher) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holding--
	s.doneLocked(o)
	s.exitIfDoneLocked()
}

// join registers a new listener; it reports false once the scheduler is closed.
func (s *scheduler) join(o *Dispatcher) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.listeners++
	return true
}

// closeOwner stops o's new tasks, and wakes o's puts waiting for room so that they give
// up; o.sh.drained is closed once o's tasks are over.
func (s *scheduler) closeOwner(o *Dispatcher) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o.sh.closed = true
	s.space.Broadcast()
	if o.sh.active == 0 {
		s.drainedLocked(o)
	}
}

// close stops new tasks; the workers finish the queued ones and exit.
func (s *scheduler) close() {
	s.mu.Lock()
	s.closed = true
	s.work.Broadcast()
	s.space.Broadcast()
	s.mu.Unlock()
}

// ownerStats reads o's gauges.
func (s *scheduler) ownerStats(o *Dispatcher) (queued, matches int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return o.sh.queued, o.sh.matches
}
