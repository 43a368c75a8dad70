package promfeedkit

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/feedkit/feedkit/carousel"
)

// The carousel metrics' label names.
const (
	labelCycle      = "feedkit_cycle"
	labelOperation  = "feedkit_carousel_operation"
	labelCycleState = "feedkit_carousel_state"
)

// IterationBuckets time a carousel's iteration: from a second (a small collection, or
// an empty window) to a day (a large one at a slow throttle, or one stopped a while).
var IterationBuckets = []float64{1, 5, 10, 30, 60, 300, 600, 1800, 3600, 7200, 14400, 43200, 86400}

// cycleStates are the main states feedkit_carousel_state reports, 1 for the cycle's.
var cycleStates = []carousel.State{carousel.Starting, carousel.Running, carousel.Stopped, carousel.CoolDown}

// CarouselMetrics is a carousel.Observer that keeps a scheduler's metrics in Prometheus
// instruments, registered by NewCarousel. Set it as carousel.Config.Observer; call
// WatchScheduler for each cycle's progress, throttle and state, read at each scrape.
type CarouselMetrics struct {
	published, publishFailures *prometheus.CounterVec
	publishDuration            *prometheus.HistogramVec
	iterations                 *prometheus.CounterVec
	iterationDuration          *prometheus.HistogramVec
	failures, fenced           *prometheus.CounterVec

	iterationDesc, itemsDesc, completedDesc, errorsDesc  *prometheus.Desc
	progressDesc, throttleDesc, stateDesc, unhealthyDesc *prometheus.Desc
	activeDesc                                           *prometheus.Desc

	scheduler atomic.Pointer[carousel.Scheduler]
}

var _ carousel.Observer = (*CarouselMetrics)(nil)

// NewCarousel makes a carousel scheduler's metrics and registers them with reg, all or
// none. reg may not be nil.
func NewCarousel(reg prometheus.Registerer) (*CarouselMetrics, error) {
	if reg == nil {
		return nil, errors.New("promfeedkit: NewCarousel: the Registerer is nil (pass a registry: prometheus.NewRegistry(), or prometheus.DefaultRegisterer deliberately)")
	}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	histogram := func(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
	}
	gauge := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	m := &CarouselMetrics{
		published: counter("feedkit_carousel_published_total",
			"Items a cycle republished.", labelCycle),
		publishFailures: counter("feedkit_carousel_publish_failures_total",
			"Items whose publish failed; the cycle counts them in its errors and goes on.", labelCycle),
		publishDuration: histogram("feedkit_carousel_publish_duration_seconds",
			"Duration of the Publisher's calls, published or failed.", ListenerBuckets, labelCycle, labelResult),
		iterations: counter("feedkit_carousel_iterations_total",
			"Iterations a cycle completed, empty ones included.", labelCycle),
		iterationDuration: histogram("feedkit_carousel_iteration_duration_seconds",
			"Duration of the completed iterations, from their first start; a stop's time counts.", IterationBuckets, labelCycle),
		failures: counter("feedkit_carousel_failures_total",
			"Calls to the Source or the metadata store that failed, by operation.", labelCycle, labelOperation),
		fenced: counter("feedkit_carousel_fenced_total",
			"Saves refused because another activation took the cycle over.", labelCycle),

		iterationDesc: gauge("feedkit_carousel_iteration_current", "The cycle's iteration, from 1 for the first.", labelCycle),
		itemsDesc:     gauge("feedkit_carousel_iteration_items", "Items of the cycle's current iteration.", labelCycle),
		completedDesc: gauge("feedkit_carousel_iteration_completed", "Items of the current iteration republished or failed.", labelCycle),
		errorsDesc:    gauge("feedkit_carousel_iteration_errors", "Items of the current iteration that failed.", labelCycle),
		progressDesc:  gauge("feedkit_carousel_iteration_progress_ratio", "Completed items over the iteration's items, 0 to 1.", labelCycle),
		throttleDesc:  gauge("feedkit_carousel_throttle_seconds", "Interval between publishes the current iteration uses.", labelCycle),
		stateDesc:     gauge("feedkit_carousel_state", "1 for the cycle's main state, 0 for the others.", labelCycle, labelCycleState),
		unhealthyDesc: gauge("feedkit_carousel_unhealthy", "1 while the cycle's Source or store fails.", labelCycle),
		activeDesc:    gauge("feedkit_carousel_active", "1 while the scheduler's toggle says this instance is the active one."),
	}
	if err := reg.Register(carouselCollector{m}); err != nil {
		return nil, fmt.Errorf("promfeedkit: NewCarousel: %w", err)
	}
	return m, nil
}

