package promfeedkit_test

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/promfeedkit"
	"github.com/feedkit/feedkit/recovery"
)

// instrument is a line of issue 34's table of metric names: the Prometheus name, its
// type, and its labels (sorted, the constant one included).
type instrument struct {
	typ    dto.MetricType
	labels []string
}

var (
	counter   = dto.MetricType_COUNTER
	gauge     = dto.MetricType_GAUGE
	histogram = dto.MetricType_HISTOGRAM
)

// table is the metric names table, written out again: a change of a name or a label is
// a change of every dashboard, and must show here.
var table = map[string]instrument{
	"messaging_client_consumed_messages_total":  {counter, []string{"feedkit_message_type", "feedkit_producer", "feedkit_session", "messaging_system"}},
	"feedkit_messages_unparsable_total":         {counter, []string{"feedkit_message_type", "feedkit_producer", "feedkit_session"}},
	"feedkit_listener_calls_total":              {counter, []string{"feedkit_message_type", "feedkit_pool", "feedkit_producer", "feedkit_result"}},
	"messaging_process_duration_seconds":        {histogram, []string{"feedkit_message_type", "feedkit_pool"}},
	"feedkit_queue_wait_duration_seconds":       {histogram, []string{"feedkit_pool"}},
	"feedkit_pool_backlog":                      {gauge, []string{"feedkit_pool"}},
	"feedkit_pool_running":                      {gauge, []string{"feedkit_pool"}},
	"feedkit_producer_up":                       {gauge, []string{"feedkit_producer"}},
	"feedkit_producer_last_down":                {gauge, []string{"feedkit_producer", "feedkit_reason"}},
	"feedkit_producer_downs_total":              {counter, []string{"feedkit_producer", "feedkit_reason"}},
	"feedkit_producer_ups_held_total":           {counter, []string{"feedkit_producer", "feedkit_recovery_kind"}},
	"feedkit_producer_up_held_duration_seconds": {histogram, []string{"feedkit_producer", "feedkit_recovery_kind"}},
	"feedkit_producer_lag_seconds":              {gauge, []string{"feedkit_producer"}},
	"feedkit_producer_alive_age_seconds":        {gauge, []string{"feedkit_producer"}},
	"feedkit_recovery_requests_total":           {counter, []string{"feedkit_producer", "feedkit_recovery_kind", "feedkit_result"}},
	"feedkit_recovery_duration_seconds":         {histogram, []string{"feedkit_producer", "feedkit_recovery_kind", "feedkit_result"}},
	"http_client_request_duration_seconds":      {histogram, []string{"http_request_method", "http_response_status_code", "url_template"}},
	"feedkit_api_requests_held_total":           {counter, []string{"http_request_method", "url_template"}},
	"feedkit_cache_reads_total":                 {counter, []string{"feedkit_cache", "feedkit_result"}},
	"feedkit_cache_evictions_total":             {counter, []string{"feedkit_cache"}},
	"feedkit_cache_entries":                     {gauge, []string{"feedkit_cache"}},
	"feedkit_transport_connected":               {gauge, nil},
	"feedkit_transport_connects_total":          {counter, nil},
	"feedkit_transport_drops_total":             {counter, nil},
	"feedkit_transport_failed_attempts_total":   {counter, nil},
	"feedkit_transport_received_bytes_total":    {counter, nil},
}

// recordingRegisterer keeps what is registered with it.
type recordingRegisterer struct{ collectors []prometheus.Collector }

func (r *recordingRegisterer) Register(c prometheus.Collector) error {
	r.collectors = append(r.collectors, c)
	return nil
}

func (r *recordingRegisterer) MustRegister(cs ...prometheus.Collector) {
	r.collectors = append(r.collectors, cs...)
}

func (r *recordingRegisterer) Unregister(prometheus.Collector) bool { return false }

var descPattern = regexp.MustCompile(`^Desc\{fqName: "([^"]*)", help: "([^"]*)", unit: "[^"]*", constLabels: \{([^}]*)\}, variableLabels: \{([^}]*)\}\}$`)

