package carousel_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/feedkit/feedkit/carousel"
	"github.com/feedkit/feedkit/clock/clocktest"
)

// observed is a carousel.Observer that counts what it is told, by cycle.
type observed struct {
	mu         sync.Mutex
	published  map[string]int
	failed     map[string]int
	publishDur []time.Duration // of every publish told, failed or not
	iterations map[string][]time.Duration
	failures   map[string]int // by "cycle op"
	fenced     map[string]int
}

func newObserved() *observed {
	return &observed{published: map[string]int{}, failed: map[string]int{}, iterations: map[string][]time.Duration{},
		failures: map[string]int{}, fenced: map[string]int{}}
}

func (o *observed) CarouselPublished(cycle string, took time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.published[cycle]++
	o.publishDur = append(o.publishDur, took)
}

func (o *observed) CarouselPublishFailed(cycle string, took time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.failed[cycle]++
	o.publishDur = append(o.publishDur, took)
}

func (o *observed) CarouselIterationCompleted(cycle string, took time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.iterations[cycle] = append(o.iterations[cycle], took)
}

func (o *observed) CarouselFailed(cycle string, op carousel.Op) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.failures[cycle+" "+op.String()]++
}

func (o *observed) CarouselFenced(cycle string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.fenced[cycle]++
}

// counts returns what was told of cycle: published, failed, iterations completed.
func (o *observed) counts(cycle string) (published, failed, iterations int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.published[cycle], o.failed[cycle], len(o.iterations[cycle])
}

func (o *observed) failuresAndFences() (map[string]int, map[string]int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return copyCounts(o.failures), copyCounts(o.fenced)
}

func copyCounts(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// failingPublisher records every publication by cycle and fails those of the items in
// fail.
type failingPublisher struct {
	fail   map[string]bool
	mu     sync.Mutex
	calls  map[string]int
	errors map[string]int
}

func (p *failingPublisher) Publish(_ context.Context, pub carousel.Publication) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls[pub.Cycle]++
	if p.fail[pub.Item.ID] {
		p.errors[pub.Cycle]++
		return errors.New("downstream said 500")
	}
	return nil
}

func (p *failingPublisher) counts(cycle string) (calls, errs int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[cycle], p.errors[cycle]
}

