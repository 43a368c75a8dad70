package feedtest_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// callKind says which Receiver method a call was.
type callKind int

const (
	callReceive callKind = iota
	callUp
	callDown
)

func (k callKind) String() string {
	return [...]string{"Receive", "ConnectionUp", "ConnectionDown"}[k]
}

// call is one call a transport made to a Receiver.
type call struct {
	kind callKind
	d    feed.Delivery // for Receive
	err  error         // for ConnectionDown
}

// fakeReceiver is a feed.Receiver that reports every call on a channel, in order. When gate
// is set, Receive reports the delivery and then waits for a token on gate (or for gate to be
// closed): the test then knows the transport is inside Receive and holds it there, as a
// slow session would.
type fakeReceiver struct {
	calls chan call
	gate  chan struct{}
}

func newFakeReceiver() *fakeReceiver {
	// Large enough that the transport never waits on the test: back-pressure is the gate's job.
	return &fakeReceiver{calls: make(chan call, 1<<16)}
}

// newGatedReceiver returns a receiver whose Receive blocks until released.
func newGatedReceiver() *fakeReceiver {
	r := newFakeReceiver()
	r.gate = make(chan struct{})
	return r
}

func (r *fakeReceiver) Receive(d feed.Delivery) {
	r.calls <- call{kind: callReceive, d: d}
	if r.gate != nil {
		<-r.gate
	}
}

func (r *fakeReceiver) ConnectionDown(err error) { r.calls <- call{kind: callDown, err: err} }
func (r *fakeReceiver) ConnectionUp()            { r.calls <- call{kind: callUp} }

// next returns the receiver's next call. A generous deadline turns a hang into a failure.
func (r *fakeReceiver) next(t *testing.T) call {
	t.Helper()
	select {
	case c := <-r.calls:
		return c
	case <-time.After(time.Minute):
		t.Fatal("timed out waiting for a call to the receiver")
		return call{}
	}
}

// expect fails unless the next call is of kind k.
func (r *fakeReceiver) expect(t *testing.T, k callKind) call {
	t.Helper()
	c := r.next(t)
	require.Equal(t, k, c.kind, "call %+v", c)
	return c
}

// expectMessage fails unless the next call is the Receive of the message with body.
func (r *fakeReceiver) expectMessage(t *testing.T, body string) feed.Delivery {
	t.Helper()
	c := r.expect(t, callReceive)
	require.Equal(t, body, string(c.d.Body))
	return c.d
}

// noMoreCalls fails if a call is waiting. It proves something only when the transport has
// promised to make no more calls (after Subscription.Close or Broker.Close returned), or
// after a later message has been received (FIFO order).
func (r *fakeReceiver) noMoreCalls(t *testing.T) {
	t.Helper()
	select {
	case c := <-r.calls:
		t.Fatalf("unexpected call %v %+v", c.kind, c)
	default:
	}
}

func newTestBroker(t *testing.T, opts feedtest.BrokerOptions) *feedtest.Broker {
	t.Helper()
	b := feedtest.NewBroker(opts)
	t.Cleanup(b.Close)
	return b
}

// subscribe subscribes r with bindings and consumes the first ConnectionUp.
func subscribe(t *testing.T, b *feedtest.Broker, r *fakeReceiver, bindings ...string) feed.Subscription {
	t.Helper()
	sub, err := b.Subscribe(t.Context(), bindings, r)
	require.NoError(t, err)
	t.Cleanup(func() {
		if r.gate != nil {
			select {
			case <-r.gate:
			default:
				close(r.gate) // a test that failed midway must not leave Close waiting on Receive
			}
		}
		_ = sub.Close(context.Background())
	})
	r.expect(t, callUp)
	return sub
}

func publish(t *testing.T, b *feedtest.Broker, key, body string) {
	t.Helper()
	require.NoError(t, b.Publish(t.Context(), key, []byte(body)))
}

var (
	oddsKey  = feed.RoutingKey{Priority: feed.PriorityHigh, Live: true, Type: feed.MessageOddsChange, SportID: 1, Event: feed.MustParseURN("sr:match:1")}
	aliveKey = feed.RoutingKey{Type: feed.MessageAlive}
)

