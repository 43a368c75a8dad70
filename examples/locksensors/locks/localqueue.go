package locks

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/internal/queue"
)

// ErrQueueClosed is returned by LocalQueue.Publish after Close.
var ErrQueueClosed = errors.New("locks: queue closed")

// LocalQueueConfig configures a LocalQueue; the zero value is usable.
type LocalQueueConfig struct {
	// Capacity is how many messages the queue holds at most, the batches being handled
	// included; Publish waits beyond. 0 means 10,000.
	Capacity int
	// Consumers is how many goroutines hand batches to the handler; 0 means 2.
	Consumers int
	// BatchSize is the most messages per HandleBatch; 0 means 250.
	BatchSize int
	// Retry spaces the attempts to hand a batch the handler refused; the zero Backoff is
	// 100ms doubling to 10s with jitter.
	Retry Backoff
	// Clock stamps Message.Received and times the retries; nil is the wall clock.
	Clock clock.Clock
	// Logger logs the handler's errors; nil discards.
	Logger *slog.Logger
}

// LocalQueue is an in-process queue of reading messages, for a service without
// RabbitMQ: Publish puts a message in, Run hands them to a BatchHandler in batches the
// way the RabbitMQ consumer does. Nothing is dropped: a full queue makes Publish wait,
// and a batch the handler refuses is handed again. Messages queued when the process
// ends are lost with it, as memory is.
type LocalQueue struct {
	cfg      LocalQueueConfig
	mu       sync.Mutex
	notEmpty sync.Cond // signalled when a message is queued, and at Close
	notFull  sync.Cond // signalled when a handled batch frees room, and at Close
	buf      []Message // a ring of Capacity messages
	head, n  int       // the oldest waiting message, and how many wait
	inFlight int       // messages taken by consumers and not handled yet
	closed   bool
}

// NewLocalQueue returns a LocalQueue, or an error naming the bad field.
func NewLocalQueue(cfg LocalQueueConfig) (*LocalQueue, error) {
	for _, f := range []struct {
		name string
		v    int
	}{{"Capacity", cfg.Capacity}, {"Consumers", cfg.Consumers}, {"BatchSize", cfg.BatchSize}} {
		if f.v < 0 {
			return nil, &FieldError{Field: "LocalQueueConfig." + f.name, Problem: fmt.Sprintf("%d is negative", f.v)}
		}
	}
	cfg.Capacity = cmp.Or(cfg.Capacity, 10_000)
	cfg.Consumers = cmp.Or(cfg.Consumers, 2)
	cfg.BatchSize = cmp.Or(cfg.BatchSize, 250)
	if cfg.Retry == (Backoff{}) {
		cfg.Retry = Backoff{Initial: 100 * time.Millisecond, Max: 10 * time.Second, Jitter: 0.5}
	}
	if err := cfg.Retry.Validate("LocalQueueConfig.Retry."); err != nil {
		return nil, err
	}
	cfg.Clock = clock.OrReal(cfg.Clock)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	q := &LocalQueue{cfg: cfg, buf: make([]Message, cfg.Capacity)}
	q.notEmpty.L = &q.mu
	q.notFull.L = &q.mu
	return q, nil
}

// Publish queues a copy of body, stamped with the clock, waiting while the queue is
// full: the room comes back as the handler finishes batches, so a producer faster than
// the store is slowed down to its pace. It returns ErrQueueClosed after Close, or ctx's
// error if ctx ends first.
func (q *LocalQueue) Publish(ctx context.Context, body []byte) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for !q.closed && q.n+q.inFlight >= len(q.buf) {
		if err := queue.Wait(ctx, &q.notFull); err != nil {
			return err
		}
	}
	if q.closed {
		return ErrQueueClosed
	}
	// A copy, as a broker would keep: the caller may reuse its buffer.
	q.buf[(q.head+q.n)%len(q.buf)] = Message{Body: append([]byte(nil), body...), Received: q.cfg.Clock.Now()}
	q.n++
	q.notEmpty.Signal()
	return nil
}

// Len returns how many messages wait, not counting the batches being handled.
func (q *LocalQueue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n
}

