package rabbitmq

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/feedkit/feedkit/internal/amqpconn"
)

// Publisher puts readings on the queue, as the sensors' gateway does: persistent
// messages of content type application/json, through the default exchange, on a
// channel in confirm mode, so that a Publish that returned nil is a reading the broker
// has taken. It is safe for concurrent use; the messages of one goroutine keep their
// order.
//
// It does not reconnect: once its connection is lost every call fails, and the caller
// makes a new Publisher.
type Publisher struct {
	queue  string
	conn   *amqp.Connection
	sock   *amqpconn.Socket
	ch     *amqp.Channel
	closed chan *amqp.Error // the channel's close notice; amqp091-go sends at most one

	mu   sync.Mutex // held while writing, so that one batch is written whole before the next
	err  error      // the first failure; every later call returns it
	done bool       // Close has run
}

// ErrNacked is returned when the broker refused to take a message (a negative
// confirmation) while the channel stayed open.
var ErrNacked = errors.New("rabbitmq: the broker refused a published message")

// errPublisherClosed is returned by calls after Close.
var errPublisherClosed = errors.New("rabbitmq: publisher closed")

// NewPublisher connects to the broker at url, opens a channel in confirm mode and
// declares queue ("" means DefaultQueue) with DeclareQueue. ctx bounds the connecting
// only.
func NewPublisher(ctx context.Context, url, queue string) (*Publisher, error) {
	uri, err := amqpconn.ParseURL("rabbitmq: NewPublisher: ", url)
	if err != nil {
		return nil, err
	}
	if queue == "" {
		queue = DefaultQueue
	}
	fail := func(err error) (*Publisher, error) {
		return nil, fmt.Errorf("rabbitmq: publisher for %s: %w", amqpconn.RedactedURL(uri), err)
	}
	d, err := dial(ctx, url, DefaultConnectionName+"-publisher")
	if err != nil {
		return fail(err)
	}
	p := &Publisher{queue: queue, conn: d.Conn, sock: d.Sock}
	setUp := func() error {
		if p.ch, err = d.Conn.Channel(); err != nil {
			return fmt.Errorf("open channel: %w", err)
		}
		// Buffered: amqp091-go must not block on the one notice it sends.
		p.closed = p.ch.NotifyClose(make(chan *amqp.Error, 1))
		if err := p.ch.Confirm(false); err != nil {
			return fmt.Errorf("confirm mode: %w", err)
		}
		return DeclareQueue(p.ch, queue)
	}
	if err := setUp(); err != nil {
		_ = d.Release(closeTimeout)
		p.shut()
		return fail(amqpconn.ContextOr(ctx, err))
	}
	if err := d.Release(closeTimeout); err != nil {
		return fail(err)
	}
	return p, nil
}

// Publish puts one reading on the queue and waits for the broker's confirmation.
func (p *Publisher) Publish(ctx context.Context, body []byte) error {
	return p.PublishBatch(ctx, [][]byte{body})
}

// PublishBatch puts every body on the queue, in order, then waits for the broker to
// confirm them all: one round trip for the lot, where Publish pays one per reading.
// When it fails, some of the bodies may have been taken, and publishing them again
// makes duplicates (which the service tolerates). When ctx ends while a message is
// being written (a broker that blocks publishers, a silent network), the publisher
// fails for good: its connection is left mid-frame.
func (p *Publisher) PublishBatch(ctx context.Context, bodies [][]byte) error {
	if len(bodies) == 0 {
		return nil
	}
	confirms, err := p.write(ctx, bodies)
	if err != nil {
		return err
	}
	for _, dc := range confirms {
		acked, err := dc.WaitContext(ctx)
		if err != nil { // only ctx ends a wait
			return err
		}
		if !acked {
			if p.ch.IsClosed() {
				// amqp091-go nacks what is pending when the channel closes: not a refusal.
				return p.fail(ctx, errors.New("the channel closed before the broker confirmed every message"))
			}
			return ErrNacked
		}
	}
	return nil
}

// write publishes bodies and returns their pending confirmations.
func (p *Publisher) write(ctx context.Context, bodies [][]byte) ([]*amqp.DeferredConfirmation, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return nil, p.err
	}
	// amqp091-go writes under its own locks and does not watch ctx while it does: a
	// deadline in the past is the only way to stop a write that cannot finish.
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		_ = p.sock.SetWriteDeadline(time.Unix(1, 0))
		close(fired)
	})
	confirms := make([]*amqp.DeferredConfirmation, 0, len(bodies))
	var err error
	for _, body := range bodies {
		var dc *amqp.DeferredConfirmation
		dc, err = p.ch.PublishWithDeferredConfirmWithContext(ctx, "", p.queue, false, false, amqp.Publishing{
			ContentType:  "application/json",
			DeliveryMode: amqp.Persistent, // on disk in a durable queue: a broker restart keeps it
			Body:         body,
		})
		if err != nil {
			break
		}
		confirms = append(confirms, dc)
	}
	if !stop() {
		<-fired
		if err == nil || errors.Is(err, ctx.Err()) {
			// Every message was written whole before the deadline bit (a ctx error comes
			// from the check amqp091-go makes before it writes): the connection is sound,
			// and only the deadline must go.
			_ = p.sock.SetWriteDeadline(time.Time{})
		}
	}
	switch {
	case err == nil:
		return confirms, nil
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return nil, err
	}
	return nil, p.failLocked(fmt.Errorf("publish to %q: %w", p.queue, err))
}

// fail records the publisher's first failure.
func (p *Publisher) fail(ctx context.Context, err error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return p.err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return p.failLocked(err)
}

// failLocked records the publisher's first failure, with the broker's own reason for
// closing the channel when there is one.
func (p *Publisher) failLocked(err error) error {
	if p.err != nil {
		return p.err
	}
	p.err = fmt.Errorf("rabbitmq: publisher: %w", amqpconn.WithCloseNotice(err, p.closed))
	return p.err
}

// Close closes the connection; messages published but not yet confirmed may or may not
// have been taken. A second Close returns nil.
func (p *Publisher) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return nil
	}
	p.done = true
	if p.err == nil {
		p.err = errPublisherClosed
	}
	err := amqpconn.CloseGracefully(p.conn, p.sock, closeTimeout)
	p.sock.CloseAndWait(closeTimeout)
	if errors.Is(err, amqp.ErrClosed) {
		return nil // the broker closed it first; the calls that met that have said so
	}
	return err
}

// shut closes the socket under the connection and waits for amqp091-go's reader to see
// it.
func (p *Publisher) shut() {
	_ = amqpconn.CloseGracefully(p.conn, p.sock, closeTimeout)
	p.sock.CloseAndWait(closeTimeout)
}