func TestBrokerRoutesByTopic(t *testing.T) {
	withNode := func(k feed.RoutingKey, n int) string { k.Node = feed.Node(n); return k.String() }
	sevenWords := "hi.-.live.odds_change.1.sr:match.1" // the key without its node segment
	tests := []struct {
		name     string
		bindings []string
		key      string
		routed   bool
	}{
		{"exact key", []string{oddsKey.String()}, oddsKey.String(), true},
		{"other key", []string{oddsKey.String()}, aliveKey.String(), false},
		{"* matches one word", []string{"hi.*.live.odds_change.*.*.*.*"}, oddsKey.String(), true},
		{"* does not match two words", []string{"hi.*.live.odds_change.*.*.*"}, oddsKey.String(), false},
		{"* does not match zero words", []string{"*.hi.-.live.odds_change.1.sr:match.1.-"}, oddsKey.String(), false},
		{"# matches zero words", []string{"hi.-.live.odds_change.1.sr:match.1.-.#"}, oddsKey.String(), true},
		{"# matches many words", []string{"hi.#"}, oddsKey.String(), true},
		{"# inside a pattern", []string{"#.odds_change.#.-"}, oddsKey.String(), true},
		{"# alone matches everything", []string{"#"}, aliveKey.String(), true},
		{"words are compared whole", []string{"h.#"}, oddsKey.String(), false},
		{"one binding of several matches", []string{"lo.#", "#.alive.#", "hi.#"}, oddsKey.String(), true},
		{"no binding of several matches", []string{"lo.#", "#.alive.#"}, oddsKey.String(), false},
		// The bindings of a session of node 7: messages for no node or node 7, with or
		// without the node segment, but not another node's recovery replies.
		{"session, no node", feed.AllMessages.BindingKeys(feed.Node(7)), oddsKey.String(), true},
		{"session, seven words", feed.AllMessages.BindingKeys(feed.Node(7)), sevenWords, true},
		{"session, its node", feed.AllMessages.BindingKeys(feed.Node(7)), withNode(oddsKey, 7), true},
		{"session, another node", feed.AllMessages.BindingKeys(feed.Node(7)), withNode(oddsKey, 8), false},
		{"live session, alive", feed.LiveMessagesOnly.BindingKeys(feed.NodeID{}), aliveKey.String(), true},
		{"prematch session, live odds", feed.PrematchMessagesOnly.BindingKeys(feed.NodeID{}), oddsKey.String(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newTestBroker(t, feedtest.BrokerOptions{})
			r := newFakeReceiver()
			subscribe(t, b, r, tt.bindings...)

			publish(t, b, tt.key, "body")
			// Publish routes synchronously, so the counters already tell where it went.
			st := b.Stats()
			assert.Equal(t, uint64(1), st.Published)
			if !tt.routed {
				assert.Equal(t, uint64(1), st.Unrouted, "the message reached no queue")
				return
			}
			assert.Zero(t, st.Unrouted)
			d := r.expectMessage(t, "body")
			assert.Equal(t, tt.key, d.RoutingKey)
		})
	}
}

func TestBrokerDeliversOncePerSubscription(t *testing.T) {
	b := newTestBroker(t, feedtest.BrokerOptions{})
	// Three bindings of one queue match the key; a queue gets a message once, as on RabbitMQ.
	r := newFakeReceiver()
	subscribe(t, b, r, "#", "hi.#", "*.*.*.odds_change.#")
	// A second queue with a matching binding gets its own copy.
	other := newFakeReceiver()
	subscribe(t, b, other, "#.sr:match.#")

	publish(t, b, oddsKey.String(), "once")
	publish(t, b, aliveKey.String(), "marker") // only the first queue's "#" matches it

	r.expectMessage(t, "once")
	r.expectMessage(t, "marker") // FIFO: had "once" been queued twice, it would come before this
	other.expectMessage(t, "once")
	st := b.Stats()
	assert.Equal(t, uint64(2), st.Published)
	assert.Equal(t, uint64(3), st.Delivered, "one copy per queue: 2 for the first, 1 for the other")
	assert.Zero(t, st.Unrouted)
}