// New registers every instrument of the table, with its labels and a help, in one
// Register call: the registration succeeds or fails whole.
func TestNewRegistersEveryInstrumentOfTheTable(t *testing.T) {
	var reg recordingRegisterer
	_, err := promfeedkit.New(&reg)
	require.NoError(t, err)
	require.Len(t, reg.collectors, 1)
	ch := make(chan *prometheus.Desc, 2*len(table))
	reg.collectors[0].Describe(ch)
	close(ch)
	got := map[string]instrument{}
	for d := range ch {
		m := descPattern.FindStringSubmatch(d.String())
		require.NotNil(t, m, "a descriptor the test cannot read: %s", d)
		assert.NotEmpty(t, m[2], "%s has no help", m[1])
		var labels []string
		for _, l := range strings.Split(m[3]+","+m[4], ",") {
			if name, _, _ := strings.Cut(l, "="); name != "" {
				labels = append(labels, name)
			}
		}
		sort.Strings(labels)
		require.NotContains(t, got, m[1], "described twice")
		got[m[1]] = instrument{typ: table[m[1]].typ, labels: labels} // the type shows when collected
	}
	assert.Equal(t, table, got)
}

// checkFamilies checks each gathered family against the table: its type and labels,
// and a help. It returns the families' names.
func checkFamilies(t *testing.T, families []*dto.MetricFamily) []string {
	t.Helper()
	var names []string
	for _, f := range families {
		want, ok := exported[f.GetName()]
		if !assert.True(t, ok, "%s is not in the table", f.GetName()) {
			continue
		}
		names = append(names, f.GetName())
		assert.Equal(t, want.typ, f.GetType(), f.GetName())
		assert.NotEmpty(t, f.GetHelp(), f.GetName())
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName())
			}
			assert.Equal(t, want.labels, labels, f.GetName())
		}
	}
	return names
}

func TestNewRefusesANilRegisterer(t *testing.T) {
	m, err := promfeedkit.New(nil)
	assert.Nil(t, m)
	assert.EqualError(t, err, "promfeedkit: New: the Registerer is nil (pass a registry: prometheus.NewRegistry(), or prometheus.DefaultRegisterer deliberately)")
}

// A second New on one registry fails on the names the first registered, and leaves the
// first's metrics as they were.
func TestNewTwiceOnOneRegistryFails(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m, err := promfeedkit.New(reg)
	require.NoError(t, err)
	m.TransportLinkUp()
	_, err = promfeedkit.New(reg)
	var already prometheus.AlreadyRegisteredError
	assert.ErrorAs(t, err, &already)
	assert.ErrorContains(t, err, "promfeedkit: New: ")
	assert.Equal(t, map[string]float64{
		"feedkit_transport_connects_total":        1,
		"feedkit_transport_drops_total":           0,
		"feedkit_transport_failed_attempts_total": 0,
	}, flatten(t, reg))
}

// flatten gathers reg and writes each series as `name{label="value",...}`, with its
// value: a counter's or a gauge's, and a histogram's count and sum as name_count and
// name_sum. The families are checked against the table on the way.
func flatten(t *testing.T, reg prometheus.Gatherer) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	checkFamilies(t, families)
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			series := ""
			if len(labels) > 0 {
				series = "{" + strings.Join(labels, ",") + "}"
			}
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				out[f.GetName()+series] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				out[f.GetName()+series] = m.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				out[f.GetName()+"_count"+series] = float64(m.GetHistogram().GetSampleCount())
				out[f.GetName()+"_sum"+series] = m.GetHistogram().GetSampleSum()
			default:
				t.Fatalf("%s: unexpected type %s", f.GetName(), f.GetType())
			}
		}
	}
	return out
}

var (
	live     = feed.SessionRef{Index: 0, Interest: feed.LiveMessagesOnly}
	prematch = feed.SessionRef{Index: 1, Interest: feed.PrematchMessagesOnly}
	errLost  = errors.New("lost")
)

