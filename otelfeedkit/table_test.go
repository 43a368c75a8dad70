package otelfeedkit_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/embedded"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/feedkit/feedkit/carousel"
	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/otelfeedkit"
	"github.com/feedkit/feedkit/recovery"
	"github.com/feedkit/feedkit/workflow"
)

// documented is one row of the package doc's table of metrics.
type documented struct {
	name, unit, kind string
	attrs            []string
}

// docTable reads a table of metrics from doc.go: the indented lines of the section under
// the heading, up to the next heading. The sections are "Metrics" (New), "Workflow
// metrics" (NewWorkflow) and "Carousel metrics" (NewCarousel).
func docTable(t *testing.T, heading string) []documented {
	t.Helper()
	b, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(b), "// # "+heading+"\n")
	require.True(t, ok, "doc.go has a # %s heading", heading)
	section, _, ok := strings.Cut(rest, "\n// # ")
	require.True(t, ok, "a heading follows # %s", heading)
	var rows []documented
	for line := range strings.Lines(section) {
		line, ok := strings.CutPrefix(line, "//\t")
		if !ok {
			continue
		}
		f := strings.Fields(line)
		require.GreaterOrEqual(t, len(f), 3, "row %q", line)
		rows = append(rows, documented{name: f[0], unit: f[1], kind: f[2], attrs: f[3:]})
	}
	require.Len(t, rows, tableRows[heading], "the table of # %s", heading)
	return rows
}

// tableRows are the rows of each table: the SDK's of issue 34, then the workflow's and
// the carousel's of obs-metrics-apps.
var tableRows = map[string]int{"Metrics": 26, "Workflow metrics": 9, "Carousel metrics": 16, "Group metrics": 37}

// created is an instrument as a Meter was asked to make it.
type created struct {
	kind, unit, description string
	observable              bool
	buckets                 []float64
}

// recordingMeter records the instruments made, and makes them with noop's.
type recordingMeter struct {
	noop.Meter
	made      map[string][]created
	callbacks int
}

func (r *recordingMeter) add(name string, c created) { r.made[name] = append(r.made[name], c) }

func (r *recordingMeter) Int64Counter(name string, opts ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	c := metric.NewInt64CounterConfig(opts...)
	r.add(name, created{kind: "counter", unit: c.Unit(), description: c.Description()})
	return r.Meter.Int64Counter(name)
}

func (r *recordingMeter) Float64Histogram(name string, opts ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	c := metric.NewFloat64HistogramConfig(opts...)
	r.add(name, created{kind: "histogram", unit: c.Unit(), description: c.Description(), buckets: c.ExplicitBucketBoundaries()})
	return r.Meter.Float64Histogram(name)
}

func (r *recordingMeter) Float64Gauge(name string, opts ...metric.Float64GaugeOption) (metric.Float64Gauge, error) {
	c := metric.NewFloat64GaugeConfig(opts...)
	r.add(name, created{kind: "gauge", unit: c.Unit(), description: c.Description()})
	return r.Meter.Float64Gauge(name)
}

func (r *recordingMeter) Int64ObservableGauge(name string, opts ...metric.Int64ObservableGaugeOption) (metric.Int64ObservableGauge, error) {
	c := metric.NewInt64ObservableGaugeConfig(opts...)
	r.add(name, created{kind: "gauge", observable: true, unit: c.Unit(), description: c.Description()})
	return r.Meter.Int64ObservableGauge(name)
}

func (r *recordingMeter) Float64ObservableGauge(name string, opts ...metric.Float64ObservableGaugeOption) (metric.Float64ObservableGauge, error) {
	c := metric.NewFloat64ObservableGaugeConfig(opts...)
	r.add(name, created{kind: "gauge", observable: true, unit: c.Unit(), description: c.Description()})
	return r.Meter.Float64ObservableGauge(name)
}

