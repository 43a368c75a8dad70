package otelfeedkit

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/feed"
)

// ScopeName is the name of the Meter the instruments are made with: the instrumentation
// scope of every metric this package exports.
const ScopeName = "github.com/feedkit/feedkit/otelfeedkit"

// DefaultPoolName is the shared pool's name when Config.Concurrent.Name is empty, as the
// SDK names it.
const DefaultPoolName = "feed"

// The histograms' bucket boundaries, in seconds, given to the SDK as advice (a View can
// change them). A listener call and its wait in the queue take microseconds to seconds;
// an API request milliseconds to its 30 s timeout; a recovery, and an up held until its
// replay is processed, seconds to half an hour.
var (
	callBuckets = []float64{0.000001, 0.0000025, 0.000005, 0.00001, 0.000025, 0.00005, 0.0001, 0.00025,
		0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}
	apiBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1,
		2.5, 5, 7.5, 10, 15, 20, 30}
	recoveryBuckets = []float64{0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 900, 1200, 1800}
)

// Option tunes New.
type Option func(*config)

type config struct {
	provider metric.MeterProvider
	pool     string
	clock    clock.Clock
}

// WithMeterProvider makes the instruments with mp's Meter. The default is the global
// provider, otel.GetMeterProvider().
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.provider = mp }
}

// WithPoolName names the SDK's shared pool as Config.Concurrent.Name does, for the
// levels WatchSDK reads (the SDK's Stats do not carry it); the default is
// DefaultPoolName, the SDK's own default. The listener calls carry the name the pool
// gives them.
func WithPoolName(name string) Option {
	return func(c *config) { c.pool = name }
}

// WithClock is the clock feedkit.producer.alive.age is measured on: the SDK's
// Config.Clock, whose time ProducerState.LastAliveAt is in. The default is the wall
// clock.
func WithClock(c clock.Clock) Option {
	return func(cf *config) { cf.clock = c }
}

// Metrics records what an SDK does as OpenTelemetry metrics. It is a feedkit.Observer:
// set it as feedkit.Config.Observer, and call WatchSDK once the SDK is built for the
// levels read from its Stats. Its methods may be called concurrently.
//
// A Metrics serves one SDK: feedkit.session's value for a session index is made from
// the interest the index first comes with, and WatchSDK watches one SDK.
type Metrics struct {
	cfg   config
	meter metric.Meter

	// Events, told through the observer.
	consumed      metric.Int64Counter
	unparsable    metric.Int64Counter
	calls         metric.Int64Counter
	process       metric.Float64Histogram
	queueWait     metric.Float64Histogram
	downs         metric.Int64Counter
	upsHeld       metric.Int64Counter
	upHeldTime    metric.Float64Histogram
	lag           metric.Float64Gauge
	requests      metric.Int64Counter
	recoveryTime  metric.Float64Histogram
	apiTime       metric.Float64Histogram
	apiHeld       metric.Int64Counter
	cacheReads    metric.Int64Counter
	evictions     metric.Int64Counter
	connects      metric.Int64Counter
	drops         metric.Int64Counter
	failedAttempt metric.Int64Counter

	// Levels, observed when the metrics are collected.
	backlog   metric.Int64ObservableGauge
	running   metric.Int64ObservableGauge
	up        metric.Int64ObservableGauge
	lastDown  metric.Int64ObservableGauge
	aliveAge  metric.Float64ObservableGauge
	entries   metric.Int64ObservableGauge
	connected metric.Int64ObservableGauge
	received  metric.Int64ObservableCounter

	// The attribute sets of the calls, by their labels.
	feedAttrs     cache[feedKey, feedEntry]
	callAttrs     cache[callKey, callEntry]
	producerAttrs cache[int, attrs]
	downAttrs     cache[downKey, attrs]
	heldAttrs     cache[heldKey, attrs]
	recoveryAttrs cache[recoveryKey, attrs]
	apiAttrs      cache[apiKey, attrs]
	readAttrs     cache[readKey, attrs]
	cacheAttrs    cache[string, attrs]
	poolAttrs     cache[string, attrs]

	mu          sync.Mutex
	downReasons map[int]feed.StatusReason // by producer: the reason of its last down
	watching    bool                      // WatchSDK has an SDK registered
}

var _ feedkit.Observer = (*Metrics)(nil)

// New makes every instrument of the package's table with the MeterProvider's Meter
// named ScopeName.
func New(opts ...Option) (*Metrics, error) {
	m := &Metrics{cfg: config{pool: DefaultPoolName}, downReasons: map[int]feed.StatusReason{}}
	for _, o := range opts {
		o(&m.cfg)
	}
	if m.cfg.provider == nil {
		m.cfg.provider = otel.GetMeterProvider()
	}
	m.cfg.clock = clock.OrReal(m.cfg.clock)
	m.meter = m.cfg.provider.Meter(ScopeName, metric.WithInstrumentationVersion(version()))
	if err := m.instruments(); err != nil {
		return nil, fmt.Errorf("otelfeedkit: %w", err)
	}
	if _, err := m.meter.RegisterCallback(m.observeLastDown, m.lastDown); err != nil {
		return nil, fmt.Errorf("otelfeedkit: %w", err)
	}
	return m, nil
}

