package concurrent_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
)

// blockAll makes every call of rec wait until release is closed or the call's context
// ends; started receives one value per call begun.
func blockAll(rec *orderRecorder) (started chan struct{}, release chan struct{}) {
	started, release = make(chan struct{}, 1024), make(chan struct{})
	rec.gate = func(ctx context.Context, _ feed.Message) error {
		started <- struct{}{}
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return started, release
}

// TestBackPressureBlocksAndDropsNothing: at QueueSize queued tasks, Dispatch waits (or
// gives up with its context, leaving the task out), and resumes as workers take tasks.
func TestBackPressureBlocksAndDropsNothing(t *testing.T) {
	const queueSize = 5
	rec := newOrderRecorder(1 + queueSize + 1)
	started, release := blockAll(rec)
	c, tracker := newListener(t, rec, concurrent.Config{Threads: 1, QueueSize: queueSize})
	ctx := testContext(t)
	send := func(ctx context.Context, n int) error {
		return c.OnBetStop(ctx, message(feed.MessageBetStop, match(1), 1, 0, n).(*feed.BetStop))
	}
	require.NoError(t, send(ctx, 0))
	waitFor(t, started, "the first call") // the worker holds message 0; the queue is empty
	for n := 1; n <= queueSize; n++ {
		require.NoError(t, send(ctx, n))
	}
	assert.Equal(t, queueSize, c.Stats().Queued)

	// Full: a dispatch whose context has ended gives up, and its message is not queued.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, send(cancelled, 99), context.Canceled)
	assert.Equal(t, uint64(1), c.Stats().Blocked)
	assert.Equal(t, uint64(1), tracker.Counts(concurrent.RecoveryContext{Producer: 1}).Abandoned)

	// A dispatch with time to wait goes through once the worker takes the next task.
	done := make(chan error, 1)
	go func() { done <- send(ctx, queueSize+1) }()
	close(release)
	require.NoError(t, <-done)
	waitFor(t, rec.all, "every message")
	want := []string{}
	for n := range queueSize + 2 {
		want = append(want, "bet_stop#"+strconv.Itoa(n))
	}
	assert.Equal(t, want, rec.got[match(1)])
	require.NoError(t, tracker.Wait(ctx, concurrent.RecoveryContext{Producer: 1}))
	// A task is complete in the tracker a moment before its worker counts it: Close, which
	// returns once the workers are gone, makes the counters final.
	require.NoError(t, c.Close(ctx))
	assert.Equal(t, uint64(queueSize+2), c.Stats().Completed)
}

// TestCloseDeliversWhatIsQueued: Close waits for the queued tasks; a dispatch after Close
// is refused.
func TestCloseDeliversWhatIsQueued(t *testing.T) {
	const matches, perMatch = 50, 4
	rec := newOrderRecorder(matches * perMatch)
	started, release := blockAll(rec)
	c, tracker := newListener(t, rec, concurrent.Config{Threads: 3})
	ctx := testContext(t)
	for n := range perMatch {
		for id := range matches {
			require.NoError(t, c.OnBetStop(ctx, message(feed.MessageBetStop, match(id), 1, 0, n).(*feed.BetStop)))
		}
	}
	waitFor(t, started, "a call")
	closed := make(chan error, 1)
	go func() { closed <- c.Close(ctx) }()
	close(release)
	require.NoError(t, <-closed)
	assert.Equal(t, matches*perMatch, rec.count(), "Close returned before every queued message was delivered")
	assert.ErrorIs(t, c.Dispatch(ctx, rawEvent(t, message(feed.MessageBetStop, match(1), 1, 0, 9))), feed.ErrDispatcherClosed)
	assert.ErrorIs(t, c.OnOddsChange(ctx, message(feed.MessageOddsChange, match(1), 1, 0, 9).(*feed.OddsChange)), feed.ErrDispatcherClosed)
	assert.Zero(t, tracker.Pending(concurrent.RecoveryContext{Producer: 1}))
	assert.NoError(t, c.Close(ctx), "a second Close")
}

// TestCloseOutOfTimeAbandonsTheQueue: when Close's context ends first, the listener's
// context is cancelled, what is queued is abandoned (and recorded so in the tracker), and
// Close returns the context's error; a later Close waits for the workers to exit.
func TestCloseOutOfTimeAbandonsTheQueue(t *testing.T) {
	const total = 40
	rec := newOrderRecorder(total)
	started, _ := blockAll(rec) // never released: only a cancelled context ends a call
	var log errorLog
	c, tracker := newListener(t, rec, concurrent.Config{Threads: 2, OnError: log.add})
	ctx := testContext(t)
	for n := range total {
		require.NoError(t, c.OnBetStop(ctx, message(feed.MessageBetStop, match(n%2), 1, 0, n).(*feed.BetStop)))
	}
	waitFor(t, started, "a call")
	expired, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, c.Close(expired), context.Canceled)
	require.NoError(t, c.Close(ctx), "the workers exit once their calls see the cancelled context")

	live := concurrent.RecoveryContext{Producer: 1}
	counts := tracker.Counts(live)
	assert.Zero(t, counts.Pending())
	assert.Equal(t, uint64(total), counts.Allocated)
	assert.Equal(t, counts.Started, counts.Completed)
	assert.NotZero(t, counts.Abandoned)
	st := c.Stats()
	assert.Equal(t, counts.Abandoned, st.Abandoned)
	assert.Equal(t, uint64(total), st.Completed+st.Abandoned)
	for _, err := range log.all() {
		assert.True(t, errors.Is(err, context.Canceled), "the blocked calls end with their context: %v", err)
	}
}