func (r *recordingMeter) Int64ObservableCounter(name string, opts ...metric.Int64ObservableCounterOption) (metric.Int64ObservableCounter, error) {
	c := metric.NewInt64ObservableCounterConfig(opts...)
	r.add(name, created{kind: "counter", observable: true, unit: c.Unit(), description: c.Description()})
	return r.Meter.Int64ObservableCounter(name)
}

func (r *recordingMeter) RegisterCallback(f metric.Callback, insts ...metric.Observable) (metric.Registration, error) {
	r.callbacks++
	return r.Meter.RegisterCallback(f, insts...)
}

// recordingProvider hands out one recordingMeter, and records its name and version.
type recordingProvider struct {
	embedded.MeterProvider
	meter         *recordingMeter
	name, version string
}

func (p *recordingProvider) Meter(name string, opts ...metric.MeterOption) metric.Meter {
	p.name, p.version = name, metric.NewMeterConfig(opts...).InstrumentationVersion()
	return p.meter
}

// constructor is one of the package's constructors, with what its doc table says.
type constructor struct {
	heading   string                         // its table's heading in doc.go
	make      func(otelfeedkit.Option) error // calls it with the option
	callbacks int                            // the callbacks it registers itself
	watched   []string                       // the levels its Watch method reports
	buckets   map[string][2]float64          // the first and last boundary of each histogram
}

var constructors = []constructor{{
	heading:   "Metrics",
	make:      func(o otelfeedkit.Option) error { _, err := otelfeedkit.New(o); return err },
	callbacks: 1, // feedkit.producer.last_down's; WatchSDK registers the levels'
	watched:   watched,
	buckets: map[string][2]float64{
		"messaging.process.duration":        {1e-6, 5},
		"feedkit.queue.wait.duration":       {1e-6, 5},
		"http.client.request.duration":      {0.001, 30},
		"feedkit.recovery.duration":         {0.1, 1800},
		"feedkit.producer.up.held.duration": {0.1, 1800},
	},
}, {
	heading: "Workflow metrics",
	make:    func(o otelfeedkit.Option) error { _, err := otelfeedkit.NewWorkflow(o); return err },
	watched: []string{"feedkit.workflow.processes"},
}, {
	heading: "Carousel metrics",
	make:    func(o otelfeedkit.Option) error { _, err := otelfeedkit.NewCarousel(o); return err },
	watched: []string{"feedkit.carousel.iteration.current", "feedkit.carousel.iteration.items",
		"feedkit.carousel.iteration.completed", "feedkit.carousel.iteration.errors",
		"feedkit.carousel.iteration.progress", "feedkit.carousel.throttle", "feedkit.carousel.state",
		"feedkit.carousel.unhealthy", "feedkit.carousel.active"},
	buckets: map[string][2]float64{
		"feedkit.carousel.publish.duration":   {1e-6, 5},  // as the listener calls
		"feedkit.carousel.iteration.duration": {1, 86400}, // a second to a day
	},
}, {
	heading: "Group metrics",
	make:    func(o otelfeedkit.Option) error { _, err := otelfeedkit.NewGroup(o); return err },
	watched: groupWatched, // every one: all are read from the Stats
}}

