package group

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/internal/amqpconn"
	"github.com/feedkit/feedkit/internal/backoff"
)

// Defaults of publisherConfig's zero fields; the delays are feed/rabbitmq's.
const (
	publisherDefaultWindow            = 1024
	publisherDefaultDialTimeout       = 15 * time.Second
	publisherDefaultReconnectDelay    = 500 * time.Millisecond
	publisherDefaultMaxReconnectDelay = 30 * time.Second
	publisherDefaultConnectionName    = "feedkit-group-ingress"
	publisherDefaultInFlight          = 4
	// publisherMaxWindow bounds Window: the confirmations' buffer is that large.
	publisherMaxWindow = 1 << 16
)

const (
	// publisherHeartbeat is the AMQP heartbeat of the publisher's connection.
	publisherHeartbeat = 10 * time.Second
	// publisherWriteTimeout bounds the write of one message, unless the broker has
	// blocked the connection (a resource alarm), when only close ends a write: a
	// write stuck on a silent network would otherwise hold amqp091-go's locks and keep
	// even its heartbeat timeout from ending the connection.
	publisherWriteTimeout = 3 * publisherHeartbeat
	// publisherCloseTimeout bounds the AMQP close of a link, and a write that close
	// interrupts.
	publisherCloseTimeout = time.Second
	// publisherJitter spreads the reconnections of a group's processes.
	publisherJitter = 0.5
)

// publisherConfig configures the ingress's publisher.
type publisherConfig struct {
	// URL is the amqp:// or amqps:// URL of the operator's broker, virtual host
	// included.
	URL string
	// Topology is declared on every connection, before anything is published on it:
	// a broker that lost its definitions gets them back before the first message.
	Topology Topology
	// Window is how many messages may await the broker's confirmation; publish blocks
	// at the bound. 0 means 1024.
	Window int
	// InFlight is how many AMQP messages may await the broker's confirmation before
	// the publisher holds what comes next; what is held meanwhile goes out together,
	// each shard's events packed in batches. 0 means 4.
	InFlight int
	// DialTimeout bounds one connection attempt (TCP, TLS and AMQP handshakes); 0
	// means 15s.
	DialTimeout time.Duration
	// ReconnectDelay is the wait before the first reconnection; it doubles, with
	// jitter, up to MaxReconnectDelay. 0 means 500ms and 30s.
	ReconnectDelay, MaxReconnectDelay time.Duration
	// Clock times the waits between reconnections; nil is the wall clock.
	Clock clock.Clock
	// OnError hears every failure: a lost link, a failed reconnection, a message the
	// broker returned. It is called from the publisher's goroutines, one call at a
	// time, and must return promptly: the broker's confirmations wait behind it.
	OnError func(error)
	// Logger logs the link's ups and downs; nil discards.
	Logger *slog.Logger
	// ConnectionName is the name the broker shows for the connection; "" means
	// "feedkit-group-ingress".
	ConnectionName string
}

// target is where a message goes: an exchange, or a queue by the default exchange
// (exchange "", key the queue's name). A message for a target that may reach no queue
// (the control exchange, while no worker is connected) is not published as mandatory:
// its loss is no error.
type target struct {
	exchange, key string
	mayReachNone  bool
}

func (t target) String() string {
	switch {
	case t.exchange == "":
		return fmt.Sprintf("queue %q (default exchange)", t.key)
	case t.key == "":
		return fmt.Sprintf("exchange %q", t.exchange)
	}
	return fmt.Sprintf("exchange %q with key %q", t.exchange, t.key)
}

