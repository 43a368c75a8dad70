package promfeedkit_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/promfeedkit"
	"github.com/feedkit/feedkit/workflow"
)

// countFailingStore fails its searches while failing is set: the store queries of
// Engine.CountByState.
type countFailingStore struct {
	workflow.Store
	failing atomic.Bool
}

func (s *countFailingStore) SearchProcesses(ctx context.Context, q workflow.Query) ([]workflow.Process, int, error) {
	if s.failing.Load() {
		return nil, 0, errors.New("store unreachable")
	}
	return s.Store.SearchProcesses(ctx, q)
}

// workflowScript drives one engine on a fake clock, failing the test on any error.
type workflowScript struct {
	t   *testing.T
	e   *workflow.Engine
	clk *clocktest.Fake
}

func (s workflowScript) start(typ, actor string) workflow.Process {
	s.t.Helper()
	p, created, err := s.e.Start(s.t.Context(), workflow.StartRequest{Type: typ, Start: workflow.TaskSpec{ActorType: actor}})
	require.NoError(s.t, err)
	require.True(s.t, created)
	return p
}

func (s workflowScript) poll(actor string) workflow.Task {
	s.t.Helper()
	task, ok, err := s.e.Poll(s.t.Context(), actor)
	require.NoError(s.t, err)
	require.True(s.t, ok, "a %s task is ready", actor)
	return task
}

func (s workflowScript) release(task workflow.Task, failure string, next ...workflow.TaskSpec) {
	s.t.Helper()
	require.NoError(s.t, s.e.Release(s.t.Context(), workflow.Decision{TaskID: task.ID, Pass: task.Pass, Error: failure, Next: next}))
}

func (s workflowScript) recoverDue() {
	s.t.Helper()
	_, err := s.e.RecoverDue(s.t.Context())
	require.NoError(s.t, err)
}

