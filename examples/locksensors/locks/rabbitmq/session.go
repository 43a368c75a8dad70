package rabbitmq

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/feedkit/feedkit/examples/locksensors/locks"
	"github.com/feedkit/feedkit/internal/amqpconn"
)

// session is one connection of a Consumer with its consumers. A lost session is never
// revived: Run makes a new one, so that no delivery tag crosses from one channel to the
// next.
type session struct {
	c    *Consumer
	conn *amqp.Connection
	sock *amqpconn.Socket
	subs []*sub

	// ctx ends with Run's context or at the first sign of loss, whose cause it keeps;
	// it is the context the handler gets, since a batch of a lost session can no longer
	// be acknowledged and the broker is already redelivering it.
	ctx  context.Context
	lose context.CancelCauseFunc
	// watching counts the goroutines that drain amqp091-go's notify and delivery
	// channels; they end once the connection is closed.
	watching sync.WaitGroup
}

// sub is one consumer: an AMQP channel and its deliveries.
type sub struct {
	ch       *amqp.Channel
	arrivals chan arrival // fed by pump
}

// arrival is a delivery as the consumer keeps it until it is acknowledged.
type arrival struct {
	msg locks.Message
	tag uint64
}

var (
	// errConsumerCancelled is the cause when the broker cancels a consumer (the queue
	// was deleted under it).
	errConsumerCancelled = errors.New("the broker cancelled the consumer")
	// errClosed is the cause once the consumer closes the session itself.
	errClosed = errors.New("session closed")
)

// connect makes a session: dial, declare the queue, and start every consumer.
func (c *Consumer) connect(ctx context.Context) (*session, error) {
	d, err := dial(ctx, c.s.URL, c.s.ConnectionName)
	if err != nil {
		return nil, err
	}
	sess := &session{c: c, conn: d.Conn, sock: d.Sock}
	sess.ctx, sess.lose = context.WithCancelCause(ctx)
	if err := sess.setUp(); err != nil {
		_ = d.Release(closeTimeout)
		sess.close()
		return nil, amqpconn.ContextOr(ctx, err)
	}
	if err := d.Release(closeTimeout); err != nil {
		sess.close()
		return nil, err
	}
	return sess, nil
}

// setUp opens the consumers' channels, declares the queue on the first and starts
// consuming on each.
func (sess *session) setUp() error {
	s := sess.c.s
	// Registered before anything can close the connection, so that no loss goes unseen.
	sess.watch(sess.conn.NotifyClose(make(chan *amqp.Error, 1)), false)
	for i := range s.Consumers {
		ch, err := sess.conn.Channel()
		if err != nil {
			return fmt.Errorf("open channel: %w", err)
		}
		sess.watch(ch.NotifyClose(make(chan *amqp.Error, 1)), true)
		if i == 0 {
			if err := DeclareQueue(ch, s.Queue); err != nil {
				return err
			}
		}
		if err := ch.Qos(s.Prefetch, 0, false); err != nil {
			return fmt.Errorf("set prefetch %d: %w", s.Prefetch, err)
		}
		tag := fmt.Sprintf("%s-%d", s.ConnectionName, i+1)
		deliveries, err := ch.Consume(s.Queue, tag, false, false, false, false, nil)
		if err != nil {
			return fmt.Errorf("consume from %q: %w", s.Queue, err)
		}
		sb := &sub{ch: ch, arrivals: make(chan arrival, s.Prefetch)}
		sess.subs = append(sess.subs, sb)
		sess.watching.Add(1)
		go sess.pump(deliveries, sb.arrivals)
	}
	return nil
}

// watch drains a notify channel on a goroutine of its own until amqp091-go closes it
// (an undrained one would block amqp091-go's shutdown), and turns a close into the loss
// of the session.
func (sess *session) watch(closed <-chan *amqp.Error, ofChannel bool) {
	sess.watching.Add(1)
	go func() {
		defer sess.watching.Done()
		for e := range closed {
			switch {
			case !ofChannel:
				sess.lose(fmt.Errorf("connection closed: %w", e))
			case !sess.conn.IsClosed():
				sess.lose(fmt.Errorf("channel closed: %w", e))
			}
			// A channel closed with its connection: the connection's own notice says
			// why, and is on its way.
		}
		sess.lose(amqp.ErrClosed)
	}()
}

