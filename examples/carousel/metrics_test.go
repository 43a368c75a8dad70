package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The operator API serves the scheduler's metrics at /metrics: after a run, each
// cycle's published count is what the Publisher saw succeed, none failed, and every
// cycle has its levels.
func TestAPIServesTheSchedulersMetrics(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), guard)
	defer cancel()
	runCtx, stop := context.WithCancel(ctx)
	o := options{addr: "127.0.0.1:0", editEvery: 50 * time.Millisecond, metadata: filepath.Join(t.TempDir(), "metadata.json"),
		until: func(republished map[string]int) bool {
			if len(republished) == 3 && total(republished) >= 10 {
				stop()
				return true
			}
			return false
		}}
	d, err := assemble(ctx, o, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	defer d.close()
	require.NoError(t, d.run(runCtx, io.Discard))
	require.NoError(t, ctx.Err(), "the run ended by its guard, not by its cycles' publications")

	rec := httptest.NewRecorder()
	d.api.Handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(rec.Body.String()))
	require.NoError(t, err, "the scrape:\n%s", rec.Body.String())
	byCycle := func(name string) map[string]float64 {
		out := map[string]float64{}
		if f, ok := families[name]; ok {
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "feedkit_cycle" {
						out[l.GetValue()] += m.GetCounter().GetValue() + m.GetGauge().GetValue()
					}
				}
			}
		}
		return out
	}
	want := map[string]float64{}
	for cycle, n := range d.published.counts() {
		want[cycle] = float64(n)
	}
	assert.Equal(t, want, byCycle("feedkit_carousel_published_total"))
	assert.Empty(t, byCycle("feedkit_carousel_publish_failures_total"))
	assert.Equal(t, 0, d.published.failures())
	for _, level := range []string{"feedkit_carousel_iteration_current", "feedkit_carousel_throttle_seconds", "feedkit_carousel_unhealthy"} {
		assert.Len(t, byCycle(level), 3, level)
	}
	assert.Contains(t, families, "feedkit_carousel_active")

	// The operator API is still there beside it.
	rec = httptest.NewRecorder()
	d.api.Handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	assert.Equal(t, http.StatusOK, rec.Code)
}