// publisherStats counts what a publisher did since it was made.
type publisherStats struct {
	// Published counts the messages publish accepted, each once.
	Published uint64
	// Batches counts the AMQP messages of several events written, and Batched the
	// events they carried.
	Batches, Batched uint64
	// Confirmed counts those the broker confirmed: their done has been called.
	Confirmed uint64
	// Republished counts writes of a message written before on a link that was lost
	// or that nacked: each may have put a duplicate in a queue.
	Republished uint64
	// Returned counts the messages the broker returned as unroutable.
	Returned uint64
	// Nacked counts the broker's negative confirmations.
	Nacked uint64
	// Losses counts the links lost (or closed by the publisher after a nack), and
	// Reconnects the links made after the first.
	Losses, Reconnects uint64
	// Unconfirmed is how many accepted messages await their confirmation now.
	Unconfirmed int
	// Connected says whether a link is up now.
	Connected bool
}

// errPublisherClosed is returned by publish and start after close.
var errPublisherClosed = errors.New("group: publisher closed")

// errPublisherNacked is the cause of a link the publisher closed because the broker
// nacked a message.
var errPublisherNacked = errors.New("the broker nacked a message (an internal error of the broker)")

// The publisher's lifecycle, as start and close move it.
const (
	publisherNew      = iota // start not called, or failed
	publisherStarting        // start is connecting
	publisherRunning         // run is keeping the link up
)

// publisher publishes the ingress's messages to the operator's broker, in order, with
// publisher confirms, over a connection of its own that it makes again when it is
// lost, and tells each message's confirmation (its done) exactly once, in the order of
// the publish calls.
//
// Order. Every message goes out on one channel in confirm mode, and RabbitMQ keeps a
// channel's order per queue even across exchanges. The messages of one queue reach it in
// the order of the publish calls (concurrent calls in the order they are accepted);
// those of different queues may be written in another order. done follows publish
// order regardless: a message confirmed before an earlier one waits for it.
//
// Batches. While InFlight AMQP messages await confirmation, new messages are held;
// when a confirmation comes, everything held goes out, the events (KindEvent) of each
// queue packed into batches (KindBatch) that keep their order, and every other message
// alone, after the events published before it to its queue. A quiet feed's messages
// go out at once, one by one; a busy one's in batches, which cost the broker about as
// much as a single message.
//
// Losses. When the connection or the channel is lost, the publisher reconnects with
// capped exponential backoff and jitter, declares the topology again, and publishes
// every unconfirmed message again, in its original order, before any new one: nothing
// confirmed is ever lost, and nothing unconfirmed is forgotten. A message that had
// reached its queue before the loss is then there twice (only those unconfirmed at the
// loss, at most Window consecutive messages); the copies carry the same Envelope
// (Epoch, Seq), by which a worker tells them apart. Each message's done is still
// called once, when its last copy is confirmed.
//
// Nacks. RabbitMQ nacks a message only on an internal error (or a queue that refuses
// publishes when full). A nack is handled as the loss of the channel: the publisher
// closes the link, reconnects and publishes every unconfirmed message again, the
// nacked one first. Messages after the nacked one may have been queued already, so a
// queue may then hold the nacked message after its successors' first copies: order
// holds by the first copy of each message, except for a nacked message itself.
//
// Returns. Messages are published mandatory: one that no queue takes (the topology is
// wrong, a reply queue is gone) is reported to OnError with its target and counted in
// Returned, and still confirmed and completed, so that nothing waits for it for ever.
type publisher struct {
	cfg      publisherConfig // with its defaults
	uri      amqp.URI
	clk      clock.Clock
	log      *slog.Logger
	policy   backoff.Policy
	reportMu sync.Mutex // one OnError call at a time

	slots   chan struct{}      // a token per unconfirmed message: Window bounds them
	wake    chan struct{}      // tells run that pending has messages to write
	closing chan struct{}      // closed by close: publish refuses messages
	runCtx  context.Context    // ends the background work: cancelled by close
	stopRun context.CancelFunc // cancels runCtx
	stopped chan struct{}      // closed when run returns

	inflight []*pubMessage // the AMQP messages written on the current link and not confirmed: run's alone

	mu      sync.Mutex
	pending []*pubEntry   // the unconfirmed messages, in publish order
	written int           // how many of pending's first are written on the current link
	drained chan struct{} // closed when pending empties, once close waits for it
	state   int
	closed  bool

	published, confirmed, republished, returned, nacked, losses, reconnects, batches, batched atomic.Uint64
	connected                                                                                 atomic.Bool
	abandoned                                                                                 atomic.Bool // close gave up on unconfirmed messages
}

