package promfeedkit

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/feed"
)

// The label names: the OpenTelemetry attributes of otelfeedkit, with dots made
// underscores, as OpenTelemetry's Prometheus exporter writes them.
const (
	labelSession     = "feedkit_session"
	labelProducer    = "feedkit_producer"
	labelMessageType = "feedkit_message_type"
	labelPool        = "feedkit_pool"
	labelResult      = "feedkit_result"
	labelReason      = "feedkit_reason"
	labelKind        = "feedkit_recovery_kind"
	labelCache       = "feedkit_cache"
	labelMethod      = "http_request_method"
	labelEndpoint    = "url_template"
	labelStatus      = "http_response_status_code"
	labelSystem      = "messaging_system"
)

// The histograms' buckets, in seconds, each spanning what its durations can be.
var (
	// ListenerBuckets time a listener call and a message's wait in its queue: from a
	// few microseconds (a listener that only hands the message on) to seconds (one
	// that writes to a database under load, or a queue that backs up).
	ListenerBuckets = []float64{5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}
	// APIBuckets time the feed API's requests: from a millisecond (a near cache or
	// proxy) to 30 s, past the client's default timeout.
	APIBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}
	// RecoveryBuckets time a recovery, from its acceptance to its end: from a second
	// (an event's recovery) to 30 minutes (a producer's after a long outage, or a
	// timeout).
	RecoveryBuckets = []float64{1, 2.5, 5, 10, 30, 60, 120, 300, 600, 900, 1800}
	// HeldBuckets time how long an up, or an event recovery's end, is held back until
	// the recovery's messages are processed: from a millisecond (the listener is idle)
	// to 30 minutes (a replay of a long outage into a slow listener).
	HeldBuckets = []float64{0.001, 0.005, 0.025, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800}
)

// Metrics is a feedkit.Observer that keeps the SDK's metrics in Prometheus instruments,
// registered by New. Set it as feedkit.Config.Observer, and call WatchSDK with the SDK
// built, for the levels that are read from SDK.Stats at each scrape.
//
// A Metrics serves one SDK. WatchSDK takes one SDK, and a session's messages are told
// apart by its index alone, which is cheaper than by its interest too: the interest in
// the feedkit_session label is that of the first message of the index (an SDK gives
// each index one interest). For several SDKs in one process, make a Metrics for each,
// on registries of their own or on a registerer wrapped with
// prometheus.WrapRegistererWith and a label of yours.
//
// Its methods are safe for concurrent use. Those called once per message
// (FeedMessageReceived, ListenerCalled, CacheRead) do not allocate once their labels
// have been seen.
type Metrics struct {
	clock    clock.Clock
	poolName string

	consumed   *prometheus.CounterVec
	unparsable *prometheus.CounterVec
	calls      *prometheus.CounterVec
	process    *prometheus.HistogramVec
	queueWait  *prometheus.HistogramVec

	downs      *prometheus.CounterVec
	upsHeld    *prometheus.CounterVec
	upHeldFor  *prometheus.HistogramVec
	lag        *prometheus.GaugeVec
	recoveries *prometheus.CounterVec
	recoveryIn *prometheus.HistogramVec

	apiDuration *prometheus.HistogramVec
	apiHeld     *prometheus.CounterVec

	cacheReads     *prometheus.CounterVec
	cacheEvictions *prometheus.CounterVec

	connects       prometheus.Counter
	drops          prometheus.Counter
	failedAttempts prometheus.Counter

	// The levels, collected at each scrape (watch.go).
	backlogDesc, runningDesc, upDesc, lastDownDesc, aliveAgeDesc *prometheus.Desc
	entriesDesc, connectedDesc, receivedDesc                     *prometheus.Desc

	// The children of the calls made once per message (cache.go), by their labels
	// packed into a key (keys.go).
	feedChildren       *children[uint64, prometheus.Counter]
	unparsableChildren *children[uint64, prometheus.Counter]
	pools              *children[string, *poolChildren]
	hits, misses       *children[string, prometheus.Counter]

	mu       sync.Mutex
	lastDown map[int]feed.StatusReason // each producer's last down, by ProducerStatusChanged

	sdk atomic.Pointer[feedkit.SDK] // the SDK that WatchSDK took; nil before
}

