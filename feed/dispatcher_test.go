package feed_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// betStopEvent returns a routable, decodable bet_stop event for sr:match:id.
func betStopEvent(t *testing.T, id int64) feed.Event {
	t.Helper()
	raw := fmt.Sprintf("hi.-.live.bet_stop.1.sr:match.%d.-", id)
	key, err := feed.ParseRoutingKey(raw)
	require.NoError(t, err)
	event := feed.URN{Prefix: "sr", Type: "match", ID: id}
	body := feedtest.Marshal(&feed.BetStop{Header: feed.Header{Producer: 1, Event: event, Timestamp: time.UnixMilli(id).UTC()}})
	return feed.Event{RawKey: raw, Key: key, Body: body, ReceivedAt: time.UnixMilli(1_000_000 + id), Producer: 1}
}

// orderListener sends the match id of every bet_stop it accepts to got, in the order it
// receives them. hook, if set, runs first and may block, fail or panic.
type orderListener struct {
	feed.BaseOddsFeedListener
	got  chan int64
	hook func(ctx context.Context, id int64) error
}

func newOrderListener(capacity int) *orderListener {
	return &orderListener{got: make(chan int64, capacity)}
}

func (l *orderListener) OnBetStop(ctx context.Context, m *feed.BetStop) error {
	if l.hook != nil {
		if err := l.hook(ctx, m.Event.ID); err != nil {
			return err
		}
	}
	l.got <- m.Event.ID
	return nil
}

// delivered returns what the listener has accepted so far, without waiting.
func (l *orderListener) delivered() []int64 {
	var ids []int64
	for {
		select {
		case id := <-l.got:
			ids = append(ids, id)
		default:
			return ids
		}
	}
}

// blockFirstCall makes l block in its first call until release is closed; started is
// closed when that call has begun.
func (l *orderListener) blockFirstCall() (started <-chan struct{}, release chan struct{}) {
	s, r := make(chan struct{}), make(chan struct{})
	var once sync.Once
	l.hook = func(context.Context, int64) error {
		first := false
		once.Do(func() { first = true })
		if first {
			close(s)
			<-r
		}
		return nil
	}
	return s, r
}

func newDispatcher(t *testing.T, l feed.OddsFeedListener, opts feed.DispatcherOptions) *feed.SerialDispatcher {
	t.Helper()
	d, err := feed.NewSerialDispatcher(l, opts)
	require.NoError(t, err)
	return d
}

func TestSerialDispatcherDeliversInDispatchOrder(t *testing.T) {
	const n = 200
	l := newOrderListener(n)
	d := newDispatcher(t, l, feed.DispatcherOptions{QueueSize: 3}) // small: Dispatch waits often

	want := make([]int64, n)
	for i := range want {
		want[i] = int64(i + 1)
		require.NoError(t, d.Dispatch(t.Context(), betStopEvent(t, want[i])))
	}
	require.NoError(t, d.Close(t.Context()))

	assert.Equal(t, want, l.delivered())
	st := d.Stats()
	assert.Equal(t, feed.DispatcherStats{Delivered: n}, st)
}

func TestSerialDispatcherBackPressure(t *testing.T) {
	l := newOrderListener(16)
	started, release := l.blockFirstCall()
	d := newDispatcher(t, l, feed.DispatcherOptions{QueueSize: 2})
	t.Cleanup(func() { _ = d.Close(context.Background()) })

	require.NoError(t, d.Dispatch(t.Context(), betStopEvent(t, 1)))
	<-started // the worker holds event 1; the queue is empty
	require.NoError(t, d.Dispatch(t.Context(), betStopEvent(t, 2)))
	require.NoError(t, d.Dispatch(t.Context(), betStopEvent(t, 3)))
	assert.Equal(t, 2, d.Stats().Queued)

	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	err := d.Dispatch(cancelled, betStopEvent(t, 99))
	assert.ErrorIs(t, err, context.Canceled, "the queue is full: Dispatch waits, and gives up with its context")
	assert.Equal(t, 2, d.Stats().Queued, "nothing was dropped to make room")

	// A Dispatch with a live context waits for room instead.
	waiting := make(chan error, 1)
	go func() { waiting <- d.Dispatch(t.Context(), betStopEvent(t, 4)) }()
	close(release)
	require.NoError(t, <-waiting)
	require.NoError(t, d.Close(t.Context()))

	assert.Equal(t, []int64{1, 2, 3, 4}, l.delivered(), "event 99 was refused, the others delivered in order")
	st := d.Stats()
	assert.Equal(t, uint64(4), st.Delivered)
	assert.Zero(t, st.Abandoned)
	assert.Zero(t, st.Queued)
}