func TestBrokerCountsUnroutedMessages(t *testing.T) {
	b := newTestBroker(t, feedtest.BrokerOptions{})
	publish(t, b, oddsKey.String(), "no queue at all")

	r := newFakeReceiver()
	subscribe(t, b, r, "lo.#")
	publish(t, b, oddsKey.String(), "no queue bound for hi")
	publish(t, b, "lo.-.-.odds_change.1.sr:match.1.-", "routed")
	r.expectMessage(t, "routed")

	st := b.Stats()
	assert.Equal(t, feedtest.BrokerStats{Published: 3, Delivered: 1, Unrouted: 2}, st)
}

func TestBrokerDeliversInPublishOrderPerSubscription(t *testing.T) {
	b := newTestBroker(t, feedtest.BrokerOptions{QueueCapacity: 16}) // small: Publish waits on the receivers often
	all, hi := newFakeReceiver(), newFakeReceiver()
	subscribe(t, b, all, "#")
	subscribe(t, b, hi, "hi.#")

	const n = 2000
	for i := range n {
		k := oddsKey
		if i%3 == 0 {
			k.Priority = feed.PriorityLow // a third of the traffic goes to the first queue only
		}
		k.Event.ID = int64(i%7 + 1)
		publish(t, b, k.String(), strconv.Itoa(i))
	}
	for i := range n {
		all.expectMessage(t, strconv.Itoa(i))
		if i%3 != 0 {
			hi.expectMessage(t, strconv.Itoa(i))
		}
	}
	assert.Equal(t, uint64(n+n-(n+2)/3), b.Stats().Delivered)
}

// TestBrokerStampsReceivedAtWithItsClock: the Broker stamps a message with its clock as
// it hands it over, so a message that waited for a busy receiver carries the later time.
func TestBrokerStampsReceivedAtWithItsClock(t *testing.T) {
	start := ms(1764152400000)
	fc := clocktest.NewFake(start)
	b := newTestBroker(t, feedtest.BrokerOptions{Clock: fc})
	r := newGatedReceiver()
	subscribe(t, b, r, "#")

	publish(t, b, oddsKey.String(), "first")
	assert.Equal(t, start, r.expectMessage(t, "first").ReceivedAt)
	publish(t, b, oddsKey.String(), "second") // published at start, waits in the queue
	fc.Advance(1500 * time.Millisecond)
	close(r.gate)
	assert.Equal(t, start.Add(1500*time.Millisecond), r.expectMessage(t, "second").ReceivedAt)
}

func TestBrokerSubscribeReportsConnectionUpFirst(t *testing.T) {
	b := newTestBroker(t, feedtest.BrokerOptions{})
	r := newFakeReceiver()
	_, err := b.Subscribe(t.Context(), []string{"#"}, r)
	require.NoError(t, err)
	publish(t, b, oddsKey.String(), "m")
	// Up is queued at Subscribe, before anything could be routed to the queue.
	r.expect(t, callUp)
	r.expectMessage(t, "m")
}

func TestBrokerSubscribeWhileDisconnectedReportsUpOnReconnect(t *testing.T) {
	b := newTestBroker(t, feedtest.BrokerOptions{})
	b.Disconnect(nil)
	r := newFakeReceiver()
	_, err := b.Subscribe(t.Context(), []string{"#"}, r)
	require.NoError(t, err)
	publish(t, b, oddsKey.String(), "lost")
	b.Reconnect()
	publish(t, b, oddsKey.String(), "after")

	// No Up (and no Down: the receiver never had a connection) until Reconnect.
	r.expect(t, callUp)
	r.expectMessage(t, "after")
	assert.Equal(t, uint64(1), b.Stats().LostWhileDown)
}

