package heartbeat

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/clock/clocktest"
)

func TestNextTick(t *testing.T) {
	m, _, _ := newTest(t, Config[string]{Timeout: time.Minute})
	tests := []struct{ now, want time.Duration }{
		{0, time.Second},
		{time.Nanosecond, time.Second - time.Nanosecond},
		{300 * time.Millisecond, 700 * time.Millisecond},
		{5 * time.Second, time.Second},
		{-300 * time.Millisecond, 300 * time.Millisecond},
	}
	for _, tt := range tests {
		assert.Equal(t, at(tt.now+tt.want), m.timeAt(m.nextTick(at(tt.now))), "now %v", tt.now)
	}
}

func TestRunAdvancesAtEveryTickBoundary(t *testing.T) {
	fake := clocktest.NewFake(t0)
	lost := make(chan string, 10)
	m, err := New(Config[string]{Timeout: 3 * time.Second, Tick: time.Second, Clock: fake,
		OnLost: func(key string, _ time.Time) { lost <- key }})
	require.NoError(t, err)
	m.Beat("a")
	fake.Advance(300 * time.Millisecond)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()

	// Run's timer is set to the next boundary, 1s, not to 300ms + Tick.
	fake.BlockUntil(1)
	fake.Advance(700*time.Millisecond - time.Nanosecond)
	assert.Equal(t, 1, fake.Pending(), "not fired before the boundary")
	fake.Advance(time.Nanosecond) // 1s: fires

	// Each BlockUntil returns once Run has advanced and set its timer again.
	for range 2 {
		fake.BlockUntil(1)
		assert.Empty(t, lost)
		fake.Advance(time.Second)
	}
	select { // 3s: the deadline, on a boundary
	case k := <-lost:
		assert.Equal(t, "a", k)
	case err := <-done:
		t.Fatalf("Run returned early: %v", err)
	case <-time.After(time.Minute): // a guard against a hang, not a wait
		t.Fatal("no OnLost from Run")
	}

	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
	assert.Zero(t, fake.Pending(), "Run stopped its timer")
}

// The clock may pass tick boundaries while Run advances (a slow OnLost, a busy machine,
// a fake clock moved meanwhile): Run advances again at once, and never sets its timer for
// a boundary beyond one the clock has passed. (It used to set its timer one boundary
// after the time it advanced to, counted from the clock's time when it set it: the keys
// of the boundaries passed in between waited until the clock passed one more.)
func TestRunCatchesUpWithBoundariesPassedWhileItAdvanced(t *testing.T) {
	fake := clocktest.NewFake(t0)
	entered := make(chan string, 2)
	release := make(chan struct{})
	m, err := New(Config[string]{Timeout: 3 * time.Second, Tick: time.Second, Clock: fake,
		OnLost: func(key string, _ time.Time) {
			entered <- key
			if key == "a" {
				<-release
			}
		}})
	require.NoError(t, err)
	m.Beat("a") // due at 3s
	fake.Advance(2 * time.Second)
	m.Beat("b") // due at 5s

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a guard against a hang
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	require.NoError(t, fake.BlockUntilContext(ctx, 1)) // Run waits for 3s
	fake.Advance(time.Second)
	select { // Run's goroutine is in OnLost("a"), having advanced to 3s
	case k := <-entered:
		require.Equal(t, "a", k)
	case <-ctx.Done():
		t.Fatal("Run did not call OnLost")
	}
	fake.Advance(3 * time.Second) // 6s: the boundaries 4s, 5s and 6s pass meanwhile
	close(release)

	// Run sets its timer only once it has caught up, so once one is pending "b" is found.
	require.NoError(t, fake.BlockUntilContext(ctx, 1))
	select {
	case k := <-entered:
		assert.Equal(t, "b", k)
	default:
		t.Fatal("Run waits for its next boundary with b's, 5s, passed and not advanced")
	}
	next, ok := fake.Next()
	require.True(t, ok)
	assert.Equal(t, at(7*time.Second), next, "Run waits for the boundary after the clock's time")

	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
}

// lateClock is a fake clock that moves by move the first time a timer is made, just
// before making it: as a fake clock advanced by another goroutine while Run sets its
// timer, after Run read the time, does.
type lateClock struct {
	*clocktest.Fake
	move time.Duration
}

func (c *lateClock) NewTimer(d time.Duration) clock.Timer {
	c.Advance(c.move)
	c.move = 0
	return c.Fake.NewTimer(d)
}

// A clock that moves while Run sets its timer, short of the boundary, does not leave the
// timer late by that move: Run sets it again for what is left until the boundary. In a
// synctest bubble, synctest.Wait returns once Run waits on its timer, however it got there.
func TestRunSetsItsTimerForTheBoundaryWhenTheClockMovesMeanwhile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := clocktest.NewFake(t0)
		lost := make(chan string, 1)
		m, err := New(Config[string]{Timeout: time.Second, Tick: time.Second, Clock: &lateClock{Fake: fake, move: 400 * time.Millisecond},
			OnLost: func(key string, _ time.Time) { lost <- key }})
		require.NoError(t, err)
		m.Beat("a") // due at 1s

		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- m.Run(ctx) }()
		synctest.Wait()
		next, ok := fake.Next()
		require.True(t, ok, "Run waits on a timer")
		assert.Equal(t, at(time.Second), next, "the timer is for the boundary, not 400ms past it")

		fake.Advance(600 * time.Millisecond) // 1s
		synctest.Wait()
		select {
		case k := <-lost:
			assert.Equal(t, "a", k)
		default:
			t.Error("the clock is at a's boundary and Run has not found it lost")
		}

		cancel()
		assert.ErrorIs(t, <-done, context.Canceled)
	})
}

func TestRunStopsOnCancel(t *testing.T) {
	m, fake, _ := newTest(t, Config[string]{Timeout: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	fake.BlockUntil(1)
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)

	ctx, cancel = context.WithTimeout(context.Background(), 0) // already over
	defer cancel()
	assert.ErrorIs(t, m.Run(ctx), context.DeadlineExceeded)
}