// pubEntry is one message published and not yet confirmed.
type pubEntry struct {
	to        target
	env       *Envelope       // an event's, which may go in a batch
	msg       amqp.Publishing // any other's
	done      func()
	writes    int  // how many times it was written
	confirmed bool // the broker confirmed it; done waits for the earlier ones
}

// pubMessage is one AMQP message written: a message alone, or a batch of events.
type pubMessage struct {
	tag     uint64 // its delivery tag on the link
	entries []*pubEntry
	size    int // a batch's body size, at most (batchSize of each event)
}

// newPublisher checks cfg, naming the field that is wrong, and makes a publisher. It
// does not connect: start does.
func newPublisher(cfg publisherConfig) (*publisher, error) {
	const prefix = "group: publisher "
	uri, err := amqpconn.ParseURL(prefix, cfg.URL)
	if err != nil {
		return nil, err
	}
	if cfg.Topology, err = cfg.Topology.withDefaults(); err != nil {
		return nil, err
	}
	switch {
	case cfg.Window < 0 || cfg.Window > publisherMaxWindow:
		return nil, fmt.Errorf("%sWindow %d must be from 0 to %d", prefix, cfg.Window, publisherMaxWindow)
	case cfg.InFlight < 0:
		return nil, fmt.Errorf("%sInFlight %d must not be negative", prefix, cfg.InFlight)
	case cfg.DialTimeout < 0:
		return nil, fmt.Errorf("%sDialTimeout %v must not be negative", prefix, cfg.DialTimeout)
	case cfg.ReconnectDelay < 0:
		return nil, fmt.Errorf("%sReconnectDelay %v must not be negative", prefix, cfg.ReconnectDelay)
	case cfg.MaxReconnectDelay < 0:
		return nil, fmt.Errorf("%sMaxReconnectDelay %v must not be negative", prefix, cfg.MaxReconnectDelay)
	}
	if cfg.Window == 0 {
		cfg.Window = publisherDefaultWindow
	}
	if cfg.InFlight == 0 {
		cfg.InFlight = publisherDefaultInFlight
	}
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = publisherDefaultDialTimeout
	}
	if cfg.ReconnectDelay == 0 {
		cfg.ReconnectDelay = publisherDefaultReconnectDelay
	}
	if cfg.MaxReconnectDelay == 0 {
		cfg.MaxReconnectDelay = max(publisherDefaultMaxReconnectDelay, cfg.ReconnectDelay)
	}
	if cfg.MaxReconnectDelay < cfg.ReconnectDelay {
		return nil, fmt.Errorf("%sMaxReconnectDelay %v must be at least ReconnectDelay (%v)", prefix, cfg.MaxReconnectDelay, cfg.ReconnectDelay)
	}
	if cfg.ConnectionName == "" {
		cfg.ConnectionName = publisherDefaultConnectionName
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	runCtx, stopRun := context.WithCancel(context.Background())
	return &publisher{
		cfg: cfg, uri: uri, clk: clock.OrReal(cfg.Clock), log: log,
		policy: backoff.Policy{Initial: cfg.ReconnectDelay, Max: cfg.MaxReconnectDelay, Jitter: publisherJitter},
		slots:  make(chan struct{}, cfg.Window), wake: make(chan struct{}, 1), closing: make(chan struct{}),
		runCtx: runCtx, stopRun: stopRun, stopped: make(chan struct{}),
	}, nil
}