// Each constructor makes every instrument of its doc table once, of the documented kind
// and unit, with a description, and no other; the levels its Watch method reads,
// starred, are observable; the histograms have bucket boundaries as advice, in
// ascending order, over the range the doc gives each.
func TestNewMakesTheDocumentedInstruments(t *testing.T) {
	for _, c := range constructors {
		t.Run(c.heading, func(t *testing.T) {
			rows := docTable(t, c.heading)
			p := &recordingProvider{meter: &recordingMeter{made: map[string][]created{}}}
			require.NoError(t, c.make(otelfeedkit.WithMeterProvider(p)))
			assert.Equal(t, otelfeedkit.ScopeName, p.name)
			assert.NotEmpty(t, p.version)
			assert.Equal(t, c.callbacks, p.meter.callbacks)
			for _, r := range rows {
				made := p.meter.made[r.name]
				if !assert.Len(t, made, 1, r.name) {
					continue
				}
				m := made[0]
				kind, starred := strings.CutSuffix(r.kind, "*")
				assert.Equal(t, kind, m.kind, r.name)
				assert.Equal(t, starred, slices.Contains(c.watched, r.name), "%s: a star marks what the Watch method reports", r.name)
				if starred {
					assert.True(t, m.observable, "%s: read when collected", r.name)
				}
				assert.Equal(t, r.unit, m.unit, r.name)
				assert.True(t, strings.HasSuffix(m.description, ".") && len(m.description) > 20, "%s: description %q", r.name, m.description)
				if r.kind == "histogram" {
					want, ok := c.buckets[r.name]
					require.True(t, ok, r.name)
					require.NotEmpty(t, m.buckets, r.name)
					assert.True(t, slices.IsSorted(m.buckets), r.name)
					assert.Equal(t, want, [2]float64{m.buckets[0], m.buckets[len(m.buckets)-1]}, r.name)
				}
			}
			names := make([]string, 0, len(rows))
			for _, r := range rows {
				names = append(names, r.name)
			}
			for name := range p.meter.made {
				assert.Contains(t, names, name, "an instrument the doc does not list")
			}
			starred := 0
			for _, r := range rows {
				if strings.HasSuffix(r.kind, "*") {
					starred++
				}
			}
			assert.Len(t, c.watched, starred, "every level watched is starred")
		})
	}
}

// Every metric an observer call or WatchSDK reports has the unit and description New
// gave it, and exactly the attributes the doc's table lists, with the values the doc
// says; http.response.status_code is left out when no answer came, as the semantic
// conventions say.
func TestCollectedMetricsHaveTheDocumentedAttributes(t *testing.T) {
	rows := docTable(t, "Metrics")
	h := openHeldSDK(t, "feed")
	m := h.m
	_, err := m.WatchSDK(h.sdk)
	require.NoError(t, err)
	allCalls(m)

	got := collect(t, h.reader)
	p := &recordingProvider{meter: &recordingMeter{made: map[string][]created{}}}
	_, err = otelfeedkit.New(otelfeedkit.WithMeterProvider(p))
	require.NoError(t, err)
	for _, r := range rows {
		md, ok := got[r.name]
		if r.name == "feedkit.transport.connected" || r.name == "feedkit.transport.received" {
			assert.False(t, ok, "%s: the embedded broker is no RabbitMQ transport (TestWatchSDKOnRabbitMQ)", r.name)
			continue
		}
		if !assert.True(t, ok, "%s was not reported", r.name) {
			continue
		}
		assert.Equal(t, r.unit, md.Unit, r.name)
		assert.Equal(t, p.meter.made[r.name][0].description, md.Description, r.name)
		want := slices.Sorted(slices.Values(r.attrs))
		for _, pt := range points(md) {
			var keys []string
			for _, kv := range pt.attrs {
				k, v, _ := strings.Cut(kv, "=")
				keys = append(keys, k)
				assert.NotEmpty(t, v, "%s: %s", r.name, kv)
			}
			if r.name == "http.client.request.duration" && !slices.Contains(keys, "http.response.status_code") {
				keys = append(keys, "http.response.status_code")
				slices.Sort(keys)
			}
			assert.Equal(t, want, keys, "%s: %v", r.name, pt.attrs)
		}
	}
	assert.Len(t, got, len(rows)-2)
}

