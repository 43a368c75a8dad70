package group

import (
	"sort"
	"sync"
)

// acker settles the deliveries of one shard queue on one channel: it keeps their
// delivery tags in arrival order, learns which are done (an event whose listener call
// ended, a system message at once, a barrier once the ingress has its acknowledgement)
// and acknowledges the contiguous prefix of done ones with one cumulative ack
// (multiple=true). A delivery is never acknowledged before every one before it in the
// queue is done, so a worker that dies leaves the broker every delivery that is not
// done (and perhaps some that are: they come again, to its standby).
//
// A barrier is acknowledged to the ingress once every delivery before it is done (it is
// then the head of the prefix), and only then marked done itself.
//
// Delivery tags belong to a channel: an acker serves one, and a new channel (after a
// reconnection) gets a new acker. Marking tags of a dead channel's acker done is
// harmless: its settler has stopped, and nothing is sent for them.
//
// The settling (acks and barrier acknowledgements, which wait for the broker) runs on
// the acker's own goroutine (run), never on the goroutine that marks a delivery done: a
// pool worker calling done only takes a lock and signals.
type acker struct {
	// ack acknowledges every delivery up to tag (multiple=true); acknowledge publishes a
	// barrier's acknowledgement and waits for the broker's confirmation. Both run on the
	// settler; an error ends it (the channel is broken: the broker redelivers).
	ack         func(tag uint64) error
	acknowledge func(b *shardBarrier) error
	// acked is told how many deliveries each ack settled; barrierAcked of each barrier
	// acknowledged. Either may be nil.
	acked        func(n int)
	barrierAcked func(b *shardBarrier)
	// every is how many done deliveries may wait for an ack while more are pending.
	every int

	mu          sync.Mutex
	pending     []pendingTag // registered and not yet in the done prefix, in tag order
	doneThrough uint64       // the last tag of the done prefix
	unacked     int          // deliveries of the done prefix not yet acknowledged
	wake        chan struct{}
}

// pendingTag is a delivery waiting for its prefix; barrier is set for a barrier.
type pendingTag struct {
	tag     uint64
	done    bool
	barrier *shardBarrier
}

// shardBarrier is a barrier delivery waiting to be acknowledged to the ingress.
type shardBarrier struct {
	tag     uint64
	env     Envelope
	replyTo string
	started bool // handed to acknowledge
}

func newAcker(every int, ack func(uint64) error, acknowledge func(*shardBarrier) error) *acker {
	return &acker{ack: ack, acknowledge: acknowledge, every: max(1, every), wake: make(chan struct{}, 1)}
}

// add registers a delivery, before it is dispatched (its listener may be done with it
// before Dispatch returns). Tags must come in increasing order, as a channel delivers them.
func (a *acker) add(tag uint64) {
	a.mu.Lock()
	a.pending = append(a.pending, pendingTag{tag: tag})
	a.mu.Unlock()
}

// addDone registers a delivery that is done already: a system message, or one that is
// not the group's.
func (a *acker) addDone(tag uint64) {
	a.mu.Lock()
	a.pending = append(a.pending, pendingTag{tag: tag, done: true})
	a.advanceLocked()
	a.mu.Unlock()
}

// addBarrier registers a barrier delivery: it is done once acknowledge succeeded.
func (a *acker) addBarrier(b *shardBarrier) {
	a.mu.Lock()
	a.pending = append(a.pending, pendingTag{tag: b.tag, barrier: b})
	a.advanceLocked()
	a.mu.Unlock()
}

// done marks the delivery tag done. An unknown tag (done twice, or never added) is
// ignored.
func (a *acker) done(tag uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	i := a.indexLocked(tag)
	if i < 0 || a.pending[i].done {
		return
	}
	a.pending[i].done = true
	if i == 0 {
		a.advanceLocked()
	}
}

// indexLocked finds tag in pending: where the tags are consecutive (one consumer on the
// channel) it is at tag - first; otherwise a binary search finds it.
func (a *acker) indexLocked(tag uint64) int {
	if len(a.pending) == 0 || tag < a.pending[0].tag {
		return -1
	}
	if d := tag - a.pending[0].tag; d < uint64(len(a.pending)) && a.pending[d].tag == tag {
		return int(d)
	}
	i := sort.Search(len(a.pending), func(i int) bool { return a.pending[i].tag >= tag })
	if i == len(a.pending) || a.pending[i].tag != tag {
		return -1
	}
	return i
}

// advanceLocked moves the done prefix over the done deliveries at the head, and wakes
// the settler when there is something to settle: enough deliveries to ack, nothing left
// pending (the stream paused: ack what is done now), or a barrier at the head.
func (a *acker) advanceLocked() {
	n := 0
	for n < len(a.pending) && a.pending[n].done {
		n++
	}
	if n > 0 {
		a.doneThrough = a.pending[n-1].tag
		a.unacked += n
		clear(a.pending[:n])
		a.pending = a.pending[n:]
	}
	if a.unacked >= a.every || (a.unacked > 0 && len(a.pending) == 0) || a.barrierReadyLocked() != nil {
		select {
		case a.wake <- struct{}{}:
		default:
		}
	}
}

// barrierReadyLocked returns the barrier at the head of pending that is yet to be
// acknowledged: every delivery before it is done.
func (a *acker) barrierReadyLocked() *shardBarrier {
	if len(a.pending) > 0 && a.pending[0].barrier != nil && !a.pending[0].barrier.started {
		return a.pending[0].barrier
	}
	return nil
}

// run settles until stop is closed, then settles once more with every done delivery
// acknowledged, and returns; it returns early with the error of an ack or of a barrier's
// acknowledgement: the channel is broken, and the broker will redeliver.
func (a *acker) run(stop <-chan struct{}) error {
	for {
		select {
		case <-a.wake:
			if err := a.settle(false); err != nil {
				return err
			}
		case <-stop:
			return a.settle(true)
		}
	}
}

// settle acknowledges the done prefix when it should (final: whatever is done), then
// acknowledges the barrier at its head, if any, which makes the barrier done, and goes
// on until nothing is left to do.
func (a *acker) settle(final bool) error {
	for {
		a.mu.Lock()
		b := a.barrierReadyLocked()
		var through uint64
		n := 0
		if a.unacked > 0 && (final || b != nil || a.unacked >= a.every || len(a.pending) == 0) {
			// Before a barrier's acknowledgement, the deliveries before it: once the
			// ingress hears of the barrier, none of them should come again.
			through, n = a.doneThrough, a.unacked
			a.unacked = 0
		}
		if b != nil {
			b.started = true
		}
		a.mu.Unlock()
		if n > 0 {
			if err := a.ack(through); err != nil {
				return err
			}
			if a.acked != nil {
				a.acked(n)
			}
		}
		if b == nil {
			return nil
		}
		if err := a.acknowledge(b); err != nil {
			return err
		}
		if a.barrierAcked != nil {
			a.barrierAcked(b)
		}
		a.done(b.tag)
	}
}