func TestSerialDispatcherDefaultQueueSize(t *testing.T) {
	l := newOrderListener(feed.DefaultQueueSize + 1)
	started, release := l.blockFirstCall()
	d := newDispatcher(t, l, feed.DispatcherOptions{}) // QueueSize 0: the default
	t.Cleanup(func() { _ = d.Close(context.Background()) })

	require.NoError(t, d.Dispatch(t.Context(), betStopEvent(t, 1)))
	<-started
	ev := betStopEvent(t, 2)
	for range feed.DefaultQueueSize {
		require.NoError(t, d.Dispatch(t.Context(), ev))
	}
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	assert.ErrorIs(t, d.Dispatch(cancelled, ev), context.Canceled, "DefaultQueueSize events fill the queue")
	assert.Equal(t, feed.DefaultQueueSize, d.Stats().Queued)

	close(release)
	require.NoError(t, d.Close(t.Context()))
	assert.Equal(t, uint64(feed.DefaultQueueSize+1), d.Stats().Delivered)
}

func TestSerialDispatcherDispatchAfterClose(t *testing.T) {
	l := newOrderListener(1)
	d := newDispatcher(t, l, feed.DispatcherOptions{})
	require.NoError(t, d.Close(t.Context()))

	err := d.Dispatch(t.Context(), betStopEvent(t, 1))

	assert.ErrorIs(t, err, feed.ErrDispatcherClosed)
	assert.NoError(t, d.Close(t.Context()), "a second Close is harmless")
	assert.Empty(t, l.delivered())
	assert.Zero(t, d.Stats().Delivered)
}

func TestSerialDispatcherCloseDeliversWhatIsQueued(t *testing.T) {
	l := newOrderListener(8)
	started, release := l.blockFirstCall()
	d := newDispatcher(t, l, feed.DispatcherOptions{QueueSize: 4})

	require.NoError(t, d.Dispatch(t.Context(), betStopEvent(t, 1)))
	<-started
	for id := int64(2); id <= 5; id++ {
		require.NoError(t, d.Dispatch(t.Context(), betStopEvent(t, id)))
	}
	closed := make(chan error, 1)
	go func() { closed <- d.Close(t.Context()) }()
	// The queue is full, so this Dispatch waits until Close has closed the queue: from
	// then on Close is waiting for the worker.
	assert.ErrorIs(t, d.Dispatch(t.Context(), betStopEvent(t, 99)), feed.ErrDispatcherClosed)
	select {
	case err := <-closed:
		t.Fatalf("Close returned %v while the listener was still busy", err)
	default:
	}

	close(release)
	require.NoError(t, <-closed)

	assert.Equal(t, []int64{1, 2, 3, 4, 5}, l.delivered(), "everything queued was delivered before Close returned")
	assert.Equal(t, feed.DispatcherStats{Delivered: 5}, d.Stats())
}

func TestSerialDispatcherCloseGivesUpWhenItsContextEnds(t *testing.T) {
	l := newOrderListener(8)
	started := make(chan struct{})
	listenerCtxErr := make(chan error, 1)
	l.hook = func(ctx context.Context, id int64) error {
		if id != 1 {
			return nil
		}
		close(started)
		<-ctx.Done() // a well-behaved listener: it stops when its context ends
		listenerCtxErr <- ctx.Err()
		return ctx.Err()
	}
	var reported []error
	var mu sync.Mutex
	d := newDispatcher(t, l, feed.DispatcherOptions{QueueSize: 4, OnError: func(err error) {
		mu.Lock()
		defer mu.Unlock()
		reported = append(reported, err)
	}})

	require.NoError(t, d.Dispatch(t.Context(), betStopEvent(t, 1)))
	<-started
	for id := int64(2); id <= 4; id++ {
		require.NoError(t, d.Dispatch(t.Context(), betStopEvent(t, id)))
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()

	err := d.Close(ctx) // the listener is blocked until its own context ends: Close cannot wait

	assert.ErrorIs(t, err, context.Canceled)
	assert.ErrorIs(t, <-listenerCtxErr, context.Canceled, "the listener's context was cancelled")
	// Close again, with a live context, to wait for the worker to finish abandoning.
	require.NoError(t, d.Close(t.Context()))

	assert.Empty(t, l.delivered())
	assert.Equal(t, feed.DispatcherStats{Failed: 1, Abandoned: 3}, d.Stats())
	assert.ErrorIs(t, d.Dispatch(t.Context(), betStopEvent(t, 5)), feed.ErrDispatcherClosed)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, reported, 1)
	var le *feed.ListenerError
	require.ErrorAs(t, reported[0], &le)
	assert.Equal(t, "OnBetStop", le.Method)
	assert.ErrorIs(t, le, context.Canceled)
}