// allCalls makes each observer call once or more, with each kind of value.
func allCalls(m *otelfeedkit.Metrics) {
	live := feed.SessionRef{Index: 1, Interest: feed.LiveMessagesOnly}
	m.FeedMessageReceived(live, 1, feed.MessageOddsChange, 100)
	m.FeedMessageReceived(live, 0, feed.MessageUnknown, 100)
	m.FeedMessageUnparsable(live, 0, feed.MessageUnknown)
	m.ListenerCalled(concurrent.Call{Pool: "feed", Producer: 1, Type: feed.MessageBetStop, Result: concurrent.CallFailed,
		Timed: true, Wait: time.Millisecond, Duration: 2 * time.Millisecond})
	m.ProducerUpHeld(1, feed.EventStatefulRecovery)
	m.ProducerUpReleased(1, feed.EventStatefulRecovery, time.Second)
	m.ProducerStatusChanged(feed.ProducerStatus{Producer: 1, Down: true, Reason: feed.AliveIntervalViolation})
	m.ProducerAlive(1, 300*time.Millisecond)
	m.RecoveryRequested(1, feed.ProducerRecovery, recovery.RequestRateLimited)
	m.RecoveryEnded(1, feed.ProducerRecovery, recovery.RecoveryTimedOut, time.Minute)
	m.APIRequest("GET", "/v1/{lang}/sport_events/{urn}/summary.xml", 200, 40*time.Millisecond)
	m.APIRequest("GET", "/v1/{lang}/sport_events/{urn}/summary.xml", 0, 30*time.Second)
	m.APIRequestHeld("POST", "/v1/{product}/recovery/initiate_request")
	m.CacheRead("markets", true)
	m.CacheRead("profiles", false)
	m.CacheEvicted("summaries")
	m.TransportLinkUp()
	m.TransportLinkDown(context.Canceled)
	m.TransportAttemptFailed(context.Canceled)
}

// documentedValues are the values the doc's # Attributes gives the attributes of the
// workflow and carousel metrics, each a String of the kit's enums.
var documentedValues = map[string][]string{
	"feedkit.state":        {"running", "finished", "failed", "aborted", "broken"},
	"feedkit.timeout.kind": {"work", "task"},
	"feedkit.repair.kind": {"process_begun", "restart_completed", "decision_applied", "task_created",
		"process_failed", "process_finished", "process_restarted"},
	"feedkit.carousel.operation": {"load", "save", "count", "list"},
	"feedkit.carousel.state":     {"starting", "running", "stopped", "cooldown"},
}

// documentedByMetric are the values of an attribute that differ by metric, by metric and
// key: feedkit.result's, and the states a process ends in.
var documentedByMetric = map[string]map[string][]string{
	"feedkit.workflow.tasks.released":   {"feedkit.result": {"finished", "retried", "failed"}},
	"feedkit.carousel.publish.duration": {"feedkit.result": {"published", "failed"}},
	"feedkit.workflow.processes.ended":  {"feedkit.state": {"finished", "failed", "aborted", "broken"}},
}

