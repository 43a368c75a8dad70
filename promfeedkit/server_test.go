package promfeedkit_test

import (
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/internal/promserver"
)

// A Prometheus server scrapes the metrics and answers queries on them by the names and
// labels the package doc gives: what a dashboard will read. It needs RabbitMQ, for the
// group's.
func TestPrometheusServerScrapesTheMetrics(t *testing.T) {
	reg := everyMetric(t)
	addAppMetrics(t, reg) // for the dashboard's rows of the workflow engine and the carousel
	runGroup(t, reg)      // and of the group, on RabbitMQ
	target := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(target.Close)
	srv := promserver.Start(t, promserver.Options{Targets: []string{target.Listener.Addr().String()}, ScrapeInterval: time.Second})

	// Two scrapes, for the dashboard's rates.
	srv.WaitFor(`count_over_time(up{job="feedkit"}[1m]) >= 2`, time.Minute)
	got, err := srv.Query(`min_over_time(up{job="feedkit"}[1m])`)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, "1", got[0].Value, "a scrape failed")

	for q, want := range map[string]string{
		`messaging_client_consumed_messages_total{messaging_system="rabbitmq",feedkit_session="0:live",feedkit_producer="99",feedkit_message_type="odds_change"}`: "1",
		`feedkit_listener_calls_total{feedkit_pool="test",feedkit_result="returned"}`:                                                                             "1",
		`messaging_process_duration_seconds_count{feedkit_pool="test",feedkit_message_type="odds_change"}`:                                                        "1",
		`feedkit_producer_last_down{feedkit_producer="99",feedkit_reason="InitialState"}`:                                                                         "1",
		`feedkit_recovery_duration_seconds_sum{feedkit_producer="99",feedkit_recovery_kind="producer",feedkit_result="completed"}`:                                "60",
		`http_client_request_duration_seconds_count{http_request_method="GET",url_template="/v1/test/{id}.xml",http_response_status_code="200"}`:                  "1",
		`feedkit_transport_drops_total`: "1",
		// Levels of the SDK's Stats: its producer is up after its alive, and its
		// caches hold nothing yet.
		`feedkit_producer_up{feedkit_producer="1"}`:      "1",
		`feedkit_cache_entries{feedkit_cache="markets"}`: "0",
		`feedkit_pool_backlog{feedkit_pool="feed"}`:      "0",
	} {
		got, err := srv.Query(q)
		require.NoError(t, err)
		if assert.Len(t, got, 1, q) {
			assert.Equal(t, want, got[0].Value, q)
		}
	}

	// Each query of the Grafana dashboard runs, and shows data but for the transport's
	// levels, which need RabbitMQ.
	for _, q := range dashboardQueries(t) {
		metrics, err := queryNames(q)
		require.NoError(t, err)
		got, err := srv.Query(strings.ReplaceAll(q, "$__rate_interval", "1m"))
		if !assert.NoError(t, err, q) {
			continue
		}
		if !slices.ContainsFunc(metrics, transportLevel) {
			assert.NotEmpty(t, got, q)
		}
	}
}
