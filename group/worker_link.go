package group

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/feedkit/feedkit/internal/amqpconn"
)

// workerLink is one connection of a worker: a channel per shard queue, each with its
// consumer and its acker (delivery tags are a channel's), a channel in confirm mode for
// the barriers' acknowledgements, and the control queue's consumer. A lost link is never
// revived: the worker makes a new one, with new ackers, so that no delivery tag crosses
// from one channel to the next.
type workerLink struct {
	conn    *amqp.Connection
	sock    *amqpconn.Socket
	pub     *amqp.Channel // confirm mode: barriers' acknowledgements
	shards  []*shardLink
	control <-chan amqp.Delivery // nil without WorkerConfig.Global

	// ctx ends when the link is lost or closed: the acks and acknowledgements in
	// flight give up then.
	ctx    context.Context
	cancel context.CancelFunc

	writeMu sync.Mutex // one write of the worker's at a time, under a write deadline

	lost      chan struct{} // closed at the first sign of loss
	lostOnce  sync.Once
	lostCause error
	watching  sync.WaitGroup
}

// shardLink is a shard queue's consumer on a link.
type shardLink struct {
	st         *shardState
	ch         *amqp.Channel
	deliveries <-chan amqp.Delivery
	acker      *acker
}

// errWorkerConsumerCancelled is the cause when the broker cancels a consumer (its queue
// was deleted).
var errWorkerConsumerCancelled = errors.New("the broker cancelled a consumer")

// errNacked is a barrier acknowledgement the broker refused (an internal error of the
// broker).
var errNacked = errors.New("the broker nacked the barrier's acknowledgement")

// connect makes a link: dial, declare the topology, and consume the control queue and
// every shard queue. ctx ends the attempt at any step.
func (w *Worker) connect(ctx context.Context) (*workerLink, error) {
	d, err := amqpconn.Dial(ctx, w.cfg.URL, w.amqpConfig(), w.cfg.DialTimeout)
	if err != nil {
		return nil, err
	}
	l := &workerLink{conn: d.Conn, sock: d.Sock, lost: make(chan struct{})}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	if err := w.setUp(l); err != nil {
		_ = d.Release(workerCloseTimeout)
		l.close()
		return nil, amqpconn.ContextOr(ctx, err)
	}
	if err := d.Release(workerCloseTimeout); err != nil {
		l.close()
		return nil, err
	}
	return l, nil
}

// setUp opens the link's channels and consumers, watching each.
func (w *Worker) setUp(l *workerLink) error {
	// Registered before anything can close it, so that no loss goes unseen.
	l.watchClose(l.conn.NotifyClose(make(chan *amqp.Error, 1)), "connection")
	ch, err := l.channel("the publishing channel")
	if err != nil {
		return err
	}
	if err := w.cfg.Topology.declare(ch); err != nil {
		return err
	}
	if err := ch.Confirm(false); err != nil {
		return fmt.Errorf("confirm mode: %w", err)
	}
	l.pub = ch
	if w.cfg.Global != nil {
		ch, err := l.channel("the control channel")
		if err != nil {
			return err
		}
		if err := ch.Qos(64, 0, false); err != nil {
			return fmt.Errorf("control queue's prefetch: %w", err)
		}
		// Server-named, exclusive, auto-delete: it lives as long as this connection.
		q, err := ch.QueueDeclare("", false, true, true, false, nil)
		if err != nil {
			return fmt.Errorf("declaring the control queue: %w", err)
		}
		if err := ch.QueueBind(q.Name, "", w.cfg.Topology.ControlExchange(), false, nil); err != nil {
			return fmt.Errorf("binding the control queue to %s: %w", w.cfg.Topology.ControlExchange(), err)
		}
		if l.control, err = ch.Consume(q.Name, "", false, true, false, false, nil); err != nil {
			return fmt.Errorf("consuming the control queue: %w", err)
		}
	}
	for _, st := range w.shards {
		ch, err := l.channel(st.queue + "'s channel")
		if err != nil {
			return err
		}
		if err := ch.Qos(w.cfg.Prefetch, 0, false); err != nil {
			return fmt.Errorf("%s's prefetch %d: %w", st.queue, w.cfg.Prefetch, err)
		}
		deliveries, err := ch.Consume(st.queue, "", false, false, false, false, nil)
		if err != nil {
			return fmt.Errorf("consuming %s: %w", st.queue, err)
		}
		s := &shardLink{st: st, ch: ch, deliveries: deliveries}
		s.acker = newAcker(w.every,
			func(tag uint64) error { return l.write(func() error { return ch.Ack(tag, true) }) },
			func(b *shardBarrier) error { return l.acknowledge(st.n, b) })
		s.acker.acked = func(n int) { st.acked.Add(uint64(n)) }
		s.acker.barrierAcked = func(*shardBarrier) { st.barriersAcked.Add(1) }
		l.shards = append(l.shards, s)
	}
	return nil
}