// start connects and declares the topology, retrying with backoff until it has a
// link, then keeps the link up in the background until close. It returns ctx's error
// (with the last attempt's) when ctx ends first, and at once an error that retrying
// cannot fix: credentials or a virtual host refused, a topology declared otherwise. Messages published before
// start wait for the link.
func (p *publisher) start(ctx context.Context) error {
	p.mu.Lock()
	switch {
	case p.closed:
		p.mu.Unlock()
		return errPublisherClosed
	case p.state != publisherNew:
		p.mu.Unlock()
		return errors.New("group: publisher already started")
	}
	p.state = publisherStarting
	p.mu.Unlock()

	// close ends an attempt too.
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(p.runCtx, cancel)()
	fail := func(err error) error {
		p.mu.Lock()
		p.state = publisherNew
		p.mu.Unlock()
		return err
	}
	for attempt := 0; ; attempt++ {
		l, err := p.connect(sctx)
		if err == nil {
			p.mu.Lock()
			if p.runCtx.Err() != nil {
				p.mu.Unlock()
				l.close(publisherCloseTimeout)
				return fail(errPublisherClosed)
			}
			p.state = publisherRunning
			p.mu.Unlock()
			go p.run(l)
			return nil
		}
		switch {
		case p.runCtx.Err() != nil:
			return fail(errPublisherClosed)
		case ctx.Err() != nil:
			return fail(fmt.Errorf("group: publisher: no link to %s before the context ended: %w (last attempt: %v)",
				p.redactedURL(), ctx.Err(), err))
		case publisherPermanent(err):
			return fail(fmt.Errorf("group: publisher: connect to %s: %w", p.redactedURL(), err))
		}
		p.report(fmt.Errorf("group: publisher: connect to %s (attempt %d): %w", p.redactedURL(), attempt+1, err))
		if !p.wait(sctx, p.policy.Delay(attempt)) {
			if p.runCtx.Err() != nil {
				return fail(errPublisherClosed)
			}
			return fail(fmt.Errorf("group: publisher: no link to %s before the context ended: %w (last attempt: %v)",
				p.redactedURL(), ctx.Err(), err))
		}
	}
}

// publisherPermanent reports whether err is a refusal that retrying will not change.
func publisherPermanent(err error) bool {
	if errors.Is(err, amqp.ErrCredentials) || errors.Is(err, amqp.ErrVhost) {
		return true
	}
	var aerr *amqp.Error
	if errors.As(err, &aerr) {
		switch aerr.Code {
		case amqp.AccessRefused, amqp.PreconditionFailed, amqp.NotAllowed:
			return true
		}
	}
	return false
}

// publish queues e for to. done, when not nil, is called once the broker has confirmed
// e: exactly once, in the order of the publish calls, on the publisher's goroutine, so
// it must not block (nor publish: the window it would wait for is freed by that
// goroutine). publish blocks while Window messages are unconfirmed; when ctx ends
// first, or the publisher is closed, e is not published and done never called.
//
// e.Body is kept, and published again after a loss, until e is confirmed: the caller
// must not change it meanwhile. Epoch and Seq are the caller's; they tell a
// republished copy from the original.
func (p *publisher) publish(ctx context.Context, to target, e Envelope, done func()) error {
	select {
	case <-p.closing:
		return errPublisherClosed
	default:
	}
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("group: publish seq %d to %s: %w", e.Seq, to, ctx.Err())
	case <-p.closing:
		return errPublisherClosed
	}
	if err := ctx.Err(); err != nil { // both were ready: the caller's end wins
		<-p.slots
		return fmt.Errorf("group: publish seq %d to %s: %w", e.Seq, to, err)
	}
	en := &pubEntry{to: to, done: done}
	if e.Kind == KindEvent {
		en.env = &e
	} else {
		en.msg = e.publishing()
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.slots
		return errPublisherClosed
	}
	p.pending = append(p.pending, en)
	p.published.Add(1)
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
	return nil
}

