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

	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/otelfeedkit"
	"github.com/feedkit/feedkit/recovery"
)

// documented is one row of the package doc's table of metrics.
type documented struct {
	name, unit, kind string
	attrs            []string
}

// docTable reads the table of metrics from doc.go: the indented lines between the
// "# Metrics" and "# Attributes" headings.
func docTable(t *testing.T) []documented {
	t.Helper()
	b, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(b), "// # Metrics\n")
	require.True(t, ok, "doc.go has a # Metrics heading")
	section, _, ok := strings.Cut(rest, "// # Attributes\n")
	require.True(t, ok, "doc.go has an # Attributes heading")
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
	require.Len(t, rows, 26, "the table of issue 34")
	return rows
}

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

// New makes every instrument of the doc's table once, of the documented kind and unit,
// with a description, and no other; the levels read by WatchSDK, starred, are
// observable; the histograms have bucket boundaries as advice, in
// ascending order, over the range the doc gives each.
func TestNewMakesTheDocumentedInstruments(t *testing.T) {
	rows := docTable(t)
	p := &recordingProvider{meter: &recordingMeter{made: map[string][]created{}}}
	_, err := otelfeedkit.New(otelfeedkit.WithMeterProvider(p))
	require.NoError(t, err)
	assert.Equal(t, otelfeedkit.ScopeName, p.name)
	assert.NotEmpty(t, p.version)
	assert.Equal(t, 1, p.meter.callbacks, "feedkit.producer.last_down's callback; WatchSDK registers the levels'")

	buckets := map[string][2]float64{ // the first and last boundary of each histogram
		"messaging.process.duration":        {1e-6, 5},
		"feedkit.queue.wait.duration":       {1e-6, 5},
		"http.client.request.duration":      {0.001, 30},
		"feedkit.recovery.duration":         {0.1, 1800},
		"feedkit.producer.up.held.duration": {0.1, 1800},
	}
	for _, r := range rows {
		made := p.meter.made[r.name]
		if !assert.Len(t, made, 1, r.name) {
			continue
		}
		c := made[0]
		kind, starred := strings.CutSuffix(r.kind, "*")
		assert.Equal(t, kind, c.kind, r.name)
		assert.Equal(t, starred, slices.Contains(watched, r.name), "%s: a star marks what WatchSDK reports", r.name)
		if starred {
			assert.True(t, c.observable, "%s: read when collected", r.name)
		}
		assert.Equal(t, r.unit, c.unit, r.name)
		assert.True(t, strings.HasSuffix(c.description, ".") && len(c.description) > 20, "%s: description %q", r.name, c.description)
		if r.kind == "histogram" {
			want, ok := buckets[r.name]
			require.True(t, ok, r.name)
			require.NotEmpty(t, c.buckets, r.name)
			assert.True(t, slices.IsSorted(c.buckets), r.name)
			assert.Equal(t, want, [2]float64{c.buckets[0], c.buckets[len(c.buckets)-1]}, r.name)
		}
	}
	names := make([]string, 0, len(rows))
	for _, r := range rows {
		names = append(names, r.name)
	}
	for name := range p.meter.made {
		assert.Contains(t, names, name, "an instrument the doc does not list")
	}
}

// Every metric an observer call or WatchSDK reports has the unit and description New
// gave it, and exactly the attributes the doc's table lists, with the values the doc
// says; http.response.status_code is left out when no answer came, as the semantic
// conventions say.
func TestCollectedMetricsHaveTheDocumentedAttributes(t *testing.T) {
	rows := docTable(t)
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
