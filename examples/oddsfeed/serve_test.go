package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/promfeedkit"
	"github.com/feedkit/feedkit/recovery"
)

func get(t *testing.T, h http.Handler, path string) (int, map[string]any) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	var body map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), rec.Body.String())
	return rec.Code, body
}

// -http serves the probes, metrics and counters of the SDK running now, and 503 saying why
// between the two processes of a restart.
func TestStatusHandlerFollowsTheRunningSDK(t *testing.T) {
	p := &process{}
	h := statusHandler(p)
	for _, path := range []string{"/healthz", "/readyz", "/metrics", "/stats"} {
		code, body := get(t, h, path)
		assert.Equal(t, http.StatusServiceUnavailable, code, path)
		assert.Contains(t, body["checks"].([]any)[0].(map[string]any)["reason"], "restarting", path)
	}

	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	t.Cleanup(broker.Close)
	sdk, err := feedkit.New(feedkit.Config{Transport: broker, Recovery: recovery.Config{Disabled: true}})
	require.NoError(t, err)
	require.NoError(t, sdk.AddSession(feed.AllMessages, feedtest.NewRecorder()))
	t.Cleanup(func() { _ = sdk.Close(context.Background()) })
	reg := prometheus.NewRegistry()
	m, err := promfeedkit.New(reg)
	require.NoError(t, err)
	require.NoError(t, m.WatchSDK(sdk))
	p.serving.Store(sdk)
	p.metrics.Store(reg)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Contains(t, rec.Body.String(), `feedkit_pool_backlog{feedkit_pool="session 0"} 0`, "the SDK's levels, read at the scrape")
	code, _ := get(t, h, "/healthz")
	assert.Equal(t, http.StatusOK, code)
	code, body := get(t, h, "/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code, "not open yet")
	assert.Equal(t, false, body["ok"])
	code, body = get(t, h, "/stats")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "sessions")
}
