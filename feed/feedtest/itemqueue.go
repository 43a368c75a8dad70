package feedtest

import (
	"context"
	"sync"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/internal/queue"
)

// item is what a broker queue holds: a message, or a connection change (which must reach
// the receiver in order with the messages).
type item struct {
	d       feed.Delivery
	up      bool
	down    error
	barrier chan struct{} // closed when every item before it has been handed over (Broker.Flush)
}

// isData reports whether the item is a message, which counts against the queue's bound.
func (it item) isData() bool { return !it.up && it.down == nil && it.barrier == nil }

// itemQueue is a subscription's queue: bounded for messages, so that Publish feels
// back-pressure, unbounded for connection changes, which must never wait.
type itemQueue struct {
	mu       sync.Mutex
	notEmpty sync.Cond
	notFull  sync.Cond
	items    []item
	data     int // messages among items
	capacity int
	closed   bool
	// epoch counts the connection drops this queue has seen: a message routed before a drop
	// must not arrive after the ConnectionDown that announced it.
	epoch uint64
}

func newItemQueue(capacity int) *itemQueue {
	q := &itemQueue{capacity: capacity}
	q.notEmpty.L = &q.mu
	q.notFull.L = &q.mu
	return q
}

// put queues a message routed during connection epoch; it reports false when the
// connection dropped since, and the message is lost with the queue's old content.
func (q *itemQueue) put(ctx context.Context, it item, epoch uint64) (bool, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.data >= q.capacity && !q.closed {
		if err := queue.Wait(ctx, &q.notFull); err != nil {
			return false, err
		}
	}
	if q.closed {
		return true, nil // a deleted queue swallows what is routed to it, as RabbitMQ's would
	}
	if q.epoch != epoch {
		return false, nil
	}
	q.items = append(q.items, it)
	q.data++
	q.notEmpty.Signal()
	return true, nil
}

func (q *itemQueue) control(it item) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.items = append(q.items, it)
	q.notEmpty.Signal()
}

// drop discards the queued messages, keeping connection changes and barriers, announces the drop with
// down, and returns how many messages were lost.
func (q *itemQueue) drop(down item, epoch uint64) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.epoch = epoch
	kept := q.items[:0]
	for _, it := range q.items {
		if !it.isData() {
			kept = append(kept, it)
		}
	}
	clear(q.items[len(kept):])
	q.items = kept
	n := q.data
	q.data = 0
	q.items = append(q.items, down)
	q.notFull.Broadcast()
	q.notEmpty.Signal()
	return n
}

func (q *itemQueue) get() (item, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 && !q.closed {
		q.notEmpty.Wait()
	}
	if q.closed {
		return item{}, false
	}
	it := q.items[0]
	q.items[0] = item{}
	q.items = q.items[1:]
	if it.isData() {
		q.data--
		q.notFull.Signal()
	}
	return it, true
}

func (q *itemQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.items = nil
	q.notEmpty.Broadcast()
	q.notFull.Broadcast()
}