// instruments makes the instruments; their names, units and descriptions are the
// package doc's table.
func (m *Metrics) instruments() error {
	mt := m.meter
	var errs []error
	check := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := mt.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		check(err)
		return c
	}
	histogram := func(name, desc string, buckets []float64) metric.Float64Histogram {
		h, err := mt.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
			metric.WithExplicitBucketBoundaries(buckets...))
		check(err)
		return h
	}
	gauge := func(name, unit, desc string) metric.Int64ObservableGauge {
		g, err := mt.Int64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
		check(err)
		return g
	}
	var err error

	m.consumed = counter("messaging.client.consumed.messages", "{message}",
		"Messages read from the feed by a session, before they are routed.")
	m.unparsable = counter("feedkit.messages.unparsable", "{message}",
		"Messages of a session that could not be routed or decoded.")
	m.calls = counter("feedkit.listener.calls", "{call}",
		"Listener calls for messages, by how they ended.")
	m.process = histogram("messaging.process.duration",
		"Duration of the listener calls, measured for one call in the pool's TimingSample.", callBuckets)
	m.queueWait = histogram("feedkit.queue.wait.duration",
		"Time from a message's dispatch to its listener call, measured for one call in the pool's TimingSample.", callBuckets)
	m.backlog = gauge("feedkit.pool.backlog", "{task}",
		"Tasks waiting in the pool's queues.")
	m.running = gauge("feedkit.pool.running", "{call}",
		"Listener calls of the pool in progress.")
	m.up = gauge("feedkit.producer.up", "{producer}",
		"1 while the producer is up (the customer was last told so), else 0.")
	m.lastDown = gauge("feedkit.producer.last_down", "{producer}",
		"1 for the reason of the producer's last down.")
	m.downs = counter("feedkit.producer.downs", "{down}",
		"Status changes that took a producer down or kept it down, by reason.")
	m.upsHeld = counter("feedkit.producer.ups.held", "{up}",
		"Producer ups and event recoveries' ends held back until their recovery's messages were processed.")
	m.upHeldTime = histogram("feedkit.producer.up.held.duration",
		"How long a held up or event recovery's end was held.", recoveryBuckets)
	m.lag, err = mt.Float64Gauge("feedkit.producer.lag", metric.WithUnit("s"),
		metric.WithDescription("The last alive's lag: the local clock at its receipt minus its timestamp."))
	check(err)
	m.aliveAge, err = mt.Float64ObservableGauge("feedkit.producer.alive.age", metric.WithUnit("s"),
		metric.WithDescription("Time since the producer's last alive was received."))
	check(err)
	m.requests = counter("feedkit.recovery.requests", "{request}",
		"Recovery requests tried, by how they went.")
	m.recoveryTime = histogram("feedkit.recovery.duration",
		"Duration of the recoveries the API accepted, from acceptance to their end.", recoveryBuckets)
	m.apiTime = histogram("http.client.request.duration",
		"Duration of the feed API's requests, each attempt apart.", apiBuckets)
	m.apiHeld = counter("feedkit.api.requests.held", "{request}",
		"Requests not sent because the API had paused their endpoint with a 429.")
	m.cacheReads = counter("feedkit.cache.reads", "{read}",
		"Reads of the names' caches: hits, and misses that needed the API.")
	m.evictions = counter("feedkit.cache.evictions", "{entry}",
		"Entries dropped to keep a names' cache within its size.")
	m.entries = gauge("feedkit.cache.entries", "{entry}",
		"Entries held by a names' cache.")
	m.connected = gauge("feedkit.transport.connected", "{link}",
		"Subscriptions whose link to the broker is up and consuming.")
	m.connects = counter("feedkit.transport.connects", "{link}",
		"Links to the broker established: first ones and reconnections.")
	m.drops = counter("feedkit.transport.drops", "{link}",
		"Established links to the broker lost.")
	m.failedAttempt = counter("feedkit.transport.failed_attempts", "{attempt}",
		"Connection attempts to the broker that failed.")
	m.received, err = mt.Int64ObservableCounter("feedkit.transport.received", metric.WithUnit("By"),
		metric.WithDescription("Bytes of the message bodies received from the broker."))
	check(err)
	return errors.Join(errs...)
}

// version is this module's version as the build knows it, for the Meter's scope:
// "(devel)" when it is the main module or when the build says nothing.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == ScopeName {
				if d.Replace != nil && d.Replace.Version != "" {
					return d.Replace.Version
				}
				if d.Version != "" {
					return d.Version
				}
			}
		}
		if bi.Main.Path == ScopeName && bi.Main.Version != "" {
			return bi.Main.Version
		}
	}
	return "(devel)"
}