// close stops taking messages and waits until every message published is confirmed,
// or ctx ends, then closes the link. It returns an error when messages are left
// unconfirmed: their done is never called. A second close returns nil.
func (p *publisher) close(ctx context.Context) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	close(p.closing)
	var drained chan struct{}
	if p.state != publisherNew && len(p.pending) > 0 {
		p.drained = make(chan struct{})
		drained = p.drained
	}
	p.mu.Unlock()
	if drained != nil {
		select {
		case <-drained:
		case <-ctx.Done():
			// Nothing is left to close gracefully for: the link is cut at once.
			p.abandoned.Store(true)
		}
	}
	p.stopRun()
	p.mu.Lock()
	running, left := p.state == publisherRunning, len(p.pending)
	p.mu.Unlock()
	if running {
		<-p.stopped // bounded: cancelling runCtx ends every wait and write of run
	}
	if left > 0 {
		cause := ctx.Err()
		if cause == nil {
			cause = errors.New("the publisher never had a link")
		}
		return fmt.Errorf("group: publisher closed with %d messages unconfirmed, whose done is never called: %w", left, cause)
	}
	return nil
}

// stats returns the publisher's counters.
func (p *publisher) stats() publisherStats {
	p.mu.Lock()
	n := len(p.pending)
	p.mu.Unlock()
	return publisherStats{
		Published: p.published.Load(), Batches: p.batches.Load(), Batched: p.batched.Load(),
		Confirmed: p.confirmed.Load(), Republished: p.republished.Load(),
		Returned: p.returned.Load(), Nacked: p.nacked.Load(), Losses: p.losses.Load(), Reconnects: p.reconnects.Load(),
		Unconfirmed: n, Connected: p.connected.Load(),
	}
}

// run keeps a link up until close, starting with l: it publishes on it (serve), and
// after each loss reconnects with capped exponential backoff. The backoff starts over
// only after a link that stayed up for MaxReconnectDelay, so that a broker that drops
// or nacks at once is retried ever more slowly.
func (p *publisher) run(l *pubLink) {
	defer close(p.stopped)
	attempt := 0
	for {
		if l == nil {
			if !p.wait(p.runCtx, p.policy.Delay(attempt-1)) {
				return
			}
			var err error
			if l, err = p.connect(p.runCtx); err != nil {
				if p.runCtx.Err() != nil {
					return
				}
				p.report(fmt.Errorf("group: publisher: reconnect to %s (attempt %d): %w", p.redactedURL(), attempt, err))
				attempt++
				continue
			}
			p.reconnects.Add(1)
		}
		up := p.clk.Now()
		p.connected.Store(true)
		p.log.LogAttrs(p.runCtx, slog.LevelInfo, "group: publisher connected",
			slog.String("broker", p.redactedURL()), slog.Int("unconfirmed", p.stats().Unconfirmed))
		cause := p.serve(l)
		p.connected.Store(false)
		l.close(p.closeBound())
		if cause == nil || p.runCtx.Err() != nil {
			return
		}
		p.losses.Add(1)
		p.report(fmt.Errorf("group: publisher: lost the link to %s, reconnecting to publish %d unconfirmed messages again: %w",
			p.redactedURL(), p.stats().Unconfirmed, cause))
		if p.clk.Since(up) >= p.cfg.MaxReconnectDelay {
			attempt = 0
		}
		l, attempt = nil, attempt+1
	}
}

// closeBound is how long a link has for its AMQP close: none once close gave up on
// the unconfirmed messages, whose link may be the reason they are.
func (p *publisher) closeBound() time.Duration {
	if p.abandoned.Load() {
		return 0
	}
	return publisherCloseTimeout
}

// wait waits d on the publisher's clock; it reports false when ctx ended first.
func (p *publisher) wait(ctx context.Context, d time.Duration) bool {
	t := p.clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-ctx.Done():
		return false
	}
}

