package locks

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/feedkit/feedkit/internal/backoff"
	"github.com/feedkit/feedkit/internal/clock"
)

// ErrQueueClosed is returned by LocalQueue.Publish after Close.
var ErrQueueClosed = errors.New("locks: queue closed")

// LocalQueueConfig configures a LocalQueue; the zero value is usable.
type LocalQueueConfig struct {
	// Capacity is how many messages wait at most; Publish blocks beyond. 0 means 10,000.
	Capacity int
	// Consumers is how many goroutines hand batches to the handler; 0 means 2.
	Consumers int
	// BatchSize is the most messages per HandleBatch; 0 means 250.
	BatchSize int
	// Retry spaces the attempts to hand a batch the handler refused; the zero Policy is
	// 100ms doubling to 10s with jitter.
	Retry  backoff.Policy
	Clock  clock.Clock // stamps Message.Received and times the retries; nil is the wall clock
	Logger *slog.Logger
}

// LocalQueue is an in-process queue of reading messages, for a service without
// RabbitMQ: Publish puts a message in, Run hands them to a BatchHandler in batches the
// way the RabbitMQ consumer does. Nothing is dropped: a full queue makes Publish wait,
// and a batch the handler refuses is handed again. Messages queued when the process
// ends are lost with it, as memory is.
type LocalQueue struct {
	cfg    LocalQueueConfig
	mu     sync.Mutex
	cond   *sync.Cond
	items  []Message
	closed bool
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
	cfg.Capacity = cmpOr(cfg.Capacity, 10_000)
	cfg.Consumers = cmpOr(cfg.Consumers, 2)
	cfg.BatchSize = cmpOr(cfg.BatchSize, 250)
	if cfg.Retry == (backoff.Policy{}) {
		cfg.Retry = backoff.Policy{Initial: 100 * time.Millisecond, Max: 10 * time.Second, Jitter: 0.5}
	}
	if err := cfg.Retry.Validate("LocalQueueConfig.Retry"); err != nil {
		return nil, err
	}
	cfg.Clock = clock.OrReal(cfg.Clock)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	q := &LocalQueue{cfg: cfg}
	q.cond = sync.NewCond(&q.mu)
	return q, nil
}

// Publish queues a copy of body, waiting while the queue is full. It returns
// ErrQueueClosed after Close, or ctx's error if ctx ends first.
func (q *LocalQueue) Publish(ctx context.Context, body []byte) error {
	stop := context.AfterFunc(ctx, func() {
		q.mu.Lock()
		defer q.mu.Unlock()
		q.cond.Broadcast()
	})
	defer stop()
	q.mu.Lock()
	defer q.mu.Unlock()
	for !q.closed && len(q.items) >= q.cfg.Capacity {
		if err := ctx.Err(); err != nil {
			return err
		}
		q.cond.Wait()
	}
	if q.closed {
		return ErrQueueClosed
	}
	q.items = append(q.items, Message{Body: append([]byte(nil), body...), Received: q.cfg.Clock.Now()})
	q.cond.Broadcast()
	return nil
}

// Len returns how many messages wait.
func (q *LocalQueue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

// Close makes Publish refuse new messages; Run hands what is queued, then returns.
func (q *LocalQueue) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.cond.Broadcast()
}

// Run hands the queued messages to h in batches, from Consumers goroutines, until ctx
// ends (what is still queued stays, for a later Run) or the queue is closed and empty.
// A batch h refuses is handed again after a backoff; a batch taken when ctx ends is put
// back at the head of the queue, so nothing is lost.
func (q *LocalQueue) Run(ctx context.Context, h BatchHandler) error {
	g, ctx := errgroup.WithContext(ctx)
	stop := context.AfterFunc(ctx, func() {
		q.mu.Lock()
		defer q.mu.Unlock()
		q.cond.Broadcast()
	})
	defer stop()
	for range q.cfg.Consumers {
		g.Go(func() error { return q.consume(ctx, h) })
	}
	return g.Wait()
}

func (q *LocalQueue) consume(ctx context.Context, h BatchHandler) error {
	for {
		batch, ok := q.take(ctx)
		if !ok {
			return nil
		}
		for attempt := 0; ; attempt++ {
			err := h.HandleBatch(ctx, batch)
			if err == nil {
				break
			}
			q.cfg.Logger.Error("locks: a batch of readings was not stored", "err", err, "attempt", attempt+1)
			if !q.wait(ctx, q.cfg.Retry.Delay(attempt)) {
				q.putBack(batch)
				return nil
			}
		}
	}
}

// take removes up to BatchSize messages, waiting for the first; false when ctx ended
// or the queue is closed and empty.
func (q *LocalQueue) take(ctx context.Context) ([]Message, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 {
		if q.closed || ctx.Err() != nil {
			return nil, false
		}
		q.cond.Wait()
	}
	if ctx.Err() != nil {
		return nil, false
	}
	n := min(len(q.items), q.cfg.BatchSize)
	batch := append([]Message(nil), q.items[:n]...)
	q.items = append(q.items[:0], q.items[n:]...)
	q.cond.Broadcast() // room for a waiting Publish
	return batch, true
}

func (q *LocalQueue) putBack(batch []Message) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.items = append(batch, q.items...)
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
