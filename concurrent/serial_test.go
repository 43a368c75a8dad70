package concurrent_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
)

func newSerial(t testing.TB, l feed.OddsFeedListener, tracker *concurrent.TaskLifecycleTracker, cfg concurrent.SerialConfig) *concurrent.SerialDispatcher {
	t.Helper()
	s, err := concurrent.NewSerialDispatcher(l, tracker, cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		_ = s.Close(ctx)
	})
	return s
}

// until yields until cond holds, failing the test after testTimeout: for a goroutine
// about to block where no channel can say so (a Dispatch waiting for room).
func until(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		runtime.Gosched()
	}
}

func TestSerialConfigRefusedWithTheFieldNamed(t *testing.T) {
	tracker := concurrent.NewTaskLifecycleTracker()
	l := feed.BaseOddsFeedListener{}
	_, err := concurrent.NewSerialDispatcher(l, tracker, concurrent.SerialConfig{QueueSize: -3})
	assert.ErrorContains(t, err, "SerialConfig.QueueSize -3 must not be negative (0 means 1024)")
	_, err = concurrent.NewSerialDispatcher(nil, tracker, concurrent.SerialConfig{})
	assert.ErrorContains(t, err, "listener is nil")
	_, err = concurrent.NewSerialDispatcher(l, nil, concurrent.SerialConfig{})
	assert.ErrorContains(t, err, "tracker is nil")
}

// A SerialDispatcher calls the listener in dispatch order across matches, one call at a
// time, and tracks every message as a task of its context: started and completed, the
// unparsable one included.
func TestSerialDispatcherDeliversInArrivalOrderAndTracksEveryTask(t *testing.T) {
	tracker := concurrent.NewTaskLifecycleTracker()
	rec := feedtest.NewRecorder()
	errs := &errorLog{}
	s := newSerial(t, rec, tracker, concurrent.SerialConfig{QueueSize: 4, OnError: errs.add})
	ctx := testContext(t)
	const n = 60
	var want []int
	for i := range n {
		var request int64
		if i%3 == 0 {
			request = 5
		}
		m := message(eventTypes[i%len(eventTypes)], match(i%7), 1, request, i)
		require.NoError(t, s.Dispatch(ctx, rawEvent(t, m)))
		want = append(want, i)
	}
	bad := rawEvent(t, message(feed.MessageOddsChange, match(0), 1, 0, n))
	bad.Body = []byte("<odds_change")
	require.NoError(t, s.Dispatch(ctx, bad))
	require.NoError(t, s.Close(ctx))

	var got []int
	for _, m := range rec.Messages() {
		got = append(got, seq(m))
	}
	assert.Equal(t, want, got, "every message, in dispatch order")
	assert.Len(t, rec.Unparsable(), 1)
	live, replay := tracker.Counts(concurrent.RecoveryContext{Producer: 1}), tracker.Counts(concurrent.RecoveryContext{Producer: 1, RequestID: 5})
	assert.Equal(t, concurrent.TaskCounts{Allocated: 41, Started: 41, Completed: 41}, live, "40 live messages and the unparsable one")
	assert.Equal(t, concurrent.TaskCounts{Allocated: 20, Started: 20, Completed: 20}, replay)
	st := s.Stats()
	assert.Equal(t, uint64(n), st.Delivered)
	assert.Equal(t, uint64(1), st.Unparsable)
	assert.Zero(t, st.Queued+int(st.Failed+st.Panicked+st.Abandoned))
	require.Len(t, errs.all(), 1, "the unparsable message is reported")
	assert.ErrorIs(t, errs.all()[0], feed.ErrMalformedMessage)
}