func TestBrokerDisconnectAndReconnect(t *testing.T) {
	b := newTestBroker(t, feedtest.BrokerOptions{})
	r := newGatedReceiver()
	subscribe(t, b, r, "#")

	// m1 is read: the receiver holds it in Receive. m2 and m3 wait in the queue.
	publish(t, b, oddsKey.String(), "m1")
	r.expectMessage(t, "m1")
	publish(t, b, oddsKey.String(), "m2")
	publish(t, b, oddsKey.String(), "m3")

	cause := errors.New("network unplugged")
	b.Disconnect(cause)
	assert.False(t, b.Connected())
	b.Disconnect(errors.New("again")) // already down: nothing happens
	publish(t, b, oddsKey.String(), "while down")

	st := b.Stats()
	assert.Equal(t, uint64(2), st.DroppedOnDown, "m2 and m3 were queued when the connection dropped")
	assert.Equal(t, uint64(1), st.LostWhileDown, "published while down")
	assert.Equal(t, uint64(1), st.ConnectionDrops)

	// The message already read is finished first; then the drop is reported, with its cause.
	close(r.gate)
	down := r.expect(t, callDown)
	assert.Equal(t, cause, down.err)

	b.Reconnect()
	assert.True(t, b.Connected())
	b.Reconnect() // already up: no second ConnectionUp
	publish(t, b, oddsKey.String(), "m4")
	r.expect(t, callUp)
	r.expectMessage(t, "m4") // neither m2, m3 nor "while down" came back
	r.noMoreCalls(t)

	st = b.Stats()
	assert.Equal(t, feedtest.BrokerStats{Published: 5, Delivered: 2, LostWhileDown: 1, DroppedOnDown: 2, ConnectionDrops: 1}, st)
}

func TestBrokerDisconnectWithoutCauseReportsOne(t *testing.T) {
	b := newTestBroker(t, feedtest.BrokerOptions{})
	r := newFakeReceiver()
	subscribe(t, b, r, "#")
	b.Disconnect(nil)
	assert.Error(t, r.expect(t, callDown).err, "a receiver is never told the connection dropped for no reason")
}

// progress is how far a publishing goroutine has got: the last message whose Publish
// returned. Another goroutine can wait for it to get further.
type progress struct {
	mu   sync.Mutex
	cond sync.Cond
	last int64
	done bool
}

func newProgress() *progress {
	p := &progress{last: -1}
	p.cond.L = &p.mu
	return p
}

func (p *progress) set(i int64) {
	p.mu.Lock()
	p.last = i
	p.cond.Broadcast()
	p.mu.Unlock()
}

func (p *progress) finish() {
	p.mu.Lock()
	p.done = true
	p.cond.Broadcast()
	p.mu.Unlock()
}

func (p *progress) get() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last
}

// waitPast waits until a message after i has been published, or publishing has ended.
func (p *progress) waitPast(i int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.last <= i && !p.done {
		p.cond.Wait()
	}
}

