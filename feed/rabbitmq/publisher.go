package rabbitmq

import (
	"context"
	"errors"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/feedkit/feedkit/internal/amqpconn"
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
	s      *settings
	conn   *amqp.Connection
	sock   *amqpconn.Socket
	ch     *amqp.Channel
	closed chan *amqp.Error

	turn    chan struct{}                // holds one token: the right to use the fields below
	pending []*amqp.DeferredConfirmation // oldest first
	err     error                        // the first failure; every later call returns it
	done    bool                         // Close has run
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
	d, err := s.dial(ctx)
	if err != nil {
		return nil, fmt.Errorf("rabbitmq: publisher for %s: %w", s.redactedURL(), err)
	}
	p := &Publisher{s: s, conn: d.Conn, sock: d.Sock, turn: make(chan struct{}, 1)}
	p.turn <- struct{}{}
	fail := func(err error) (*Publisher, error) {
		_ = d.Release(closeTimeout)
		_ = d.Conn.Close()
		return nil, fmt.Errorf("rabbitmq: publisher for %s: %w", s.redactedURL(), amqpconn.ContextOr(ctx, err))
	}
	if p.ch, err = d.Conn.Channel(); err != nil {
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
	if err := d.Release(closeTimeout); err != nil {
		return nil, fmt.Errorf("rabbitmq: publisher for %s: %w", s.redactedURL(), err)
	}
	return p, nil
}

// ErrNacked is returned when the broker refused to take a message (a negative
// confirmation) while the channel stayed open: it could not store it.
var ErrNacked = errors.New("rabbitmq: the broker refused a published message")

// errPublisherClosed is returned by calls after Close.
var errPublisherClosed = errors.New("rabbitmq: publisher closed")

// lock takes the publisher's turn, or gives up when ctx ends.
func (p *Publisher) lock(ctx context.Context) error {
	select {
	case <-p.turn:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *Publisher) unlock() { p.turn <- struct{}{} }

// Publish sends body to the exchange with routingKey. It returns once the message is
// written, waiting only when confirmWindow messages await confirmation; a message the
// broker later refuses fails a later Publish or Flush. When ctx ends before the message
// is written whole (a broker that blocks publishers, a silent network), the publisher
// fails for good: its connection is left mid-frame.
func (p *Publisher) Publish(ctx context.Context, routingKey string, body []byte) error {
	if err := p.lock(ctx); err != nil {
		return err
	}
	defer p.unlock()
	if p.err != nil {
		return p.err
	}
	if len(p.pending) >= confirmWindow {
		if err := p.awaitLocked(ctx, len(p.pending)-confirmWindow+1); err != nil {
			return err
		}
	}
	// amqp091-go writes under its own locks and does not watch ctx while it does: a
	// deadline in the past is the only way to stop a write that cannot finish.
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		_ = p.sock.SetWriteDeadline(time.Unix(1, 0))
		close(fired)
	})
	dc, err := p.ch.PublishWithDeferredConfirmWithContext(ctx, p.s.Exchange, routingKey, false, false,
		amqp.Publishing{ContentType: "text/xml", Body: body})
	if !stop() {
		<-fired
		if err == nil {
			// The message was written whole before the deadline bit: the connection is
			// sound, and only the deadline must go.
			_ = p.sock.SetWriteDeadline(time.Time{})
		}
	}
	if err != nil {
		return p.failLocked(ctx, fmt.Errorf("publish %s: %w", routingKey, err))
	}
	p.pending = append(p.pending, dc)
	return nil
}

// Flush waits until the broker has confirmed every message published so far.
func (p *Publisher) Flush(ctx context.Context) error {
	if err := p.lock(ctx); err != nil {
		return err
	}
	defer p.unlock()
	if p.err != nil {
		return p.err
	}
	return p.awaitLocked(ctx, len(p.pending))
}

// awaitLocked waits for the confirmations of the n oldest pending messages.
func (p *Publisher) awaitLocked(ctx context.Context, n int) error {
	for i := range n {
		acked, err := p.pending[i].WaitContext(ctx)
		if err != nil { // only ctx ends a wait
			p.dropConfirmed(i)
			return err
		}
		if !acked {
			if p.ch.IsClosed() {
				// amqp091-go nacks what is pending when the channel closes: not a refusal.
				return p.failLocked(ctx, errors.New("the channel closed before the broker confirmed every message"))
			}
			return p.failLocked(ctx, ErrNacked)
		}
	}
	p.dropConfirmed(n)
	return nil
}

// dropConfirmed forgets the n oldest pending confirmations.
func (p *Publisher) dropConfirmed(n int) {
	clear(p.pending[:n]) // no stale pointers behind the slice's start
	p.pending = p.pending[n:]
}

// failLocked records the publisher's first failure, preferring the broker's own reason
// for closing the channel when there is one.
func (p *Publisher) failLocked(ctx context.Context, err error) error {
	if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
		return ctx.Err()
	}
	p.err = fmt.Errorf("rabbitmq: publisher: %w", amqpconn.WithCloseNotice(err, p.closed))
	return p.err
}

// Close waits for the outstanding confirmations and closes the connection. When ctx
// ends first, the socket is closed under whatever is waiting. It returns the first
// failure the publisher met, if any; a second Close returns nil.
func (p *Publisher) Close(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { _ = p.sock.Close() })
	defer stop()
	<-p.turn // a holder stuck on the network is freed by the AfterFunc above
	defer p.unlock()
	if p.done {
		return nil
	}
	p.done = true
	var err error
	if p.err == nil {
		err = p.awaitLocked(ctx, len(p.pending))
	} else {
		err = p.err
	}
	_ = amqpconn.CloseGracefully(p.conn, p.sock, closeTimeout)
	if p.err == nil {
		p.err = errPublisherClosed
	}
	return err
}
