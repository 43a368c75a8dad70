package heartbeat_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/heartbeat"
)

// flushBound guards against a hang: a Flush that waits for a callback that never
// returns. Nothing relies on it to pass.
const flushBound = time.Minute

var flushEpoch = time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)

// lostLog records OnLost calls, from whichever goroutine makes them.
type lostLog struct {
	mu   sync.Mutex
	keys []string
}

func (l *lostLog) onLost(key string, _ time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.keys = append(l.keys, key)
}

func (l *lostLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := l.keys
	l.keys = nil
	slices.Sort(k)
	return k
}

// Under Run, a test moves the fake clock and calls Flush: the keys due by then are found
// lost and their OnLost has returned, whichever goroutine found them; none before.
func TestFlushUnderRun(t *testing.T) {
	fake := clocktest.NewFake(flushEpoch)
	var log lostLog
	m, err := heartbeat.New(heartbeat.Config[string]{Timeout: 30 * time.Second, Clock: fake, OnLost: log.onLost})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), flushBound)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()

	for i := range 10 {
		m.Beat(fmt.Sprintf("k%d", i))
	}
	fake.Advance(10 * time.Second)
	for i := range 5 { // k0..k4 beat again: due at 40s
		m.Beat(fmt.Sprintf("k%d", i))
	}
	fake.Advance(20*time.Second - time.Nanosecond)
	require.NoError(t, m.Flush(ctx))
	assert.Empty(t, log.take(), "nothing is due before 30s")
	assert.Zero(t, m.Stats().Lost)

	fake.Advance(time.Nanosecond) // 30s: k5..k9 are due
	require.NoError(t, m.Flush(ctx))
	assert.Equal(t, []string{"k5", "k6", "k7", "k8", "k9"}, log.take())
	assert.Equal(t, 5, m.Stats().Lost)

	fake.Advance(10 * time.Second) // 40s: k0..k4
	require.NoError(t, m.Flush(ctx))
	assert.Equal(t, []string{"k0", "k1", "k2", "k3", "k4"}, log.take())
	assert.Equal(t, heartbeat.Stats{Keys: 10, Lost: 10, Beats: 15, Expired: 10}, withoutRevisits(m.Stats()))

	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
}

// withoutRevisits drops the counter of the wheel's internal visits, which depends on the
// wheel's layout, not on the rule tested.
func withoutRevisits(s heartbeat.Stats) heartbeat.Stats {
	s.Revisits = 0
	return s
}

// Flush needs no Run: it finds the keys due by the clock's time itself.
func TestFlushWithoutRun(t *testing.T) {
	fake := clocktest.NewFake(flushEpoch)
	var log lostLog
	m, err := heartbeat.New(heartbeat.Config[string]{Timeout: time.Minute, Clock: fake, OnLost: log.onLost})
	require.NoError(t, err)
	m.Beat("a")
	fake.Advance(time.Minute)
	require.NoError(t, m.Flush(t.Context()))
	assert.Equal(t, []string{"a"}, log.take())
}

// A callback being delivered on another goroutine (Run's, here) holds Flush until it has
// returned; a Flush whose context ends first returns the context's error. In a synctest
// bubble, synctest.Wait returns once the Flush has either returned (the bug) or waits:
// the check that it has not returned needs no luck.
func TestFlushWaitsForACallbackInProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := clocktest.NewFake(flushEpoch)
		entered := make(chan string, 1)
		release := make(chan struct{})
		releaseOnce := sync.OnceFunc(func() { close(release) })
		defer releaseOnce() // a failed check still lets OnLost return, and the bubble end
		var returned atomic.Bool
		// A Tick below the Timeout: the clock is moved past many boundaries at once, and Run
		// may wake at the first and read the time there, before the clock is at its target.
		m, err := heartbeat.New(heartbeat.Config[string]{Timeout: time.Minute, Tick: time.Second, Clock: fake,
			OnLost: func(key string, _ time.Time) {
				entered <- key
				<-release
				returned.Store(true)
			}})
		require.NoError(t, err)
		// In the bubble, the guard's time passes only once every goroutine is stuck.
		ctx, cancel := context.WithTimeout(t.Context(), flushBound)
		defer cancel()
		runDone := make(chan error, 1)
		go func() { runDone <- m.Run(ctx) }()

		m.Beat("a")
		require.NoError(t, fake.BlockUntilContext(ctx, 1)) // Run waits for its first boundary
		fake.Advance(time.Minute)
		select { // Run's goroutine found "a" lost and is in its OnLost
		case k := <-entered:
			require.Equal(t, "a", k)
		case <-ctx.Done():
			t.Fatal("Run did not call OnLost")
		}

		ended, stop := context.WithCancel(ctx)
		stop()
		assert.ErrorIs(t, m.Flush(ended), context.Canceled, "a callback is still being delivered")

		flushed := make(chan error, 1)
		go func() { flushed <- m.Flush(ctx) }()
		synctest.Wait()
		select {
		case err := <-flushed:
			t.Fatalf("Flush returned %v while OnLost had not returned", err)
		default:
		}
		releaseOnce()
		require.NoError(t, <-flushed)
		assert.True(t, returned.Load(), "Flush returned before OnLost did")
		assert.Len(t, entered, 0, "OnLost was called once")

		cancel()
		assert.ErrorIs(t, <-runDone, context.Canceled)
	})
}
