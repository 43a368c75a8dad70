package promfeedkit_test

import (
	"bytes"
	"context"
	"maps"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/carousel"
	"github.com/feedkit/feedkit/promfeedkit"
	"github.com/feedkit/feedkit/workflow"
)

// workflowTable and carouselTable are the metrics of NewWorkflow and NewCarousel, as
// their docs name them.
var workflowTable = map[string]instrument{
	"feedkit_workflow_processes_started_total":   {counter, []string{"feedkit_process_type"}},
	"feedkit_workflow_processes_restarted_total": {counter, []string{"feedkit_process_type", "feedkit_state"}},
	"feedkit_workflow_processes_ended_total":     {counter, []string{"feedkit_process_type", "feedkit_state"}},
	"feedkit_workflow_processes":                 {gauge, []string{"feedkit_state"}},
	"feedkit_workflow_count_failures_total":      {counter, nil},
	"feedkit_workflow_tasks_polled_total":        {counter, []string{"feedkit_actor_type"}},
	"feedkit_workflow_tasks_released_total":      {counter, []string{"feedkit_actor_type", "feedkit_result"}},
	"feedkit_workflow_tasks_timeouts_total":      {counter, []string{"feedkit_actor_type", "feedkit_timeout_kind"}},
	"feedkit_workflow_processes_timeouts_total":  {counter, []string{"feedkit_process_type"}},
	"feedkit_workflow_repairs_total":             {counter, []string{"feedkit_process_type", "feedkit_repair_kind"}},
}

var carouselTable = map[string]instrument{
	"feedkit_carousel_published_total":            {counter, []string{"feedkit_cycle"}},
	"feedkit_carousel_publish_failures_total":     {counter, []string{"feedkit_cycle"}},
	"feedkit_carousel_publish_duration_seconds":   {histogram, []string{"feedkit_cycle", "feedkit_result"}},
	"feedkit_carousel_iterations_total":           {counter, []string{"feedkit_cycle"}},
	"feedkit_carousel_iteration_duration_seconds": {histogram, []string{"feedkit_cycle"}},
	"feedkit_carousel_failures_total":             {counter, []string{"feedkit_carousel_operation", "feedkit_cycle"}},
	"feedkit_carousel_fenced_total":               {counter, []string{"feedkit_cycle"}},
	"feedkit_carousel_iteration_current":          {gauge, []string{"feedkit_cycle"}},
	"feedkit_carousel_iteration_items":            {gauge, []string{"feedkit_cycle"}},
	"feedkit_carousel_iteration_completed":        {gauge, []string{"feedkit_cycle"}},
	"feedkit_carousel_iteration_errors":           {gauge, []string{"feedkit_cycle"}},
	"feedkit_carousel_iteration_progress_ratio":   {gauge, []string{"feedkit_cycle"}},
	"feedkit_carousel_throttle_seconds":           {gauge, []string{"feedkit_cycle"}},
	"feedkit_carousel_state":                      {gauge, []string{"feedkit_carousel_state", "feedkit_cycle"}},
	"feedkit_carousel_unhealthy":                  {gauge, []string{"feedkit_cycle"}},
	"feedkit_carousel_active":                     {gauge, nil},
}

// exported is every metric the package exports: the SDK's, the workflow engine's, the
// carousel's and the group's.
var exported = func() map[string]instrument {
	all := maps.Clone(table)
	maps.Copy(all, workflowTable)
	maps.Copy(all, carouselTable)
	maps.Copy(all, groupTable)
	return all
}()

// addAppMetrics registers the workflow engine's and the carousel's metrics with reg,
// with a series of every one: each observer method called once, and the levels
// watched.
func addAppMetrics(t *testing.T, reg prometheus.Registerer) {
	t.Helper()
	w, err := promfeedkit.NewWorkflow(reg)
	require.NoError(t, err)
	e, err := workflow.New(workflow.NewMemoryStore(), workflow.Config{})
	require.NoError(t, err)
	require.NoError(t, w.WatchEngine(e))
	w.WorkflowProcessStarted("order")
	w.WorkflowProcessRestarted("order", workflow.ProcessFailed)
	w.WorkflowProcessEnded("order", workflow.ProcessFinished)
	w.WorkflowTaskPolled("pay")
	w.WorkflowTaskReleased("pay", workflow.ReleaseRetried)
	w.WorkflowTaskTimeout(workflow.TimeoutWork, "pay")
	w.WorkflowProcessTimeout("order")
	w.WorkflowRepaired("order", workflow.RepairTaskCreated)

	c, err := promfeedkit.NewCarousel(reg)
	require.NoError(t, err)
	s, err := carousel.NewScheduler(carousel.NewMemorySource(), &countingPublisher{}, carousel.Config{})
	require.NoError(t, err)
	require.NoError(t, s.Add(t.Context(), carousel.CycleConfig{Name: "a", Type: carousel.ThrottledWholeCollection,
		Origin: "o", Collection: "c", CoolDown: time.Minute, Throttle: time.Second}))
	require.NoError(t, c.WatchScheduler(s))
	c.CarouselPublished("a", time.Millisecond)
	c.CarouselPublishFailed("a", time.Millisecond)
	c.CarouselIterationCompleted("a", time.Minute)
	c.CarouselFailed("a", carousel.OpList)
	c.CarouselFenced("a")
}

// The workflow engine's and the carousel's scrapes, with a series of every metric,
// pass promtool's lint as the SDK's does.
func TestWorkflowAndCarouselScrapesPassPromtool(t *testing.T) {
	promtool := findTool(t, "FEEDKIT_PROMTOOL", "promtool")
	reg := prometheus.NewPedanticRegistry()
	addAppMetrics(t, reg)
	body := scrape(t, reg)
	for name := range maps.Keys(workflowTable) {
		assert.Contains(t, string(body), "\n# TYPE "+name+" ", "the scrape has no %s", name)
	}
	for name := range maps.Keys(carouselTable) {
		assert.Contains(t, string(body), "\n# TYPE "+name+" ", "the scrape has no %s", name)
	}
	families, err := reg.Gather()
	require.NoError(t, err)
	checkFamilies(t, families)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	out, err := cmd.CombinedOutput()
	assert.NoError(t, err, "promtool check metrics:\n%s\non the scrape:\n%s", out, body)
	assert.Empty(t, strings.TrimSpace(string(out)), "promtool's findings")
}
