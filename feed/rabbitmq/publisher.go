package rabbitmq

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// confirmWindow is how many published messages may await the broker's confirmation
// before Publish waits for the oldest: enough to keep the connection busy, few enough
// that an error surfaces soon after the message that caused it.
const confirmWindow = 1024

// Publisher publishes messages to the exchange of a Config, as the feed's producers
// do: package feedtest's Simulator publishes through it to feed a real broker. It uses
// publisher confirms, so that Flush can tell when the broker has taken every message.
// It is safe for concurrent use; messages of one goroutine keep their order.
//
// It does not reconnect: once its connection is lost every call fails, and the caller
// makes a new Publisher.
type Publisher struct {
	s       *settings
	conn    *amqp.Connection
	ch      *amqp.Channel
	closed  chan *amqp.Error
	mu      sync.Mutex
	pending []*amqp.DeferredConfirmation // oldest first
	err     error                        // the first failure; every later call returns it
}

// NewPublisher connects to the broker of cfg and opens a channel in confirm mode. With
// cfg.DeclareExchange it declares the exchange. Only the connection fields of cfg (URL,
// credentials, virtual host, TLS, exchange, heartbeat, dial timeout and connection
// name) apply.
func NewPublisher(ctx context.Context, cfg Config) (*Publisher, error) {
	s, err := resolve(cfg)
	if err != nil {
		return nil, err
	}
	conn, release, err := s.dial(ctx)
	if err != nil {
		return nil, fmt.Errorf("rabbitmq: publisher for %s: %w", s.redactedURL(), err)
	}
	defer release()
	p := &Publisher{s: s, conn: conn}
	fail := func(err error) (*Publisher, error) {
		_ = conn.Close()
		return nil, fmt.Errorf("rabbitmq: publisher for %s: %w", s.redactedURL(), contextOr(ctx, err))
	}
	if p.ch, err = conn.Channel(); err != nil {
		return fail(fmt.Errorf("open channel: %w", err))
	}
	// Buffered: amqp091-go sends at most one close, and must not block on it.
	p.closed = p.ch.NotifyClose(make(chan *amqp.Error, 1))
	if err := p.ch.Confirm(false); err != nil {
		return fail(fmt.Errorf("confirm mode: %w", err))
	}
	if s.DeclareExchange {
		if err := p.ch.ExchangeDeclare(s.Exchange, amqp.ExchangeTopic, true, false, false, false, nil); err != nil {
			return fail(fmt.Errorf("declare exchange %q: %w", s.Exchange, err))
		}
	}
	return p, nil
}

// ErrNacked is returned when the broker refused to take a message (a negative
// confirmation): it could not be stored.
var ErrNacked = errors.New("rabbitmq: the broker refused a published message")

// Publish sends body to the exchange with routingKey. It returns once the message is
// written, waiting only when confirmWindow messages await confirmation; a message the
// broker later refuses fails a later Publish or Flush.
func (p *Publisher) Publish(ctx context.Context, routingKey string, body []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return p.err
	}
	if len(p.pending) >= confirmWindow {
		if err := p.awaitLocked(ctx, len(p.pending)-confirmWindow+1); err != nil {
			return err
		}
	}
	dc, err := p.ch.PublishWithDeferredConfirmWithContext(ctx, p.s.Exchange, routingKey, false, false,
		amqp.Publishing{ContentType: "text/xml", Body: body})
	if err != nil {
		return p.failLocked(ctx, fmt.Errorf("publish %s: %w", routingKey, err))
	}
	p.pending = append(p.pending, dc)
	return nil
}

// Flush waits until the broker has confirmed every message published so far.
func (p *Publisher) Flush(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return p.err
	}
	return p.awaitLocked(ctx, len(p.pending))
}

// awaitLocked waits for the confirmations of the n oldest pending messages.
func (p *Publisher) awaitLocked(ctx context.Context, n int) error {
	for i := range n {
		acked, err := p.pending[i].WaitContext(ctx)
		switch {
		case err != nil && ctx.Err() != nil:
			p.pending = p.pending[i:]
			return ctx.Err()
		case err != nil:
			return p.failLocked(ctx, fmt.Errorf("await confirmation: %w", err))
		case !acked:
			return p.failLocked(ctx, ErrNacked)
		}
	}
	p.pending = append(p.pending[:0], p.pending[n:]...)
	return nil
}

// failLocked records the publisher's first failure, preferring the broker's own reason
// for closing the channel when there is one.
func (p *Publisher) failLocked(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	select {
	case e, ok := <-p.closed:
		if ok && e != nil {
			err = fmt.Errorf("%w (channel closed: %w)", err, e)
		}
	default:
	}
	p.err = fmt.Errorf("rabbitmq: publisher: %w", err)
	return p.err
}

// Close waits for the outstanding confirmations (until ctx ends) and closes the
// connection. It returns the first failure the publisher met, if any.
func (p *Publisher) Close(ctx context.Context) error {
	err := p.Flush(ctx)
	p.mu.Lock()
	defer p.mu.Unlock()
	_ = p.conn.CloseDeadline(time.Now().Add(closeTimeout))
	if p.err == nil {
		p.err = errors.New("rabbitmq: publisher closed")
	}
	return err
}