// Every workflow and carousel metric, told by the observer's calls (each call with each
// value of its enums) or read by WatchEngine and WatchScheduler from a real engine and
// scheduler, has the unit and description its constructor gave it, exactly the
// attributes its doc table lists, and for the enums every value the doc lists and no
// other.
func TestCollectedAppMetricsHaveTheDocumentedAttributes(t *testing.T) {
	wr := newWorkflowRig(t, workflow.Config{})
	reg, err := wr.w.WatchEngine(wr.e)
	require.NoError(t, err)
	t.Cleanup(func() { _ = reg.Unregister() })
	allWorkflowCalls(wr.w)

	c, reader := newCarouselMetrics(t)
	s := newScheduler(t, carousel.NewMemorySource(), carousel.PublisherFunc(func(context.Context, carousel.Publication) error { return nil }),
		carousel.Config{Store: carousel.NewMemoryStore(), Clock: clocktest.NewFake(epoch)},
		carousel.CycleConfig{Name: "prices.v2", Type: carousel.ThrottledWholeCollection, Origin: "o", Collection: "c",
			CoolDown: time.Minute, Throttle: time.Minute})
	reg, err = c.WatchScheduler(s)
	require.NoError(t, err)
	t.Cleanup(func() { _ = reg.Unregister() })
	allCarouselCalls(c)

	for _, ct := range constructors[1:] {
		if ct.heading == "Group metrics" {
			continue // on RabbitMQ: TestGroupMetricsFollowAnIngressAndAWorker
		}
		t.Run(ct.heading, func(t *testing.T) {
			rows := docTable(t, ct.heading)
			got := collect(t, wr.reader)
			if ct.heading == "Carousel metrics" {
				got = collect(t, reader)
			}
			p := &recordingProvider{meter: &recordingMeter{made: map[string][]created{}}}
			require.NoError(t, ct.make(otelfeedkit.WithMeterProvider(p)))
			assert.Len(t, got, len(rows), "every metric reported, and no other")
			for _, r := range rows {
				md, ok := got[r.name]
				if !assert.True(t, ok, "%s was not reported", r.name) {
					continue
				}
				assert.Equal(t, r.unit, md.Unit, r.name)
				assert.Equal(t, p.meter.made[r.name][0].description, md.Description, r.name)
				want := slices.Sorted(slices.Values(r.attrs))
				seen := map[string][]string{} // the values of each key
				for _, pt := range points(md) {
					var keys []string
					for _, kv := range pt.attrs {
						k, v, _ := strings.Cut(kv, "=")
						keys = append(keys, k)
						assert.NotEmpty(t, v, "%s: %s", r.name, kv)
						if !slices.Contains(seen[k], v) {
							seen[k] = append(seen[k], v)
						}
					}
					assert.Equal(t, want, keys, "%s: %v", r.name, pt.attrs)
				}
				for k, vs := range seen {
					doc, ok := documentedValues[k]
					if d, found := documentedByMetric[r.name][k]; found {
						doc, ok = d, true
					}
					require.True(t, ok || k != "feedkit.result", "%s: feedkit.result's values are documented", r.name)
					if ok {
						assert.ElementsMatch(t, doc, vs, "%s: %s", r.name, k)
					}
				}
			}
		})
	}
}

// allWorkflowCalls makes each workflow observer call with each value of its enums.
func allWorkflowCalls(w *otelfeedkit.WorkflowMetrics) {
	states := []workflow.ProcessState{workflow.ProcessRunning, workflow.ProcessFinished, workflow.ProcessFailed,
		workflow.ProcessAborted, workflow.ProcessBroken}
	w.WorkflowProcessStarted("order")
	for _, s := range states {
		w.WorkflowProcessRestarted("order", s)
		if s != workflow.ProcessRunning {
			w.WorkflowProcessEnded("order", s)
		}
	}
	w.WorkflowTaskPolled("check")
	for _, r := range []workflow.ReleaseResult{workflow.ReleaseFinished, workflow.ReleaseRetried, workflow.ReleaseFailed} {
		w.WorkflowTaskReleased("check", r)
	}
	w.WorkflowTaskTimeout(workflow.TimeoutWork, "check")
	w.WorkflowTaskTimeout(workflow.TimeoutTask, "check")
	w.WorkflowProcessTimeout("order")
	for k := workflow.RepairProcessBegun; k <= workflow.RepairProcessRestarted; k++ {
		w.WorkflowRepaired("order", k)
	}
}

// allCarouselCalls makes each carousel observer call with each value of its enums.
func allCarouselCalls(c *otelfeedkit.CarouselMetrics) {
	c.CarouselPublished("prices.v2", time.Millisecond)
	c.CarouselPublishFailed("prices.v2", time.Second)
	c.CarouselIterationCompleted("prices.v2", time.Hour)
	for _, op := range []carousel.Op{carousel.OpLoad, carousel.OpSave, carousel.OpCount, carousel.OpList} {
		c.CarouselFailed("prices.v2", op)
	}
	c.CarouselFenced("prices.v2")
}
