// Package queue provides a bounded FIFO whose Put blocks when it is full, so that a fast
// producer is slowed down instead of having its items dropped.
package queue

import (
	"context"
	"errors"
	"sync"
)

// ErrClosed is returned by Put on a closed queue.
var ErrClosed = errors.New("queue: closed")

// Queue is a bounded, blocking FIFO safe for concurrent use. Once closed, Put refuses new
// items while Get still returns the items already queued, so that closing loses nothing
// that Put accepted.
type Queue[T any] struct {
	mu       sync.Mutex
	notEmpty sync.Cond
	notFull  sync.Cond
	buf      []T
	head, n  int
	closed   bool
}

// New returns a queue that holds up to capacity items; capacity must be positive.
func New[T any](capacity int) *Queue[T] {
	if capacity <= 0 {
		panic("queue: capacity must be positive")
	}
	q := &Queue[T]{buf: make([]T, capacity)}
	q.notEmpty.L = &q.mu
	q.notFull.L = &q.mu
	return q
}

// Put appends v, waiting while the queue is full. It returns ErrClosed if the queue is
// closed, or ctx.Err() if ctx ends first; v is then not queued.
func (q *Queue[T]) Put(ctx context.Context, v T) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.n == len(q.buf) && !q.closed {
		if err := Wait(ctx, &q.notFull); err != nil {
			return err
		}
	}
	if q.closed {
		return ErrClosed
	}
	q.buf[(q.head+q.n)%len(q.buf)] = v
	q.n++
	q.notEmpty.Signal()
	return nil
}

// Get removes and returns the oldest item, waiting while the queue is empty. It reports
// false once the queue is closed and empty.
func (q *Queue[T]) Get() (T, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.n == 0 && !q.closed {
		q.notEmpty.Wait()
	}
	var zero T
	if q.n == 0 {
		return zero, false
	}
	v := q.buf[q.head]
	q.buf[q.head] = zero // let the item be collected
	q.head = (q.head + 1) % len(q.buf)
	q.n--
	q.notFull.Signal()
	return v, true
}

// Close stops Put from accepting items and wakes every waiter.
func (q *Queue[T]) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.notEmpty.Broadcast()
	q.notFull.Broadcast()
}

// Len returns the number of items queued.
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n
}

// Cap returns the queue's capacity.
func (q *Queue[T]) Cap() int { return len(q.buf) }

// Wait waits on c, whose lock the caller holds, until c is signalled or ctx ends. It
// returns ctx.Err() at once if ctx has already ended. Like c.Wait, it may return without a
// signal: callers wait in a loop that rechecks their condition.
func Wait(ctx context.Context, c *sync.Cond) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	// Only waits that happen pay for watching ctx.
	stop := context.AfterFunc(ctx, func() {
		c.L.Lock()
		c.Broadcast()
		c.L.Unlock()
	})
	c.Wait()
	stop()
	return nil
}
