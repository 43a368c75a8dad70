package carousel_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/feedkit/feedkit/carousel"
	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/clock/clocktest"
)

// flushEpoch is where the fake clock of every Flush test starts.
var flushEpoch = time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)

// flushBound guards a test against a hang; nothing relies on it passing.
const flushBound = time.Minute

// recorder is a Publisher that records every publication as "offset cycle item", the
// offset being the fake clock's time from flushEpoch.
type recorder struct {
	clk *clocktest.Fake
	mu  sync.Mutex
	got []string
}

func (r *recorder) Publish(_ context.Context, p carousel.Publication) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, fmt.Sprintf("%v %s %s", r.clk.Now().Sub(flushEpoch), p.Cycle, p.Item.ID))
	return nil
}

// sorted returns the publications so far, sorted as strings: of several cycles due at the
// same time, any may publish first.
func (r *recorder) sorted() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(slices.Values(r.got))
}

func flush(t *testing.T, s *carousel.Scheduler) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), flushBound)
	defer cancel()
	if err := s.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
}

// Three cycles of the three types, each with its own throttle, on one fake clock moved 5s
// at a time: after every Flush, every publication due by the clock's time has been made,
// at its time, and none that is not due yet.
func TestFlushSeesEveryCycleActOnTheClocksTime(t *testing.T) {
	clk := clocktest.NewFake(flushEpoch)
	src := carousel.NewMemorySource()
	mustPut(t, src, "a", carousel.Item{ID: "a1"}, carousel.Item{ID: "a2"}, carousel.Item{ID: "a3"})
	mustPut(t, src, "b", carousel.Item{ID: "b1"}, carousel.Item{ID: "b2"})
	mustPut(t, src, "w",
		carousel.Item{ID: "w1", Modified: flushEpoch.Add(-30 * time.Second)},
		carousel.Item{ID: "w2", Modified: flushEpoch.Add(-10 * time.Second)},
		carousel.Item{ID: "w3", Modified: flushEpoch.Add(70 * time.Second)}) // in the window of 60s-120s
	rec := &recorder{clk: clk}
	s, err := carousel.NewScheduler(src, rec, carousel.Config{
		Store: carousel.NewMemoryStore(), Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []carousel.CycleConfig{
		{Name: "a", Type: carousel.ThrottledWholeCollection, Origin: "o", Collection: "a",
			CoolDown: time.Minute, Throttle: 10 * time.Second},
		{Name: "b", Type: carousel.ThrottledWholeCollection, Origin: "o", Collection: "b",
			CoolDown: time.Minute, Throttle: 25 * time.Second},
		{Name: "w", Type: carousel.FixedWindow, Origin: "o", Collection: "w",
			CoolDown: time.Minute, TimeWindow: time.Minute, MinimumThrottle: time.Second},
	} {
		if err := s.Add(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })

	// What is due by elapsed: a and b go round their collections at their throttles; w
	// spreads w1 and w2 over its first window (one every 30s), finds nothing in its second
	// (60s: the items of the last minute) and cools down for a minute, then finds w3.
	due := func(elapsed time.Duration) []string {
		var want []string
		whole := func(cycle string, throttle time.Duration, items int) {
			for k := 0; time.Duration(k)*throttle <= elapsed; k++ {
				want = append(want, fmt.Sprintf("%v %s %s%d", time.Duration(k)*throttle, cycle, cycle, k%items+1))
			}
		}
		whole("a", 10*time.Second, 3)
		whole("b", 25*time.Second, 2)
		for _, p := range []struct {
			at time.Duration
			id string
		}{{0, "w1"}, {30 * time.Second, "w2"}, {120 * time.Second, "w3"}} {
			if p.at <= elapsed {
				want = append(want, fmt.Sprintf("%v w %s", p.at, p.id))
			}
		}
		slices.Sort(want)
		return want
	}

	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	const step, end = 5 * time.Second, 150 * time.Second
	for elapsed := time.Duration(0); ; elapsed += step {
		flush(t, s)
		if got, want := rec.sorted(), due(elapsed); !slices.Equal(got, want) {
			t.Fatalf("at %v:\n got %s\nwant %s", elapsed, strings.Join(got, ", "), strings.Join(want, ", "))
		}
		if elapsed == end {
			break
		}
		clk.Advance(step)
	}
	if got := len(rec.sorted()); got != 16+7+3 {
		t.Fatalf("%d publications, want 26", got)
	}
	// The metadata is up to date too: a's 16th publication is the first of its 6th round.
	st, err := s.Cycle("a")
	if err != nil {
		t.Fatal(err)
	}
	if m := st.Metadata; m.Iteration != 6 || m.Completed != 1 || m.Total != 3 {
		t.Fatalf("a: iteration %d, %d/%d completed, want iteration 6, 1/3", m.Iteration, m.Completed, m.Total)
	}
}

// A throttle changed while the cycle waits takes effect at once, and Flush waits for the
// publication that the change made due.
func TestFlushSeesAThrottleChange(t *testing.T) {
	clk := clocktest.NewFake(flushEpoch)
	src := carousel.NewMemorySource()
	mustPut(t, src, "a", carousel.Item{ID: "a1"}, carousel.Item{ID: "a2"}, carousel.Item{ID: "a3"})
	rec := &recorder{clk: clk}
	s, err := carousel.NewScheduler(src, rec, carousel.Config{
		Store: carousel.NewMemoryStore(), Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Add(ctx, carousel.CycleConfig{Name: "a", Type: carousel.ThrottledWholeCollection, Origin: "o",
		Collection: "a", CoolDown: time.Minute, Throttle: time.Minute}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	flush(t, s)
	clk.Advance(10 * time.Second)
	flush(t, s)
	if got := rec.sorted(); !slices.Equal(got, []string{"0s a a1"}) {
		t.Fatalf("before the change: %v", got)
	}
	// 5s after the last publish began is past: the next is due at once.
	if err := s.SetThrottle("a", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	flush(t, s)
	if got := rec.sorted(); !slices.Equal(got, []string{"0s a a1", "10s a a2"}) {
		t.Fatalf("after the change: %v", got)
	}
	clk.Advance(5 * time.Second)
	flush(t, s)
	if got := rec.sorted(); !slices.Equal(got, []string{"0s a a1", "10s a a2", "15s a a3"}) {
		t.Fatalf("5s after the change: %v", got)
	}
}

// Flush waits for a publish in progress, however long it takes: it returns with its
// context's error while the Publisher blocks, and nil once it has returned.
func TestFlushWaitsForAPublishAndEndsWithItsContext(t *testing.T) {
	clk := clocktest.NewFake(flushEpoch)
	src := carousel.NewMemorySource()
	mustPut(t, src, "a", carousel.Item{ID: "a1"}, carousel.Item{ID: "a2"})
	entered, release := make(chan struct{}), make(chan struct{})
	var published []string
	var mu sync.Mutex
	pub := carousel.PublisherFunc(func(ctx context.Context, p carousel.Publication) error {
		if p.Item.ID == "a2" {
			close(entered)
			<-release
		}
		mu.Lock()
		published = append(published, p.Item.ID)
		mu.Unlock()
		return nil
	})
	s, err := carousel.NewScheduler(src, pub, carousel.Config{
		Store: carousel.NewMemoryStore(), Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Add(ctx, carousel.CycleConfig{Name: "a", Type: carousel.ThrottledWholeCollection, Origin: "o",
		Collection: "a", CoolDown: time.Minute, Throttle: time.Minute}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	flush(t, s)
	clk.Advance(time.Minute) // a2 is due, and its publish blocks

	fctx, cancel := context.WithCancel(ctx)
	flushed := make(chan error, 1)
	go func() { flushed <- s.Flush(fctx) }()
	select {
	case <-entered:
	case <-time.After(flushBound):
		t.Fatal("a2 was never published")
	}
	cancel()
	select {
	case err := <-flushed:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Flush during a blocked publish returned %v, want context.Canceled", err)
		}
	case <-time.After(flushBound):
		t.Fatal("Flush did not return when its context ended")
	}

	close(release)
	flush(t, s)
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(published, []string{"a1", "a2"}) {
		t.Fatalf("published %v, want [a1 a2]", published)
	}
}

// With no cycle running (none started, or all shut down) there is nothing to wait for.
func TestFlushWithNothingRunning(t *testing.T) {
	clk := clocktest.NewFake(flushEpoch)
	src := carousel.NewMemorySource()
	mustPut(t, src, "a", carousel.Item{ID: "a1"})
	rec := &recorder{clk: clk}
	s, err := carousel.NewScheduler(src, rec, carousel.Config{
		Store: carousel.NewMemoryStore(), Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	flush(t, s) // no cycle
	ctx := context.Background()
	if err := s.Add(ctx, carousel.CycleConfig{Name: "a", Type: carousel.ThrottledWholeCollection, Origin: "o",
		Collection: "a", CoolDown: time.Minute, Throttle: time.Minute}); err != nil {
		t.Fatal(err)
	}
	flush(t, s) // not started
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	flush(t, s)
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Hour)
	flush(t, s) // shut down: nothing more is published
	if got := rec.sorted(); !slices.Equal(got, []string{"0s a a1"}) {
		t.Fatalf("published %v", got)
	}
}

func mustPut(t *testing.T, src *carousel.MemorySource, collection string, items ...carousel.Item) {
	t.Helper()
	if err := src.Put(collection, items...); err != nil {
		t.Fatal(err)
	}
}

// Under Run, Flush waits as well for Run to have asked the toggle at its last tick and
// acted on the answer: the cycles it shut down have stopped, and those it started have
// published what was due.
func TestFlushWaitsForRunToActOnTheToggle(t *testing.T) {
	clk := clocktest.NewFake(flushEpoch)
	src := carousel.NewMemorySource()
	mustPut(t, src, "a", carousel.Item{ID: "a1"}, carousel.Item{ID: "a2"}, carousel.Item{ID: "a3"})
	rec := &recorder{clk: clk}
	var active atomic.Bool
	active.Store(true)
	asked := make(chan struct{})
	var once sync.Once
	toggle := carousel.ToggleFunc(func(context.Context) (bool, carousel.Generation, error) {
		once.Do(func() { close(asked) })
		return active.Load(), 0, nil
	})
	// Toggle ticks at 25s, 50s, ...: never when the cycle is due (every 10s from 0s).
	s, err := carousel.NewScheduler(src, rec, carousel.Config{
		Store: carousel.NewMemoryStore(), Clock: clk, Toggle: toggle, ToggleInterval: 25 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Add(context.Background(), carousel.CycleConfig{Name: "a", Type: carousel.ThrottledWholeCollection,
		Origin: "o", Collection: "a", CoolDown: time.Minute, Throttle: 10 * time.Second}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- s.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-ran; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	select {
	case <-asked: // Run has begun: its ticks count from now
	case <-time.After(flushBound):
		t.Fatal("Run never asked the toggle")
	}

	step := func(d time.Duration, want ...string) {
		t.Helper()
		clk.Advance(d)
		flush(t, s)
		if got, want := rec.sorted(), slices.Sorted(slices.Values(want)); !slices.Equal(got, want) {
			t.Fatalf("at %v: published %v, want %v", clk.Since(flushEpoch), got, want)
		}
	}
	step(0, "0s a a1")
	step(10*time.Second, "0s a a1", "10s a a2")
	step(10*time.Second, "0s a a1", "10s a a2", "20s a a3")
	active.Store(false)
	step(5*time.Second, "0s a a1", "10s a a2", "20s a a3") // 25s: passive, shut down
	if st := s.Status(); st.Active || st.Started {
		t.Fatalf("after the passive answer: active %v, started %v", st.Active, st.Started)
	}
	step(5*time.Second, "0s a a1", "10s a a2", "20s a a3") // 30s: a1 would be due, but the cycle stopped
	active.Store(true)
	// 50s: active again; the cycle starts from its saved progress, a new round, at once.
	step(20*time.Second, "0s a a1", "10s a a2", "20s a a3", "50s a a1")
	step(10*time.Second, "0s a a1", "10s a a2", "20s a a3", "50s a a1", "1m0s a a2")
	if st := s.Status(); !st.Active || !st.Started {
		t.Fatalf("after the active answer: active %v, started %v", st.Active, st.Started)
	}
}

// jumpingClock is a fake clock that another goroutine moves on by jump just after the
// first timer is set, as a test's Advance may while a cycle sets its timer.
type jumpingClock struct {
	*clocktest.Fake
	jump time.Duration
	once sync.Once
}

func (c *jumpingClock) NewTimer(d time.Duration) clock.Timer {
	t := c.Fake.NewTimer(d)
	c.once.Do(func() { c.Fake.Advance(c.jump) })
	return t
}

// A clock that moves past a wait's end while the cycle sets its timer ends the wait: the
// item due is published at once, and the next keeps to the schedule.
func TestTheClockMovingPastAWaitAsItBeginsEndsIt(t *testing.T) {
	fake := clocktest.NewFake(flushEpoch)
	clk := &jumpingClock{Fake: fake, jump: 15 * time.Second}
	src := carousel.NewMemorySource()
	mustPut(t, src, "a", carousel.Item{ID: "a1"}, carousel.Item{ID: "a2"}, carousel.Item{ID: "a3"})
	rec := &recorder{clk: fake}
	s, err := carousel.NewScheduler(src, rec, carousel.Config{Store: carousel.NewMemoryStore(), Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Add(ctx, carousel.CycleConfig{Name: "a", Type: carousel.ThrottledWholeCollection, Origin: "o",
		Collection: "a", CoolDown: time.Minute, Throttle: 10 * time.Second}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	flush(t, s) // the wait for a2 (due at 10s) begins as the clock moves to 15s
	if got := rec.sorted(); !slices.Equal(got, []string{"0s a a1", "15s a a2"}) {
		t.Fatalf("published %v, want a2 at once at 15s", got)
	}
	fake.Advance(5 * time.Second)
	flush(t, s)
	if got := rec.sorted(); !slices.Equal(got, []string{"0s a a1", "15s a a2", "20s a a3"}) {
		t.Fatalf("published %v, want a3 at 20s, on schedule", got)
	}
}
