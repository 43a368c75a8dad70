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

// expect fails t unless r's next call is of kind k.
func expect(t *testing.T, r *feedtest.ReceiverRecorder, k feedtest.ReceiverCallKind) feedtest.ReceiverCall {
	t.Helper()
	c := r.RequireNext(t)
	require.Equal(t, k, c.Kind, "call %v", c)
	return c
}

// expectMessage fails t unless r's next call is the Receive of the message with body.
func expectMessage(t *testing.T, r *feedtest.ReceiverRecorder, body string) feed.Delivery {
	t.Helper()
	c := expect(t, r, feedtest.CallReceive)
	require.Equal(t, body, string(c.Delivery.Body))
	return c.Delivery
}

// gated returns a receiver held from the start: its Receive waits until Release.
func gated() *feedtest.ReceiverRecorder {
	r := feedtest.NewReceiverRecorder()
	r.Hold()
	return r
}

func newTestBroker(t *testing.T, opts feedtest.BrokerOptions) *feedtest.Broker {
	t.Helper()
	b := feedtest.NewBroker(opts)
	t.Cleanup(b.Close)
	return b
}

// subscribe subscribes r with bindings and consumes the first ConnectionUp.
func subscribe(t *testing.T, b *feedtest.Broker, r *feedtest.ReceiverRecorder, bindings ...string) feed.Subscription {
	t.Helper()
	sub, err := b.Subscribe(t.Context(), bindings, r)
	require.NoError(t, err)
	t.Cleanup(func() {
		r.Release() // a test that failed midway must not leave Close waiting on Receive
		_ = sub.Close(context.Background())
	})
	expect(t, r, feedtest.CallReceiverUp)
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

// TestBrokerCountsMessages: Published counts every message, Unrouted those that matched no
// queue (none bound, none matching, or the only one closed), and Delivered one copy per
// queue a message reached, however many of its bindings match.
func TestBrokerCountsMessages(t *testing.T) {
	b := newTestBroker(t, feedtest.BrokerOptions{})
	publish(t, b, oddsKey.String(), "no queue at all")

	r, other := feedtest.NewReceiverRecorder(), feedtest.NewReceiverRecorder()
	sub := subscribe(t, b, r, "lo.#", "lo.-.#", "#.sr:match.9.-") // two bindings match "routed"
	subscribe(t, b, other, "*.*.*.odds_change.*.sr:match.1.-")
	publish(t, b, aliveKey.String(), "no queue bound for alive")
	publish(t, b, "lo.-.-.odds_change.1.sr:match.1.-", "routed")
	publish(t, b, "hi.-.-.bet_stop.1.sr:match.9.-", "marker") // r only: after a second "routed", had there been one
	expectMessage(t, r, "routed")
	expectMessage(t, r, "marker")
	expectMessage(t, other, "routed")
	assert.Equal(t, feedtest.BrokerStats{Published: 4, Delivered: 3, Unrouted: 2}, b.Stats())

	require.NoError(t, sub.Close(t.Context()))
	publish(t, b, "lo.-.-.bet_stop.1.sr:match.1.-", "r's closed queue went with its bindings")
	r.RequireNone(t)
	assert.Equal(t, feedtest.BrokerStats{Published: 5, Delivered: 3, Unrouted: 3}, b.Stats())
}

func TestBrokerDeliversInPublishOrderPerSubscription(t *testing.T) {
	b := newTestBroker(t, feedtest.BrokerOptions{QueueCapacity: 16}) // small: Publish waits on the receivers often
	all, hi := feedtest.NewReceiverRecorder(), feedtest.NewReceiverRecorder()
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
		expectMessage(t, all, strconv.Itoa(i))
		if i%3 != 0 {
			expectMessage(t, hi, strconv.Itoa(i))
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
	r := gated()
	subscribe(t, b, r, "#")

	publish(t, b, oddsKey.String(), "first")
	assert.Equal(t, start, expectMessage(t, r, "first").ReceivedAt)
	publish(t, b, oddsKey.String(), "second") // published at start, waits in the queue
	fc.Advance(1500 * time.Millisecond)
	r.Release()
	assert.Equal(t, start.Add(1500*time.Millisecond), expectMessage(t, r, "second").ReceivedAt)
}

func TestBrokerSubscribeWhileDisconnectedReportsUpOnReconnect(t *testing.T) {
	b := newTestBroker(t, feedtest.BrokerOptions{})
	b.Disconnect(nil)
	r := feedtest.NewReceiverRecorder()
	_, err := b.Subscribe(t.Context(), []string{"#"}, r)
	require.NoError(t, err)
	publish(t, b, oddsKey.String(), "lost")
	b.Reconnect()
	publish(t, b, oddsKey.String(), "after")

	// No Up (and no Down: the receiver never had a connection) until Reconnect.
	expect(t, r, feedtest.CallReceiverUp)
	expectMessage(t, r, "after")
	assert.Equal(t, uint64(1), b.Stats().LostWhileDown)
}

func TestBrokerDisconnectAndReconnect(t *testing.T) {
	b := newTestBroker(t, feedtest.BrokerOptions{})
	r := gated()
	subscribe(t, b, r, "#")

	// m1 is read: the receiver holds it in Receive. m2 and m3 wait in the queue.
	publish(t, b, oddsKey.String(), "m1")
	expectMessage(t, r, "m1")
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
	r.Release()
	down := expect(t, r, feedtest.CallReceiverDown)
	assert.Equal(t, cause, down.Err)

	b.Reconnect()
	assert.True(t, b.Connected())
	b.Reconnect() // already up: no second ConnectionUp
	publish(t, b, oddsKey.String(), "m4")
	expect(t, r, feedtest.CallReceiverUp)
	expectMessage(t, r, "m4") // neither m2, m3 nor "while down" came back
	r.RequireNone(t)

	st = b.Stats()
	assert.Equal(t, feedtest.BrokerStats{Published: 5, Delivered: 2, LostWhileDown: 1, DroppedOnDown: 2, ConnectionDrops: 1}, st)
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
	r := feedtest.NewReceiverRecorder()
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
		c := r.RequireNext(t)
		if c.Kind == feedtest.CallReceive && string(c.Delivery.Body) == "end" {
			break
		}
		switch c.Kind {
		case feedtest.CallReceiverDown:
			downs++
			// Nothing is delivered between a ConnectionDown and the ConnectionUp that follows.
			expect(t, r, feedtest.CallReceiverUp)
			require.LessOrEqual(t, downs, drops)
			last = max(last, <-bounds) // sent before the Reconnect that queued the Up
		case feedtest.CallReceive:
			i, err := strconv.ParseInt(string(c.Delivery.Body), 10, 64)
			require.NoError(t, err)
			require.Greater(t, i, last, "message %d arrived out of order or after the drop that lost it", i)
			last = i
			received++
		default:
			t.Fatalf("unexpected %v", c.Kind)
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
	r := gated()
	subscribe(t, b, r, "#")

	publish(t, b, oddsKey.String(), "m1")
	expectMessage(t, r, "m1") // held in Receive: the queue is empty again
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
	r.Release()
	for _, body := range []string{"m2", "m3", "m4", "m5"} {
		expectMessage(t, r, body)
	}
	require.NoError(t, <-published)
	assert.Equal(t, uint64(5), b.Stats().Delivered, "everything but the refused message")
}

func TestBrokerPublishGivesUpWhenItsContextEndsWhileWaiting(t *testing.T) {
	b := newTestBroker(t, feedtest.BrokerOptions{QueueCapacity: 1})
	r := gated()
	subscribe(t, b, r, "#")
	publish(t, b, oddsKey.String(), "m1")
	expectMessage(t, r, "m1")
	publish(t, b, oddsKey.String(), "m2") // the queue is full from here on

	ctx, cancel := context.WithCancel(t.Context())
	published := make(chan error, 1)
	go func() { published <- b.Publish(ctx, oddsKey.String(), []byte("m3")) }()
	// Whether the goroutine is already waiting or not, cancelling ends the wait.
	cancel()
	require.ErrorIs(t, <-published, context.Canceled)

	r.Release()
	publish(t, b, oddsKey.String(), "m4")
	expectMessage(t, r, "m2")
	expectMessage(t, r, "m4") // m3 was given up, not queued
}

func TestBrokerClose(t *testing.T) {
	b := feedtest.NewBroker(feedtest.BrokerOptions{})
	r1, r2 := feedtest.NewReceiverRecorder(), feedtest.NewReceiverRecorder()
	sub1 := subscribe(t, b, r1, "#")
	subscribe(t, b, r2, "#.alive.#")
	publish(t, b, aliveKey.String(), "m1")
	expectMessage(t, r1, "m1")
	expectMessage(t, r2, "m1")

	b.Close()
	// Close returned: neither receiver is called again, whatever happens to the broker.
	require.ErrorIs(t, b.Publish(t.Context(), aliveKey.String(), nil), feedtest.ErrBrokerClosed)
	b.Disconnect(nil)
	b.Reconnect()
	r1.RequireNone(t)
	r2.RequireNone(t)
	assert.Equal(t, uint64(1), b.Stats().Published, "a refused message is not counted")

	_, err := b.Subscribe(t.Context(), []string{"#"}, feedtest.NewReceiverRecorder())
	require.ErrorIs(t, err, feedtest.ErrBrokerClosed)
	require.NoError(t, sub1.Close(t.Context()), "closing a subscription of a closed broker is harmless")
	b.Close() // and so is closing the broker twice
}

func TestBrokerCloseReleasesAWaitingPublisher(t *testing.T) {
	b := feedtest.NewBroker(feedtest.BrokerOptions{QueueCapacity: 1})
	r := gated()
	subscribe(t, b, r, "#")
	publish(t, b, oddsKey.String(), "m1")
	expectMessage(t, r, "m1") // r is held in Receive
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
	r.Release()
	select {
	case <-closed:
	case <-time.After(time.Minute):
		t.Fatal("Broker.Close did not return")
	}
	if err == nil {
		// The publisher was released by Close deleting the queue, which discarded m2.
		r.RequireNone(t)
	} else if len(r.Unread()) > 0 {
		expectMessage(t, r, "m2") // Close may have deleted the queue after r took m2
	}
	r.RequireNone(t) // m3 never reached the queue
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
		{"nil bindings", newTestBroker(t, feedtest.BrokerOptions{}), nil, feedtest.NewReceiverRecorder(), "no bindings", nil},
		{"empty bindings", newTestBroker(t, feedtest.BrokerOptions{}), []string{}, feedtest.NewReceiverRecorder(), "no bindings", nil},
		{"nil receiver", newTestBroker(t, feedtest.BrokerOptions{}), []string{"#"}, nil, "receiver is nil", nil},
		{"closed broker", closed, []string{"#"}, feedtest.NewReceiverRecorder(), "broker closed", feedtest.ErrBrokerClosed},
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
	r := feedtest.NewReceiverRecorder()
	subscribe(t, b, r, "#")

	dropped := make(chan error, 1)
	go func() { dropped <- b.DropConnection(t.Context(), 5*time.Second) }()

	down := expect(t, r, feedtest.CallReceiverDown)
	assert.ErrorContains(t, down.Err, "5s")
	fc.BlockUntil(1) // DropConnection is waiting on its timer
	publish(t, b, oddsKey.String(), "lost")

	// Just short of the delay the connection is still down: the timer has not fired.
	fc.Advance(5*time.Second - time.Millisecond)
	assert.False(t, b.Connected())
	fc.Advance(time.Millisecond)
	require.NoError(t, <-dropped)
	assert.True(t, b.Connected())
	publish(t, b, oddsKey.String(), "after")
	expect(t, r, feedtest.CallReceiverUp)
	expectMessage(t, r, "after")

	st := b.Stats()
	assert.Equal(t, uint64(1), st.ConnectionDrops)
	assert.Equal(t, uint64(1), st.LostWhileDown)
}

func TestBrokerDropConnectionEndsWithItsContext(t *testing.T) {
	fc := clocktest.NewFake(ms(1764152400000))
	b := newTestBroker(t, feedtest.BrokerOptions{Clock: fc})
	r := feedtest.NewReceiverRecorder()
	subscribe(t, b, r, "#")

	ctx, cancel := context.WithCancel(t.Context())
	dropped := make(chan error, 1)
	go func() { dropped <- b.DropConnection(ctx, time.Hour) }()
	expect(t, r, feedtest.CallReceiverDown)
	fc.BlockUntil(1)
	cancel()
	// The connection comes back at once, though the clock has not moved.
	require.ErrorIs(t, <-dropped, context.Canceled)
	assert.True(t, b.Connected())
	expect(t, r, feedtest.CallReceiverUp)
}