// channel opens a channel on the link and watches it.
func (l *workerLink) channel(what string) (*amqp.Channel, error) {
	ch, err := l.conn.Channel()
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", what, err)
	}
	l.watchClose(ch.NotifyClose(make(chan *amqp.Error, 1)), what)
	cancelled := ch.NotifyCancel(make(chan string, 1))
	l.watching.Add(1)
	go func() {
		defer l.watching.Done()
		for range cancelled {
			l.markLost(errWorkerConsumerCancelled)
		}
	}()
	return ch, nil
}

// watchClose drains a close notice channel until amqp091-go closes it, and turns the
// first notice into the loss of the link.
func (l *workerLink) watchClose(closed <-chan *amqp.Error, what string) {
	l.watching.Add(1)
	go func() {
		defer l.watching.Done()
		for e := range closed {
			l.markLost(fmt.Errorf("%s closed: %w", what, e))
		}
		l.markLost(amqp.ErrClosed)
	}()
}

// markLost records the first cause of the link's loss and signals it.
func (l *workerLink) markLost(cause error) {
	l.lostOnce.Do(func() {
		l.lostCause = cause
		close(l.lost)
		l.cancel()
	})
}

// cause returns why the link was lost; call it after l.lost is closed.
func (l *workerLink) cause() error { return l.lostCause }

// write runs one write of the worker's (an ack, a publish) under a write deadline.
func (l *workerLink) write(f func() error) error {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	_ = l.sock.SetWriteDeadline(time.Now().Add(workerWriteTimeout))
	err := f()
	_ = l.sock.SetWriteDeadline(time.Time{})
	return err
}

// acknowledge tells the ingress that shard has processed everything before barrier b:
// a KindBarrierAck to the queue b names, by the default exchange, confirmed by the
// broker.
func (l *workerLink) acknowledge(shard int, b *shardBarrier) error {
	e := Envelope{Kind: KindBarrierAck, Barrier: b.env.Barrier, Producer: b.env.Producer,
		Request: b.env.Request, Shard: shard, Epoch: b.env.Epoch}
	ctx, cancel := context.WithTimeout(l.ctx, workerConfirmTimeout)
	defer cancel()
	var dc *amqp.DeferredConfirmation
	err := l.write(func() error {
		var err error
		dc, err = l.pub.PublishWithDeferredConfirmWithContext(ctx, "", b.replyTo, false, false, e.publishing())
		return err
	})
	if err != nil {
		return fmt.Errorf("acknowledging barrier %s to %s: %w", b.env.Barrier, b.replyTo, err)
	}
	ok, err := dc.WaitContext(ctx)
	switch {
	case err != nil:
		return fmt.Errorf("acknowledging barrier %s to %s: %w", b.env.Barrier, b.replyTo, err)
	case !ok:
		return fmt.Errorf("acknowledging barrier %s to %s: %w", b.env.Barrier, b.replyTo, errNacked)
	}
	return nil
}

// close ends the link: a graceful AMQP close bounded by workerCloseTimeout, after which
// the socket is closed regardless. The broker gives back every delivery not
// acknowledged. It waits until the notice channels are drained.
func (l *workerLink) close() {
	_ = amqpconn.CloseGracefully(l.conn, l.sock, workerCloseTimeout)
	l.markLost(amqp.ErrClosed)
	l.watching.Wait()
}

// amqpConfig is amqp091-go's configuration of one connection attempt.
func (w *Worker) amqpConfig() amqp.Config {
	props := amqp.NewConnectionProperties()
	props.SetClientConnectionName(w.cfg.ConnectionName)
	props["product"] = "feedkit"
	return amqp.Config{Heartbeat: w.cfg.Heartbeat, Properties: props}
}