// In serial delivery too, a producer's up is held back until the listener has processed
// every message of the recovery behind it.
func TestSerialDispatcherHoldsTheUpBackUntilTheRecoveryIsProcessed(t *testing.T) {
	tracker := concurrent.NewTaskLifecycleTracker()
	gate := make(chan struct{})
	rec := feedtest.NewRecorder()
	rec.Hook = func(m feed.Message) error {
		if m.MessageHeader().RequestID != 0 {
			<-gate
		}
		return nil
	}
	s := newSerial(t, rec, tracker, concurrent.SerialConfig{})
	customer := feedtest.NewGlobalRecorder()
	global, err := concurrent.NewStatusGate(customer, tracker, concurrent.GateConfig{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = global.Close(context.Background()) })
	ctx := testContext(t)

	global.OnRecoveryInitiated(ctx, feed.RecoveryInitiated{Producer: 1, RequestID: 42})
	require.Equal(t, "recovery #42 of producer 1 initiated", customer.RequireNext(t).String())
	for i := range 3 {
		require.NoError(t, s.Dispatch(ctx, rawEvent(t, message(feed.MessageOddsChange, match(i), 1, 42, i))))
	}
	global.OnProducerStatusChange(ctx, feed.ProducerStatus{Producer: 1, Reason: feed.FirstRecoveryCompleted})
	assert.Equal(t, 1, global.Stats().Held, "the up waits for the replay")
	customer.RequireNone(t) // the customer hears nothing while the replay is pending
	close(gate)
	assert.Equal(t, "producer 1 up (FirstRecoveryCompleted)", customer.RequireNext(t).String())
	assert.Equal(t, 3, rec.Len())
	assert.Equal(t, concurrent.TaskCounts{Allocated: 3, Started: 3, Completed: 3},
		tracker.Counts(concurrent.RecoveryContext{Producer: 1, RequestID: 42}))
}

// The processed point follows a SerialDispatcher's Stream: an alive marked after two
// messages is passed once both calls have returned.
func TestSerialDispatcherProcessedPoint(t *testing.T) {
	tracker := concurrent.NewTaskLifecycleTracker()
	moved := make(chan time.Time, 4)
	tracker.OnProcessed(func(_ int, through time.Time) { moved <- through })
	gate := make(chan struct{})
	rec := feedtest.NewRecorder()
	rec.Hook = func(feed.Message) error { <-gate; return nil }
	s := newSerial(t, rec, tracker, concurrent.SerialConfig{})
	ctx := testContext(t)
	for i := range 2 {
		require.NoError(t, s.Dispatch(ctx, rawEvent(t, message(feed.MessageBetStop, match(i), 1, 0, i))))
	}
	at := time.UnixMilli(1_700_000_100_000).UTC()
	s.Stream().MarkAlives(nil).HandleSystem(aliveEvent(t, 1, at, true))
	_, ok := tracker.Processed(1)
	assert.False(t, ok, "two messages before the alive are pending")
	close(gate)
	select {
	case through := <-moved:
		assert.Equal(t, at, through)
	case <-time.After(testTimeout):
		t.Fatal("the processed point never moved")
	}
	through, ok := tracker.Processed(1)
	assert.True(t, ok)
	assert.Equal(t, at, through)
}

// A Close that gives up while the reading side is blocked in Dispatch abandons every
// ticket; the Dispatch that then fails must not take another ticket for its own, nor
// finish one twice.
func TestSerialDispatcherCloseWhileDispatchIsBlocked(t *testing.T) {
	tracker := concurrent.NewTaskLifecycleTracker()
	gate := make(chan struct{})
	entered := make(chan struct{}, 16)
	rec := feedtest.NewRecorder()
	rec.Hook = func(feed.Message) error {
		entered <- struct{}{}
		<-gate
		return nil
	}
	ts, err := concurrent.NewSerialDispatcher(rec, tracker, concurrent.SerialConfig{QueueSize: 1})
	require.NoError(t, err)
	rc := concurrent.RecoveryContext{Producer: 1, RequestID: 9}
	ev := func(i int) feed.Event { return rawEvent(t, message(feed.MessageBetStop, match(i), 1, 9, i)) }
	ctx := testContext(t)
	require.NoError(t, ts.Dispatch(ctx, ev(1))) // delivered: the listener holds it
	waitFor(t, entered, "the first call")
	require.NoError(t, ts.Dispatch(ctx, ev(2))) // queued
	blocked := make(chan error, 1)
	go func() { blocked <- ts.Dispatch(ctx, ev(3)) }() // waits for room
	until(t, "the third ticket", func() bool { return tracker.Counts(rc).Allocated == 3 })

	gone, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, ts.Close(gone), context.Canceled)
	close(gate)
	assert.Error(t, <-blocked, "the blocked Dispatch fails once the dispatcher is closed")
	until(t, "every ticket finished", func() bool { return tracker.Pending(rc) == 0 })
	c := tracker.Counts(rc)
	assert.Equal(t, uint64(3), c.Allocated)
	assert.Equal(t, c.Allocated, c.Completed+c.Abandoned, "every ticket finished once")
	// A Dispatch after Close is refused, and its ticket abandoned: none is left pending.
	assert.ErrorIs(t, ts.Dispatch(ctx, ev(4)), feed.ErrDispatcherClosed)
	c = tracker.Counts(rc)
	assert.Equal(t, uint64(4), c.Allocated)
	assert.Zero(t, c.Pending())
}