// TestBrokerNeverDeliversAnOldMessageAfterConnectionDown publishes continuously while
// another goroutine drops and restores the connection, so that publishes are in flight
// (routed, not yet queued) when the connection drops. Whatever the interleaving, nothing
// published before the connection came back may arrive after the ConnectionDown: a message
// routed before the drop belongs to the queue that was lost, and a session would take it
// for traffic of the new connection.
func TestBrokerNeverDeliversAnOldMessageAfterConnectionDown(t *testing.T) {
	b := newTestBroker(t, feedtest.BrokerOptions{QueueCapacity: 64})
	r := newFakeReceiver()
	subscribe(t, b, r, "#")

	const drops, every = 40, 500 // a drop every 500 messages or so
	ctx, cancel := context.WithCancel(t.Context())
	published := newProgress()
	// The publisher never waits for the dropping goroutine, which waits for the publisher.
	milestones := make(chan struct{}, drops)
	stop, pubDone := make(chan struct{}), make(chan struct{})
	// The k-th bound: every message up to it had been published when the k-th Reconnect
	// began, so none of them may arrive after the k-th ConnectionDown.
	bounds := make(chan int64, drops)
	total := make(chan int64, 1) // how many messages were published, before "end"

	var workers, all sync.WaitGroup
	t.Cleanup(func() { // a failing test stops its goroutines before the broker closes
		cancel()
		all.Wait()
	})
	workers.Go(func() { // the publisher
		defer close(pubDone)
		defer published.finish()
		for i := 0; ctx.Err() == nil; i++ {
			if err := b.Publish(ctx, oddsKey.String(), []byte(strconv.Itoa(i))); err != nil {
				if ctx.Err() == nil {
					t.Error(err)
				}
				return
			}
			published.set(int64(i))
			select {
			case <-stop:
				return
			default:
			}
			if i%every == every/2 {
				select {
				case milestones <- struct{}{}:
				default: // the dropping goroutine lags behind; it still has milestones to go on
				}
			}
		}
	})
	workers.Go(func() { // the dropper
		defer close(stop)
		for k := range drops {
			select {
			case <-milestones:
			case <-pubDone:
				return // the publisher stopped early: the test has failed
			}
			b.Disconnect(errors.New("drop " + strconv.Itoa(k+1)))
			// Let the publisher finish what was in flight at the drop, and publish while down.
			published.waitPast(published.get() + 1)
			bounds <- published.get()
			b.Reconnect()
		}
	})
	all.Go(func() {
		workers.Wait()
		total <- published.get() + 1
		if err := b.Publish(ctx, aliveKey.String(), []byte("end")); err != nil && ctx.Err() == nil {
			t.Error(err)
		}
	})

	// Read what the receiver got while the traffic goes on, so that it never waits on us.
	received, downs := 0, 0
	last := int64(-1)
	for {
		c := r.next(t)
		if c.kind == callReceive && string(c.d.Body) == "end" {
			break
		}
		switch c.kind {
		case callDown:
			downs++
			// Nothing is delivered between a ConnectionDown and the ConnectionUp that follows.
			r.expect(t, callUp)
			require.LessOrEqual(t, downs, drops)
			last = max(last, <-bounds) // sent before the Reconnect that queued the Up
		case callReceive:
			i, err := strconv.ParseInt(string(c.d.Body), 10, 64)
			require.NoError(t, err)
			require.Greater(t, i, last, "message %d arrived out of order or after the drop that lost it", i)
			last = i
			received++
		default:
			t.Fatalf("unexpected %v", c.kind)
		}
	}
	n := <-total
	assert.Equal(t, drops, downs)
	// Every message is accounted for: delivered, dropped from the queue, or lost while down.
	st := b.Stats()
	assert.Equal(t, uint64(drops), st.ConnectionDrops)
	assert.Equal(t, uint64(n+1), st.Published)
	assert.Equal(t, uint64(received+1), st.Delivered)
	assert.Equal(t, st.Published, st.Delivered+st.DroppedOnDown+st.LostWhileDown, "stats %+v", st)
	assert.GreaterOrEqual(t, st.LostWhileDown, uint64(drops), "each drop lost what was published while down")
}

func TestBrokerPublishWaitsWhileTheQueueIsFull(t *testing.T) {
	b := newTestBroker(t, feedtest.BrokerOptions{QueueCapacity: 1})
	r := newGatedReceiver()
	subscribe(t, b, r, "#")

	publish(t, b, oddsKey.String(), "m1")
	r.expectMessage(t, "m1") // held in Receive: the queue is empty again
	publish(t, b, oddsKey.String(), "m2")

	// The queue is full: Publish would wait. With a context that has already ended it
	// returns at once with the context's error instead of dropping anything.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := b.Publish(ctx, oddsKey.String(), []byte("refused"))
	require.ErrorIs(t, err, context.Canceled)
	st := b.Stats()
	assert.Zero(t, st.DroppedOnDown)
	assert.Zero(t, st.LostWhileDown)

	// A publisher with a live context waits for the receiver, which is then released.
	published := make(chan error, 1)
	go func() {
		for _, body := range []string{"m3", "m4", "m5"} {
			if err := b.Publish(t.Context(), oddsKey.String(), []byte(body)); err != nil {
				published <- err
				return
			}
		}
		published <- nil
	}()
	close(r.gate)
	for _, body := range []string{"m2", "m3", "m4", "m5"} {
		r.expectMessage(t, body)
	}
	require.NoError(t, <-published)
	assert.Equal(t, uint64(5), b.Stats().Delivered, "everything but the refused message")
}

