package concurrent_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
)

// handledLog records every call of the Handled functions it makes, by event number.
type handledLog struct {
	mu   sync.Mutex
	errs map[int][]error
}

func newHandledLog() *handledLog { return &handledLog{errs: make(map[int][]error)} }

// on returns the Handled function of event i.
func (h *handledLog) on(i int) func(error) {
	return func(err error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.errs[i] = append(h.errs[i], err)
	}
}

// calls returns how many times each event's Handled was called.
func (h *handledLog) calls() map[int]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := make(map[int]int, len(h.errs))
	for i, errs := range h.errs {
		n[i] = len(errs)
	}
	return n
}

// err returns the error event i's Handled was called with, once.
func (h *handledLog) err(t *testing.T, i int) error {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	require.Len(t, h.errs[i], 1, "Handled of event %d", i)
	return h.errs[i][0]
}

// onceEach is the calls map of events 0 to n-1 handled once each.
func onceEach(n int) map[int]int {
	m := make(map[int]int, n)
	for i := range n {
		m[i] = 1
	}
	return m
}

// failBySeq fails the listener call for message number n when n%10 is 3, and panics
// when it is 7; gate, when set, runs first.
type failBySeq struct {
	feed.BaseOddsFeedListener // no OnCashout: cashouts are passed over
	gate                      func(ctx context.Context, n int)
}

var errListener = errors.New("listener failed")

func (l *failBySeq) call(ctx context.Context, m feed.Message) error {
	n := seq(m)
	if l.gate != nil {
		l.gate(ctx, n)
	}
	switch n % 10 {
	case 3:
		return errListener
	case 7:
		panic(fmt.Sprintf("message %d", n))
	}
	return nil
}

func (l *failBySeq) OnOddsChange(ctx context.Context, m *feed.OddsChange) error {
	return l.call(ctx, m)
}
func (l *failBySeq) OnBetStop(ctx context.Context, m *feed.BetStop) error { return l.call(ctx, m) }

var errUnroutable = errors.New("unroutable")

// handledEvents returns n events over 7 matches, each with Handled recorded in log: by
// i%8, odds changes and bet stops (their calls failing or panicking by i%10), bodies
// that do not decode (5), events the session could not route (6) and cashouts, which a
// listener without OnCashout passes over (7).
func handledEvents(t *testing.T, n int, log *handledLog) []feed.Event {
	evs := make([]feed.Event, n)
	for i := range evs {
		var ev feed.Event
		switch i % 8 {
		case 5:
			ev = rawEvent(t, message(feed.MessageBetStop, match(i%7), 1, 0, i))
			ev.Body = []byte("<bet_stop")
		case 6:
			ev = feed.Event{RawKey: "not.a.key", Body: []byte("<odds_change/>"), Err: errUnroutable}
		case 7:
			ev = rawEvent(t, cashout(match(i%7), 1, i))
		default:
			typ := feed.MessageOddsChange
			if i%2 == 1 {
				typ = feed.MessageBetStop
			}
			ev = rawEvent(t, message(typ, match(i%7), 1, 0, i))
		}
		ev.Handled = log.on(i)
		evs[i] = ev
	}
	return evs
}

// checkHandled checks the error each of handledEvents' events was handled with.
func checkHandled(t *testing.T, log *handledLog, n int) {
	t.Helper()
	require.Equal(t, onceEach(n), log.calls(), "Handled called once per event")
	for i := range n {
		err := log.err(t, i)
		var le *feed.ListenerError
		switch {
		case i%8 == 5:
			assert.ErrorIs(t, err, feed.ErrMalformedMessage, "event %d does not decode", i)
			assert.False(t, errors.As(err, &le), "event %d: OnUnparsableMessage returned nil", i)
		case i%8 == 6:
			assert.ErrorIs(t, err, errUnroutable, "event %d", i)
		case i%8 == 7:
			assert.NoError(t, err, "event %d: a cashout passed over", i)
		case i%10 == 3:
			require.ErrorAs(t, err, &le, "event %d", i)
			assert.ErrorIs(t, err, errListener, "event %d", i)
		case i%10 == 7:
			require.ErrorAs(t, err, &le, "event %d", i)
			assert.ErrorIs(t, err, feed.ErrListenerPanic, "event %d", i)
		default:
			assert.NoError(t, err, "event %d", i)
		}
	}
}

