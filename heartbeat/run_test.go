package heartbeat

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
)

func TestUntilNextTick(t *testing.T) {
	m, _, _ := newTest(t, Config[string]{Timeout: time.Minute})
	tests := []struct{ now, want time.Duration }{
		{0, time.Second},
		{time.Nanosecond, time.Second - time.Nanosecond},
		{300 * time.Millisecond, 700 * time.Millisecond},
		{5 * time.Second, time.Second},
		{-300 * time.Millisecond, 300 * time.Millisecond},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, m.untilNextTick(at(tt.now)), "now %v", tt.now)
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
