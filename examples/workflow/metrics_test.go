package main

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/workflow"
)

// With -http the run serves the engine's metrics: at its end, read over HTTP, they
// count every order started once and finished, the work timeouts the engine counted,
// and the store's processes by state.
func TestRunServesTheEnginesMetrics(t *testing.T) {
	o, err := parseFlags([]string{"-processes", "40", "-hang", "0.1", "-late", "0.1", "-crash", "0.1",
		"-timeout", "2m", "-http", "127.0.0.1:0"}, io.Discard)
	require.NoError(t, err)
	var got map[string]float64
	var counters workflow.Counters
	o.atEnd = func(addr string, e *workflow.Engine) {
		counters = e.Counters()
		got = scrapeSums(t, "http://"+addr+"/metrics")
	}
	var out strings.Builder
	require.NoError(t, runOrders(t.Context(), o, &out), out.String())
	require.NotNil(t, got, "atEnd was called")
	assert.Contains(t, out.String(), "Metrics for Prometheus: http://127.0.0.1:")

	assert.Equal(t, 40.0, got[`feedkit_workflow_processes_started_total{feedkit_process_type="order"}`], "each order started once, its second start got it back")
	assert.Equal(t, 40.0, got[`feedkit_workflow_processes_ended_total{feedkit_process_type="order",feedkit_state="finished"}`])
	assert.Equal(t, 40.0, got[`feedkit_workflow_processes{feedkit_state="finished"}`])
	assert.Equal(t, 0.0, got[`feedkit_workflow_processes{feedkit_state="running"}`])
	for _, actor := range []string{"validate", "charge", "ship"} {
		assert.Equal(t, float64(counters.WorkTimeoutsByActor[actor]),
			got[`feedkit_workflow_tasks_timeouts_total{feedkit_actor_type="`+actor+`",feedkit_timeout_kind="work"}`], actor)
		assert.Equal(t, 40.0, got[`feedkit_workflow_tasks_released_total{feedkit_actor_type="`+actor+`",feedkit_result="finished"}`],
			"each of the 40 %s tasks finished once", actor)
		// Every handing-out ends as a decision accepted or refused, or a task taken back.
		assert.GreaterOrEqual(t, got[`feedkit_workflow_tasks_polled_total{feedkit_actor_type="`+actor+`"}`],
			40+got[`feedkit_workflow_tasks_released_total{feedkit_actor_type="`+actor+`",feedkit_result="retried"}`], actor)
	}
}

// scrapeSums reads the metrics at url, each series as `name{labels}`, with labels in
// the order the scrape gives them.
func scrapeSums(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	out := map[string]float64{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+`="`+l.GetValue()+`"`)
			}
			key := name
			if len(labels) > 0 {
				key += "{" + strings.Join(labels, ",") + "}"
			}
			out[key] = m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return out
}