// dispatcherKinds makes each dispatcher of the kit for l.
var dispatcherKinds = []struct {
	name string
	make func(t *testing.T, l feed.OddsFeedListener, queueSize int) feed.Dispatcher
}{
	{"Dispatcher", func(t *testing.T, l feed.OddsFeedListener, queueSize int) feed.Dispatcher {
		c, _ := newListener(t, l, concurrent.Config{Threads: 3, QueueSize: queueSize})
		return c
	}},
	{"Dispatcher/inline-errors", func(t *testing.T, l feed.OddsFeedListener, queueSize int) feed.Dispatcher {
		c, _ := newListener(t, l, concurrent.Config{Threads: 3, QueueSize: queueSize, HandleErrorsAsynchronously: new(false)})
		return c
	}},
	{"Pool.Dispatcher", func(t *testing.T, l feed.OddsFeedListener, queueSize int) feed.Dispatcher {
		p, _ := newPool(t, concurrent.Config{Threads: 2, QueueSize: queueSize})
		c, err := p.Dispatcher(l)
		require.NoError(t, err)
		return c
	}},
	{"SerialDispatcher", func(t *testing.T, l feed.OddsFeedListener, queueSize int) feed.Dispatcher {
		return newSerial(t, l, concurrent.NewTaskLifecycleTracker(), concurrent.SerialConfig{QueueSize: queueSize})
	}},
	{"feed.SerialDispatcher", func(t *testing.T, l feed.OddsFeedListener, queueSize int) feed.Dispatcher {
		d, err := feed.NewSerialDispatcher(l, feed.DispatcherOptions{QueueSize: queueSize})
		require.NoError(t, err)
		t.Cleanup(func() { _ = d.Close(context.Background()) })
		return d
	}},
}

// TestHandledOncePerEvent: N events, some failing, panicking, unparsable, unroutable,
// and cashouts for a listener without OnCashout, through each dispatcher: once Close
// returns, each event's Handled was called exactly once, with what its delivery came
// to; a Dispatch after Close is refused, and its event's Handled is never called.
func TestHandledOncePerEvent(t *testing.T) {
	const n = 400
	for _, kind := range dispatcherKinds {
		t.Run(kind.name, func(t *testing.T) {
			ctx := testContext(t)
			log := newHandledLog()
			d := kind.make(t, &failBySeq{}, 16)
			for _, ev := range handledEvents(t, n, log) {
				require.NoError(t, d.Dispatch(ctx, ev))
			}
			require.NoError(t, d.Close(ctx))
			checkHandled(t, log, n)

			late := rawEvent(t, message(feed.MessageOddsChange, match(1), 1, 0, n))
			late.Handled = log.on(n)
			assert.ErrorIs(t, d.Dispatch(ctx, late), feed.ErrDispatcherClosed)
			unroutable := feed.Event{RawKey: "x", Err: errUnroutable, Handled: log.on(n + 1)}
			assert.ErrorIs(t, d.Dispatch(ctx, unroutable), feed.ErrDispatcherClosed)
			assert.Equal(t, onceEach(n), log.calls(), "a refused event is not handled")
		})
	}
}

// TestHandledForEventsAbandonedAtClose: a Close whose context ends while the listener is
// busy abandons the events queued behind the call; each one's Handled is called all the
// same, with an error that says the dispatcher closed and why (the context's error),
// and the call in progress ends with what the listener returned.
func TestHandledForEventsAbandonedAtClose(t *testing.T) {
	const queued = 5
	for _, kind := range dispatcherKinds {
		t.Run(kind.name, func(t *testing.T) {
			started := make(chan struct{})
			l := &failBySeq{gate: func(ctx context.Context, n int) {
				if n == 0 {
					close(started)
					<-ctx.Done() // until Close gives up
				}
			}}
			d := kind.make(t, l, 16)
			log := newHandledLog()
			ctx := testContext(t)
			for i := range queued + 1 {
				ev := rawEvent(t, message(feed.MessageBetStop, match(1), 1, 0, 10*i)) // none fails
				ev.Handled = log.on(i)
				require.NoError(t, d.Dispatch(ctx, ev))
				if i == 0 {
					waitFor(t, started, "the first call")
				}
			}
			ended, cancel := context.WithCancel(ctx)
			cancel()

			assert.ErrorIs(t, d.Close(ended), context.Canceled)
			// A later Close waits for the worker to be done with what it abandons.
			require.NoError(t, d.Close(ctx))

			require.Equal(t, onceEach(queued+1), log.calls())
			first := log.err(t, 0)
			var le *feed.ListenerError
			assert.False(t, errors.As(first, &le), "the blocked call returned nil: %v", first)
			for i := 1; i <= queued; i++ {
				err := log.err(t, i)
				assert.ErrorIs(t, err, feed.ErrDispatcherClosed, "event %d", i)
				assert.ErrorIs(t, err, context.Canceled, "event %d", i)
			}
		})
	}
}

