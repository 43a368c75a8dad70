package concurrent_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
)

// errorLog collects what Config.OnError receives.
type errorLog struct {
	mu   sync.Mutex
	errs []error
}

func (l *errorLog) add(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs = append(l.errs, err)
}

func (l *errorLog) all() []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]error(nil), l.errs...)
}

// TestPanicAndErrorAreReportedAndTheMatchGoesOn: a listener call that panics or fails is
// reported, counted, completed in the tracker, and the match's next messages still arrive.
func TestPanicAndErrorAreReportedAndTheMatchGoesOn(t *testing.T) {
	rec := newOrderRecorder(3)
	rec.gate = func(_ context.Context, m feed.Message) error {
		switch seq(m) {
		case 1:
			panic("listener bug")
		case 2:
			return errors.New("database down")
		}
		return nil
	}
	var log errorLog
	c, tracker := newListener(t, rec, concurrent.Config{Threads: 2, OnError: log.add})
	ctx := testContext(t)
	for n := range 5 {
		require.NoError(t, c.OnOddsChange(ctx, message(feed.MessageOddsChange, match(1), 1, 0, n).(*feed.OddsChange)))
	}
	require.NoError(t, tracker.Wait(ctx, concurrent.RecoveryContext{Producer: 1}))
	assert.Equal(t, []string{"odds_change#0", "odds_change#3", "odds_change#4"}, rec.got[match(1)])
	// A task is complete in the tracker a moment before its worker counts it: Close, which
	// returns once the workers are gone, makes the counters final.
	require.NoError(t, c.Close(ctx))

	errs := log.all()
	require.Len(t, errs, 2)
	var le *feed.ListenerError
	require.ErrorAs(t, errs[0], &le)
	assert.ErrorIs(t, errs[0], feed.ErrListenerPanic)
	assert.Equal(t, "listener bug", le.Panic)
	assert.Equal(t, "OnOddsChange", le.Method)
	assert.Equal(t, match(1), le.Event)
	assert.NotEmpty(t, le.Stack)
	require.ErrorAs(t, errs[1], &le)
	assert.EqualError(t, le.Err, "database down")

	st := c.Stats()
	assert.Equal(t, uint64(1), st.Panicked)
	assert.Equal(t, uint64(1), st.Failed)
	assert.Equal(t, uint64(5), st.Completed)
	assert.Equal(t, concurrent.TaskCounts{Allocated: 5, Started: 5, Completed: 5},
		tracker.Counts(concurrent.RecoveryContext{Producer: 1}))
}

// unparsableRecorder records the order of bet_stops and unparsable messages, and on which
// goroutine (by a flag the test sets) the unparsable ones arrive.
type unparsableRecorder struct {
	orderRecorder
	mu         sync.Mutex
	unparsable []*feed.UnparsableMessage
	seen       chan *feed.UnparsableMessage
}

func (r *unparsableRecorder) OnUnparsableMessage(_ context.Context, m *feed.UnparsableMessage) error {
	r.mu.Lock()
	r.unparsable = append(r.unparsable, m)
	r.mu.Unlock()
	r.orderRecorder.mu.Lock()
	r.got[m.Event] = append(r.got[m.Event], "unparsable")
	r.orderRecorder.mu.Unlock()
	if r.seen != nil {
		r.seen <- m
	}
	return nil
}

// TestUnroutableMessageInOrderOnAWorker: by default a message that cannot be routed
// reaches OnUnparsableMessage on a worker, in its match's order.
func TestUnroutableMessageInOrderOnAWorker(t *testing.T) {
	rec := &unparsableRecorder{orderRecorder: *newOrderRecorder(2), seen: make(chan *feed.UnparsableMessage, 1)}
	release := make(chan struct{})
	rec.gate = func(_ context.Context, m feed.Message) error {
		if seq(m) == 0 {
			<-release
		}
		return nil
	}
	var log errorLog
	c, tracker := newListener(t, rec, concurrent.Config{Threads: 2, OnError: log.add})
	ctx := testContext(t)
	require.NoError(t, c.Dispatch(ctx, rawEvent(t, message(feed.MessageBetStop, match(1), 1, 0, 0))))
	tooLarge := rawEvent(t, message(feed.MessageBetStop, match(1), 1, 0, 1))
	tooLarge.Err = feed.ErrBodyTooLarge
	require.NoError(t, c.Dispatch(ctx, tooLarge))
	require.NoError(t, c.Dispatch(ctx, rawEvent(t, message(feed.MessageBetStop, match(1), 1, 0, 2))))
	// The first bet_stop holds the match: the unroutable message waits behind it.
	select {
	case <-rec.seen:
		t.Fatal("the unroutable message overtook a message of its match")
	default:
	}
	close(release)
	require.NoError(t, tracker.Wait(ctx, concurrent.RecoveryContext{Producer: 1}))
	assert.Equal(t, []string{"bet_stop#0", "unparsable", "bet_stop#2"}, rec.got[match(1)])
	require.Len(t, rec.unparsable, 1)
	assert.Equal(t, tooLarge.Body, rec.unparsable[0].Body, "the raw bytes reach the listener")
	assert.ErrorIs(t, rec.unparsable[0].Err, feed.ErrBodyTooLarge)
	assert.Equal(t, uint64(1), c.Stats().Unparsable)
	require.Len(t, log.all(), 1)
	assert.ErrorIs(t, log.all()[0], feed.ErrBodyTooLarge)
}