// Two cycles on a fake clock moved 5s at a time: after every Flush, what the observer
// was told of each cycle is what its Publisher saw and what its metadata says, and at
// the end exactly what the schedule makes.
func TestObserverIsToldWhatTheCyclesDid(t *testing.T) {
	clk := clocktest.NewFake(flushEpoch)
	src := carousel.NewMemorySource()
	mustPut(t, src, "a", carousel.Item{ID: "a1"}, carousel.Item{ID: "a2"}, carousel.Item{ID: "a3"})
	mustPut(t, src, "w",
		carousel.Item{ID: "w1", Modified: flushEpoch.Add(-30 * time.Second)},
		carousel.Item{ID: "w2", Modified: flushEpoch.Add(-10 * time.Second)},
		carousel.Item{ID: "w3", Modified: flushEpoch.Add(70 * time.Second)})
	pub := &failingPublisher{fail: map[string]bool{"a2": true, "w2": true}, calls: map[string]int{}, errors: map[string]int{}}
	obs := newObserved()
	s, err := carousel.NewScheduler(src, pub, carousel.Config{Store: carousel.NewMemoryStore(), Clock: clk, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []carousel.CycleConfig{
		{Name: "a", Type: carousel.ThrottledWholeCollection, Origin: "o", Collection: "a",
			CoolDown: time.Minute, Throttle: 10 * time.Second},
		{Name: "w", Type: carousel.FixedWindow, Origin: "o", Collection: "w",
			CoolDown: time.Minute, TimeWindow: time.Minute, MinimumThrottle: time.Second},
	} {
		if err := s.Add(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}

	const step, end = 5 * time.Second, 150 * time.Second
	for elapsed := time.Duration(0); ; elapsed += step {
		flush(t, s)
		for _, cycle := range []string{"a", "w"} {
			published, failed, iterations := obs.counts(cycle)
			calls, errs := pub.counts(cycle)
			if published+failed != calls || failed != errs {
				t.Fatalf("at %v, %s: told %d published and %d failed; the Publisher had %d calls, %d failed",
					elapsed, cycle, published, failed, calls, errs)
			}
			st, err := s.Cycle(cycle)
			if err != nil {
				t.Fatal(err)
			}
			m := st.Metadata
			ended := m.Iteration
			if m.InProgress {
				ended--
			}
			if iterations != ended {
				t.Fatalf("at %v, %s: told %d iterations completed; the metadata says %d (iteration %d, in progress %v)",
					elapsed, cycle, iterations, ended, m.Iteration, m.InProgress)
			}
			// Every iteration of a has the same three items, one failing: the counts of
			// the iterations before the current one, plus the current one's.
			if cycle == "a" && (published+failed != (m.Iteration-1)*3+m.Completed || failed != m.Iteration-1+m.Errors) {
				t.Fatalf("at %v, a: told %d published and %d failed; the metadata says iteration %d, %d completed, %d errors",
					elapsed, published, failed, m.Iteration, m.Completed, m.Errors)
			}
		}
		if elapsed == end {
			break
		}
		clk.Advance(step)
	}

	// a publishes every 10s from 0 to 150s (16), a2 at 10s, 40s, ... 130s (5), and ends
	// an iteration 20s after it begins one, every 30s (5 by 150s).
	// w publishes w1 at 0 and w2 at 30s (failing), ends its first iteration there, finds
	// nothing in its second (60s) and cools down, and publishes w3 at 120s in its third,
	// which ends there too.
	for _, want := range []struct {
		cycle             string
		published, failed int
		iterations        []time.Duration
	}{
		{"a", 11, 5, []time.Duration{20 * time.Second, 20 * time.Second, 20 * time.Second, 20 * time.Second, 20 * time.Second}},
		{"w", 2, 1, []time.Duration{30 * time.Second, 0, 0}},
	} {
		published, failed, _ := obs.counts(want.cycle)
		obs.mu.Lock()
		iterations := slices.Clone(obs.iterations[want.cycle])
		obs.mu.Unlock()
		if published != want.published || failed != want.failed || !slices.Equal(iterations, want.iterations) {
			t.Errorf("%s: told %d published, %d failed, iterations took %v; want %d, %d, %v",
				want.cycle, published, failed, iterations, want.published, want.failed, want.iterations)
		}
	}
	failures, fenced := obs.failuresAndFences()
	if len(failures) != 0 || len(fenced) != 0 {
		t.Errorf("told of failures %v and fences %v; there were none", failures, fenced)
	}
	obs.mu.Lock()
	for _, d := range obs.publishDur {
		if d != 0 {
			t.Errorf("a publish took %v on a clock that did not move during it", d)
		}
	}
	obs.mu.Unlock()
}

// flakyPorts fails the first calls of each operation on the Source and the store, as
// many as it is told, and counts the failures it returned.
type flakyPorts struct {
	carousel.Source
	carousel.MetadataStore
	mu       sync.Mutex
	toFail   map[string]int // by operation: "load", "save", "count", "list"
	returned map[string]int
}

func (f *flakyPorts) fail(op string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.toFail[op] == 0 {
		return nil
	}
	f.toFail[op]--
	f.returned["whole "+op]++
	return fmt.Errorf("%s: unreachable", op)
}

func (f *flakyPorts) Count(ctx context.Context, q carousel.Query) (int, error) {
	if err := f.fail("count"); err != nil {
		return 0, err
	}
	return f.Source.Count(ctx, q)
}

func (f *flakyPorts) List(ctx context.Context, q carousel.Query, after carousel.Item, limit int) ([]carousel.Item, error) {
	if err := f.fail("list"); err != nil {
		return nil, err
	}
	return f.Source.List(ctx, q, after, limit)
}

func (f *flakyPorts) Load(ctx context.Context, id string) (carousel.CycleMetadata, bool, error) {
	if err := f.fail("load"); err != nil {
		return carousel.CycleMetadata{}, false, err
	}
	return f.MetadataStore.Load(ctx, id)
}

func (f *flakyPorts) Save(ctx context.Context, m carousel.CycleMetadata, gen carousel.Generation) error {
	if err := f.fail("save"); err != nil {
		return err
	}
	return f.MetadataStore.Save(ctx, m, gen)
}

// Every failed call to the Source or the store is told once, with its operation: a
// load, a save, counts and a listing fail, the cycle retries each (a second apart at
// most) and goes on to publish every item.
func TestObserverIsToldOfEveryFailedCall(t *testing.T) {
	clk := clocktest.NewFake(flushEpoch)
	src := carousel.NewMemorySource()
	mustPut(t, src, "c", carousel.Item{ID: "i1"}, carousel.Item{ID: "i2"})
	ports := &flakyPorts{Source: src, MetadataStore: carousel.NewMemoryStore(),
		toFail: map[string]int{"load": 1, "save": 1, "count": 2, "list": 1}, returned: map[string]int{}}
	pub := &failingPublisher{calls: map[string]int{}, errors: map[string]int{}}
	obs := newObserved()
	s, err := carousel.NewScheduler(ports, pub, carousel.Config{Store: ports, Clock: clk, Observer: obs,
		RetryInitial: time.Second, RetryMax: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Add(ctx, carousel.CycleConfig{Name: "whole", Type: carousel.ThrottledWholeCollection, Origin: "o",
		Collection: "c", CoolDown: time.Minute, Throttle: time.Minute}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// The load, the first count, the second count and the listing each wait a retry's
	// backoff, at most a second: 4 seconds see the first publish.
	for range 4 {
		flush(t, s)
		clk.Advance(time.Second)
	}
	flush(t, s)
	if published, _, _ := obs.counts("whole"); published != 1 {
		t.Fatalf("%d published after the retries, want 1", published)
	}
	clk.Advance(time.Minute)
	flush(t, s)

	failures, fenced := obs.failuresAndFences()
	ports.mu.Lock()
	returned := copyCounts(ports.returned)
	ports.mu.Unlock()
	want := map[string]int{"whole load": 1, "whole save": 1, "whole count": 2, "whole list": 1}
	if !equalCounts(failures, want) || !equalCounts(returned, want) || len(fenced) != 0 {
		t.Fatalf("told of failures %v and fences %v; the ports returned %v; want %v and none", failures, fenced, returned, want)
	}
	published, failed, iterations := obs.counts("whole")
	if calls, _ := pub.counts("whole"); published != 2 || failed != 0 || iterations != 1 || calls != 2 {
		t.Fatalf("told %d published, %d failed, %d iterations; the Publisher had %d calls; want 2, 0, 1, 2",
			published, failed, iterations, calls)
	}
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// Each save the store refuses because a later activation saved is told as fenced, and
// as no failure: the claim at start, and the operator's reset after it.
func TestObserverIsToldOfEachFencedSave(t *testing.T) {
	clk := clocktest.NewFake(flushEpoch)
	src := carousel.NewMemorySource()
	mustPut(t, src, "c", carousel.Item{ID: "i1"})
	store := carousel.NewMemoryStore()
	cfg := carousel.CycleConfig{Name: "whole", Type: carousel.ThrottledWholeCollection, Origin: "o",
		Collection: "c", CoolDown: time.Minute, Throttle: time.Minute}
	ctx := context.Background()
	// Another instance, in its 5th activation, has the cycle; this one runs as
	// generation 0 (no toggle).
	if err := store.Save(ctx, carousel.CycleMetadata{CycleID: "whole", Config: cfg, Iteration: 3}, 5); err != nil {
		t.Fatal(err)
	}
	pub := &failingPublisher{calls: map[string]int{}, errors: map[string]int{}}
	obs := newObserved()
	s, err := carousel.NewScheduler(src, pub, carousel.Config{Store: store, Clock: clk, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Add(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	flush(t, s) // the claim is refused and the cycle stops
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	failures, fenced := obs.failuresAndFences()
	if fenced["whole"] != 1 || len(failures) != 0 {
		t.Fatalf("told of fences %v and failures %v, want 1 fence", fenced, failures)
	}
	if err := s.ResetCycle(ctx, "whole"); !errors.Is(err, carousel.ErrFenced) {
		t.Fatalf("ResetCycle: %v, want ErrFenced", err)
	}
	failures, fenced = obs.failuresAndFences()
	published, failed, iterations := obs.counts("whole")
	if fenced["whole"] != 2 || len(failures) != 0 || published+failed+iterations != 0 {
		t.Fatalf("told of fences %v, failures %v, %d published, %d failed, %d iterations; want 2 fences only",
			fenced, failures, published, failed, iterations)
	}
}

// A publish that a stop cuts short is not told: the item is not completed, as the
// metadata says, and a resume publishes it again.
func TestObserverIsNotToldOfAPublishCutShort(t *testing.T) {
	clk := clocktest.NewFake(flushEpoch)
	src := carousel.NewMemorySource()
	mustPut(t, src, "c", carousel.Item{ID: "i1"})
	var entered atomic.Int32
	in := make(chan struct{})
	pub := carousel.PublisherFunc(func(ctx context.Context, _ carousel.Publication) error {
		if entered.Add(1) == 1 {
			close(in)
			<-ctx.Done() // stopped mid-publish
			return ctx.Err()
		}
		return nil
	})
	obs := newObserved()
	s, err := carousel.NewScheduler(src, pub, carousel.Config{Store: carousel.NewMemoryStore(), Clock: clk, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Add(ctx, carousel.CycleConfig{Name: "whole", Type: carousel.ThrottledWholeCollection, Origin: "o",
		Collection: "c", CoolDown: time.Minute, Throttle: time.Minute}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-in:
	case <-time.After(flushBound):
		t.Fatal("no publish began")
	}
	if err := s.StopCycle(ctx, "whole"); err != nil {
		t.Fatal(err)
	}
	st, err := s.Cycle("whole")
	if err != nil {
		t.Fatal(err)
	}
	published, failed, iterations := obs.counts("whole")
	if published+failed+iterations != 0 || st.Metadata.Completed != 0 {
		t.Fatalf("told %d published, %d failed, %d iterations; metadata %d completed; want none",
			published, failed, iterations, st.Metadata.Completed)
	}

	if err := s.ResumeCycle(ctx, "whole"); err != nil {
		t.Fatal(err)
	}
	// The resumed cycle keeps the throttle of the publish the stop cut short.
	flush(t, s)
	if published, failed, _ := obs.counts("whole"); published+failed != 0 || entered.Load() != 1 {
		t.Fatalf("a publish before the throttle's minute: told %d, %d publish calls", published+failed, entered.Load())
	}
	clk.Advance(time.Minute)
	flush(t, s)
	published, failed, iterations = obs.counts("whole")
	if published != 1 || failed != 0 || iterations != 1 || entered.Load() != 2 {
		t.Fatalf("after the resume: told %d published, %d failed, %d iterations, %d publish calls; want 1, 0, 1, 2",
			published, failed, iterations, entered.Load())
	}
}