// Each observer method moves its metric, by exactly what it was told, and no other: the
// whole registry is compared. The transport's counters have no labels, so they are
// there, at zero, from the start.
func TestEachObserverMethodMovesExactlyItsMetric(t *testing.T) {
	cases := []struct {
		name string
		call func(m *promfeedkit.Metrics)
		want map[string]float64
	}{
		{"FeedMessageReceived", func(m *promfeedkit.Metrics) {
			m.FeedMessageReceived(live, 1, feed.MessageOddsChange, 100)
			m.FeedMessageReceived(live, 1, feed.MessageOddsChange, 200)
			m.FeedMessageReceived(prematch, 3, feed.MessageBetStop, 50)
		}, map[string]float64{
			`messaging_client_consumed_messages_total{feedkit_message_type="odds_change",feedkit_producer="1",feedkit_session="0:live",messaging_system="rabbitmq"}`:  2,
			`messaging_client_consumed_messages_total{feedkit_message_type="bet_stop",feedkit_producer="3",feedkit_session="1:prematch",messaging_system="rabbitmq"}`: 1,
		}},
		{"FeedMessageUnparsable", func(m *promfeedkit.Metrics) {
			m.FeedMessageUnparsable(feed.SessionRef{Index: 2}, 0, feed.MessageUnknown)
		}, map[string]float64{
			`feedkit_messages_unparsable_total{feedkit_message_type="unknown",feedkit_producer="0",feedkit_session="2:all"}`: 1,
		}},
		{"ListenerCalled", func(m *promfeedkit.Metrics) {
			m.ListenerCalled(concurrent.Call{Pool: "feed", Producer: 1, Type: feed.MessageOddsChange, Result: concurrent.CallReturned})
			m.ListenerCalled(concurrent.Call{Pool: "feed", Producer: 1, Type: feed.MessageOddsChange, Result: concurrent.CallReturned})
			m.ListenerCalled(concurrent.Call{Pool: "feed", Producer: 1, Type: feed.MessageOddsChange, Result: concurrent.CallFailed,
				Timed: true, Wait: 3 * time.Millisecond, Duration: 2 * time.Millisecond})
			// Untimed only: no series in the histograms.
			m.ListenerCalled(concurrent.Call{Pool: "session 0", Producer: 0, Type: feed.MessageUnknown, Result: concurrent.CallUnparsable})
		}, map[string]float64{
			`feedkit_listener_calls_total{feedkit_message_type="odds_change",feedkit_pool="feed",feedkit_producer="1",feedkit_result="returned"}`:    2,
			`feedkit_listener_calls_total{feedkit_message_type="odds_change",feedkit_pool="feed",feedkit_producer="1",feedkit_result="failed"}`:      1,
			`feedkit_listener_calls_total{feedkit_message_type="unknown",feedkit_pool="session 0",feedkit_producer="0",feedkit_result="unparsable"}`: 1,
			`messaging_process_duration_seconds_count{feedkit_message_type="odds_change",feedkit_pool="feed"}`:                                       1,
			`messaging_process_duration_seconds_sum{feedkit_message_type="odds_change",feedkit_pool="feed"}`:                                         0.002,
			`feedkit_queue_wait_duration_seconds_count{feedkit_pool="feed"}`:                                                                         1,
			`feedkit_queue_wait_duration_seconds_sum{feedkit_pool="feed"}`:                                                                           0.003,
		}},
		{"ProducerUpHeld", func(m *promfeedkit.Metrics) {
			m.ProducerUpHeld(1, feed.EventStatefulRecovery)
			m.ProducerUpHeld(1, feed.ProducerRecovery)
		}, map[string]float64{
			`feedkit_producer_ups_held_total{feedkit_producer="1",feedkit_recovery_kind="event_stateful"}`: 1,
			`feedkit_producer_ups_held_total{feedkit_producer="1",feedkit_recovery_kind="producer"}`:       1,
		}},
		{"ProducerUpReleased", func(m *promfeedkit.Metrics) {
			m.ProducerUpReleased(3, feed.EventRecovery, 1500*time.Millisecond)
		}, map[string]float64{
			`feedkit_producer_up_held_duration_seconds_count{feedkit_producer="3",feedkit_recovery_kind="event"}`: 1,
			`feedkit_producer_up_held_duration_seconds_sum{feedkit_producer="3",feedkit_recovery_kind="event"}`:   1.5,
		}},
		{"ProducerStatusChanged", func(m *promfeedkit.Metrics) {
			m.ProducerStatusChanged(feed.ProducerStatus{Producer: 1, Down: true, Reason: feed.InitialState})
			m.ProducerStatusChanged(feed.ProducerStatus{Producer: 3, Down: true, Reason: feed.InitialState})
			m.ProducerStatusChanged(feed.ProducerStatus{Producer: 1, Reason: feed.FirstRecoveryCompleted})
			m.ProducerStatusChanged(feed.ProducerStatus{Producer: 1, Down: true, Reason: feed.AliveIntervalViolation})
			m.ProducerStatusChanged(feed.ProducerStatus{Producer: 1, Reason: feed.ReturnedFromInactivity})
		}, map[string]float64{
			`feedkit_producer_downs_total{feedkit_producer="1",feedkit_reason="InitialState"}`:           1,
			`feedkit_producer_downs_total{feedkit_producer="3",feedkit_reason="InitialState"}`:           1,
			`feedkit_producer_downs_total{feedkit_producer="1",feedkit_reason="AliveIntervalViolation"}`: 1,
			// The last down stays once the producer is up again: one series a producer.
			`feedkit_producer_last_down{feedkit_producer="1",feedkit_reason="AliveIntervalViolation"}`: 1,
			`feedkit_producer_last_down{feedkit_producer="3",feedkit_reason="InitialState"}`:           1,
		}},
		{"ProducerAlive", func(m *promfeedkit.Metrics) {
			m.ProducerAlive(1, 250*time.Millisecond)
			m.ProducerAlive(1, 1500*time.Millisecond)
			m.ProducerAlive(3, -2*time.Second) // the feed's clock ahead of ours
		}, map[string]float64{
			`feedkit_producer_lag_seconds{feedkit_producer="1"}`: 1.5,
			`feedkit_producer_lag_seconds{feedkit_producer="3"}`: -2,
		}},
		{"RecoveryRequested", func(m *promfeedkit.Metrics) {
			m.RecoveryRequested(1, feed.ProducerRecovery, recovery.RequestAccepted)
			m.RecoveryRequested(1, feed.ProducerRecovery, recovery.RequestAccepted)
			m.RecoveryRequested(1, feed.EventRecovery, recovery.RequestRateLimited)
			m.RecoveryRequested(3, feed.ProducerRecovery, recovery.RequestFailed)
		}, map[string]float64{
			`feedkit_recovery_requests_total{feedkit_producer="1",feedkit_recovery_kind="producer",feedkit_result="accepted"}`:  2,
			`feedkit_recovery_requests_total{feedkit_producer="1",feedkit_recovery_kind="event",feedkit_result="rate_limited"}`: 1,
			`feedkit_recovery_requests_total{feedkit_producer="3",feedkit_recovery_kind="producer",feedkit_result="failed"}`:    1,
		}},
		{"RecoveryEnded", func(m *promfeedkit.Metrics) {
			m.RecoveryEnded(1, feed.ProducerRecovery, recovery.RecoveryCompleted, 42*time.Second)
			m.RecoveryEnded(1, feed.ProducerRecovery, recovery.RecoveryTimedOut, 10*time.Minute)
		}, map[string]float64{
			`feedkit_recovery_duration_seconds_count{feedkit_producer="1",feedkit_recovery_kind="producer",feedkit_result="completed"}`: 1,
			`feedkit_recovery_duration_seconds_sum{feedkit_producer="1",feedkit_recovery_kind="producer",feedkit_result="completed"}`:   42,
			`feedkit_recovery_duration_seconds_count{feedkit_producer="1",feedkit_recovery_kind="producer",feedkit_result="timed_out"}`: 1,
			`feedkit_recovery_duration_seconds_sum{feedkit_producer="1",feedkit_recovery_kind="producer",feedkit_result="timed_out"}`:   600,
		}},
		{"APIRequest", func(m *promfeedkit.Metrics) {
			m.APIRequest("GET", "/v1/users/whoami.xml", 200, 30*time.Millisecond)
			m.APIRequest("POST", "/v1/{product}/recovery/initiate_request", 0, 10*time.Second) // no answer
		}, map[string]float64{
			`http_client_request_duration_seconds_count{http_request_method="GET",http_response_status_code="200",url_template="/v1/users/whoami.xml"}`:                  1,
			`http_client_request_duration_seconds_sum{http_request_method="GET",http_response_status_code="200",url_template="/v1/users/whoami.xml"}`:                    0.03,
			`http_client_request_duration_seconds_count{http_request_method="POST",http_response_status_code="",url_template="/v1/{product}/recovery/initiate_request"}`: 1,
			`http_client_request_duration_seconds_sum{http_request_method="POST",http_response_status_code="",url_template="/v1/{product}/recovery/initiate_request"}`:   10,
		}},
		{"APIRequestHeld", func(m *promfeedkit.Metrics) {
			m.APIRequestHeld("POST", "/v1/{product}/recovery/initiate_request")
		}, map[string]float64{
			`feedkit_api_requests_held_total{http_request_method="POST",url_template="/v1/{product}/recovery/initiate_request"}`: 1,
		}},
		{"CacheRead", func(m *promfeedkit.Metrics) {
			m.CacheRead("markets", true)
			m.CacheRead("markets", true)
			m.CacheRead("summaries", false)
		}, map[string]float64{
			`feedkit_cache_reads_total{feedkit_cache="markets",feedkit_result="hit"}`:    2,
			`feedkit_cache_reads_total{feedkit_cache="summaries",feedkit_result="miss"}`: 1,
		}},
		{"CacheEvicted", func(m *promfeedkit.Metrics) {
			m.CacheEvicted("profiles")
		}, map[string]float64{
			`feedkit_cache_evictions_total{feedkit_cache="profiles"}`: 1,
		}},
		{"TransportLinkUp", func(m *promfeedkit.Metrics) {
			m.TransportLinkUp()
			m.TransportLinkUp()
		}, map[string]float64{"feedkit_transport_connects_total": 2}},
		{"TransportLinkDown", func(m *promfeedkit.Metrics) {
			m.TransportLinkDown(errLost)
		}, map[string]float64{"feedkit_transport_drops_total": 1}},
		{"TransportAttemptFailed", func(m *promfeedkit.Metrics) {
			m.TransportAttemptFailed(errLost)
			m.TransportAttemptFailed(errLost)
			m.TransportAttemptFailed(errLost)
		}, map[string]float64{"feedkit_transport_failed_attempts_total": 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			m, err := promfeedkit.New(reg)
			require.NoError(t, err)
			c.call(m)
			want := map[string]float64{
				"feedkit_transport_connects_total":        0,
				"feedkit_transport_drops_total":           0,
				"feedkit_transport_failed_attempts_total": 0,
			}
			for k, v := range c.want {
				want[k] = v
			}
			assert.Equal(t, want, flatten(t, reg))
		})
	}
}

