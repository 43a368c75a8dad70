package promfeedkit_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/carousel"
	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/promfeedkit"
)

// countingPublisher fails the items in fail and counts every call.
type countingPublisher struct {
	fail          map[string]bool
	mu            sync.Mutex
	calls, failed int
}

func (p *countingPublisher) Publish(_ context.Context, pub carousel.Publication) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	if p.fail[pub.Item.ID] {
		p.failed++
		return errors.New("downstream said 500")
	}
	return nil
}

func (p *countingPublisher) counts() (published, failed int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls - p.failed, p.failed
}

// failingCounts fails the Source's first counts, as many as it is told.
type failingCounts struct {
	carousel.Source
	mu             sync.Mutex
	toFail, failed int
}

func (f *failingCounts) Count(ctx context.Context, q carousel.Query) (int, error) {
	f.mu.Lock()
	if f.toFail > 0 {
		f.toFail--
		f.failed++
		f.mu.Unlock()
		return 0, errors.New("source unreachable")
	}
	f.mu.Unlock()
	return f.Source.Count(ctx, q)
}

func (f *failingCounts) failures() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failed
}

// A cycle of three items, one failing, on a fake clock: after each step, every counter
// equals what the Publisher and the Source saw, and every level what the cycle's
// metadata says, from the failed first count (unhealthy) through two iterations.
func TestCarouselMetricsFollowACycle(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m, err := promfeedkit.NewCarousel(reg)
	require.NoError(t, err)
	clk := clocktest.NewFake(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	src := carousel.NewMemorySource()
	require.NoError(t, src.Put("c", carousel.Item{ID: "a1"}, carousel.Item{ID: "a2"}, carousel.Item{ID: "a3"}))
	source := &failingCounts{Source: src, toFail: 1}
	pub := &countingPublisher{fail: map[string]bool{"a2": true}}
	s, err := carousel.NewScheduler(source, pub, carousel.Config{Store: carousel.NewMemoryStore(), Clock: clk,
		Observer: m, RetryInitial: time.Second, RetryMax: time.Second})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, s.Add(ctx, carousel.CycleConfig{Name: "a", Type: carousel.ThrottledWholeCollection,
		Origin: "o", Collection: "c", CoolDown: time.Minute, Throttle: 10 * time.Second}))
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	require.NoError(t, m.WatchScheduler(s))
	require.NoError(t, s.Start(ctx))

	sawUnhealthy := false
	for step := 0; ; step++ {
		flushCtx, cancel := context.WithTimeout(ctx, time.Minute)
		require.NoError(t, s.Flush(flushCtx))
		cancel()
		got := flatten(t, reg)
		st, err := s.Cycle("a")
		require.NoError(t, err)
		md := st.Metadata
		published, failed := pub.counts()
		ended := md.Iteration
		if md.InProgress {
			ended--
		}
		want := map[string]float64{
			`feedkit_carousel_active`:                                      one(s.Status().Active),
			`feedkit_carousel_iteration_current{feedkit_cycle="a"}`:        float64(md.Iteration),
			`feedkit_carousel_iteration_items{feedkit_cycle="a"}`:          float64(md.Total),
			`feedkit_carousel_iteration_completed{feedkit_cycle="a"}`:      float64(md.Completed),
			`feedkit_carousel_iteration_errors{feedkit_cycle="a"}`:         float64(md.Errors),
			`feedkit_carousel_iteration_progress_ratio{feedkit_cycle="a"}`: md.Progress(),
			`feedkit_carousel_throttle_seconds{feedkit_cycle="a"}`:         md.Throttle.Seconds(),
			`feedkit_carousel_unhealthy{feedkit_cycle="a"}`:                one(md.Has(carousel.Unhealthy)),
		}
		for _, state := range []carousel.State{carousel.Starting, carousel.Running, carousel.Stopped, carousel.CoolDown} {
			want[`feedkit_carousel_state{feedkit_carousel_state="`+string(state)+`",feedkit_cycle="a"}`] = one(md.States[0] == state)
		}
		if published > 0 {
			want[`feedkit_carousel_published_total{feedkit_cycle="a"}`] = float64(published)
			want[`feedkit_carousel_publish_duration_seconds_count{feedkit_cycle="a",feedkit_result="published"}`] = float64(published)
			want[`feedkit_carousel_publish_duration_seconds_sum{feedkit_cycle="a",feedkit_result="published"}`] = 0
		}
		if failed > 0 {
			want[`feedkit_carousel_publish_failures_total{feedkit_cycle="a"}`] = float64(failed)
			want[`feedkit_carousel_publish_duration_seconds_count{feedkit_cycle="a",feedkit_result="failed"}`] = float64(failed)
			want[`feedkit_carousel_publish_duration_seconds_sum{feedkit_cycle="a",feedkit_result="failed"}`] = 0
		}
		if ended > 0 {
			want[`feedkit_carousel_iterations_total{feedkit_cycle="a"}`] = float64(ended)
			want[`feedkit_carousel_iteration_duration_seconds_count{feedkit_cycle="a"}`] = float64(ended)
			want[`feedkit_carousel_iteration_duration_seconds_sum{feedkit_cycle="a"}`] = got[`feedkit_carousel_iteration_duration_seconds_sum{feedkit_cycle="a"}`]
		}
		if n := source.failures(); n > 0 {
			want[`feedkit_carousel_failures_total{feedkit_carousel_operation="count",feedkit_cycle="a"}`] = float64(n)
		}
		require.Equal(t, want, got, "at step %d", step)
		sawUnhealthy = sawUnhealthy || md.Has(carousel.Unhealthy)
		if ended == 2 {
			break
		}
		require.Less(t, step, 100, "two iterations of three items at 10 s with a minute's cool-down take 12 steps")
		clk.Advance(5 * time.Second)
	}
	assert.True(t, sawUnhealthy, "the failed count made the cycle unhealthy, and the gauge said so")
	published, failed := pub.counts()
	assert.Equal(t, []int{4, 2}, []int{published, failed}, "two iterations of a1, a2 (failing) and a3")
	assert.Equal(t, 1, source.failures())
}

func TestNewCarouselAndWatchSchedulerRefuseMisuse(t *testing.T) {
	_, err := promfeedkit.NewCarousel(nil)
	require.ErrorContains(t, err, "Registerer is nil")
	reg := prometheus.NewRegistry()
	m, err := promfeedkit.NewCarousel(reg)
	require.NoError(t, err)
	_, err = promfeedkit.NewCarousel(reg)
	require.Error(t, err, "a second NewCarousel on one registry")
	require.ErrorContains(t, m.WatchScheduler(nil), "nil")
	s, err := carousel.NewScheduler(carousel.NewMemorySource(), &countingPublisher{}, carousel.Config{})
	require.NoError(t, err)
	require.NoError(t, m.WatchScheduler(s))
	require.ErrorContains(t, m.WatchScheduler(s), "already watches")
}

// one is a boolean gauge's value.
func one(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
