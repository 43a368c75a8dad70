package group

import (
	"context"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/internal/amqpconn"
	"github.com/feedkit/feedkit/internal/backoff"
)

// acksConsumer reads the workers' acknowledgements of barriers from the acks queue and
// hands each to the gate, reconnecting when its link is lost. An acknowledgement lost
// with a link is no harm: the worker's next one, or the barrier's bound, settles it.
type acksConsumer struct {
	url    string
	top    Topology
	name   string
	dial   time.Duration
	policy backoff.Policy
	clock  clock.Clock
	report func(error)
	handle func(context.Context, Envelope)
}

// run consumes until ctx ends.
func (a *acksConsumer) run(ctx context.Context) {
	for attempt := 0; ctx.Err() == nil; attempt++ {
		consumed, err := a.consume(ctx)
		if ctx.Err() != nil {
			return
		}
		if consumed {
			attempt = 0 // the link worked: start the backoff over
		}
		a.report(fmt.Errorf("group: consuming %s: %w", a.top.AcksQueue(), err))
		t := a.clock.NewTimer(a.policy.Delay(attempt))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
	}
}

// consume runs one link: it returns when the link is lost (consumed reports whether it
// got as far as consuming) or ctx ends.
func (a *acksConsumer) consume(ctx context.Context) (consumed bool, err error) {
	props := amqp.NewConnectionProperties()
	props.SetClientConnectionName(a.name)
	d, err := amqpconn.Dial(ctx, a.url, amqp.Config{Heartbeat: 10 * time.Second, Properties: props}, a.dial)
	if err != nil {
		return false, err
	}
	conn := d.Conn
	defer func() { _ = amqpconn.CloseGracefully(conn, d.Sock, time.Second) }()
	if err := d.Release(time.Second); err != nil {
		return false, err
	}
	closed := conn.NotifyClose(make(chan *amqp.Error, 1))
	ch, err := conn.Channel()
	if err != nil {
		return false, err
	}
	if err := a.top.declare(ch); err != nil {
		return false, err
	}
	deliveries, err := ch.ConsumeWithContext(ctx, a.top.AcksQueue(), "", true, false, false, false, nil)
	if err != nil {
		return false, err
	}
	for {
		select {
		case <-ctx.Done():
			return true, ctx.Err()
		case e := <-closed:
			return true, amqpconn.WithCloseNotice(amqp.ErrClosed, closedNotice(e))
		case d, ok := <-deliveries:
			if !ok {
				return true, amqp.ErrClosed
			}
			env, err := readEnvelope(d.Headers, d.Body)
			if err != nil || env.Kind != KindBarrierAck {
				a.report(fmt.Errorf("group: %s: a message that is no acknowledgement: %v", a.top.AcksQueue(), err))
				continue
			}
			a.handle(ctx, env)
		}
	}
}

// closedNotice turns one close notice into a closed channel holding it, as
// amqpconn.WithCloseNotice reads it.
func closedNotice(e *amqp.Error) <-chan *amqp.Error {
	c := make(chan *amqp.Error, 1)
	if e != nil {
		c <- e
	}
	close(c)
	return c
}
