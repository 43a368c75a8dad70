package concurrent

import (
	"sync/atomic"
	"time"
)

// A Stream is the messages one session's reading goroutine hands on, in the order it
// reads them, as the tracker follows them for the processed point: the feed timestamp of
// the latest alive before which every message of a producer received, on every stream,
// has finished its listener call. It is the point a recovery can safely start from after
// an outage or a restart: whatever came before it was processed, whatever came after may
// still be queued, or lost with the process.
//
// The reading goroutine allocates the ticket of each message it dispatches through the
// stream (Allocate) and reports each alive with subscribed=1 (Alive). The point's promise
// follows the order of those calls on one goroutine, a session's reading goroutine; the
// methods are safe for concurrent use all the same (a Dispatcher's Dispatch may be
// called from several goroutines), the order between two goroutines' calls being theirs.
//
// Cost: a map lookup and a few atomic operations per live message, without the tracker's
// lock (which a replayed message still takes, as Allocate does); the lock once per alive
// and stream, and once more when the last message before an alive is done.
type Stream struct {
	t     *TaskLifecycleTracker
	lanes atomic.Pointer[map[int]*producerLane] // by producer; copied on write under t.mu
}

// producerLane is one producer's messages on one stream, cut into epochs by its alives.
type producerLane struct {
	producer int
	live     atomic.Pointer[tracked] // the producer's live context, once allocated; never forgotten by the tracker
	open     atomic.Pointer[epoch]   // the epoch messages are allocated to now
	closed   []*epoch                // closed by an alive, not yet done, oldest first; under t.mu
	through  time.Time               // under t.mu
}

// epoch is the messages of a lane between two alives. refs counts its unfinished tasks,
// plus one while it is open, so that whoever takes it to zero, a worker finishing the last
// task or the alive closing it, moves the point on. Zero is final: nothing joins an epoch
// that is done.
type epoch struct {
	lane *producerLane
	at   time.Time // the alive that closed it; set before it is published under t.mu
	refs atomic.Int64
}

// NewStream returns a new stream of the tracker: one per session. The processed point
// of a producer waits for every stream to have reported one of its alives.
func (t *TaskLifecycleTracker) NewStream() *Stream {
	s := &Stream{t: t}
	s.lanes.Store(&map[int]*producerLane{})
	t.mu.Lock()
	defer t.mu.Unlock()
	t.streams = append(t.streams, s)
	return s
}

func (s *Stream) lane(producer int) *producerLane {
	if l := (*s.lanes.Load())[producer]; l != nil {
		return l
	}
	s.t.mu.Lock()
	defer s.t.mu.Unlock()
	old := *s.lanes.Load()
	if l := old[producer]; l != nil {
		return l
	}
	l := &producerLane{producer: producer}
	l.open.Store(newEpoch(l))
	lanes := make(map[int]*producerLane, len(old)+1)
	for p, x := range old {
		lanes[p] = x
	}
	lanes[producer] = l
	s.lanes.Store(&lanes)
	return l
}

func newEpoch(l *producerLane) *epoch {
	e := &epoch{lane: l}
	e.refs.Store(1) // open
	return e
}

// join counts one more task in the lane's open epoch and returns it. An epoch an alive
// has just closed and its tasks finished is done for good; the alive has opened the next.
func (l *producerLane) join() *epoch {
	for {
		e := l.open.Load()
		if r := e.refs.Load(); r > 0 && e.refs.CompareAndSwap(r, r+1) {
			return e
		}
	}
}

// Allocate records a new task of rc, as TaskLifecycleTracker.Allocate does, and counts it
// in the stream's current epoch of rc.Producer: the processed point cannot pass the next
// alive until the ticket is completed. An abandoned ticket holds the point for good,
// since its message was never processed.
func (s *Stream) Allocate(rc RecoveryContext) Ticket {
	l := s.lane(rc.Producer)
	var k Ticket
	if c := l.live.Load(); rc.RequestID == 0 && c != nil {
		// The live context, most of the traffic: the tracker never forgets it, so its
		// counts grow without the tracker's lock.
		c.allocated.Add(1)
		c.pending.Add(1)
		k = Ticket{t: s.t, c: c}
	} else {
		k = s.t.Allocate(rc)
		if rc.RequestID == 0 {
			l.live.Store(k.c)
		}
	}
	k.e = l.join()
	return k
}

// Alive reports an alive with subscribed=1 of producer, stamped at by the feed, read
// after every message allocated through the stream so far. Once those messages are done,
// on this stream and the others, the producer's processed point reaches at.
func (s *Stream) Alive(producer int, at time.Time) {
	l := s.lane(producer)
	s.t.mu.Lock()
	e := l.open.Swap(newEpoch(l))
	e.at = at
	l.closed = append(l.closed, e)
	s.t.mu.Unlock()
	s.t.release(e)
}

// release drops one reference to e; the last one moves the processed point on.
func (t *TaskLifecycleTracker) release(e *epoch) {
	if e.refs.Add(-1) != 0 {
		return
	}
	t.mu.Lock()
	l := e.lane
	for len(l.closed) > 0 && l.closed[0].refs.Load() == 0 {
		if at := l.closed[0].at; at.After(l.through) {
			l.through = at
		}
		l.closed[0] = nil
		l.closed = l.closed[1:]
	}
	point, ok := t.pointLocked(l.producer)
	f := t.onProcessed
	if ok && point.After(t.points[l.producer]) {
		if t.points == nil {
			t.points = make(map[int]time.Time)
		}
		t.points[l.producer] = point
	} else {
		f = nil
	}
	t.mu.Unlock()
	if f != nil {
		f(l.producer, point)
	}
}

// pointLocked returns the oldest of the streams' points for producer: every stream must
// have processed through it.
func (t *TaskLifecycleTracker) pointLocked(producer int) (time.Time, bool) {
	var point time.Time
	for i, s := range t.streams {
		l := (*s.lanes.Load())[producer]
		if l == nil || l.through.IsZero() {
			return time.Time{}, false
		}
		if i == 0 || l.through.Before(point) {
			point = l.through
		}
	}
	return point, len(t.streams) > 0
}

// Processed returns producer's processed point: the feed timestamp of the latest alive
// before which every message of the producer received on every stream has finished its
// listener call. ok is false until every stream has got that far once.
func (t *TaskLifecycleTracker) Processed(producer int) (through time.Time, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	through, ok = t.points[producer]
	return through, ok
}

// OnProcessed sets the function told each time a producer's processed point moves on.
// It is called on the goroutine that finished the last task before the alive (a worker,
// or the stream's own when nothing was pending), outside the tracker's lock; two calls
// for one producer may overlap and arrive out of order, so keep the latest through. Set
// it before the streams are used.
func (t *TaskLifecycleTracker) OnProcessed(f func(producer int, through time.Time)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.onProcessed = f
}