// failingListener fails or panics on bet_stops of some matches and records the unparsable
// messages it sees.
type failingListener struct {
	orderListener
	mu         sync.Mutex
	unparsable []*feed.UnparsableMessage
}

func (l *failingListener) OnUnparsableMessage(_ context.Context, m *feed.UnparsableMessage) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.unparsable = append(l.unparsable, m)
	return nil
}

func TestSerialDispatcherStatsAndOnError(t *testing.T) {
	errRefused := errors.New("refused")
	l := &failingListener{orderListener: *newOrderListener(8)}
	l.hook = func(_ context.Context, id int64) error {
		switch id {
		case 2:
			return errRefused
		case 3:
			panic("boom")
		}
		return nil
	}
	var reported []error
	var mu sync.Mutex
	var logs bytes.Buffer
	d := newDispatcher(t, l, feed.DispatcherOptions{
		OnError: func(err error) {
			mu.Lock()
			defer mu.Unlock()
			reported = append(reported, err)
		},
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})

	garbage := betStopEvent(t, 5)
	garbage.Body = []byte("<<< not xml")
	tooLarge := betStopEvent(t, 6)
	tooLarge.Err = fmt.Errorf("%w: 9999 bytes", feed.ErrBodyTooLarge)
	for _, ev := range []feed.Event{betStopEvent(t, 1), betStopEvent(t, 2), betStopEvent(t, 3), garbage, tooLarge, betStopEvent(t, 4)} {
		require.NoError(t, d.Dispatch(t.Context(), ev))
	}
	require.NoError(t, d.Close(t.Context()))

	assert.Equal(t, []int64{1, 4}, l.delivered())
	assert.Equal(t, feed.DispatcherStats{Delivered: 2, Unparsable: 2, Failed: 1, Panicked: 1}, d.Stats())

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, reported, 4, "every failure is reported, in order")
	var le *feed.ListenerError
	require.ErrorAs(t, reported[0], &le)
	assert.Equal(t, "OnBetStop", le.Method)
	assert.Equal(t, feed.URN{Prefix: "sr", Type: "match", ID: 2}, le.Event)
	assert.ErrorIs(t, reported[0], errRefused)
	assert.NotErrorIs(t, reported[0], feed.ErrListenerPanic)

	require.ErrorAs(t, reported[1], &le)
	assert.ErrorIs(t, reported[1], feed.ErrListenerPanic)
	assert.Equal(t, "boom", le.Panic)
	assert.NotEmpty(t, le.Stack)

	assert.ErrorIs(t, reported[2], feed.ErrMalformedMessage)
	assert.ErrorIs(t, reported[3], feed.ErrBodyTooLarge)

	l.mu.Lock()
	defer l.mu.Unlock()
	require.Len(t, l.unparsable, 2)
	assert.Equal(t, garbage.Body, l.unparsable[0].Body)
	assert.Equal(t, tooLarge.RawKey, l.unparsable[1].RoutingKey)

	out := logs.String()
	assert.Contains(t, out, "feed: listener failed")
	assert.Contains(t, out, "feed: listener panicked")
	assert.Contains(t, out, "feed: unparsable message")
}

func TestNewSerialDispatcherValidatesItsArguments(t *testing.T) {
	d, err := feed.NewSerialDispatcher(nil, feed.DispatcherOptions{})
	require.Error(t, err)
	assert.Nil(t, d)
	assert.Contains(t, err.Error(), "listener is nil")

	d, err = feed.NewSerialDispatcher(newOrderListener(1), feed.DispatcherOptions{QueueSize: -1})
	require.Error(t, err)
	assert.Nil(t, d)
	assert.Contains(t, err.Error(), "QueueSize")
}

func TestSerialDispatcherIsADispatcher(t *testing.T) {
	var d feed.Dispatcher = newDispatcher(t, newOrderListener(1), feed.DispatcherOptions{})
	assert.NoError(t, d.Close(t.Context()))
}
