package group

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/feedkit/feedkit/internal/amqpconn"
)

// pubLink is one connection of the publisher: the connection, its channel in confirm
// mode, and the watchers of both. A lost link is never revived: the publisher makes a
// new one, so that no delivery tag, confirmation or return crosses from one channel to
// the next.
type pubLink struct {
	conn     *amqp.Connection
	sock     *amqpconn.Socket
	ch       *amqp.Channel
	confirms chan amqp.Confirmation // the channel's confirmations, in publish order
	blocked  atomic.Bool            // the broker blocks the connection (a resource alarm)

	lost      chan struct{} // closed at the first sign of loss
	lostOnce  sync.Once
	lostCause error
	watching  sync.WaitGroup
	unbound   func() bool // stops the bound close puts on the link's writes
}

// connect makes a link: dial, open a channel, put it in confirm mode, and declare the
// topology. ctx ends the attempt at any step.
func (p *publisher) connect(ctx context.Context) (*pubLink, error) {
	d, err := amqpconn.Dial(ctx, p.cfg.URL, p.amqpConfig(), p.cfg.DialTimeout)
	if err != nil {
		return nil, err
	}
	l := &pubLink{conn: d.Conn, sock: d.Sock, lost: make(chan struct{}), unbound: func() bool { return false }}
	if err := p.setUp(l); err != nil {
		_ = d.Release(publisherCloseTimeout)
		l.close(publisherCloseTimeout)
		return nil, amqpconn.ContextOr(ctx, err)
	}
	if err := d.Release(publisherCloseTimeout); err != nil {
		l.close(publisherCloseTimeout)
		return nil, err
	}
	// Once close ends the link, a write stuck on the network (or on a broker that blocks
	// publishers) has closeBound left, and so has the AMQP close after it.
	l.unbound = context.AfterFunc(p.runCtx, func() { _ = l.sock.SetDeadline(time.Now().Add(p.closeBound())) })
	return l, nil
}

// setUp opens the channel on l.conn, starts watching it and the connection, puts it in
// confirm mode and declares the topology.
func (p *publisher) setUp(l *pubLink) error {
	// Registered before anything can close them, so that no loss goes unseen; watch
	// drains every one until amqp091-go closes it.
	connClosed := l.conn.NotifyClose(make(chan *amqp.Error, 1))
	blocked := l.conn.NotifyBlocked(make(chan amqp.Blocking, 1))
	ch, err := l.conn.Channel()
	if err != nil {
		l.watch(p, connClosed, nil, nil, blocked)
		return fmt.Errorf("open channel: %w", err)
	}
	l.ch = ch
	chClosed := ch.NotifyClose(make(chan *amqp.Error, 1))
	returns := ch.NotifyReturn(make(chan amqp.Return, 64))
	l.watch(p, connClosed, chClosed, returns, blocked)
	if err := ch.Confirm(false); err != nil {
		return fmt.Errorf("confirm mode: %w", err)
	}
	// Window bounds the messages awaiting confirmation, hence the confirmations not yet
	// read: amqp091-go's reader never waits on this buffer (it would drop a
	// confirmation after 5s, which confirm would take for a broken link).
	l.confirms = ch.NotifyPublish(make(chan amqp.Confirmation, p.cfg.Window))
	return p.cfg.Topology.declare(ch)
}

// watch drains the link's notify channels on a goroutine of its own until amqp091-go
// closes them (it does when the connection shuts down): it turns the first close into
// the loss of the link, reports the returned messages, and follows the broker's blocks.
func (l *pubLink) watch(p *publisher, connClosed, chClosed <-chan *amqp.Error, returns <-chan amqp.Return, blocked <-chan amqp.Blocking) {
	l.watching.Go(func() {
		for connClosed != nil || chClosed != nil || returns != nil || blocked != nil {
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
			case r, ok := <-returns:
				if !ok {
					returns = nil
					continue
				}
				p.returned.Add(1)
				to := target{exchange: r.Exchange, key: r.RoutingKey}
				epoch, _ := asInt64(r.Headers[headerEpoch])
				seq, _ := asInt64(r.Headers[headerSeq])
				p.report(fmt.Errorf("group: publisher: the broker returned message epoch %d seq %d, published to %s: %s (%d): no queue takes it; is the topology declared?",
					epoch, seq, to, r.ReplyText, r.ReplyCode))
			case b, ok := <-blocked:
				if !ok {
					blocked = nil
					continue
				}
				l.blocked.Store(b.Active)
				if b.Active {
					p.log.LogAttrs(context.Background(), slog.LevelWarn, "group: publisher: the broker blocked the connection", slog.String("reason", b.Reason))
				} else {
					p.log.LogAttrs(context.Background(), slog.LevelInfo, "group: publisher: the broker unblocked the connection")
				}
			}
		}
	})
}

// markLost records the first cause of the link's loss and signals it.
func (l *pubLink) markLost(cause error) {
	l.lostOnce.Do(func() {
		l.lostCause = cause
		close(l.lost)
	})
}

// cause returns why the link was lost; call it after l.lost is closed.
func (l *pubLink) cause() error { return l.lostCause }

// close ends the link, with an AMQP close bounded by bound after which the socket is
// closed regardless, and waits until its watcher is done, so that nothing of the link
// outlives it.
func (l *pubLink) close(bound time.Duration) {
	l.unbound()
	_ = amqpconn.CloseGracefully(l.conn, l.sock, bound)
	l.markLost(amqp.ErrClosed)
	l.watching.Wait()
}