// serve publishes on l until it is lost or nacks (it returns the cause) or close (it
// returns nil): first every unconfirmed message, in order, then each new one as it
// comes; and it completes the messages as their confirmations come.
func (p *publisher) serve(l *pubLink) error {
	p.mu.Lock()
	p.written = 0 // nothing is written on l yet: everything pending goes out again
	p.mu.Unlock()
	p.inflight = nil
	var batch []*pubEntry
	for {
		if len(p.inflight) < p.cfg.InFlight {
			p.mu.Lock()
			batch = append(batch[:0], p.pending[p.written:]...)
			p.written = len(p.pending)
			p.mu.Unlock()
		}
		if len(batch) > 0 {
			err := p.write(l, batch)
			clear(batch) // no references kept to confirmed messages
			batch = batch[:0]
			if err != nil {
				select {
				case <-l.lost: // the broker's reason, when it is known already
					return fmt.Errorf("%w (%v)", l.cause(), err)
				default:
					return err
				}
			}
		}
		// While InFlight messages await confirmation, new ones wait for the next
		// confirmation: no wake-up per message published meanwhile.
		wake := p.wake
		if len(p.inflight) >= p.cfg.InFlight {
			wake = nil
		}
		select {
		case <-wake:
		case c, ok := <-l.confirms:
			if !ok {
				// amqp091-go closes the confirmations when the channel shuts down; the
				// watcher has the reason, or is about to.
				select {
				case <-l.lost:
					return l.cause()
				case <-p.runCtx.Done():
					return nil
				}
			}
			if err := p.confirm(c); err != nil {
				return err
			}
		case <-l.lost:
			return l.cause()
		case <-p.runCtx.Done():
			return nil
		}
	}
}

// write publishes entries on l: each queue's in order, its events packed in batches
// that end where a message of another kind for the queue comes. Entries confirmed on an
// earlier link (waiting for an earlier one to be) are not written again.
func (p *publisher) write(l *pubLink, entries []*pubEntry) error {
	var again uint64
	defer func() {
		p.republished.Add(again)
		// Idle, the connection's heartbeats must not meet a stale deadline.
		_ = l.sock.SetWriteDeadline(time.Time{})
	}()
	send := func(m *pubMessage) error {
		if p.runCtx.Err() != nil {
			return nil // close gave up on them: serve returns at its select
		}
		if l.blocked.Load() {
			_ = l.sock.SetWriteDeadline(time.Time{})
		} else {
			_ = l.sock.SetWriteDeadline(time.Now().Add(publisherWriteTimeout))
		}
		first := m.entries[0]
		msg := first.msg
		switch {
		case len(m.entries) > 1:
			envs := make([]*Envelope, len(m.entries))
			for i, en := range m.entries {
				envs[i] = en.env
			}
			msg = batchPublishing(envs)
			p.batches.Add(1)
			p.batched.Add(uint64(len(envs)))
		case first.env != nil:
			msg = first.env.publishing()
		}
		// run is the channel's only publisher: the tag amqp091-go gives is this one.
		m.tag = l.ch.GetNextPublishSeqNo()
		if err := l.ch.Publish(first.to.exchange, first.to.key, !first.to.mayReachNone, false, msg); err != nil {
			return fmt.Errorf("publish %s to %s: %w", m, first.to, err)
		}
		p.inflight = append(p.inflight, m)
		for _, en := range m.entries {
			if en.writes > 0 {
				again++
			}
			en.writes++
		}
		return nil
	}
	// The open batch of each queue, and the queues in the order their batch opened.
	open := make(map[target]*pubMessage)
	var order []target
	for _, en := range entries {
		if en.confirmed {
			continue
		}
		m := open[en.to]
		if en.env == nil {
			if m != nil { // the events before it go first
				delete(open, en.to)
				if err := send(m); err != nil {
					return err
				}
			}
			if err := send(&pubMessage{entries: []*pubEntry{en}}); err != nil {
				return err
			}
			continue
		}
		n := batchSize(en.env)
		if m != nil && (len(m.entries) == batchMaxEvents || m.size+n > batchMaxBytes) {
			delete(open, en.to)
			if err := send(m); err != nil {
				return err
			}
			m = nil
		}
		if m == nil {
			m = &pubMessage{}
			open[en.to] = m
			order = append(order, en.to)
		}
		m.entries = append(m.entries, en)
		m.size += n
	}
	for _, to := range order {
		if m := open[to]; m != nil {
			delete(open, to)
			if err := send(m); err != nil {
				return err
			}
		}
	}
	return nil
}