func TestBrokerPublishGivesUpWhenItsContextEndsWhileWaiting(t *testing.T) {
	b := newTestBroker(t, feedtest.BrokerOptions{QueueCapacity: 1})
	r := newGatedReceiver()
	subscribe(t, b, r, "#")
	publish(t, b, oddsKey.String(), "m1")
	r.expectMessage(t, "m1")
	publish(t, b, oddsKey.String(), "m2") // the queue is full from here on

	ctx, cancel := context.WithCancel(t.Context())
	published := make(chan error, 1)
	go func() { published <- b.Publish(ctx, oddsKey.String(), []byte("m3")) }()
	// Whether the goroutine is already waiting or not, cancelling ends the wait.
	cancel()
	require.ErrorIs(t, <-published, context.Canceled)

	close(r.gate)
	publish(t, b, oddsKey.String(), "m4")
	r.expectMessage(t, "m2")
	r.expectMessage(t, "m4") // m3 was given up, not queued
}

func TestSubscriptionCloseStopsDeliveries(t *testing.T) {
	b := newTestBroker(t, feedtest.BrokerOptions{})
	r := newFakeReceiver()
	sub := subscribe(t, b, r, "#")
	publish(t, b, oddsKey.String(), "before")
	r.expectMessage(t, "before")

	require.NoError(t, sub.Close(t.Context()))
	publish(t, b, oddsKey.String(), "after")
	b.Disconnect(nil)
	b.Reconnect()
	// Close returned, so the broker calls the receiver no more: no message, no Down, no Up.
	r.noMoreCalls(t)
	assert.Equal(t, uint64(1), b.Stats().Unrouted, "the queue is gone with its bindings")
	require.NoError(t, sub.Close(t.Context()), "Close is idempotent")
}

func TestSubscriptionCloseReturnsWhenItsContextEnds(t *testing.T) {
	b := newTestBroker(t, feedtest.BrokerOptions{})
	r := newGatedReceiver()
	sub := subscribe(t, b, r, "#")
	publish(t, b, oddsKey.String(), "m1")
	r.expectMessage(t, "m1") // the receiver is stuck in Receive

	// Close cannot promise the receiver is done while Receive runs; it gives up with ctx.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	require.ErrorIs(t, sub.Close(ctx), context.Canceled)

	close(r.gate)
	require.NoError(t, sub.Close(t.Context()), "once Receive returns, Close completes")
	r.noMoreCalls(t)
}

func TestBrokerClose(t *testing.T) {
	b := feedtest.NewBroker(feedtest.BrokerOptions{})
	r1, r2 := newFakeReceiver(), newFakeReceiver()
	sub1 := subscribe(t, b, r1, "#")
	subscribe(t, b, r2, "#.alive.#")
	publish(t, b, aliveKey.String(), "m1")
	r1.expectMessage(t, "m1")
	r2.expectMessage(t, "m1")

	b.Close()
	// Close returned: neither receiver is called again, whatever happens to the broker.
	require.ErrorIs(t, b.Publish(t.Context(), aliveKey.String(), nil), feedtest.ErrBrokerClosed)
	b.Disconnect(nil)
	b.Reconnect()
	r1.noMoreCalls(t)
	r2.noMoreCalls(t)
	assert.Equal(t, uint64(1), b.Stats().Published, "a refused message is not counted")

	_, err := b.Subscribe(t.Context(), []string{"#"}, newFakeReceiver())
	require.ErrorIs(t, err, feedtest.ErrBrokerClosed)
	require.NoError(t, sub1.Close(t.Context()), "closing a subscription of a closed broker is harmless")
	b.Close() // and so is closing the broker twice
}

func TestBrokerCloseReleasesAWaitingPublisher(t *testing.T) {
	b := feedtest.NewBroker(feedtest.BrokerOptions{QueueCapacity: 1})
	r := newGatedReceiver()
	subscribe(t, b, r, "#")
	publish(t, b, oddsKey.String(), "m1")
	r.expectMessage(t, "m1") // r is held in Receive
	publish(t, b, oddsKey.String(), "m2")
	// The queue is full, so this Publish waits (unless it starts after Close began).
	published := make(chan error, 1)
	go func() { published <- b.Publish(t.Context(), oddsKey.String(), []byte("m3")) }()

	closed := make(chan struct{})
	go func() {
		b.Close()
		close(closed)
	}()
	// Close must not leave the publisher waiting on a queue that is gone: the deleted queue
	// swallows the message, or a Publish that came too late is refused.
	err := <-published
	if err != nil {
		require.ErrorIs(t, err, feedtest.ErrBrokerClosed)
	}
	// Close waits for the Receive in progress to return.
	close(r.gate)
	select {
	case <-closed:
	case <-time.After(time.Minute):
		t.Fatal("Broker.Close did not return")
	}
	if err == nil {
		// The publisher was released by Close deleting the queue, which discarded m2.
		r.noMoreCalls(t)
	} else if len(r.calls) > 0 {
		r.expectMessage(t, "m2") // Close may have deleted the queue after r took m2
	}
	r.noMoreCalls(t) // m3 never reached the queue
}