// Once every method was called, every instrument the observer keeps is gathered, with
// the table's type and labels.
func TestEveryObserverInstrumentHasItsTypeAndLabels(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m, err := promfeedkit.New(reg)
	require.NoError(t, err)
	callEveryMethod(m)
	families, err := reg.Gather()
	require.NoError(t, err)
	names := checkFamilies(t, families)
	var want []string
	for name := range table {
		want = append(want, name)
	}
	// The levels read from the SDK's Stats are checked with an SDK (watch_test.go).
	want = slices.DeleteFunc(want, func(n string) bool { return statsLevels[n] })
	assert.ElementsMatch(t, want, names)
}

// statsLevels are the instruments read from SDK.Stats.
var statsLevels = map[string]bool{
	"feedkit_pool_backlog": true, "feedkit_pool_running": true, "feedkit_producer_up": true,
	"feedkit_producer_alive_age_seconds": true, "feedkit_cache_entries": true,
	"feedkit_transport_connected": true, "feedkit_transport_received_bytes_total": true,
}

// callEveryMethod calls each method of the observer once, with a timed listener call.
// Its producer (99), pool and endpoint are none of an SDK's, so that a test can tell
// its series from those of an SDK that tells the same Metrics.
func callEveryMethod(m *promfeedkit.Metrics) {
	const p = 99
	m.FeedMessageReceived(live, p, feed.MessageOddsChange, 100)
	m.FeedMessageUnparsable(live, p, feed.MessageOddsChange)
	m.ListenerCalled(concurrent.Call{Pool: "test", Producer: p, Type: feed.MessageOddsChange, Timed: true, Wait: time.Microsecond, Duration: time.Millisecond})
	m.ProducerUpHeld(p, feed.ProducerRecovery)
	m.ProducerUpReleased(p, feed.ProducerRecovery, time.Second)
	m.ProducerStatusChanged(feed.ProducerStatus{Producer: p, Down: true, Reason: feed.InitialState})
	m.ProducerAlive(p, time.Second)
	m.RecoveryRequested(p, feed.ProducerRecovery, recovery.RequestAccepted)
	m.RecoveryEnded(p, feed.ProducerRecovery, recovery.RecoveryCompleted, time.Minute)
	m.APIRequest("GET", "/v1/test/{id}.xml", 200, time.Millisecond)
	m.APIRequestHeld("GET", "/v1/test/{id}.xml")
	m.CacheRead("markets", true)
	m.CacheEvicted("markets")
	m.TransportLinkUp()
	m.TransportLinkDown(errLost)
	m.TransportAttemptFailed(errLost)
}

