package promfeedkit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Prometheus server scrapes the metrics and answers queries on them by the names and
// labels the package doc gives: what a dashboard will read.
func TestPrometheusServerScrapesTheMetrics(t *testing.T) {
	server := findTool(t, "FEEDKIT_PROMETHEUS", "prometheus")
	reg := everyMetric(t)
	target := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(target.Close)

	dir := t.TempDir()
	config := fmt.Sprintf("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: feedkit\n    static_configs:\n      - targets: [%q]\n",
		target.Listener.Addr().String())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o600))
	addr := freeLoopbackAddr(t)
	var logs syncBuffer
	cmd := exec.Command(server, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = &logs, &logs
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})

	// The server has no signal for "scraped": its query API is asked until the first
	// scrape shows, within a minute.
	query := func(q string) ([]promSample, error) {
		resp, err := http.Get("http://" + addr + "/api/v1/query?query=" + url.QueryEscape(q))
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		var r struct {
			Status string `json:"status"`
			Data   struct {
				Result []promSample `json:"result"`
			} `json:"data"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
			return nil, err
		}
		if r.Status != "success" {
			return nil, fmt.Errorf("query %s: status %s", q, r.Status)
		}
		return r.Data.Result, nil
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		// Two scrapes, for the dashboard's rates.
		if got, err := query(`count_over_time(up{job="feedkit"}[1m]) >= 2`); err == nil && len(got) == 1 {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("prometheus exited: %v\n%s", err, logs.String())
		case <-ctx.Done():
			t.Fatalf("no scrape within a minute\n%s", logs.String())
		case <-tick.C:
		}
	}
	got, err := query(`min_over_time(up{job="feedkit"}[1m])`)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, "1", got[0].value(), "a scrape failed")

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
		got, err := query(q)
		require.NoError(t, err)
		if assert.Len(t, got, 1, q) {
			assert.Equal(t, want, got[0].value(), q)
		}
	}

	// Each query of the Grafana dashboard runs, and shows data but for the transport's
	// levels, which need RabbitMQ.
	for _, q := range dashboardQueries(t) {
		metrics, err := queryNames(q)
		require.NoError(t, err)
		got, err := query(strings.ReplaceAll(q, "$__rate_interval", "1m"))
		if !assert.NoError(t, err, q) {
			continue
		}
		if !slices.ContainsFunc(metrics, transportLevel) {
			assert.NotEmpty(t, got, q)
		}
	}
}

// promSample is a sample of a query's vector.
type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"` // [time, "value"]
}

func (s promSample) value() string { v, _ := s.Value[1].(string); return v }

// freeLoopbackAddr returns a loopback address with a port free a moment ago, for a server
// that takes no port 0.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// syncBuffer is a server's output, written by the process's copier and read by a
// failing test while the server may still run.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