// TestUnroutableMessageSynchronously: with HandleErrorsAsynchronously false, Dispatch
// itself calls OnUnparsableMessage before it returns, even while every worker is busy.
func TestUnroutableMessageSynchronously(t *testing.T) {
	rec := &unparsableRecorder{orderRecorder: *newOrderRecorder(1)}
	release := make(chan struct{})
	rec.gate = func(context.Context, feed.Message) error { <-release; return nil }
	c, tracker := newListener(t, rec, concurrent.Config{Threads: 1, HandleErrorsAsynchronously: new(false)})
	ctx := testContext(t)
	require.NoError(t, c.Dispatch(ctx, rawEvent(t, message(feed.MessageBetStop, match(1), 1, 0, 0))))
	bad := feed.Event{RawKey: "not.a.routing.key", Body: []byte("<bet_stop/>"), Producer: 1,
		Err: &feed.RoutingKeyError{Key: "not.a.routing.key", Reason: "test"}}
	require.NoError(t, c.Dispatch(ctx, bad))
	rec.mu.Lock()
	got := len(rec.unparsable)
	rec.mu.Unlock()
	assert.Equal(t, 1, got, "delivered before Dispatch returned, though the only worker is blocked")
	close(release)
	require.NoError(t, tracker.Wait(ctx, concurrent.RecoveryContext{Producer: 1}))
	assert.Equal(t, concurrent.TaskCounts{Allocated: 2, Started: 2, Completed: 2},
		tracker.Counts(concurrent.RecoveryContext{Producer: 1}))
	require.NoError(t, c.Close(ctx)) // the counters are final once the workers are gone
	st := c.Stats()
	assert.Equal(t, uint64(2), st.Dispatched)
	assert.Equal(t, uint64(2), st.Completed, "the inline delivery counts as completed")
}

// TestMalformedBodyKeptWhole: a body that does not decode reaches OnUnparsableMessage with
// its bytes, and the match's next message still arrives.
func TestMalformedBodyKeptWhole(t *testing.T) {
	rec := &unparsableRecorder{orderRecorder: *newOrderRecorder(1)}
	c, tracker := newListener(t, rec, concurrent.Config{Threads: 2})
	ctx := testContext(t)
	bad := rawEvent(t, message(feed.MessageOddsChange, match(1), 1, 0, 0))
	bad.Body = []byte(`<odds_change product="1" event_id="sr:match:2" timestamp="oops"`)
	require.NoError(t, c.Dispatch(ctx, bad))
	require.NoError(t, c.Dispatch(ctx, rawEvent(t, message(feed.MessageOddsChange, match(1), 1, 0, 1))))
	waitFor(t, rec.all, "the message after the malformed one")
	require.NoError(t, tracker.Wait(ctx, concurrent.RecoveryContext{Producer: 1}))
	require.Len(t, rec.unparsable, 1)
	assert.Equal(t, bad.Body, rec.unparsable[0].Body)
	assert.ErrorIs(t, rec.unparsable[0].Err, feed.ErrMalformedMessage)
	assert.Equal(t, []string{"unparsable", "odds_change#1"}, rec.got[match(1)])
}

// TestUnparsableMessageMethod: a caller holding an unparsable message passes it on
// through the listener method; it keeps its bytes and reason.
func TestUnparsableMessageMethod(t *testing.T) {
	rec := &unparsableRecorder{orderRecorder: *newOrderRecorder(1), seen: make(chan *feed.UnparsableMessage, 1)}
	c, _ := newListener(t, rec, concurrent.Config{Threads: 1})
	ctx := testContext(t)
	why := errors.New("bad bytes")
	require.NoError(t, c.OnUnparsableMessage(ctx, &feed.UnparsableMessage{RoutingKey: "x", Body: []byte{1, 2}, Event: match(3), Err: why}))
	var got *feed.UnparsableMessage
	select {
	case got = <-rec.seen:
	case <-ctx.Done():
		t.Fatal("no unparsable message")
	}
	assert.Equal(t, []byte{1, 2}, got.Body)
	assert.Equal(t, "x", got.RoutingKey)
	assert.Equal(t, match(3), got.Event)
	assert.ErrorIs(t, got.Err, why)
}

// TestReplayedMessagesTrackedUnderTheirRequest: a message carrying a request id is
// tracked under {producer, request id}, apart from the live ones.
func TestReplayedMessagesTrackedUnderTheirRequest(t *testing.T) {
	rec := newOrderRecorder(3)
	c, tracker := newListener(t, rec, concurrent.Config{Threads: 2})
	ctx := testContext(t)
	require.NoError(t, c.Dispatch(ctx, rawEvent(t, message(feed.MessageBetStop, match(1), 3, 42, 0))))
	require.NoError(t, c.Dispatch(ctx, rawEvent(t, message(feed.MessageBetStop, match(2), 3, 42, 1))))
	require.NoError(t, c.Dispatch(ctx, rawEvent(t, message(feed.MessageBetStop, match(2), 3, 0, 2))))
	waitFor(t, rec.all, "every message")
	replay := concurrent.RecoveryContext{Producer: 3, RequestID: 42}
	require.NoError(t, tracker.Wait(ctx, replay))
	require.NoError(t, tracker.Wait(ctx, concurrent.RecoveryContext{Producer: 3}))
	assert.Equal(t, uint64(2), tracker.Counts(replay).Completed)
	assert.Equal(t, uint64(1), tracker.Counts(concurrent.RecoveryContext{Producer: 3}).Completed)
}
