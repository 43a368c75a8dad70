package rabbitmq

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/feedkit/feedkit/feed"
)

// subscription is one session's consumption: a goroutine that keeps a link up and
// hands its deliveries to the receiver.
type subscription struct {
	t        *Transport
	s        *settings // the transport's, with the virtual host resolved
	bindings []string
	r        feed.Receiver
	ackEvery int // acknowledge at least every this many messages

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	done   chan struct{}
}

func newSubscription(t *Transport, s *settings, bindings []string, r feed.Receiver) *subscription {
	ctx, cancel := context.WithCancel(context.Background())
	return &subscription{
		t: t, s: s, bindings: bindings, r: r,
		// A quarter of the prefetch window: the broker never runs dry waiting for an
		// ack, and one ack frame covers many messages.
		ackEvery: max(1, s.Prefetch/4),
		ctx:      ctx, cancel: cancel, done: make(chan struct{}),
	}
}

// Close stops consuming and closes the connection, which deletes the queue. It returns
// once the receiver will be called no more, or with ctx's error when ctx ends first (the
// subscription then finishes closing in the background).
func (sub *subscription) Close(ctx context.Context) error {
	sub.cancel()
	select {
	case <-sub.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run keeps the subscription consuming until Close: it consumes from l (nil when the
// first attempt failed), and after each loss reconnects with capped exponential
// backoff. The receiver hears ConnectionDown once per lost link, not once per failed
// attempt, and ConnectionUp once per link that consumes.
//
// The backoff starts over only after a link that stayed up for MaxReconnectDelay: a
// broker that accepts connections and drops them at once (a crash loop, a limit) is
// retried ever more slowly, like one that refuses them.
func (sub *subscription) run(l *link) {
	defer close(sub.done)
	s, stats := sub.s, &sub.t.stats
	attempt := 0 // attempts since the last link that lasted
	if l == nil {
		attempt = 1
	}
	for {
		if l == nil {
			if !sub.wait(s.backoff.Delay(attempt - 1)) {
				return
			}
			stats.reconnects.Add(1)
			var err error
			l, err = sub.connect(sub.ctx)
			if err != nil {
				if sub.ctx.Err() != nil {
					return
				}
				err = fmt.Errorf("rabbitmq: reconnect to %s (attempt %d): %w", s.redactedURL(), attempt, err)
				sub.t.attemptFailed(err)
				sub.report(err)
				attempt++
				continue
			}
		}
		if sub.ctx.Err() != nil { // Close came while connecting: no ConnectionUp after it
			l.close()
			return
		}
		stats.connects.Add(1)
		if o := s.Observer; o != nil {
			o.TransportLinkUp()
		}
		s.log.LogAttrs(sub.ctx, slog.LevelInfo, "rabbitmq: consuming",
			slog.String("broker", s.redactedURL()), slog.String("queue", l.queue), slog.Int("bindings", len(sub.bindings)))
		up := s.clock.Now()
		stats.connected.Add(1)
		sub.r.ConnectionUp()
		cause := sub.consume(l)
		l.close()
		stats.connected.Add(-1)
		if sub.ctx.Err() != nil {
			return
		}
		stats.drops.Add(1)
		if o := s.Observer; o != nil {
			o.TransportLinkDown(cause)
		}
		sub.report(fmt.Errorf("rabbitmq: lost the connection to %s: %w", s.redactedURL(), cause))
		sub.r.ConnectionDown(cause)
		if s.clock.Since(up) >= s.MaxReconnectDelay {
			attempt = 0
		}
		l, attempt = nil, attempt+1
	}
}

// wait waits d on the transport's clock; it reports false when Close came first.
func (sub *subscription) wait(d time.Duration) bool {
	t := sub.s.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-sub.ctx.Done():
		return false
	}
}

// consume hands l's deliveries to the receiver until l is lost (it returns the cause) or
// the subscription is closed (it returns nil). The receiver may block: then nothing is
// acknowledged, and the broker stops sending once Prefetch messages are unacknowledged.
//
// Acknowledgements are cumulative (multiple=true) and sent every ackEvery messages or
// as soon as no delivery is waiting, whichever comes first: one ack frame per batch
// under load, no message left unacknowledged when the stream pauses.
func (sub *subscription) consume(l *link) error {
	stats := &sub.t.stats
	clk := sub.s.clock
	ackTimeout := 3 * sub.s.Heartbeat
	// Once Close is called, the link has closeTimeout to wind down: a receiver or an ack
	// blocked on the network cannot hold Close longer.
	stopBound := context.AfterFunc(sub.ctx, func() { _ = l.sock.SetDeadline(time.Now().Add(closeTimeout)) })
	defer stopBound()
	var (
		lastTag uint64
		unacked int
		broken  bool // an acknowledgement failed: the channel is gone, whether or not lost says so yet
	)
	ack := func() {
		if unacked == 0 {
			return
		}
		if broken {
			// The write failed, or the channel was closed under it: a later ack on this
			// link can only fail too (amqp091-go tells the close after the deliveries it
			// had buffered, which are still handed over). Their messages are the
			// broker's to redeliver, as the failed one's are.
			unacked = 0
			return
		}
		select {
		case <-l.lost:
			// The channel is gone, and with it what it delivered: nothing to acknowledge.
			unacked = 0
			return
		default:
		}
		// The tag is this link's: a tag from a previous channel is never acknowledged,
		// since each link reads only its own deliveries. The write deadline frees an ack
		// stuck on a silent network, which would otherwise hold amqp091-go's locks and
		// keep even its heartbeat timeout from ending the connection.
		_ = l.sock.SetWriteDeadline(time.Now().Add(ackTimeout))
		err := l.ch.Ack(lastTag, true)
		_ = l.sock.SetWriteDeadline(time.Time{})
		if err != nil {
			broken = true
			stats.ackErrors.Add(1)
			sub.report(fmt.Errorf("rabbitmq: acknowledge up to delivery %d: %w", lastTag, err))
		}
		unacked = 0
	}
	for {
		var (
			d  amqp.Delivery
			ok bool
		)
		select {
		case d, ok = <-l.deliveries:
		default:
			ack()
			select {
			case d, ok = <-l.deliveries:
			case <-l.lost:
				return l.cause()
			case <-sub.ctx.Done():
				return nil
			}
		}
		if !ok {
			// amqp091-go closes the deliveries when the channel shuts down; the watcher
			// has the reason, or is about to.
			select {
			case <-l.lost:
				return l.cause()
			case <-sub.ctx.Done():
				return nil
			}
		}
		// Counted before the receiver has it, so that whoever it hands the message to
		// sees it counted.
		stats.delivered.Add(1)
		stats.bytes.Add(uint64(len(d.Body)))
		sub.r.Receive(feed.Delivery{RoutingKey: d.RoutingKey, Body: d.Body, ReceivedAt: clk.Now()})
		lastTag = d.DeliveryTag
		if unacked++; unacked >= sub.ackEvery {
			ack()
		}
		if sub.ctx.Err() != nil {
			return nil
		}
	}
}

// report passes err to the configured OnError and logger, and to the receiver (the
// session, which passes it to the SDK's OnError), and keeps it for Stats.
func (sub *subscription) report(err error) {
	s := sub.s
	sub.t.stats.recordError(err, s.clock.Now())
	s.log.LogAttrs(sub.ctx, slog.LevelWarn, err.Error())
	if s.OnError != nil {
		s.OnError(err)
	}
	sub.r.Error(err)
}
