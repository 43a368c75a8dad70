package clocktest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func TestFakeTimerFiresOnlyWhenDue(t *testing.T) {
	f := NewFake(t0)
	tm := f.NewTimer(10 * time.Second)

	f.Advance(9 * time.Second)
	select {
	case <-tm.C():
		t.Fatal("timer fired early")
	default:
	}

	f.Advance(time.Second)
	select {
	case got := <-tm.C():
		assert.Equal(t, t0.Add(10*time.Second), got)
	default:
		t.Fatal("timer did not fire at its deadline")
	}
	assert.Equal(t, 0, f.Pending())
}

func TestFakeTimerStopAndReset(t *testing.T) {
	f := NewFake(t0)
	tm := f.NewTimer(time.Second)
	assert.True(t, tm.Stop())
	assert.False(t, tm.Stop())
	f.Advance(time.Hour)
	assert.Empty(t, tm.C())

	assert.False(t, tm.Reset(time.Minute))
	f.Advance(time.Minute)
	assert.Len(t, tm.C(), 1)
}

func TestFakeTickerFiresEveryPeriodAndDropsUnreadTicks(t *testing.T) {
	f := NewFake(t0)
	tk := f.NewTicker(time.Second)
	defer tk.Stop()

	f.Advance(time.Second)
	assert.Equal(t, t0.Add(time.Second), <-tk.C())

	// Three periods pass with nobody reading: like time.Ticker, one tick is kept.
	f.Advance(3 * time.Second)
	assert.Equal(t, t0.Add(2*time.Second), <-tk.C())
	assert.Empty(t, tk.C())

	tk.Reset(10 * time.Second)
	f.Advance(9 * time.Second)
	assert.Empty(t, tk.C())
	f.Advance(time.Second)
	assert.Len(t, tk.C(), 1)
}

func TestFakeFiresInDeadlineOrderAndSetsNowToEachDeadline(t *testing.T) {
	f := NewFake(t0)
	var mu sync.Mutex
	var order []time.Duration
	var wg sync.WaitGroup
	for _, d := range []time.Duration{3 * time.Second, time.Second, 2 * time.Second} {
		wg.Add(1)
		f.AfterFunc(d, func() {
			defer wg.Done()
			mu.Lock()
			order = append(order, d)
			mu.Unlock()
		})
	}
	late := f.NewTimer(5 * time.Second)
	f.Advance(4 * time.Second)
	wg.Wait()
	assert.ElementsMatch(t, []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}, order)
	assert.Equal(t, t0.Add(4*time.Second), f.Now())
	assert.Empty(t, late.C())
}

func TestFakeBlockUntilWaitsForAWaiter(t *testing.T) {
	f := NewFake(t0)
	done := make(chan time.Time)
	go func() {
		tm := f.NewTimer(time.Minute)
		done <- <-tm.C()
	}()
	f.BlockUntil(1)
	f.Advance(time.Minute)
	require.Equal(t, t0.Add(time.Minute), <-done)
}

func TestFakeSetNeverMovesBackwards(t *testing.T) {
	f := NewFake(t0)
	f.Set(t0.Add(-time.Hour))
	assert.Equal(t, t0, f.Now())
	assert.Equal(t, time.Duration(0), f.Since(t0))
}

func TestFakeBlockUntilContextEndsWithItsContext(t *testing.T) {
	f := NewFake(t0)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- f.BlockUntilContext(ctx, 1) }()
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)

	go func() { done <- f.BlockUntilContext(t.Context(), 1) }()
	timer := f.NewTimer(time.Second)
	require.NoError(t, <-done, "a timer is pending")
	timer.Stop()
}

// Next gives the earliest deadline of what waits, and Set to it fires that and nothing
// set later, even a timer set while it fires.
func TestFakeNextIsTheEarliestDeadline(t *testing.T) {
	clk := NewFake(t0)
	_, ok := clk.Next()
	assert.False(t, ok, "nothing waits")
	late := clk.NewTimer(3 * time.Second)
	early := clk.NewTimer(time.Second)
	next, ok := clk.Next()
	require.True(t, ok)
	assert.Equal(t, t0.Add(time.Second), next)

	var chained clock.Timer
	fired := make(chan struct{})
	clk.AfterFunc(time.Second, func() { chained = clk.NewTimer(500 * time.Millisecond); close(fired) })
	clk.Set(next)
	<-fired
	<-early.C()
	select {
	case <-chained.C():
		t.Fatal("a timer set as the clock reached next fired with it")
	case <-late.C():
		t.Fatal("the later timer fired")
	default:
	}
	next, _ = clk.Next()
	assert.Equal(t, t0.Add(1500*time.Millisecond), next)
}

// As time.Timer does, a timer set for a duration of zero or less fires at once, without
// waiting for the clock to move: code that re-arms its timer for a deadline that is
// already due (a retry due now) must not wait for a step a test may never take.
func TestFakeTimerDueAlreadyFiresAtOnce(t *testing.T) {
	f := NewFake(t0)
	tm := f.NewTimer(0)
	select {
	case got := <-tm.C():
		assert.Equal(t, t0, got)
	default:
		t.Fatal("NewTimer(0) did not fire")
	}

	assert.False(t, tm.Reset(-time.Second))
	select {
	case got := <-tm.C():
		assert.Equal(t, t0, got)
	default:
		t.Fatal("Reset(-1s) did not fire")
	}

	assert.False(t, tm.Reset(time.Minute))
	assert.True(t, tm.Reset(0), "Reset reports the timer was pending")
	assert.Len(t, tm.C(), 1)
	assert.Equal(t, 0, f.Pending())

	called := make(chan struct{})
	f.AfterFunc(0, func() { close(called) })
	select {
	case <-called:
	case <-time.After(time.Minute):
		t.Fatal("AfterFunc(0) did not call its function")
	}
}
