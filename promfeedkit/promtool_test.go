package promfeedkit_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/internal/promserver"
	"github.com/feedkit/feedkit/promfeedkit"
	"github.com/feedkit/feedkit/recovery"
)

// findTool returns the program that the variable names, or name on PATH. Without it the
// test skips, or fails under CI=true: CI must not go green on a check it never ran.
func findTool(t *testing.T, variable, name string) string {
	t.Helper()
	return promserver.Tool(t, variable, name)
}

// scrape returns what promhttp serves for reg, as a Prometheus server would read it.
func scrape(t *testing.T, reg prometheus.Gatherer) []byte {
	t.Helper()
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}))
	defer srv.Close()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return body
}

// everyMetric returns a registry with a series of every metric but the transport's
// levels, which need RabbitMQ: the metrics of an SDK on the embedded broker, with the
// shared pool, the API's caches and a producer's alive, each method of which was called
// once more.
func everyMetric(t *testing.T) *prometheus.Registry {
	t.Helper()
	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	t.Cleanup(broker.Close)
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	sim, err := feedtest.NewSimulator(broker, feedtest.SimulatorConfig{Producers: []feed.Producer{lo}})
	require.NoError(t, err)
	api := httptest.NewServer(sim.APIHandler(feedtest.Account{}))
	t.Cleanup(api.Close)
	env := feedkit.CustomEnvironment("", api.URL)
	reg := prometheus.NewPedanticRegistry()
	m, err := promfeedkit.New(reg)
	require.NoError(t, err)
	sdk, err := feedkit.New(feedkit.Config{Environment: &env, AccessToken: feedtest.DefaultAccessToken,
		Transport: broker, Node: feed.Node(1), Observer: m, Concurrent: &concurrent.Config{},
		Recovery: recovery.Config{Disabled: true}})
	require.NoError(t, err)
	require.NoError(t, sdk.AddSession(feed.AllMessages, feedtest.NewRecorder()))
	t.Cleanup(func() { _ = sdk.Close(context.Background()) })
	require.NoError(t, m.WatchSDK(sdk))
	ctx := t.Context()
	require.NoError(t, sdk.Open(ctx))
	require.NoError(t, sim.SendAlive(ctx, lo.ID, true)) // for the alive's age
	require.NoError(t, broker.Flush(ctx))
	require.NoError(t, sdk.Flush(ctx))
	callEveryMethod(m)
	return reg
}

// transportLevel reports whether name is one of the transport's levels, which only an
// SDK on RabbitMQ has: plain names, of the types the RabbitMQ test checks.
func transportLevel(name string) bool {
	return name == "feedkit_transport_connected" || name == "feedkit_transport_received_bytes_total"
}

// A scrape with a series of every instrument passes promtool's lint: names, units,
// suffixes, helps and types as Prometheus would have them.
func TestScrapePassesPromtoolCheckMetrics(t *testing.T) {
	promtool := findTool(t, "FEEDKIT_PROMTOOL", "promtool")
	reg := everyMetric(t)
	body := scrape(t, reg)
	for name := range table {
		if !transportLevel(name) {
			assert.Contains(t, string(body), "\n# TYPE "+name+" ", "the scrape has no %s", name)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	out, err := cmd.CombinedOutput()
	assert.NoError(t, err, "promtool check metrics:\n%s\non the scrape:\n%s", out, body)
	assert.Empty(t, strings.TrimSpace(string(out)), "promtool's findings")
}