var _ feedkit.Observer = (*Metrics)(nil)

// poolChildren are the children of one pool's listener calls.
type poolChildren struct {
	calls   *children[uint64, prometheus.Counter] // by callKey
	timings *children[feed.MessageType, timingChildren]
}

// timingChildren are the histograms a timed listener call moves.
type timingChildren struct {
	process prometheus.Observer
	wait    prometheus.Observer
}

// Option changes what New makes.
type Option func(*Metrics)

// WithClock sets the clock that feedkit_producer_alive_age_seconds is measured on: the
// SDK's Config.Clock, on which the recovery manager stamps each producer's last alive.
// nil, and the default, is the wall clock.
func WithClock(c clock.Clock) Option {
	return func(m *Metrics) { m.clock = clock.OrReal(c) }
}

// WithPoolName sets the feedkit_pool label of the shared pool's levels
// (feedkit_pool_backlog, feedkit_pool_running): the SDK's Config.Concurrent.Name, which
// the Stats do not carry. The default is "feed", the SDK's default name. It does not
// change the label of ListenerCalled, which the pool itself gives.
func WithPoolName(name string) Option {
	return func(m *Metrics) { m.poolName = name }
}

// DefaultPoolName is the shared pool's label without WithPoolName: the name the SDK
// gives its pool when Config.Concurrent.Name is empty.
const DefaultPoolName = "feed"