// pump moves deliveries from amqp091-go's unbuffered channel to the consumer's buffered
// one, stamping them as they arrive. What has arrived is then really waiting in the
// buffer, so a batch can take all of it without blocking; amqp091-go's own channel
// offers only one delivery at a time. The buffer holds Prefetch, which is all the
// broker sends ahead, so the pump never waits for the consumer.
func (sess *session) pump(deliveries <-chan amqp.Delivery, arrivals chan<- arrival) {
	defer sess.watching.Done()
	defer close(arrivals)
	c := sess.c
	for d := range deliveries {
		c.stats.delivered.Add(1)
		if d.Redelivered {
			c.stats.redelivered.Add(1)
		}
		a := arrival{msg: locks.Message{Body: d.Body, Received: c.s.clock.Now()}, tag: d.DeliveryTag}
		select {
		case arrivals <- a:
		case <-sess.ctx.Done():
			// The consumer has stopped: the broker redelivers what it did not acknowledge.
		}
	}
}

// run runs every consumer until the session ends, and returns why it ended.
func (sess *session) run() error {
	var wg sync.WaitGroup
	for _, sb := range sess.subs {
		wg.Go(func() { sess.consume(sb) })
	}
	wg.Wait()
	return context.Cause(sess.ctx)
}

// consume hands one consumer's deliveries to the handler batch by batch, acknowledging
// each batch once stored, until the session ends.
func (sess *session) consume(sb *sub) {
	c := sess.c
	for {
		batch, last, ok := sess.collect(sb)
		if !ok || !sess.handle(batch) {
			return
		}
		// One cumulative acknowledgement covers the batch: deliveries on a channel are
		// numbered in order, and this consumer is the channel's only one.
		if err := sb.ch.Ack(last, true); err != nil {
			// The channel is gone, and the broker redelivers the batch.
			sess.lose(fmt.Errorf("acknowledge: %w", err))
			return
		}
		c.stats.acked.Add(int64(len(batch)))
	}
}

// collect waits for a delivery, then adds whatever else has already arrived, up to
// BatchSize. It returns the batch and the tag of its last delivery, or false once the
// session has ended.
func (sess *session) collect(sb *sub) ([]locks.Message, uint64, bool) {
	var a arrival
	select {
	case <-sess.ctx.Done():
		return nil, 0, false
	case next, ok := <-sb.arrivals:
		if !ok {
			sess.deliveriesEnded(sb)
			return nil, 0, false
		}
		a = next
	}
	// A fresh slice per batch: the handler may keep what it was given.
	batch := make([]locks.Message, 1, sess.c.s.BatchSize)
	batch[0] = a.msg
	last := a.tag
	for len(batch) < cap(batch) {
		select {
		case next, ok := <-sb.arrivals:
			if !ok {
				// Handled below, by the next collect, once this batch is stored.
				return batch, last, true
			}
			batch = append(batch, next.msg)
			last = next.tag
		default:
			return batch, last, true
		}
	}
	return batch, last, true
}

// deliveriesEnded reports why amqp091-go closed a consumer's deliveries: the channel or
// connection shut down (the watchers have the cause), or the broker cancelled the
// consumer while the channel stayed open.
func (sess *session) deliveriesEnded(sb *sub) {
	if !sb.ch.IsClosed() {
		sess.lose(errConsumerCancelled)
	}
	// A closed channel's notify channel is sent on or closed, so its watcher ends the
	// session: waiting for it leaves the watcher's cause in place.
	<-sess.ctx.Done()
}

// handle hands batch to the handler until it returns nil, waiting the Reconnect backoff
// after each error. It reports false, leaving the batch unacknowledged, when the session
// ends first.
func (sess *session) handle(batch []locks.Message) bool {
	c := sess.c
	for attempt := 0; ; attempt++ {
		if sess.ctx.Err() != nil {
			return false
		}
		err := c.h.HandleBatch(sess.ctx, batch)
		if err == nil {
			c.stats.batches.Add(1)
			return true
		}
		if sess.ctx.Err() != nil {
			// The session ended under the handler, which is likely why it failed: the
			// batch is the broker's to redeliver, and nothing is wrong with the handler.
			return false
		}
		c.stats.handlerErrors.Add(1)
		delay := c.s.Reconnect.Delay(attempt)
		c.s.log.LogAttrs(sess.ctx, slog.LevelWarn, "rabbitmq: the handler failed a batch; handing it again",
			slog.Int("readings", len(batch)), slog.Int("attempt", attempt+1),
			slog.Duration("delay", delay), slog.Any("error", err))
		if !c.wait(sess.ctx, delay) {
			return false
		}
	}
}

// close ends the session and waits until none of its goroutines remain. The broker
// requeues every delivery that was not acknowledged.
func (sess *session) close() {
	sess.lose(errClosed)
	// An error means the connection was closed already, or the broker did not answer
	// in time; the socket is closed regardless.
	_ = amqpconn.CloseGracefully(sess.conn, sess.sock, closeTimeout)
	sess.sock.CloseAndWait(closeTimeout)
	sess.watching.Wait()
}