// Each histogram has the buckets its doc gives, and an observation lands in the first
// bucket that holds it.
func TestHistogramBuckets(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m, err := promfeedkit.New(reg)
	require.NoError(t, err)
	callEveryMethod(m)
	families, err := reg.Gather()
	require.NoError(t, err)
	want := map[string][]float64{
		"messaging_process_duration_seconds":        promfeedkit.ListenerBuckets,
		"feedkit_queue_wait_duration_seconds":       promfeedkit.ListenerBuckets,
		"feedkit_producer_up_held_duration_seconds": promfeedkit.HeldBuckets,
		"feedkit_recovery_duration_seconds":         promfeedkit.RecoveryBuckets,
		"http_client_request_duration_seconds":      promfeedkit.APIBuckets,
	}
	seen := 0
	for _, f := range families {
		buckets, ok := want[f.GetName()]
		if !ok {
			continue
		}
		seen++
		require.Len(t, f.GetMetric(), 1, f.GetName())
		h := f.GetMetric()[0].GetHistogram()
		var bounds []float64
		landed := -1
		for i, b := range h.GetBucket() {
			bounds = append(bounds, b.GetUpperBound())
			if landed < 0 && b.GetCumulativeCount() == 1 {
				landed = i
			}
		}
		assert.Equal(t, buckets, bounds, f.GetName())
		require.GreaterOrEqual(t, landed, 0, "%s: the observation is in no bucket", f.GetName())
		assert.GreaterOrEqual(t, buckets[landed], h.GetSampleSum(), f.GetName())
		if landed > 0 {
			assert.Less(t, buckets[landed-1], h.GetSampleSum(), f.GetName())
		}
	}
	assert.Equal(t, len(want), seen)
	for name, b := range want {
		assert.True(t, slices.IsSorted(b), name)
	}
}

