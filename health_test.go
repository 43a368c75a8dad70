package feedkit_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/recovery"
)

// probe asks h's path and returns the status and the checks that fail, by name.
func probe(t *testing.T, h http.Handler, path string) (int, map[string]string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	var got feedkit.Health
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got), rec.Body.String())
	failing := map[string]string{}
	for _, c := range got.Checks {
		if !c.OK {
			failing[c.Name] = c.Reason
		}
	}
	assert.Equal(t, len(failing) == 0, got.OK)
	assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	return rec.Code, failing
}

// The probes through a producer's life: not ready before Open and until the producer is
// up; ready once it is; not ready when its alives are older than its heartbeat limit
// (the manager's check, an hour apart here, has not yet taken it down); ready again
// once the next alive has brought it up through a recovery; and not live once the SDK
// is closed.
func TestHealthProbes(t *testing.T) {
	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	t.Cleanup(broker.Close)
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	clk := clocktest.NewFake(envEpoch)
	sim, err := feedtest.NewSimulator(broker, feedtest.SimulatorConfig{Producers: []feed.Producer{lo}, Clock: clk})
	require.NoError(t, err)
	api := httptest.NewServer(sim.APIHandler(feedtest.Account{}))
	t.Cleanup(api.Close)
	env := feedkit.CustomEnvironment("", api.URL)
	global := feedtest.NewGlobalRecorder()
	sdk, err := feedkit.New(feedkit.Config{Environment: &env, AccessToken: feedtest.DefaultAccessToken,
		Transport: broker, Global: global, Clock: clk, Recovery: recovery.Config{CheckInterval: time.Hour}})
	require.NoError(t, err)
	require.NoError(t, sdk.AddSession(feed.AllMessages, feedtest.NewRecorder()))
	h := sdk.HealthHandler()

	code, failing := probe(t, h, "/healthz")
	assert.Equal(t, http.StatusOK, code, "live before Open: a slow start is no reason to restart")
	assert.Empty(t, failing)
	code, failing = probe(t, h, "/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, map[string]string{"open": "the SDK is not open"}, failing)

	require.NoError(t, sdk.Open(t.Context()))
	t.Cleanup(func() { _ = sdk.Close(context.Background()) })
	code, failing = probe(t, h, "/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, map[string]string{"producer 1": "down (disconnected)"}, failing)

	require.NoError(t, sim.SendAlive(t.Context(), lo.ID, true))
	for global.RequireNext(t).String() != "producer 1 up (FirstRecoveryCompleted)" {
	}
	code, failing = probe(t, h, "/readyz")
	assert.Equal(t, http.StatusOK, code)
	assert.Empty(t, failing)

	clk.Advance(lo.HeartbeatLimit + time.Millisecond)
	code, failing = probe(t, h, "/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, map[string]string{"producer 1": "last alive 15.001s ago, past its heartbeat limit 15s"}, failing)
	code, _ = probe(t, h, "/healthz")
	assert.Equal(t, http.StatusOK, code, "a silent producer is no reason to restart")

	// The next alive comes after too long a silence: the producer is recovered, and ready
	// again once it is up.
	require.NoError(t, sim.SendAlive(t.Context(), lo.ID, true))
	for global.RequireNext(t).String() != "producer 1 up (ReturnedFromInactivity)" {
	}
	code, failing = probe(t, h, "/readyz")
	assert.Equal(t, http.StatusOK, code, "%v", failing)

	require.NoError(t, sdk.Close(t.Context()))
	code, failing = probe(t, h, "/healthz")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, map[string]string{"sdk": "the SDK is closed"}, failing)
}
