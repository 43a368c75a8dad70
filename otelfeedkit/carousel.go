package otelfeedkit

import (
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/feedkit/feedkit/carousel"
)

// The attribute keys of the carousel metrics.
const (
	keyCycle      = attribute.Key("feedkit.cycle")
	keyOperation  = attribute.Key("feedkit.carousel.operation")
	keyCycleState = attribute.Key("feedkit.carousel.state")
)

// iterationBuckets time a carousel's iteration, in seconds: from a second (an empty
// window, a small collection) to a day (a large collection at a slow throttle, or an
// iteration that stood stopped a while), as promfeedkit's IterationBuckets.
var iterationBuckets = []float64{1, 5, 10, 30, 60, 300, 600, 1800, 3600, 7200, 14400, 43200, 86400}

// cycleStates are the main states feedkit.carousel.state reports, 1 for the cycle's and
// 0 for the others, so that a cycle's state change moves two series at once.
var cycleStates = [...]carousel.State{carousel.Starting, carousel.Running, carousel.Stopped, carousel.CoolDown}

// cycleOps are the operations feedkit.carousel.failures names, indexed by carousel.Op.
var cycleOps = [...]carousel.Op{carousel.OpLoad, carousel.OpSave, carousel.OpCount, carousel.OpList}

// CarouselMetrics records what a carousel scheduler's cycles do as OpenTelemetry
// metrics. It is a carousel.Observer: set it as carousel.Config.Observer. Call
// WatchScheduler for the levels, each cycle's progress, throttle and state, which are
// read when the metrics are collected, not told. Its methods may be called concurrently.
type CarouselMetrics struct {
	meter metric.Meter

	published, publishFailures metric.Int64Counter
	publishTime                metric.Float64Histogram
	iterations                 metric.Int64Counter
	iterationTime              metric.Float64Histogram
	failures, fenced           metric.Int64Counter

	// Levels, observed when the metrics are collected.
	iteration, items, completed, errors metric.Int64ObservableGauge
	progress, throttle                  metric.Float64ObservableGauge
	state, unhealthy, active            metric.Int64ObservableGauge

	cycles cache[string, *cycleAttrs]
	guard  watchGuard
}

// cycleAttrs holds the attribute sets of one cycle.
type cycleAttrs struct {
	cycle             attrs                   // feedkit.cycle alone
	published, failed attrs                   // with feedkit.result
	ops               [len(cycleOps)]attrs    // with feedkit.carousel.operation, by carousel.Op
	states            [len(cycleStates)]attrs // with feedkit.carousel.state, as cycleStates
}

var _ carousel.Observer = (*CarouselMetrics)(nil)

// NewCarousel makes the carousel instruments of the package's table with the Meter named
// ScopeName. Of the options only WithMeterProvider matters: no pool is named, and the
// durations come measured on the scheduler's own clock (carousel.Config.Clock).
func NewCarousel(opts ...Option) (*CarouselMetrics, error) {
	mk := &maker{meter: meterOf(opts)}
	c := &CarouselMetrics{meter: mk.meter}
	c.published = mk.counter("feedkit.carousel.published", "{item}",
		"Items a cycle republished.")
	c.publishFailures = mk.counter("feedkit.carousel.publish.failures", "{item}",
		"Items whose publish failed; the cycle counts them in its errors and goes on.")
	c.publishTime = mk.histogram("feedkit.carousel.publish.duration",
		"Duration of the Publisher's calls, published or failed.", callBuckets)
	c.iterations = mk.counter("feedkit.carousel.iterations", "{iteration}",
		"Iterations a cycle completed, empty ones included.")
	c.iterationTime = mk.histogram("feedkit.carousel.iteration.duration",
		"Duration of the completed iterations from their first start; the time a resumed one stood stopped counts.",
		iterationBuckets)
	c.failures = mk.counter("feedkit.carousel.failures", "{failure}",
		"Calls to the Source or the metadata store that failed, by operation.")
	c.fenced = mk.counter("feedkit.carousel.fenced", "{save}",
		"Saves of a cycle's metadata refused because another activation took the cycle over.")
	c.iteration = mk.intGauge("feedkit.carousel.iteration.current", "{iteration}",
		"The cycle's iteration, from 1 for the first.")
	c.items = mk.intGauge("feedkit.carousel.iteration.items", "{item}",
		"Items of the cycle's current iteration.")
	c.completed = mk.intGauge("feedkit.carousel.iteration.completed", "{item}",
		"Items of the current iteration republished or failed.")
	c.errors = mk.intGauge("feedkit.carousel.iteration.errors", "{item}",
		"Items of the current iteration whose publish failed.")
	c.progress = mk.floatGauge("feedkit.carousel.iteration.progress", "1",
		"Completed items over the current iteration's items, from 0 to 1.")
	c.throttle = mk.floatGauge("feedkit.carousel.throttle", "s",
		"Interval between publishes the cycle uses now, an operator's SetThrottle included.")
	c.state = mk.intGauge("feedkit.carousel.state", "{cycle}",
		"1 for the cycle's main state, 0 for the others.")
	c.unhealthy = mk.intGauge("feedkit.carousel.unhealthy", "{cycle}",
		"1 while the cycle's Source or metadata store fails and the cycle retries it, else 0.")
	c.active = mk.intGauge("feedkit.carousel.active", "{scheduler}",
		"1 while the scheduler's toggle last said this instance is the active one, else 0.")
	if err := mk.err(); err != nil {
		return nil, fmt.Errorf("otelfeedkit: NewCarousel: %w", err)
	}
	return c, nil
}