// WatchScheduler makes each scrape read s.Status(), once, for the levels of every
// cycle and the scheduler's activity. A CarouselMetrics watches one scheduler.
func (m *CarouselMetrics) WatchScheduler(s *carousel.Scheduler) error {
	if s == nil {
		return errors.New("promfeedkit: WatchScheduler: the Scheduler is nil")
	}
	if !m.scheduler.CompareAndSwap(nil, s) {
		return errors.New("promfeedkit: WatchScheduler: this CarouselMetrics already watches a scheduler; make one per scheduler, on a registerer wrapped with a label telling them apart")
	}
	return nil
}

// CarouselPublished counts in feedkit_carousel_published_total and times the publish.
func (m *CarouselMetrics) CarouselPublished(cycle string, took time.Duration) {
	m.published.WithLabelValues(cycle).Inc()
	m.publishDuration.WithLabelValues(cycle, "published").Observe(took.Seconds())
}

// CarouselPublishFailed counts in feedkit_carousel_publish_failures_total and times the
// publish.
func (m *CarouselMetrics) CarouselPublishFailed(cycle string, took time.Duration) {
	m.publishFailures.WithLabelValues(cycle).Inc()
	m.publishDuration.WithLabelValues(cycle, "failed").Observe(took.Seconds())
}

// CarouselIterationCompleted counts in feedkit_carousel_iterations_total and times the
// iteration.
func (m *CarouselMetrics) CarouselIterationCompleted(cycle string, took time.Duration) {
	m.iterations.WithLabelValues(cycle).Inc()
	m.iterationDuration.WithLabelValues(cycle).Observe(took.Seconds())
}

// CarouselFailed counts in feedkit_carousel_failures_total.
func (m *CarouselMetrics) CarouselFailed(cycle string, op carousel.Op) {
	m.failures.WithLabelValues(cycle, op.String()).Inc()
}

// CarouselFenced counts in feedkit_carousel_fenced_total.
func (m *CarouselMetrics) CarouselFenced(cycle string) {
	m.fenced.WithLabelValues(cycle).Inc()
}

// carouselCollector is what NewCarousel registers, as one collector so that the
// registration succeeds or fails whole.
type carouselCollector struct{ m *CarouselMetrics }

func (c carouselCollector) vectors() []prometheus.Collector {
	m := c.m
	return []prometheus.Collector{m.published, m.publishFailures, m.publishDuration,
		m.iterations, m.iterationDuration, m.failures, m.fenced}
}

func (c carouselCollector) levels() []*prometheus.Desc {
	m := c.m
	return []*prometheus.Desc{m.iterationDesc, m.itemsDesc, m.completedDesc, m.errorsDesc,
		m.progressDesc, m.throttleDesc, m.stateDesc, m.unhealthyDesc, m.activeDesc}
}

// Describe implements prometheus.Collector.
func (c carouselCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, v := range c.vectors() {
		v.Describe(ch)
	}
	for _, d := range c.levels() {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c carouselCollector) Collect(ch chan<- prometheus.Metric) {
	for _, v := range c.vectors() {
		v.Collect(ch)
	}
	s := c.m.scheduler.Load()
	if s == nil {
		return
	}
	m := c.m
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	st := s.Status()
	gauge(m.activeDesc, one(st.Active))
	for _, cs := range st.Cycles {
		md, id := cs.Metadata, cs.ID
		gauge(m.iterationDesc, float64(md.Iteration), id)
		gauge(m.itemsDesc, float64(md.Total), id)
		gauge(m.completedDesc, float64(md.Completed), id)
		gauge(m.errorsDesc, float64(md.Errors), id)
		gauge(m.progressDesc, md.Progress(), id)
		gauge(m.throttleDesc, md.Throttle.Seconds(), id)
		var main carousel.State
		if len(md.States) > 0 {
			main = md.States[0]
		}
		for _, state := range cycleStates {
			gauge(m.stateDesc, one(state == main), id, string(state))
		}
		gauge(m.unhealthyDesc, one(md.Has(carousel.Unhealthy)), id)
	}
}

// one is 1 for true, 0 for false: a boolean gauge's value.
func one(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