// New makes the SDK's metrics and registers them all with reg, at once: a name that reg
// already has (a second New on it, say) fails the whole registration, and nothing is
// left registered. reg may not be nil: pass prometheus.DefaultRegisterer explicitly to
// use the global registry.
func New(reg prometheus.Registerer, opts ...Option) (*Metrics, error) {
	if reg == nil {
		return nil, errors.New("promfeedkit: New: the Registerer is nil (pass a registry: prometheus.NewRegistry(), or prometheus.DefaultRegisterer deliberately)")
	}
	m := &Metrics{clock: clock.Real(), poolName: DefaultPoolName, lastDown: map[int]feed.StatusReason{}}
	for _, o := range opts {
		o(m)
	}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	histogram := func(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
	}
	m.consumed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name:        "messaging_client_consumed_messages_total",
		Help:        "Messages a session read from the feed, before routing.",
		ConstLabels: prometheus.Labels{labelSystem: "rabbitmq"},
	}, []string{labelSession, labelProducer, labelMessageType})
	m.unparsable = counter("feedkit_messages_unparsable_total",
		"Messages a session could not route or decode.",
		labelSession, labelProducer, labelMessageType)
	m.calls = counter("feedkit_listener_calls_total",
		"Listener calls made for the feed's messages, by how they ended.",
		labelPool, labelProducer, labelMessageType, labelResult)
	m.process = histogram("messaging_process_duration_seconds",
		"Duration of the listener calls, for a sample of them (concurrent.Config.TimingSample).",
		ListenerBuckets, labelPool, labelMessageType)
	m.queueWait = histogram("feedkit_queue_wait_duration_seconds",
		"Time from a message's dispatch to its listener call's start, for a sample of the calls.",
		ListenerBuckets, labelPool)

	m.downs = counter("feedkit_producer_downs_total",
		"Producer status changes to down, by reason; InitialState counts each producer's down at the start.",
		labelProducer, labelReason)
	m.upsHeld = counter("feedkit_producer_ups_held_total",
		"Ups, and event recoveries' ends, held back until their recovery's messages were processed.",
		labelProducer, labelKind)
	m.upHeldFor = histogram("feedkit_producer_up_held_duration_seconds",
		"How long an up, or an event recovery's end, was held back.",
		HeldBuckets, labelProducer, labelKind)
	m.lag = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "feedkit_producer_lag_seconds",
		Help: "The last alive's lag: the local clock at its receipt minus its timestamp.",
	}, []string{labelProducer})
	m.recoveries = counter("feedkit_recovery_requests_total",
		"Recovery requests tried, by how they went.",
		labelProducer, labelKind, labelResult)
	m.recoveryIn = histogram("feedkit_recovery_duration_seconds",
		"Duration of the accepted recoveries, from their acceptance to their end.",
		RecoveryBuckets, labelProducer, labelKind, labelResult)

	m.apiDuration = histogram("http_client_request_duration_seconds",
		"Duration of the feed API's requests, retries included; the status is empty when no answer came.",
		APIBuckets, labelMethod, labelEndpoint, labelStatus)
	m.apiHeld = counter("feedkit_api_requests_held_total",
		"API requests not sent because the API had paused their endpoint with a 429.",
		labelMethod, labelEndpoint)

	m.cacheReads = counter("feedkit_cache_reads_total",
		"Reads of the names' caches: hit (answered from the cache) or miss (the API was needed).",
		labelCache, labelResult)
	m.cacheEvictions = counter("feedkit_cache_evictions_total",
		"Entries dropped to keep a names cache within its size.",
		labelCache)

	m.connects = prometheus.NewCounter(prometheus.CounterOpts{Name: "feedkit_transport_connects_total",
		Help: "Links to the broker established and consuming, first ones and reconnections."})
	m.drops = prometheus.NewCounter(prometheus.CounterOpts{Name: "feedkit_transport_drops_total",
		Help: "Established links to the broker lost."})
	m.failedAttempts = prometheus.NewCounter(prometheus.CounterOpts{Name: "feedkit_transport_failed_attempts_total",
		Help: "Connection attempts to the broker that failed, first ones included."})

	m.backlogDesc = prometheus.NewDesc("feedkit_pool_backlog",
		"Tasks waiting in a pool's queues, or in a serial session's queue.", []string{labelPool}, nil)
	m.runningDesc = prometheus.NewDesc("feedkit_pool_running",
		"Listener calls in progress on the shared pool.", []string{labelPool}, nil)
	m.upDesc = prometheus.NewDesc("feedkit_producer_up",
		"1 while the producer is up (the listener was last told it is healthy), 0 while it is down.", []string{labelProducer}, nil)
	m.lastDownDesc = prometheus.NewDesc("feedkit_producer_last_down",
		"1 for the reason of the producer's last down.", []string{labelProducer, labelReason}, nil)
	m.aliveAgeDesc = prometheus.NewDesc("feedkit_producer_alive_age_seconds",
		"Time since the producer's last alive was received.", []string{labelProducer}, nil)
	m.entriesDesc = prometheus.NewDesc("feedkit_cache_entries",
		"Entries a names cache holds.", []string{labelCache}, nil)
	m.connectedDesc = prometheus.NewDesc("feedkit_transport_connected",
		"Subscriptions whose link to the broker is up and consuming.", nil, nil)
	m.receivedDesc = prometheus.NewDesc("feedkit_transport_received_bytes_total",
		"Bytes of the message bodies received from the broker.", nil, nil)

	m.feedChildren = newChildren[uint64, prometheus.Counter]()
	m.unparsableChildren = newChildren[uint64, prometheus.Counter]()
	m.pools = newChildren[string, *poolChildren]()
	m.hits = newChildren[string, prometheus.Counter]()
	m.misses = newChildren[string, prometheus.Counter]()

	if err := reg.Register(collector{m}); err != nil {
		return nil, fmt.Errorf("promfeedkit: New: %w", err)
	}
	return m, nil
}

// collector is what New registers: every instrument, as one collector, so that the
// registration succeeds or fails whole.
type collector struct{ m *Metrics }

// vectors returns the instruments kept by the observer methods.
func (m *Metrics) vectors() []prometheus.Collector {
	return []prometheus.Collector{m.consumed, m.unparsable, m.calls, m.process, m.queueWait,
		m.downs, m.upsHeld, m.upHeldFor, m.lag, m.recoveries, m.recoveryIn,
		m.apiDuration, m.apiHeld, m.cacheReads, m.cacheEvictions,
		m.connects, m.drops, m.failedAttempts}
}

// Describe implements prometheus.Collector.
func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, v := range c.m.vectors() {
		v.Describe(ch)
	}
	for _, d := range []*prometheus.Desc{c.m.backlogDesc, c.m.runningDesc, c.m.upDesc, c.m.lastDownDesc,
		c.m.aliveAgeDesc, c.m.entriesDesc, c.m.connectedDesc, c.m.receivedDesc} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c collector) Collect(ch chan<- prometheus.Metric) {
	for _, v := range c.m.vectors() {
		v.Collect(ch)
	}
	c.m.collectLevels(ch)
}