// The session label names the session's index and its interest, in short.
func TestSessionLabels(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m, err := promfeedkit.New(reg)
	require.NoError(t, err)
	urn, err := feed.ParseURN("sr:match:1")
	require.NoError(t, err)
	interests := []feed.MessageInterest{feed.AllMessages, feed.LiveMessagesOnly, feed.PrematchMessagesOnly,
		feed.HiPriorityMessagesOnly, feed.LoPriorityMessagesOnly, feed.VirtualSportMessagesOnly, feed.SpecifiedMatchesOnly(urn)}
	for i, mi := range interests {
		m.FeedMessageReceived(feed.SessionRef{Index: i, Interest: mi}, 1, feed.MessageAlive, 10)
	}
	// A Metrics serves one SDK, whose index i is always one interest: the label keeps
	// the first message's.
	m.FeedMessageReceived(feed.SessionRef{Index: 1, Interest: feed.PrematchMessagesOnly}, 1, feed.MessageAlive, 10)
	want := map[string]float64{
		"feedkit_transport_connects_total": 0, "feedkit_transport_drops_total": 0, "feedkit_transport_failed_attempts_total": 0,
	}
	for i, short := range []string{"all", "live", "prematch", "hi", "lo", "virtual", "matches"} {
		n := 1.0
		if i == 1 {
			n = 2
		}
		want[fmt.Sprintf(`messaging_client_consumed_messages_total{feedkit_message_type="alive",feedkit_producer="1",feedkit_session="%d:%s",messaging_system="rabbitmq"}`, i, short)] = n
	}
	assert.Equal(t, want, flatten(t, reg))
}

