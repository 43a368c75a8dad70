package feedtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/internal/topic"
)

// Publisher sends a message to the feed's exchange. The Broker implements it, and so does
// the AMQP transport's publisher, so the Simulator can feed either.
type Publisher interface {
	Publish(ctx context.Context, routingKey string, body []byte) error
}

// DefaultQueueCapacity is how many messages a Broker queue holds before Publish blocks.
const DefaultQueueCapacity = 10000

// ErrBrokerClosed is returned by Publish and Subscribe on a closed Broker.
var ErrBrokerClosed = errors.New("feedtest: broker closed")

// BrokerOptions configures a Broker.
type BrokerOptions struct {
	// QueueCapacity bounds each subscription's queue; Publish waits while a queue it routes
	// to is full, as RabbitMQ's flow control slows a publisher. 0 means DefaultQueueCapacity.
	QueueCapacity int
	// Clock stamps ReceivedAt as each message is handed to its receiver; nil is the wall
	// clock (a clocktest.Fake in tests).
	Clock clock.Clock
}

// BrokerStats counts a Broker's traffic.
type BrokerStats struct {
	Published       uint64 `json:"published"`       // Publish calls that succeeded
	Delivered       uint64 `json:"delivered"`       // messages handed to receivers (one per queue a message reached)
	Unrouted        uint64 `json:"unrouted"`        // messages that matched no queue
	LostWhileDown   uint64 `json:"lost_while_down"` // messages that would have reached a queue while disconnected
	DroppedOnDown   uint64 `json:"dropped_on_down"` // messages still queued when the connection dropped
	ConnectionDrops uint64 `json:"connection_drops"`
}

// Broker is an in-process topic exchange with one queue per subscription, the embedded
// transport of sessions. It implements feed.Transport and Publisher.
//
// Like an exclusive, auto-delete queue on RabbitMQ, a subscription's queue disappears
// with its connection: Disconnect discards what the queues hold and routes nothing to them
// until Reconnect, which binds them again. The losses are counted, so a test can tell what
// a recovery has to fetch.
type Broker struct {
	capacity int
	clock    clock.Clock

	mu        sync.RWMutex
	subs      map[*brokerSub]struct{}
	connected bool
	closed    bool
	epoch     uint64        // connection drops so far
	bound     chan struct{} // closed and replaced when a queue is bound (QueueBound)

	published, delivered, unrouted, lostWhileDown, droppedOnDown, drops atomic.Uint64
}

// NewBroker returns a connected broker.
func NewBroker(opts BrokerOptions) *Broker {
	c := opts.QueueCapacity
	if c <= 0 {
		c = DefaultQueueCapacity
	}
	return &Broker{capacity: c, clock: clock.OrReal(opts.Clock), subs: make(map[*brokerSub]struct{}), connected: true,
		bound: make(chan struct{})}
}

// Publish routes a message to every queue bound with a matching pattern (once per queue),
// waiting while a queue is full. It returns ctx.Err() if ctx ends first; the message may
// then have reached some of the queues, and it is not counted as published.
func (b *Broker) Publish(ctx context.Context, routingKey string, body []byte) error {
	b.mu.RLock()
	if b.closed {
		b.mu.RUnlock()
		return ErrBrokerClosed
	}
	words := topic.Split(routingKey)
	var targets []*brokerSub
	for s := range b.subs {
		if s.matches(words) {
			targets = append(targets, s)
		}
	}
	connected, epoch := b.connected, b.epoch
	b.mu.RUnlock()

	if len(targets) == 0 {
		b.published.Add(1)
		b.unrouted.Add(1)
		return nil
	}
	if !connected {
		b.published.Add(1)
		b.lostWhileDown.Add(uint64(len(targets)))
		return nil
	}
	// Counted before the first queue can hand it on, so that Published never lags what the
	// receivers have seen; taken back if the publisher gives up.
	b.published.Add(1)
	for _, s := range targets {
		// Like a real broker, every queue keeps a copy of its own: the publisher may reuse
		// its buffer, and each receiver is handed its body for good (feed.Delivery).
		d := feed.Delivery{RoutingKey: routingKey, Body: bytes.Clone(body)}
		ok, err := s.q.put(ctx, item{d: d}, epoch)
		if err != nil {
			b.published.Add(^uint64(0))
			return err
		}
		if !ok {
			b.lostWhileDown.Add(1)
		}
	}
	return nil
}