// A real engine's life through the metrics: every series equals what the script did
// and what the engine's Counters say, and the gauge is the store's count by state. A
// count that fails leaves the gauge out and is counted.
func TestWorkflowMetricsCountAnEnginesLife(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m, err := promfeedkit.NewWorkflow(reg)
	require.NoError(t, err)
	store := &countFailingStore{Store: workflow.NewMemoryStore()}
	clk := clocktest.NewFake(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	e, err := workflow.New(store, workflow.Config{Clock: clk, Observer: m,
		Actors: map[string]workflow.ActorPrefs{
			"check": {WorkTimeout: 30 * time.Second},
			"pay":   {Retry: workflow.RetryPolicy{MaxAttempts: 2, Initial: time.Second}}},
		Processes: map[string]workflow.ProcessPrefs{"long": {ProcessTimeout: time.Hour, IdleTimeout: 5 * time.Hour}}})
	require.NoError(t, err)
	require.NoError(t, m.WatchEngine(e))
	s := workflowScript{t: t, e: e, clk: clk}
	pay := workflow.TaskSpec{ActorType: "pay"}

	// Three orders; the third's check is lost by its actor and handed out again.
	orders := []workflow.Process{s.start("order", "check"), s.start("order", "check"), s.start("order", "check")}
	s.release(s.poll("check"), "", pay)
	s.release(s.poll("check"), "", pay)
	s.poll("check")
	clk.Advance(30 * time.Second)
	s.recoverDue()
	s.release(s.poll("check"), "", pay)

	// One payment is declined twice and fails its order; the others pass.
	var declined string
	for range 3 {
		task := s.poll("pay")
		if declined == "" {
			declined = task.ProcessID
			s.release(task, "declined")
			continue
		}
		s.release(task, "")
	}
	clk.Advance(time.Second)
	s.release(s.poll("pay"), "declined again")
	p, err := store.Process(t.Context(), declined)
	require.NoError(t, err)
	require.Equal(t, workflow.ProcessFailed, p.State)
	require.Contains(t, []string{orders[0].ID, orders[1].ID, orders[2].ID}, declined)

	// The failed order is restarted and finishes; a long process runs past its timeout.
	_, err = e.Restart(t.Context(), declined, "", "card replaced")
	require.NoError(t, err)
	s.release(s.poll("check"), "")
	s.start("long", "wait")
	clk.Advance(time.Hour)
	s.recoverDue()

	got := flatten(t, reg)
	counters := e.Counters()
	require.Equal(t, uint64(1), counters.WorkTimeouts)
	require.Equal(t, uint64(1), counters.ProcessTimeouts)
	counts, err := e.CountByState(t.Context())
	require.NoError(t, err)
	assert.Equal(t, map[string]float64{
		`feedkit_workflow_processes_started_total{feedkit_process_type="order"}`:                          3,
		`feedkit_workflow_processes_started_total{feedkit_process_type="long"}`:                           1,
		`feedkit_workflow_processes_restarted_total{feedkit_process_type="order",feedkit_state="failed"}`: 1,
		`feedkit_workflow_processes_ended_total{feedkit_process_type="order",feedkit_state="failed"}`:     1,
		`feedkit_workflow_processes_ended_total{feedkit_process_type="order",feedkit_state="finished"}`:   3,
		`feedkit_workflow_tasks_polled_total{feedkit_actor_type="check"}`:                                 5,
		`feedkit_workflow_tasks_polled_total{feedkit_actor_type="pay"}`:                                   4,
		`feedkit_workflow_tasks_released_total{feedkit_actor_type="check",feedkit_result="finished"}`:     4,
		`feedkit_workflow_tasks_released_total{feedkit_actor_type="pay",feedkit_result="finished"}`:       2,
		`feedkit_workflow_tasks_released_total{feedkit_actor_type="pay",feedkit_result="retried"}`:        1,
		`feedkit_workflow_tasks_released_total{feedkit_actor_type="pay",feedkit_result="failed"}`:         1,
		`feedkit_workflow_tasks_timeouts_total{feedkit_actor_type="check",feedkit_timeout_kind="work"}`:   float64(counters.WorkTimeoutsByActor["check"]),
		`feedkit_workflow_processes_timeouts_total{feedkit_process_type="long"}`:                          float64(counters.ProcessTimeouts),
		`feedkit_workflow_processes{feedkit_state="running"}`:                                             float64(counts[workflow.ProcessRunning]),
		`feedkit_workflow_processes{feedkit_state="finished"}`:                                            float64(counts[workflow.ProcessFinished]),
		`feedkit_workflow_processes{feedkit_state="failed"}`:                                              float64(counts[workflow.ProcessFailed]),
		`feedkit_workflow_processes{feedkit_state="aborted"}`:                                             float64(counts[workflow.ProcessAborted]),
		`feedkit_workflow_processes{feedkit_state="broken"}`:                                              float64(counts[workflow.ProcessBroken]),
		`feedkit_workflow_count_failures_total`:                                                           0,
	}, got)
	assert.Equal(t, map[workflow.ProcessState]int{workflow.ProcessRunning: 1, workflow.ProcessFinished: 3,
		workflow.ProcessFailed: 0, workflow.ProcessAborted: 0, workflow.ProcessBroken: 0}, counts)

	store.failing.Store(true)
	got = flatten(t, reg)
	assert.Equal(t, 1.0, got["feedkit_workflow_count_failures_total"])
	for state := range counts {
		assert.NotContains(t, got, `feedkit_workflow_processes{feedkit_state="`+state.String()+`"}`, "a failed count is left out")
	}
	assert.Equal(t, 5.0, got[`feedkit_workflow_tasks_polled_total{feedkit_actor_type="check"}`], "the counters stay")
}

func TestNewWorkflowAndWatchEngineRefuseMisuse(t *testing.T) {
	_, err := promfeedkit.NewWorkflow(nil)
	require.ErrorContains(t, err, "Registerer is nil")
	reg := prometheus.NewRegistry()
	m, err := promfeedkit.NewWorkflow(reg)
	require.NoError(t, err)
	_, err = promfeedkit.NewWorkflow(reg)
	require.Error(t, err, "a second NewWorkflow on one registry")
	require.ErrorContains(t, m.WatchEngine(nil), "nil")
	e, err := workflow.New(workflow.NewMemoryStore(), workflow.Config{})
	require.NoError(t, err)
	require.NoError(t, m.WatchEngine(e))
	require.ErrorContains(t, m.WatchEngine(e), "already watches")
}