// The calls made once per message count exactly under concurrency, keys first seen by
// several goroutines at once included.
func TestHotPathCountsExactlyUnderConcurrency(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m, err := promfeedkit.New(reg)
	require.NoError(t, err)
	const goroutines, calls, producers = 8, 500, 4
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := range goroutines {
		wg.Go(func() {
			<-start
			for i := range calls {
				p := (i+g)%producers + 1
				m.FeedMessageReceived(live, p, feed.MessageOddsChange, 10)
				m.ListenerCalled(concurrent.Call{Pool: "feed", Producer: p, Type: feed.MessageOddsChange,
					Timed: i%2 == 0, Duration: time.Millisecond, Wait: time.Millisecond})
				m.CacheRead("markets", i%2 == 0)
			}
		})
	}
	close(start)
	wg.Wait()
	got := flatten(t, reg)
	const perProducer = goroutines * calls / producers
	for p := 1; p <= producers; p++ {
		assert.Equal(t, float64(perProducer), got[fmt.Sprintf(`messaging_client_consumed_messages_total{feedkit_message_type="odds_change",feedkit_producer="%d",feedkit_session="0:live",messaging_system="rabbitmq"}`, p)])
		assert.Equal(t, float64(perProducer), got[fmt.Sprintf(`feedkit_listener_calls_total{feedkit_message_type="odds_change",feedkit_pool="feed",feedkit_producer="%d",feedkit_result="returned"}`, p)])
	}
	assert.Equal(t, float64(goroutines*calls/2), got[`messaging_process_duration_seconds_count{feedkit_message_type="odds_change",feedkit_pool="feed"}`])
	assert.Equal(t, float64(goroutines*calls/2), got[`feedkit_queue_wait_duration_seconds_count{feedkit_pool="feed"}`])
	assert.Equal(t, float64(goroutines*calls/2), got[`feedkit_cache_reads_total{feedkit_cache="markets",feedkit_result="hit"}`])
	assert.Equal(t, float64(goroutines*calls/2), got[`feedkit_cache_reads_total{feedkit_cache="markets",feedkit_result="miss"}`])
	assert.Len(t, got, 2*producers+4+2+3, "no other series")
}

// Once their labels were seen, the calls made once per message allocate nothing.
func TestHotPathDoesNotAllocate(t *testing.T) {
	m, err := promfeedkit.New(prometheus.NewRegistry())
	require.NoError(t, err)
	call := concurrent.Call{Pool: "feed", Producer: 1, Type: feed.MessageOddsChange}
	timed := call
	timed.Timed, timed.Wait, timed.Duration = true, time.Microsecond, time.Millisecond
	for name, f := range map[string]func(){
		"FeedMessageReceived":   func() { m.FeedMessageReceived(live, 1, feed.MessageOddsChange, 100) },
		"ListenerCalled":        func() { m.ListenerCalled(call) },
		"ListenerCalled(timed)": func() { m.ListenerCalled(timed) },
		"CacheRead":             func() { m.CacheRead("markets", true) },
		"TransportLinkUp":       m.TransportLinkUp,
	} {
		f() // the first call of a key resolves its children
		assert.Zero(t, testing.AllocsPerRun(100, f), name)
	}
}

// Labels past what the hot path packs into its keys (a producer id from a malformed
// message, a session index past 16 bits) are counted all the same.
func TestOutOfRangeLabelsAreCounted(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m, err := promfeedkit.New(reg)
	require.NoError(t, err)
	const huge = 1 << 40
	for range 2 {
		m.FeedMessageReceived(live, -1, feed.MessageOddsChange, 10)
		m.FeedMessageReceived(feed.SessionRef{Index: 1 << 16}, 1, feed.MessageOddsChange, 10)
		m.FeedMessageUnparsable(live, huge, feed.MessageUnknown)
		m.ListenerCalled(concurrent.Call{Pool: "feed", Producer: huge, Type: feed.MessageBetStop, Timed: true, Duration: time.Millisecond})
	}
	assert.Equal(t, map[string]float64{
		`messaging_client_consumed_messages_total{feedkit_message_type="odds_change",feedkit_producer="-1",feedkit_session="0:live",messaging_system="rabbitmq"}`:   2,
		`messaging_client_consumed_messages_total{feedkit_message_type="odds_change",feedkit_producer="1",feedkit_session="65536:all",messaging_system="rabbitmq"}`: 2,
		`feedkit_messages_unparsable_total{feedkit_message_type="unknown",feedkit_producer="1099511627776",feedkit_session="0:live"}`:                               2,
		`feedkit_listener_calls_total{feedkit_message_type="bet_stop",feedkit_pool="feed",feedkit_producer="1099511627776",feedkit_result="returned"}`:              2,
		`messaging_process_duration_seconds_count{feedkit_message_type="bet_stop",feedkit_pool="feed"}`:                                                             2,
		`messaging_process_duration_seconds_sum{feedkit_message_type="bet_stop",feedkit_pool="feed"}`:                                                               0.002,
		`feedkit_queue_wait_duration_seconds_count{feedkit_pool="feed"}`:                                                                                            2,
		`feedkit_queue_wait_duration_seconds_sum{feedkit_pool="feed"}`:                                                                                              0,
		"feedkit_transport_connects_total": 0, "feedkit_transport_drops_total": 0, "feedkit_transport_failed_attempts_total": 0,
	}, flatten(t, reg))
}