// cycle returns the attribute sets of the cycle named name.
func (c *CarouselMetrics) cycle(name string) *cycleAttrs {
	if a, ok := c.cycles.lookup(name); ok {
		return a
	}
	return c.cycles.get(name, func() *cycleAttrs {
		kv := keyCycle.String(name)
		a := &cycleAttrs{cycle: newAttrs(kv),
			published: newAttrs(kv, keyResult.String("published")),
			failed:    newAttrs(kv, keyResult.String("failed"))}
		for i, op := range cycleOps {
			a.ops[i] = newAttrs(kv, keyOperation.String(op.String()))
		}
		for i, s := range cycleStates {
			a.states[i] = newAttrs(kv, keyCycleState.String(string(s)))
		}
		return a
	})
}

// CarouselPublished counts in feedkit.carousel.published and records how long the
// publish took in feedkit.carousel.publish.duration, as published.
func (c *CarouselMetrics) CarouselPublished(cycle string, took time.Duration) {
	a := c.cycle(cycle)
	c.published.Add(bg, 1, a.cycle.add...)
	c.publishTime.Record(bg, took.Seconds(), a.published.record...)
}

// CarouselPublishFailed counts in feedkit.carousel.publish.failures and records how long
// the publish took in feedkit.carousel.publish.duration, as failed.
func (c *CarouselMetrics) CarouselPublishFailed(cycle string, took time.Duration) {
	a := c.cycle(cycle)
	c.publishFailures.Add(bg, 1, a.cycle.add...)
	c.publishTime.Record(bg, took.Seconds(), a.failed.record...)
}

// CarouselIterationCompleted counts in feedkit.carousel.iterations and records how long
// the iteration took in feedkit.carousel.iteration.duration.
func (c *CarouselMetrics) CarouselIterationCompleted(cycle string, took time.Duration) {
	a := c.cycle(cycle)
	c.iterations.Add(bg, 1, a.cycle.add...)
	c.iterationTime.Record(bg, took.Seconds(), a.cycle.record...)
}

// CarouselFailed counts in feedkit.carousel.failures, by operation. An operation the
// carousel may add later is counted under its own name, its attribute set made at each
// call.
func (c *CarouselMetrics) CarouselFailed(cycle string, op carousel.Op) {
	if int(op) < len(cycleOps) {
		c.failures.Add(bg, 1, c.cycle(cycle).ops[op].add...)
		return
	}
	c.failures.Add(bg, 1, newAttrs(keyCycle.String(cycle), keyOperation.String(op.String())).add...)
}

// CarouselFenced counts in feedkit.carousel.fenced.
func (c *CarouselMetrics) CarouselFenced(cycle string) {
	c.fenced.Add(bg, 1, c.cycle(cycle).cycle.add...)
}