func TestBrokerSubscribeErrors(t *testing.T) {
	closed := feedtest.NewBroker(feedtest.BrokerOptions{})
	closed.Close()
	tests := []struct {
		name     string
		b        *feedtest.Broker
		bindings []string
		r        feed.Receiver
		want     string
		wantErr  error
	}{
		{"nil bindings", newTestBroker(t, feedtest.BrokerOptions{}), nil, newFakeReceiver(), "no bindings", nil},
		{"empty bindings", newTestBroker(t, feedtest.BrokerOptions{}), []string{}, newFakeReceiver(), "no bindings", nil},
		{"nil receiver", newTestBroker(t, feedtest.BrokerOptions{}), []string{"#"}, nil, "receiver is nil", nil},
		{"closed broker", closed, []string{"#"}, newFakeReceiver(), "broker closed", feedtest.ErrBrokerClosed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sub, err := tt.b.Subscribe(t.Context(), tt.bindings, tt.r)
			require.Error(t, err)
			assert.Nil(t, sub)
			assert.Contains(t, err.Error(), tt.want)
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
			}
		})
	}
}

func TestBrokerDropConnection(t *testing.T) {
	fc := clocktest.NewFake(ms(1764152400000))
	b := newTestBroker(t, feedtest.BrokerOptions{Clock: fc})
	r := newFakeReceiver()
	subscribe(t, b, r, "#")

	dropped := make(chan error, 1)
	go func() { dropped <- b.DropConnection(t.Context(), 5*time.Second) }()

	down := r.expect(t, callDown)
	assert.ErrorContains(t, down.err, "5s")
	fc.BlockUntil(1) // DropConnection is waiting on its timer
	publish(t, b, oddsKey.String(), "lost")

	// Just short of the delay the connection is still down: the timer has not fired.
	fc.Advance(5*time.Second - time.Millisecond)
	assert.False(t, b.Connected())
	fc.Advance(time.Millisecond)
	require.NoError(t, <-dropped)
	assert.True(t, b.Connected())
	publish(t, b, oddsKey.String(), "after")
	r.expect(t, callUp)
	r.expectMessage(t, "after")

	st := b.Stats()
	assert.Equal(t, uint64(1), st.ConnectionDrops)
	assert.Equal(t, uint64(1), st.LostWhileDown)
}

func TestBrokerDropConnectionEndsWithItsContext(t *testing.T) {
	fc := clocktest.NewFake(ms(1764152400000))
	b := newTestBroker(t, feedtest.BrokerOptions{Clock: fc})
	r := newFakeReceiver()
	subscribe(t, b, r, "#")

	ctx, cancel := context.WithCancel(t.Context())
	dropped := make(chan error, 1)
	go func() { dropped <- b.DropConnection(ctx, time.Hour) }()
	r.expect(t, callDown)
	fc.BlockUntil(1)
	cancel()
	// The connection comes back at once, though the clock has not moved.
	require.ErrorIs(t, <-dropped, context.Canceled)
	assert.True(t, b.Connected())
	r.expect(t, callUp)
}

func TestBrokerKeepsItsOwnCopyOfTheBody(t *testing.T) {
	b := newTestBroker(t, feedtest.BrokerOptions{})
	r := newFakeReceiver()
	subscribe(t, b, r, "#")
	buf := []byte("first")
	require.NoError(t, b.Publish(t.Context(), "a.b", buf))
	copy(buf, "XXXXX") // the publisher reuses its buffer, as an AMQP client may
	r.expectMessage(t, "first")
}