// Subscribe binds a new queue and starts delivering to r; see feed.Transport.
func (b *Broker) Subscribe(ctx context.Context, bindings []string, r feed.Receiver) (feed.Subscription, error) {
	if len(bindings) == 0 {
		return nil, errors.New("feedtest: Subscribe: no bindings")
	}
	if r == nil {
		return nil, errors.New("feedtest: Subscribe: receiver is nil")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := &brokerSub{b: b, r: r, q: newItemQueue(b.capacity), done: make(chan struct{})}
	for _, p := range bindings {
		s.patterns = append(s.patterns, topic.Compile(p))
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, ErrBrokerClosed
	}
	b.subs[s] = struct{}{}
	s.q.epoch = b.epoch
	if b.connected {
		s.q.control(item{up: true})
	}
	close(b.bound)
	b.bound = make(chan struct{})
	b.mu.Unlock()
	go s.run()
	return s, nil
}

// Flush returns once every message published before the call has been handed to the
// receivers of the queues it reached and their Receive calls have returned (or it was
// lost to a Disconnect, or its queue deleted), connection changes alike. A session's
// Receive hands a message to its dispatcher or its system handler, so after Flush every
// message published is with them: feedkit's SDK.Flush then waits until their listener
// calls are over, so that a test does
//
//	broker.Flush(ctx) // everything published has been read
//	sdk.Flush(ctx)    // and processed
//
// and looks at its listener's results, with no polling. A message published while Flush
// runs may or may not be waited for. It returns ctx.Err() if ctx ends first; a receiver
// that never returns (a held ReceiverRecorder) holds it until then.
func (b *Broker) Flush(ctx context.Context) error {
	b.mu.RLock()
	type wait struct {
		barrier chan struct{}
		done    <-chan struct{}
	}
	waits := make([]wait, 0, len(b.subs))
	for s := range b.subs {
		// A Publish that has returned has put its message in every queue it reached: the
		// barrier goes behind it.
		w := wait{barrier: make(chan struct{}), done: s.done}
		s.q.control(item{barrier: w.barrier})
		waits = append(waits, w)
	}
	b.mu.RUnlock()
	for _, w := range waits {
		select {
		case <-w.barrier:
		case <-w.done: // the queue was deleted: nothing more will be handed over
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// QueueBound returns a channel that is closed when a queue is next bound (Subscribe):
// the Simulator sends each producer's alive then, so that a session opened after the
// simulator started hears its producers at once rather than an AliveInterval later. A
// Publisher that wraps a Broker may forward it for the same effect.
func (b *Broker) QueueBound() <-chan struct{} {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.bound
}

// Disconnect drops the connection of every subscription: each receiver is told
// ConnectionDown(cause), the messages their queues hold are discarded, and messages
// published until Reconnect reach no queue.
func (b *Broker) Disconnect(cause error) {
	if cause == nil {
		cause = errors.New("feedtest: connection dropped")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.connected || b.closed {
		return
	}
	b.connected = false
	b.epoch++
	b.drops.Add(1)
	for s := range b.subs {
		b.droppedOnDown.Add(uint64(s.q.drop(item{down: cause}, b.epoch)))
	}
}

// Reconnect restores the connection: every receiver is told ConnectionUp and messages
// are routed to its queue again.
func (b *Broker) Reconnect() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.connected || b.closed {
		return
	}
	b.connected = true
	for s := range b.subs {
		s.q.control(item{up: true})
	}
}

// DropConnection disconnects, waits d (or until ctx ends), and reconnects.
func (b *Broker) DropConnection(ctx context.Context, d time.Duration) error {
	b.Disconnect(fmt.Errorf("feedtest: connection dropped for %v", d))
	t := b.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
	case <-ctx.Done():
	}
	b.Reconnect()
	return ctx.Err()
}

// Connected reports whether the broker is connected.
func (b *Broker) Connected() bool {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.connected
}

// Stats returns the broker's counters.
func (b *Broker) Stats() BrokerStats {
	return BrokerStats{
		Published:       b.published.Load(),
		Delivered:       b.delivered.Load(),
		Unrouted:        b.unrouted.Load(),
		LostWhileDown:   b.lostWhileDown.Load(),
		DroppedOnDown:   b.droppedOnDown.Load(),
		ConnectionDrops: b.drops.Load(),
	}
}

// Close closes every subscription and refuses further use. It waits for Receive calls in
// progress to return, so close the sessions whose listeners may block first.
func (b *Broker) Close() {
	b.mu.Lock()
	b.closed = true
	subs := b.subs
	b.subs = map[*brokerSub]struct{}{}
	b.mu.Unlock()
	for s := range subs {
		s.q.close()
		<-s.done
	}
}

// brokerSub is one subscription: its bindings, its queue and the goroutine that hands
// the queue's items to the receiver, one at a time and in order.
type brokerSub struct {
	b        *Broker
	r        feed.Receiver
	patterns []topic.Pattern
	q        *itemQueue
	done     chan struct{}
	once     sync.Once
}

func (s *brokerSub) matches(words []string) bool {
	for _, p := range s.patterns {
		if p.MatchWords(words) {
			return true
		}
	}
	return false
}

func (s *brokerSub) run() {
	defer close(s.done)
	for {
		it, ok := s.q.get()
		if !ok {
			return
		}
		switch {
		case it.barrier != nil:
			close(it.barrier)
		case it.up:
			s.r.ConnectionUp()
		case it.down != nil:
			s.r.ConnectionDown(it.down)
		default:
			// Stamped as it leaves the queue, as a RabbitMQ consumer stamps what it reads:
			// the time a message waited for a busy receiver is not hidden.
			it.d.ReceivedAt = s.b.clock.Now()
			s.b.delivered.Add(1)
			s.r.Receive(it.d)
		}
	}
}

// Close deletes the queue; see feed.Subscription.
func (s *brokerSub) Close(ctx context.Context) error {
	s.once.Do(func() {
		s.b.mu.Lock()
		delete(s.b.subs, s)
		s.b.mu.Unlock()
		s.q.close()
	})
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