// Close makes Publish refuse new messages; Run hands what is queued, then returns.
// Closing twice does nothing more.
func (q *LocalQueue) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.notEmpty.Broadcast()
	q.notFull.Broadcast()
}

// Run hands the queued messages to h in batches, from Consumers goroutines, until ctx
// ends or the queue is closed and empty, and returns nil once they have all stopped. A
// batch is the oldest waiting message and whatever waits behind it, up to BatchSize:
// full batches under load, a lone message at once when it comes alone. A batch h
// refuses is handed again after a backoff. When ctx ends, a batch not handled yet goes
// back to the head of the queue, and what is queued stays there for a later Run.
func (q *LocalQueue) Run(ctx context.Context, h BatchHandler) error {
	if h == nil {
		return errors.New("locks: LocalQueue.Run needs a BatchHandler")
	}
	var wg sync.WaitGroup
	for range q.cfg.Consumers {
		wg.Go(func() { q.consume(ctx, h) })
	}
	wg.Wait()
	return nil
}

// consume hands batches to h until ctx ends or the queue is closed and empty.
func (q *LocalQueue) consume(ctx context.Context, h BatchHandler) {
	for {
		batch, ok := q.take(ctx)
		if !ok {
			return
		}
		if !q.handle(ctx, h, batch) {
			q.putBack(batch)
			return
		}
		q.handled(len(batch))
	}
}

// take removes up to BatchSize messages, waiting for the first; false when ctx ended or
// the queue is closed and empty.
func (q *LocalQueue) take(ctx context.Context) ([]Message, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.n == 0 {
		if q.closed {
			return nil, false
		}
		if err := queue.Wait(ctx, &q.notEmpty); err != nil {
			return nil, false
		}
	}
	if ctx.Err() != nil {
		return nil, false
	}
	k := min(q.n, q.cfg.BatchSize)
	// A fresh slice per batch: the handler may keep what it was given.
	batch := make([]Message, k)
	for i := range batch {
		j := (q.head + i) % len(q.buf)
		batch[i] = q.buf[j]
		q.buf[j] = Message{} // let the body be collected once handled
	}
	q.head = (q.head + k) % len(q.buf)
	q.n -= k
	q.inFlight += k
	if q.n > 0 {
		// One Publish signalled one consumer for many messages: wake another for the rest.
		q.notEmpty.Signal()
	}
	return batch, true
}

// handle hands batch to h until h returns nil, waiting the Retry backoff after each
// error. It reports false when ctx ends first.
func (q *LocalQueue) handle(ctx context.Context, h BatchHandler, batch []Message) bool {
	for attempt := 0; ; attempt++ {
		if ctx.Err() != nil {
			return false
		}
		err := h.HandleBatch(ctx, batch)
		if err == nil {
			return true
		}
		if ctx.Err() != nil {
			return false // the end of ctx is likely why h failed: nothing to report
		}
		delay := q.cfg.Retry.Delay(attempt)
		q.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "locks: the handler failed a batch of readings; handing it again",
			slog.Int("readings", len(batch)), slog.Int("attempt", attempt+1),
			slog.Duration("delay", delay), slog.Any("error", err))
		if !q.wait(ctx, delay) {
			return false
		}
	}
}

// handled frees the room of k handled messages.
func (q *LocalQueue) handled(k int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.inFlight -= k
	q.notFull.Broadcast() // the room may fit several waiting messages
}

// putBack returns a batch that was not handled to the head of the queue, where it was,
// so that the next consumer takes it first. Its room was never given up, so it fits.
func (q *LocalQueue) putBack(batch []Message) {
	q.mu.Lock()
	defer q.mu.Unlock()
	k := len(batch)
	q.head = (q.head - k + len(q.buf)) % len(q.buf)
	for i, m := range batch {
		q.buf[(q.head+i)%len(q.buf)] = m
	}
	q.n += k
	q.inFlight -= k
	q.notEmpty.Signal()
}

// wait waits d on the clock; false if ctx ended first.
func (q *LocalQueue) wait(ctx context.Context, d time.Duration) bool {
	t := q.cfg.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}