// TestHandledForEventsAbandonedByThePoolsClose: a Pool's Close that runs out of time
// abandons every listener's queued tasks; their Handled is told why, with the pool's
// Close context's error.
func TestHandledForEventsAbandonedByThePoolsClose(t *testing.T) {
	tracker := concurrent.NewTaskLifecycleTracker()
	p, err := concurrent.NewPool(tracker, concurrent.Config{Threads: 1})
	require.NoError(t, err)
	started := make(chan struct{})
	c, err := p.Dispatcher(&failBySeq{gate: func(ctx context.Context, n int) {
		if n == 0 {
			close(started)
			<-ctx.Done()
		}
	}})
	require.NoError(t, err)
	ctx := testContext(t)
	log := newHandledLog()
	for i := range 4 {
		ev := rawEvent(t, message(feed.MessageOddsChange, match(i), 1, 0, 10*i))
		ev.Handled = log.on(i)
		require.NoError(t, c.Dispatch(ctx, ev))
		if i == 0 {
			waitFor(t, started, "the first call")
		}
	}
	expired, cancel := context.WithTimeout(ctx, 0)
	defer cancel()

	assert.ErrorIs(t, p.Close(expired), context.DeadlineExceeded)
	require.NoError(t, p.Close(ctx), "a later Close waits for the workers")

	require.Equal(t, onceEach(4), log.calls())
	assert.NoError(t, log.err(t, 0))
	for i := 1; i < 4; i++ {
		err := log.err(t, i)
		assert.ErrorIs(t, err, feed.ErrDispatcherClosed, "event %d", i)
		assert.ErrorIs(t, err, context.DeadlineExceeded, "event %d", i)
	}
}

// TestHandledNotCalledWhenDispatchFails: a Dispatch that gives up because its context
// ended (the queue is full, or the context ended before an inline delivery) returns
// the error and leaves the event's Handled alone: the caller still has the event.
func TestHandledNotCalledWhenDispatchFails(t *testing.T) {
	for _, kind := range dispatcherKinds {
		t.Run(kind.name, func(t *testing.T) {
			started, release := make(chan struct{}), make(chan struct{})
			l := &failBySeq{gate: func(_ context.Context, n int) {
				if n == 0 {
					close(started)
					<-release
				}
			}}
			d := kind.make(t, l, 1)
			log := newHandledLog()
			ctx := testContext(t)
			first := rawEvent(t, message(feed.MessageOddsChange, match(1), 1, 0, 0))
			first.Handled = log.on(0)
			require.NoError(t, d.Dispatch(ctx, first))
			waitFor(t, started, "the first call")
			second := rawEvent(t, message(feed.MessageOddsChange, match(1), 1, 0, 10))
			second.Handled = log.on(1)
			require.NoError(t, d.Dispatch(ctx, second), "the queue holds one")

			ended, cancel := context.WithCancel(ctx)
			cancel()
			refused := rawEvent(t, message(feed.MessageOddsChange, match(2), 1, 0, 20))
			refused.Handled = log.on(2)
			assert.ErrorIs(t, d.Dispatch(ended, refused), context.Canceled, "the queue is full")
			unroutable := feed.Event{RawKey: "x", Err: errUnroutable, Handled: log.on(3)}
			// Queued behind the full queue, or, inline, not delivered after the context ended.
			assert.ErrorIs(t, d.Dispatch(ended, unroutable), context.Canceled)

			close(release)
			require.NoError(t, d.Close(ctx))
			assert.Equal(t, map[int]int{0: 1, 1: 1}, log.calls())
		})
	}
}
