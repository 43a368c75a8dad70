package rabbitmq

import (
	"context"
	"errors"
	"fmt"
	"sync"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/feedkit/feedkit/internal/amqpconn"
)

// link is one established connection of a subscription: the connection, its channel,
// the queue and the consumer. A lost link is never revived; the subscription makes a
// new one, so that nothing (a delivery tag above all) crosses from one to the next.
type link struct {
	conn       *amqp.Connection
	sock       *amqpconn.Socket
	ch         *amqp.Channel
	queue      string
	deliveries <-chan amqp.Delivery

	lost      chan struct{} // closed at the first sign of loss
	lostOnce  sync.Once
	lostCause error
	watching  sync.WaitGroup
}

// errConsumerCancelled is the cause when the broker cancels the consumer (the queue was
// deleted under it).
var errConsumerCancelled = errors.New("rabbitmq: the broker cancelled the consumer")

// connect makes a link: dial, open a channel, set QoS, declare the queue, bind it and
// start consuming.
func (sub *subscription) connect(ctx context.Context) (*link, error) {
	d, err := sub.s.dial(ctx)
	if err != nil {
		return nil, err
	}
	l := &link{conn: d.Conn, sock: d.Sock, lost: make(chan struct{})}
	if err := l.setUp(sub.t, sub.bindings); err != nil {
		_ = d.Release(closeTimeout)
		l.close()
		return nil, amqpconn.ContextOr(ctx, err)
	}
	if err := d.Release(closeTimeout); err != nil {
		l.close()
		return nil, err
	}
	return l, nil
}

// setUp opens the channel and the topology on l.conn and starts watching both.
func (l *link) setUp(t *Transport, bindings []string) error {
	s := t.s
	// Register for the connection's notices before anything can close it, so that no
	// loss goes unseen. Every channel registered here is drained by watch until
	// amqp091-go closes it: an undrained notify channel blocks amqp091-go's reader.
	connClosed := l.conn.NotifyClose(make(chan *amqp.Error, 1))
	blocked := l.conn.NotifyBlocked(make(chan amqp.Blocking, 1))
	ch, err := l.conn.Channel()
	if err != nil {
		l.watch(connClosed, nil, nil, blocked, t)
		return fmt.Errorf("open channel: %w", err)
	}
	l.ch = ch
	chClosed := ch.NotifyClose(make(chan *amqp.Error, 1))
	cancelled := ch.NotifyCancel(make(chan string, 1))
	l.watch(connClosed, chClosed, cancelled, blocked, t)

	if err := ch.Qos(s.Prefetch, 0, false); err != nil {
		return fmt.Errorf("set prefetch %d: %w", s.Prefetch, err)
	}
	if s.DeclareExchange {
		if err := ch.ExchangeDeclare(s.Exchange, amqp.ExchangeTopic, true, false, false, false, nil); err != nil {
			return fmt.Errorf("declare exchange %q: %w", s.Exchange, err)
		}
	}
	// Server-named, exclusive, auto-delete: the queue lives exactly as long as this
	// connection, so a session that dies leaves nothing behind on the broker.
	q, err := ch.QueueDeclare("", false, true, true, false, nil)
	if err != nil {
		return fmt.Errorf("declare queue: %w", err)
	}
	l.queue = q.Name
	for _, key := range bindings {
		if err := ch.QueueBind(q.Name, key, s.Exchange, false, nil); err != nil {
			return fmt.Errorf("bind queue to exchange %q with %q: %w", s.Exchange, key, err)
		}
	}
	l.deliveries, err = ch.Consume(q.Name, "", false, true, false, false, nil)
	if err != nil {
		return fmt.Errorf("consume from %s: %w", q.Name, err)
	}
	return nil
}

// watch drains every notify channel of the link on goroutines of its own until
// amqp091-go closes them (it does when the connection shuts down), and turns the first
// close or cancel into the loss of the link.
func (l *link) watch(connClosed, chClosed <-chan *amqp.Error, cancelled <-chan string, blocked <-chan amqp.Blocking, t *Transport) {
	l.watching.Add(1)
	go func() {
		defer l.watching.Done()
		for connClosed != nil || chClosed != nil || cancelled != nil || blocked != nil {
			select {
			case e, ok := <-connClosed:
				if !ok {
					connClosed = nil
					l.markLost(amqp.ErrClosed)
					continue
				}
				l.markLost(fmt.Errorf("connection closed: %w", e))
			case e, ok := <-chClosed:
				if !ok {
					chClosed = nil
					l.markLost(amqp.ErrClosed)
					continue
				}
				if l.conn.IsClosed() {
					continue // the connection's own notice says why, and is on its way
				}
				l.markLost(fmt.Errorf("channel closed: %w", e))
			case _, ok := <-cancelled:
				if !ok {
					cancelled = nil
					continue
				}
				l.markLost(errConsumerCancelled)
			case b, ok := <-blocked:
				if !ok {
					blocked = nil
					continue
				}
				if b.Active {
					t.stats.blocked.Add(1)
					t.s.log.Warn("rabbitmq: the broker blocked the connection", "reason", b.Reason)
				} else {
					t.s.log.Info("rabbitmq: the broker unblocked the connection")
				}
			}
		}
	}()
}

// markLost records the first cause of the link's loss and signals it.
func (l *link) markLost(cause error) {
	l.lostOnce.Do(func() {
		l.lostCause = cause
		close(l.lost)
	})
}

// cause returns why the link was lost; call it after l.lost is closed.
func (l *link) cause() error { return l.lostCause }

// close ends the link: a graceful AMQP close bounded by closeTimeout, after which the
// socket is closed regardless. It waits until the notify channels are drained, so no
// goroutine of the link outlives it.
func (l *link) close() {
	// Bounded by a timer that closes the socket, not by CloseDeadline's deadline alone:
	// amqp091-go's heartbeater may push the read deadline past it.
	_ = amqpconn.CloseGracefully(l.conn, l.sock, closeTimeout)
	l.markLost(amqp.ErrClosed)
	l.watching.Wait()
}
