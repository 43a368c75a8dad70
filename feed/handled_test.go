package feed_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// handledCalls records each call of the Handled functions it makes, by event.
type handledCalls struct {
	mu   sync.Mutex
	errs map[int64][]error
}

func (h *handledCalls) on(id int64) func(error) {
	return func(err error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.errs == nil {
			h.errs = make(map[int64][]error)
		}
		h.errs[id] = append(h.errs[id], err)
	}
}

func (h *handledCalls) snapshot() map[int64][]error {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := make(map[int64][]error, len(h.errs))
	for id, errs := range h.errs {
		m[id] = append([]error(nil), errs...)
	}
	return m
}

// Each event a SerialDispatcher accepts has its Handled called once, after its listener
// call, with what Deliver returned; a cashout the listener has no method for is passed
// over (nil); an event refused by Dispatch is never handled.
func TestSerialDispatcherCallsHandledOncePerEvent(t *testing.T) {
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
	d := newDispatcher(t, l, feed.DispatcherOptions{})
	var calls handledCalls

	garbage := betStopEvent(t, 5)
	garbage.Body = []byte("<<< not xml")
	tooLarge := betStopEvent(t, 6)
	tooLarge.Err = fmt.Errorf("%w: 9999 bytes", feed.ErrBodyTooLarge)
	cashout := betStopEvent(t, 7)
	cashout.Key.Type = feed.MessageCashout
	cashout.Body = feedtest.Marshal(&feed.Cashout{Header: feed.Header{Producer: 1, Event: cashout.Key.Event}})
	evs := []feed.Event{betStopEvent(t, 1), betStopEvent(t, 2), betStopEvent(t, 3), garbage, tooLarge, cashout, betStopEvent(t, 4)}
	for _, ev := range evs {
		ev.Handled = calls.on(ev.Key.Event.ID)
		require.NoError(t, d.Dispatch(t.Context(), ev))
	}
	require.NoError(t, d.Close(t.Context()))
	late := betStopEvent(t, 8)
	late.Handled = calls.on(8)
	require.ErrorIs(t, d.Dispatch(t.Context(), late), feed.ErrDispatcherClosed)

	got := calls.snapshot()
	require.Len(t, got, 7)
	for id, errs := range got {
		require.Len(t, errs, 1, "event %d", id)
	}
	assert.NoError(t, got[1][0])
	var le *feed.ListenerError
	require.ErrorAs(t, got[2][0], &le)
	assert.ErrorIs(t, got[2][0], errRefused)
	assert.ErrorIs(t, got[3][0], feed.ErrListenerPanic)
	assert.ErrorIs(t, got[5][0], feed.ErrMalformedMessage)
	assert.ErrorIs(t, got[6][0], feed.ErrBodyTooLarge)
	assert.NoError(t, got[7][0], "a cashout passed over")
	assert.NoError(t, got[4][0])
	assert.Equal(t, []int64{1, 4}, l.delivered())
}

// A Close whose context ends abandons what is queued: each abandoned event's Handled is
// called with an error matching ErrDispatcherClosed and the context's error; a Dispatch
// that gives up on a full queue leaves its event's Handled alone.
func TestSerialDispatcherCallsHandledForAbandonedEvents(t *testing.T) {
	l := newOrderListener(8)
	started := make(chan struct{})
	l.hook = func(ctx context.Context, id int64) error {
		if id == 1 {
			close(started)
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	}
	d := newDispatcher(t, l, feed.DispatcherOptions{QueueSize: 3})
	var calls handledCalls
	for id := int64(1); id <= 4; id++ {
		ev := betStopEvent(t, id)
		ev.Handled = calls.on(id)
		require.NoError(t, d.Dispatch(t.Context(), ev))
		if id == 1 {
			<-started
		}
	}
	ended, cancel := context.WithCancel(t.Context())
	cancel()
	full := betStopEvent(t, 5)
	full.Handled = calls.on(5)
	require.ErrorIs(t, d.Dispatch(ended, full), context.Canceled, "the queue is full")

	expired, cancelExpired := context.WithTimeout(t.Context(), 0)
	defer cancelExpired()
	require.ErrorIs(t, d.Close(expired), context.DeadlineExceeded)
	require.NoError(t, d.Close(t.Context()), "waits for the worker to finish abandoning")

	got := calls.snapshot()
	require.Len(t, got, 4)
	require.Len(t, got[1], 1)
	assert.ErrorIs(t, got[1][0], context.Canceled, "the call in progress saw its context cancelled")
	for id := int64(2); id <= 4; id++ {
		require.Len(t, got[id], 1, "event %d", id)
		assert.ErrorIs(t, got[id][0], feed.ErrDispatcherClosed, "event %d", id)
		assert.ErrorIs(t, got[id][0], context.DeadlineExceeded, "event %d", id)
	}
	assert.Equal(t, feed.DispatcherStats{Failed: 1, Abandoned: 3}, d.Stats())
}
