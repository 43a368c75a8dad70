package concurrent

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/internal/queue"
)

// The scheduler keeps a FIFO of tasks per active match (a lane) and a ready list of the
// lanes that have tasks and no worker. An idle worker takes the lane at the head of the
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
// came decoded through the OddsFeedListener methods.
type task struct {
	ev     feed.Event
	msg    feed.Message // set for a decoded message; ev is then unused
	ticket Ticket
}

// lane is the FIFO of one match's tasks. It is in the scheduler's map while it has tasks
// or a worker holds it.
type lane struct {
	key   feed.URN
	tasks ring[task]
	state laneState
}

type laneState uint8

const (
	laneFresh laneState = iota // just made: no task, no worker
	laneReady                  // in the ready list
	laneHeld                   // a worker runs its tasks
)

// worker is one worker's counters, padded so that workers do not share a cache line.
type worker struct {
	completed atomic.Uint64
	busy      atomic.Bool // in a listener call
	_         [48]byte
}

// scheduler is the state shared by the dispatching side and the workers.
type scheduler struct {
	limit int

	mu      sync.Mutex
	work    sync.Cond // signalled when a lane becomes ready, and on close
	space   sync.Cond // signalled when tasks leave the queue while a put waits for room
	lanes   map[feed.URN]*lane
	ready   ring[*lane]
	free    []*lane
	queued  int  // tasks in lanes, not yet taken by a worker
	holding int  // workers holding a lane, and inline deliveries in progress
	idle    int  // workers waiting for a ready lane
	waking  bool // a worker was signalled and has not yet looked at the ready list
	blocked int  // puts waiting for room
	closed  bool // no new task is accepted; workers exit once every lane is done

	abandon  atomic.Bool // Close ran out of time: drop what is queued
	nBlocked atomic.Uint64
}

func (s *scheduler) init(limit int) {
	s.limit = limit
	s.work.L = &s.mu
	s.space.L = &s.mu
	s.lanes = make(map[feed.URN]*lane)
}

// put appends t to the lane of match key, waiting while the queue is full.
func (s *scheduler) put(ctx context.Context, key feed.URN, t *task) error {
	s.mu.Lock()
	if s.queued >= s.limit && !s.closed {
		s.nBlocked.Add(1)
		s.blocked++
		for s.queued >= s.limit && !s.closed {
			if err := queue.Wait(ctx, &s.space); err != nil {
				s.blocked--
				s.mu.Unlock()
				return err
			}
		}
		s.blocked--
	}
	if s.closed {
		s.mu.Unlock()
		return feed.ErrDispatcherClosed
	}
	ln := s.lanes[key]
	if ln == nil {
		ln = s.laneLocked(key)
	}
	ln.tasks.push(*t)
	s.queued++
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
		batch = append(batch, ln.tasks.pop())
	}
	s.queued -= n
	if s.blocked > 0 {
		s.space.Broadcast()
	}
	s.wakeLocked()
	return ln, batch
}

// release gives ln back after its batch ran: to the ready list if tasks came meanwhile,
// otherwise out of the map.
func (s *scheduler) release(ln *lane) {
	s.holding--
	if ln.tasks.len() > 0 {
		// No wake-up: the releasing worker looks at the ready list next, and take wakes
		// another worker if it leaves lanes behind.
		ln.state = laneReady
		s.ready.push(ln)
		return
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
}

// exitIfDoneLocked lets the idle workers exit once the scheduler is closed and nothing is
// left to run or held.
func (s *scheduler) exitIfDoneLocked() {
	if s.closed && s.holding == 0 && s.ready.len() == 0 {
		s.work.Broadcast()
	}
}

// hold registers work done outside the workers (an inline delivery) that Close must wait
// for, as for a held lane; it reports false once the scheduler is closed.
func (s *scheduler) hold() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.holding++
	return true
}

// unhold ends what hold registered.
func (s *scheduler) unhold() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holding--
	s.exitIfDoneLocked()
}

// close stops new tasks; the workers finish the queued ones and exit.
func (s *scheduler) close() {
	s.mu.Lock()
	s.closed = true
	s.work.Broadcast()
	s.space.Broadcast()
	s.mu.Unlock()
}

// stats reads the queue's gauges.
func (s *scheduler) stats() (queued, matches int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queued, len(s.lanes)
}
