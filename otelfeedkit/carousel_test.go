package otelfeedkit_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/feedkit/feedkit/carousel"
	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/otelfeedkit"
)

// newCarouselMetrics returns CarouselMetrics on a MeterProvider of the SDK read by a
// ManualReader.
func newCarouselMetrics(t testing.TB) (*otelfeedkit.CarouselMetrics, *sdkmetric.ManualReader) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	c, err := otelfeedkit.NewCarousel(otelfeedkit.WithMeterProvider(mp))
	require.NoError(t, err)
	return c, reader
}

// flushScheduler waits until every cycle has done what is due by the fake clock's time.
func flushScheduler(t *testing.T, s *carousel.Scheduler) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a guard against a hang only
	defer cancel()
	require.NoError(t, s.Flush(ctx))
}

// newScheduler returns a scheduler on clk telling c, shut down when the test ends.
func newScheduler(t *testing.T, src carousel.Source, pub carousel.Publisher, cfg carousel.Config,
	cycles ...carousel.CycleConfig) *carousel.Scheduler {
	t.Helper()
	s, err := carousel.NewScheduler(src, pub, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	for _, cc := range cycles {
		require.NoError(t, s.Add(t.Context(), cc))
	}
	return s
}

// takes is how long each publish takes on the fake clock: the publisher moves it.
const takes = 250 * time.Millisecond

// countingPublisher takes its time on the fake clock, fails the items in fail, and
// counts its calls by result.
type countingPublisher struct {
	clk  *clocktest.Fake
	fail map[string]bool

	mu             sync.Mutex
	ok, failed     int
	publishedItems []string
}

func (p *countingPublisher) Publish(_ context.Context, pub carousel.Publication) error {
	p.clk.Advance(takes)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.publishedItems = append(p.publishedItems, pub.Item.ID)
	if p.fail[pub.Item.ID] {
		p.failed++
		return errors.New("downstream said 500")
	}
	p.ok++
	return nil
}

// counts returns the calls by result, and the items published in order.
func (p *countingPublisher) counts() (ok, failed int, items []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ok, p.failed, slices.Clone(p.publishedItems)
}

// cycleLevels is what WatchScheduler reports of the cycle "whole" and the scheduler, as
// points by metric name.
func cycleLevels(active bool, iteration, items, completed, errs int, progress, throttle float64, state carousel.State) map[string][]point {
	cycle := []string{"feedkit.cycle=whole"}
	one := func(v float64) []point { return []point{{attrs: cycle, value: v}} }
	var states []point
	for _, s := range []carousel.State{carousel.CoolDown, carousel.Running, carousel.Starting, carousel.Stopped} {
		v := 0.0
		if s == state {
			v = 1
		}
		states = append(states, point{attrs: []string{"feedkit.carousel.state=" + string(s), "feedkit.cycle=whole"}, value: v})
	}
	a := 0.0
	if active {
		a = 1
	}
	return map[string][]point{
		"feedkit.carousel.active":              {{attrs: []string{}, value: a}},
		"feedkit.carousel.iteration.current":   one(float64(iteration)),
		"feedkit.carousel.iteration.items":     one(float64(items)),
		"feedkit.carousel.iteration.completed": one(float64(completed)),
		"feedkit.carousel.iteration.errors":    one(float64(errs)),
		"feedkit.carousel.iteration.progress":  one(round(progress)), // as collectPoints rounds it
		"feedkit.carousel.throttle":            one(throttle),
		"feedkit.carousel.state":               states,
		"feedkit.carousel.unhealthy":           one(0),
	}
}

// assertMetrics checks that got holds exactly the metrics of want, with its points.
func assertMetrics(t *testing.T, want map[string][]point, got map[string][]point, when string) {
	t.Helper()
	assert.ElementsMatch(t, mapKeys(want), mapKeys(got), "%s: the metrics reported", when)
	for name, w := range want {
		assert.Equal(t, w, got[name], "%s: %s", when, name)
	}
}

func mapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// merge returns the union of maps of points; a later map's metric replaces an
// earlier's.
func merge(ms ...map[string][]point) map[string][]point {
	out := map[string][]point{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// collectPoints collects and returns every metric's points, the floats rounded.
func collectPoints(t *testing.T, r *sdkmetric.ManualReader) map[string][]point {
	t.Helper()
	out := map[string][]point{}
	for name, md := range collect(t, r) {
		pts := points(md)
		for i := range pts {
			pts[i].value = round(pts[i].value)
		}
		out[name] = pts
	}
	return out
}

// A real scheduler on a memory source and store and a fake clock publishes a collection
// of three items every 10 s, the second failing, each publish taking 250 ms: the
// counters are exactly what its publisher saw and its metadata says, the histograms hold
// each publish's and iteration's time, and the levels are the cycle's status at each
// collection, the throttle an operator set and the state of a stopped cycle included.
func TestCarouselMetricsCountWhatTheCyclesDid(t *testing.T) {
	clk := clocktest.NewFake(epoch)
	src := carousel.NewMemorySource()
	require.NoError(t, src.Put("c", carousel.Item{ID: "i1"}, carousel.Item{ID: "i2"}, carousel.Item{ID: "i3"}))
	pub := &countingPublisher{clk: clk, fail: map[string]bool{"i2": true}}
	c, reader := newCarouselMetrics(t)
	s := newScheduler(t, src, pub, carousel.Config{Store: carousel.NewMemoryStore(), Clock: clk, Observer: c},
		carousel.CycleConfig{Name: "whole", Type: carousel.ThrottledWholeCollection, Origin: "o", Collection: "c",
			CoolDown: time.Minute, Throttle: 10 * time.Second})
	reg, err := c.WatchScheduler(s)
	require.NoError(t, err)
	t.Cleanup(func() { _ = reg.Unregister() })

	// Added, not started: passive, stopped, no iteration yet.
	assertMetrics(t, cycleLevels(false, 0, 0, 0, 0, 0, 10, carousel.Stopped), collectPoints(t, reader), "before Start")

	// advanceTo moves the clock to offset from the epoch, where the next publish is due,
	// and waits for the cycle to act.
	advanceTo := func(offset time.Duration) {
		clk.Advance(epoch.Add(offset).Sub(clk.Now()))
		flushScheduler(t, s)
	}
	require.NoError(t, s.Start(t.Context()))
	flushScheduler(t, s) // i1 published at 0 s
	assertMetrics(t, merge(cycleLevels(true, 1, 3, 1, 0, 1.0/3, 10, carousel.Running), map[string][]point{
		"feedkit.carousel.published":        {{attrs: []string{"feedkit.cycle=whole"}, value: 1}},
		"feedkit.carousel.publish.duration": {{attrs: []string{"feedkit.cycle=whole", "feedkit.result=published"}, count: 1, value: 0.25}},
	}), collectPoints(t, reader), "after the first publish")

	advanceTo(10 * time.Second) // i2 fails
	advanceTo(20 * time.Second) // i3 published: the iteration ends at 20.25 s
	advanceTo(30 * time.Second) // the second iteration begins: i1 published
	got := collectPoints(t, reader)
	assertMetrics(t, merge(cycleLevels(true, 2, 3, 1, 0, 1.0/3, 10, carousel.Running), map[string][]point{
		"feedkit.carousel.published":        {{attrs: []string{"feedkit.cycle=whole"}, value: 3}},
		"feedkit.carousel.publish.failures": {{attrs: []string{"feedkit.cycle=whole"}, value: 1}},
		"feedkit.carousel.publish.duration": {
			{attrs: []string{"feedkit.cycle=whole", "feedkit.result=failed"}, count: 1, value: 0.25},
			{attrs: []string{"feedkit.cycle=whole", "feedkit.result=published"}, count: 3, value: 0.75},
		},
		"feedkit.carousel.iterations":         {{attrs: []string{"feedkit.cycle=whole"}, value: 1}},
		"feedkit.carousel.iteration.duration": {{attrs: []string{"feedkit.cycle=whole"}, count: 1, value: 20.25}},
	}), got, "in the second iteration")

	// The counters are what the publisher saw, and what the metadata counts.
	ok, failed, items := pub.counts()
	assert.Equal(t, []string{"i1", "i2", "i3", "i1"}, items)
	assert.Equal(t, float64(ok), got["feedkit.carousel.published"][0].value)
	assert.Equal(t, float64(failed), got["feedkit.carousel.publish.failures"][0].value)
	st, err := s.Cycle("whole")
	require.NoError(t, err)
	m := st.Metadata
	require.True(t, m.InProgress)
	assert.Equal(t, float64(m.Iteration-1), got["feedkit.carousel.iterations"][0].value, "the iterations completed")
	assert.Equal(t, float64((m.Iteration-1)*3+m.Completed), got["feedkit.carousel.published"][0].value+
		got["feedkit.carousel.publish.failures"][0].value, "every item of the iterations completed, and the current one's")

	// An operator's throttle shows at once; a stopped cycle shows stopped, its progress
	// kept.
	require.NoError(t, s.SetThrottle("whole", 5*time.Second))
	flushScheduler(t, s)
	assert.Equal(t, []point{{attrs: []string{"feedkit.cycle=whole"}, value: 5}}, collectPoints(t, reader)["feedkit.carousel.throttle"])
	require.NoError(t, s.StopCycle(t.Context(), "whole"))
	got = collectPoints(t, reader)
	for name, want := range cycleLevels(true, 2, 3, 1, 0, 1.0/3, 5, carousel.Stopped) {
		assert.Equal(t, want, got[name], "stopped: %s", name)
	}
	assert.Equal(t, []point{{attrs: []string{"feedkit.cycle=whole"}, value: 3}}, got["feedkit.carousel.published"], "nothing more")

	// Unregistered, the levels are no longer reported; the counters are.
	require.NoError(t, reg.Unregister())
	got = collectPoints(t, reader)
	for name := range cycleLevels(true, 0, 0, 0, 0, 0, 0, carousel.Stopped) {
		assert.NotContains(t, got, name)
	}
	assert.Contains(t, got, "feedkit.carousel.published")
}

// flakySource fails the next Count of each collection as many times as it is told, and
// counts the failures it returned.
type flakySource struct {
	carousel.Source
	mu       sync.Mutex
	toFail   map[string]int
	returned int
}

func (f *flakySource) Count(ctx context.Context, q carousel.Query) (int, error) {
	f.mu.Lock()
	if f.toFail[q.Collection] > 0 {
		f.toFail[q.Collection]--
		f.returned++
		f.mu.Unlock()
		return 0, errors.New("unreachable")
	}
	f.mu.Unlock()
	return f.Source.Count(ctx, q)
}

// A cycle whose Source fails is counted in feedkit.carousel.failures, once per failed
// call, and shows unhealthy while it retries; a cycle whose claim another activation
// fenced is counted in feedkit.carousel.fenced and shows stopped.
func TestCarouselMetricsCountFailuresAndFences(t *testing.T) {
	clk := clocktest.NewFake(epoch)
	mem := carousel.NewMemorySource()
	require.NoError(t, mem.Put("f", carousel.Item{ID: "f1"}))
	require.NoError(t, mem.Put("t", carousel.Item{ID: "t1"}))
	src := &flakySource{Source: mem, toFail: map[string]int{"f": 2}}
	store := carousel.NewMemoryStore()
	flaky := carousel.CycleConfig{Name: "flaky", Type: carousel.ThrottledWholeCollection, Origin: "o", Collection: "f",
		CoolDown: time.Minute, Throttle: time.Minute}
	taken := carousel.CycleConfig{Name: "taken", Type: carousel.ThrottledWholeCollection, Origin: "o", Collection: "t",
		CoolDown: time.Minute, Throttle: time.Minute}
	// Another instance, in its 5th activation, has "taken"; this one runs as generation 0.
	require.NoError(t, store.Save(t.Context(), carousel.CycleMetadata{CycleID: "taken", Config: taken, Iteration: 3}, 5))
	pub := &countingPublisher{clk: clk}
	c, reader := newCarouselMetrics(t)
	s := newScheduler(t, src, pub, carousel.Config{Store: store, Clock: clk, Observer: c,
		RetryInitial: time.Second, RetryMax: time.Second}, flaky, taken)
	reg, err := c.WatchScheduler(s)
	require.NoError(t, err)
	t.Cleanup(func() { _ = reg.Unregister() })
	require.NoError(t, s.Start(t.Context()))

	// The first count fails: flaky is unhealthy, starting, and waits its retry (a
	// second at most); taken's claim is refused and it stops.
	flushScheduler(t, s)
	got := collectPoints(t, reader)
	assert.Equal(t, []point{{attrs: []string{"feedkit.carousel.operation=count", "feedkit.cycle=flaky"}, value: 1}},
		got["feedkit.carousel.failures"])
	assert.Equal(t, []point{{attrs: []string{"feedkit.cycle=taken"}, value: 1}}, got["feedkit.carousel.fenced"])
	assert.Equal(t, []point{
		{attrs: []string{"feedkit.cycle=flaky"}, value: 1},
		{attrs: []string{"feedkit.cycle=taken"}, value: 0},
	}, got["feedkit.carousel.unhealthy"])
	assert.Equal(t, []point{
		{attrs: []string{"feedkit.carousel.state=cooldown", "feedkit.cycle=flaky"}, value: 0},
		{attrs: []string{"feedkit.carousel.state=cooldown", "feedkit.cycle=taken"}, value: 0},
		{attrs: []string{"feedkit.carousel.state=running", "feedkit.cycle=flaky"}, value: 0},
		{attrs: []string{"feedkit.carousel.state=running", "feedkit.cycle=taken"}, value: 0},
		{attrs: []string{"feedkit.carousel.state=starting", "feedkit.cycle=flaky"}, value: 1},
		{attrs: []string{"feedkit.carousel.state=starting", "feedkit.cycle=taken"}, value: 0},
		{attrs: []string{"feedkit.carousel.state=stopped", "feedkit.cycle=flaky"}, value: 0},
		{attrs: []string{"feedkit.carousel.state=stopped", "feedkit.cycle=taken"}, value: 1},
	}, got["feedkit.carousel.state"])
	assert.NotContains(t, got, "feedkit.carousel.published")

	// The second count fails too; the third succeeds, and f1 is published: healthy.
	for range 2 {
		clk.Advance(time.Second)
		flushScheduler(t, s)
	}
	got = collectPoints(t, reader)
	src.mu.Lock()
	returned := src.returned
	src.mu.Unlock()
	require.Equal(t, 2, returned)
	assert.Equal(t, []point{{attrs: []string{"feedkit.carousel.operation=count", "feedkit.cycle=flaky"}, value: float64(returned)}},
		got["feedkit.carousel.failures"], "each failed call once")
	assert.Equal(t, []point{{attrs: []string{"feedkit.cycle=taken"}, value: 1}}, got["feedkit.carousel.fenced"])
	assert.Equal(t, []point{{attrs: []string{"feedkit.cycle=flaky"}, value: 1}}, got["feedkit.carousel.published"])
	assert.Equal(t, []point{
		{attrs: []string{"feedkit.cycle=flaky"}, value: 0},
		{attrs: []string{"feedkit.cycle=taken"}, value: 0},
	}, got["feedkit.carousel.unhealthy"])
}

// One CarouselMetrics watches one scheduler: a second WatchScheduler is refused, with
// why, until the first is unregistered.
func TestWatchSchedulerRefusesASecondScheduler(t *testing.T) {
	c, reader := newCarouselMetrics(t)
	cfg := carousel.Config{Store: carousel.NewMemoryStore(), Clock: clocktest.NewFake(epoch)}
	pub := carousel.PublisherFunc(func(context.Context, carousel.Publication) error { return nil })
	a := newScheduler(t, carousel.NewMemorySource(), pub, cfg)
	b := newScheduler(t, carousel.NewMemorySource(), pub, cfg, carousel.CycleConfig{Name: "b", Type: carousel.ThrottledWholeCollection,
		Origin: "o", Collection: "c", CoolDown: time.Minute, Throttle: time.Minute})
	_, err := c.WatchScheduler(nil)
	assert.EqualError(t, err, "otelfeedkit: WatchScheduler: the Scheduler is nil")
	reg, err := c.WatchScheduler(a)
	require.NoError(t, err)
	for _, s := range []*carousel.Scheduler{a, b} {
		_, err = c.WatchScheduler(s)
		assert.EqualError(t, err, "otelfeedkit: WatchScheduler: a scheduler is watched already; a CarouselMetrics watches one (unregister the first to watch another)")
	}
	// a has no cycle: the scheduler's activity alone.
	assert.Equal(t, []string{"feedkit.carousel.active"}, mapKeys(collectPoints(t, reader)))
	require.NoError(t, reg.Unregister())
	require.NoError(t, reg.Unregister(), "a second Unregister does nothing")
	reg, err = c.WatchScheduler(b)
	require.NoError(t, err)
	// b's cycle is reported: the registration in force is b's.
	assert.Equal(t, []point{{attrs: []string{"feedkit.cycle=b"}, value: 60}}, collectPoints(t, reader)["feedkit.carousel.throttle"])
	require.NoError(t, reg.Unregister())
}

// After a cycle's first call, the carousel observer's calls allocate nothing.
func TestCarouselCallsAllocateNothingAfterACyclesFirst(t *testing.T) {
	c, _ := newCarouselMetrics(t)
	calls := func() {
		c.CarouselPublished("whole", time.Millisecond)
		c.CarouselPublishFailed("whole", time.Millisecond)
		c.CarouselIterationCompleted("whole", time.Minute)
		c.CarouselFailed("whole", carousel.OpList)
		c.CarouselFenced("whole")
	}
	calls()
	assert.Zero(t, testing.AllocsPerRun(100, calls))
}
