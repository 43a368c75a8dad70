package rabbitmq

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/feedkit/feedkit/examples/locksensors/locks"
	"github.com/feedkit/feedkit/internal/amqpconn"
)

// Consumer consumes readings from the queue and hands them to a locks.BatchHandler in
// batches, acknowledging each batch once the handler has stored it. Make one with
// NewConsumer and call Run.
type Consumer struct {
	s         *settings
	h         locks.BatchHandler
	ready     chan struct{}
	readyOnce sync.Once
	running   atomic.Bool
	stats     struct {
		delivered, batches, acked, redelivered, handlerErrors, connects, drops atomic.Int64
	}
}

// Stats counts what a Consumer did since it was made.
type Stats struct {
	// Delivered is the number of deliveries received, redeliveries included.
	Delivered int64 `json:"delivered"`
	// Batches is the number of batches the handler stored (HandleBatch returned nil).
	Batches int64 `json:"batches"`
	// Acked is the number of readings acknowledged.
	Acked int64 `json:"acked"`
	// Redelivered is the number of deliveries the broker marked as redelivered: readings
	// a consumer had received and not acknowledged when its channel went away.
	Redelivered int64 `json:"redelivered"`
	// HandlerErrors is the number of HandleBatch calls that returned an error while the
	// connection was up; each was followed by a backoff and another call with the batch.
	HandlerErrors int64 `json:"handler_errors"`
	// Connects is the number of sessions that came up: connected, queue declared, every
	// consumer consuming.
	Connects int64 `json:"connects"`
	// Drops is the number of sessions lost other than by the end of Run's context.
	Drops int64 `json:"drops"`
}

// NewConsumer checks cfg and returns a Consumer that hands readings to h. A bad field
// of cfg is refused with an error that names it, e.g. "rabbitmq.Config.BatchSize".
func NewConsumer(cfg Config, h locks.BatchHandler) (*Consumer, error) {
	if h == nil {
		return nil, errors.New("rabbitmq: NewConsumer needs a BatchHandler")
	}
	s, err := resolve(cfg)
	if err != nil {
		return nil, err
	}
	return &Consumer{s: s, h: h, ready: make(chan struct{})}, nil
}

// Stats returns the consumer's counters.
func (c *Consumer) Stats() Stats {
	st := &c.stats
	return Stats{
		Delivered:     st.delivered.Load(),
		Batches:       st.batches.Load(),
		Acked:         st.acked.Load(),
		Redelivered:   st.redelivered.Load(),
		HandlerErrors: st.handlerErrors.Load(),
		Connects:      st.connects.Load(),
		Drops:         st.drops.Load(),
	}
}

// Ready returns a channel that is closed once the first session is up: the queue is
// declared and every consumer is consuming. It stays closed through later reconnections,
// and is never closed when Run fails before that.
func (c *Consumer) Ready() <-chan struct{} { return c.ready }

// Run consumes until ctx ends, then returns nil once every goroutine it started is gone;
// readings it had not acknowledged are left to the broker to deliver again. A lost
// connection is reconnected with the Reconnect backoff, as is a broker unreachable at
// start. Until the first session is up, a broker that refuses the credentials, the
// virtual host, the permissions or the queue declaration is a configuration error: Run
// returns it at once. Run may be called once.
func (c *Consumer) Run(ctx context.Context) error {
	if !c.running.CompareAndSwap(false, true) {
		return errors.New("rabbitmq: Consumer.Run may be called only once")
	}
	s := c.s
	broker := amqpconn.RedactedURL(s.uri)
	everUp := false
	attempt := 0 // failed attempts and lost sessions since the last session that lasted
	for {
		if attempt > 0 && !c.wait(ctx, s.Reconnect.Delay(attempt-1)) {
			return nil
		}
		sess, err := c.connect(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			err = fmt.Errorf("rabbitmq: connect to %s: %w", broker, err)
			if !everUp && refusal(err) {
				return err
			}
			s.log.LogAttrs(ctx, slog.LevelWarn, "rabbitmq: connect failed; retrying",
				slog.Int("attempt", attempt+1), slog.Any("error", err))
			attempt++
			continue
		}
		everUp = true
		c.stats.connects.Add(1)
		c.readyOnce.Do(func() { close(c.ready) })
		s.log.LogAttrs(ctx, slog.LevelInfo, "rabbitmq: consuming",
			slog.String("broker", broker), slog.String("queue", s.Queue), slog.Int("consumers", s.Consumers))
		up := s.clock.Now()
		cause := sess.run()
		sess.close()
		if ctx.Err() != nil {
			return nil
		}
		c.stats.drops.Add(1)
		s.log.LogAttrs(ctx, slog.LevelWarn, "rabbitmq: lost the connection; reconnecting",
			slog.String("broker", broker), slog.Any("error", cause))
		// Only a session that lasted starts the backoff over: a broker that accepts
		// connections and drops them at once is retried ever more slowly.
		if s.clock.Since(up) >= s.Reconnect.Max {
			attempt = 0
		}
		attempt++
	}
}

// wait waits d on the consumer's clock; it reports false when ctx ended first.
func (c *Consumer) wait(ctx context.Context, d time.Duration) bool {
	t := c.s.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-ctx.Done():
		return false
	}
}