// String names m's messages for errors: epoch and seq, of the first and last.
func (m *pubMessage) String() string {
	first, last := m.entries[0], m.entries[len(m.entries)-1]
	if len(m.entries) == 1 {
		return "seq " + first.seqString()
	}
	return fmt.Sprintf("a batch of %d, seq %s to %s", len(m.entries), first.seqString(), last.seqString())
}

func (en *pubEntry) seqString() string {
	if en.env != nil {
		return fmt.Sprintf("%d (epoch %d)", en.env.Seq, en.env.Epoch)
	}
	seq, _ := asInt64(en.msg.Headers[headerSeq])
	epoch, _ := asInt64(en.msg.Headers[headerEpoch])
	return fmt.Sprintf("%d (epoch %d)", seq, epoch)
}

// confirm takes the broker's confirmation c of the oldest AMQP message awaiting one. The
// channel confirms in publish order (amqp091-go resequences them), so c is the
// oldest's; anything else is a broken link, made again. The messages confirmed are
// completed in publish order: those that an unconfirmed earlier one holds wait for it.
func (p *publisher) confirm(c amqp.Confirmation) error {
	if len(p.inflight) == 0 {
		return fmt.Errorf("a confirmation of delivery tag %d, which no message awaits", c.DeliveryTag)
	}
	m := p.inflight[0]
	if m.tag != c.DeliveryTag {
		return fmt.Errorf("a confirmation of delivery tag %d while the oldest message awaits %d", c.DeliveryTag, m.tag)
	}
	if !c.Ack {
		p.nacked.Add(1)
		return fmt.Errorf("%w: %s to %s", errPublisherNacked, m, m.entries[0].to)
	}
	p.inflight[0] = nil
	p.inflight = p.inflight[1:]
	for _, en := range m.entries {
		en.confirmed = true
	}
	var ready []*pubEntry
	p.mu.Lock()
	for len(p.pending) > 0 && p.pending[0].confirmed {
		ready = append(ready, p.pending[0])
		p.pending[0] = nil
		p.pending = p.pending[1:]
		p.written--
	}
	if len(p.pending) == 0 && p.drained != nil {
		close(p.drained)
		p.drained = nil
	}
	p.mu.Unlock()
	for _, en := range ready {
		p.confirmed.Add(1)
		<-p.slots // before done: a done that publishes finds room
		if en.done != nil {
			en.done()
		}
	}
	return nil
}

// report passes err to OnError and the logger.
func (p *publisher) report(err error) {
	p.log.LogAttrs(context.Background(), slog.LevelWarn, err.Error())
	if p.cfg.OnError != nil {
		p.reportMu.Lock()
		defer p.reportMu.Unlock()
		p.cfg.OnError(err)
	}
}

// redactedURL is the broker's address without credentials, for errors and logs.
func (p *publisher) redactedURL() string { return amqpconn.RedactedURL(p.uri) }

// amqpConfig is amqp091-go's configuration of one connection attempt.
func (p *publisher) amqpConfig() amqp.Config {
	props := amqp.NewConnectionProperties()
	props.SetClientConnectionName(p.cfg.ConnectionName)
	props["product"] = "feedkit"
	// An amqps URL's TLS settings (its certificate query parameters) are amqp091-go's
	// to read: TLSClientConfig stays nil.
	return amqp.Config{Heartbeat: publisherHeartbeat, Properties: props}
}
