package otelfeedkit_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/otelfeedkit"
	"github.com/feedkit/feedkit/workflow"
)

// newWorkflowMetrics returns WorkflowMetrics on a MeterProvider of the SDK read by a
// ManualReader.
func newWorkflowMetrics(t testing.TB) (*otelfeedkit.WorkflowMetrics, *sdkmetric.ManualReader) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	w, err := otelfeedkit.NewWorkflow(otelfeedkit.WithMeterProvider(mp))
	require.NoError(t, err)
	return w, reader
}

// ctxKey marks the context of a collection, to see it reach the store.
type ctxKey struct{}

// countStore is a workflow store whose counts can be made to fail, and which records
// the context of the last count.
type countStore struct {
	workflow.Store
	fail   atomic.Bool
	marked atomic.Value // the ctxKey value of the last SearchProcesses' context
}

var errCount = errors.New("the store is down")

func (s *countStore) SearchProcesses(ctx context.Context, q workflow.Query) ([]workflow.Process, int, error) {
	if v := ctx.Value(ctxKey{}); v != nil {
		s.marked.Store(v)
	}
	if s.fail.Load() {
		return nil, 0, errCount
	}
	return s.Store.SearchProcesses(ctx, q)
}

// workflowRig is an engine on a memory store and a fake clock, telling a
// WorkflowMetrics.
type workflowRig struct {
	t      *testing.T
	clk    *clocktest.Fake
	store  *countStore
	e      *workflow.Engine
	w      *otelfeedkit.WorkflowMetrics
	reader *sdkmetric.ManualReader
}

func newWorkflowRig(t *testing.T, cfg workflow.Config) *workflowRig {
	w, reader := newWorkflowMetrics(t)
	r := &workflowRig{t: t, clk: clocktest.NewFake(epoch), store: &countStore{Store: workflow.NewMemoryStore()}, w: w, reader: reader}
	cfg.Clock, cfg.Observer = r.clk, w
	cfg.OnError = func(err error) { t.Errorf("the engine reported: %v", err) }
	e, err := workflow.New(r.store, cfg)
	require.NoError(t, err)
	r.e = e
	return r
}

func (r *workflowRig) start(typ, key string) workflow.Process {
	r.t.Helper()
	p, created, err := r.e.Start(r.t.Context(), workflow.StartRequest{Type: typ, IdempotencyKey: key,
		Start: workflow.TaskSpec{ActorType: "check"}})
	require.NoError(r.t, err)
	require.True(r.t, created)
	return p
}

func (r *workflowRig) poll(actor string) workflow.Task {
	r.t.Helper()
	task, ok, err := r.e.Poll(r.t.Context(), actor)
	require.NoError(r.t, err)
	require.True(r.t, ok, "a %s task is ready", actor)
	return task
}

func (r *workflowRig) release(task workflow.Task, errText string, next ...string) {
	r.t.Helper()
	d := workflow.Decision{TaskID: task.ID, Pass: task.Pass, Error: errText}
	for _, a := range next {
		d.Next = append(d.Next, workflow.TaskSpec{ActorType: a})
	}
	require.NoError(r.t, r.e.Release(r.t.Context(), d))
}

func (r *workflowRig) recover() {
	r.t.Helper()
	_, err := r.e.RecoverDue(r.t.Context())
	require.NoError(r.t, err)
}

// byState is feedkit.workflow.processes as the test expects it: every state, in the
// order points sorts them.
func byState(running, finished, failed, aborted, broken int) []point {
	return []point{
		{attrs: []string{"feedkit.state=aborted"}, value: float64(aborted)},
		{attrs: []string{"feedkit.state=broken"}, value: float64(broken)},
		{attrs: []string{"feedkit.state=failed"}, value: float64(failed)},
		{attrs: []string{"feedkit.state=finished"}, value: float64(finished)},
		{attrs: []string{"feedkit.state=running"}, value: float64(running)},
	}
}

// countPoints is e.CountByState as points of feedkit.workflow.processes.
func countPoints(t *testing.T, e *workflow.Engine) []point {
	n, err := e.CountByState(t.Context())
	require.NoError(t, err)
	return byState(n[workflow.ProcessRunning], n[workflow.ProcessFinished], n[workflow.ProcessFailed],
		n[workflow.ProcessAborted], n[workflow.ProcessBroken])
}

// A real engine on its memory store runs a script of starts, polls, releases (finished,
// retried, failed), a work timeout, a task timeout, a restart, an abort and a process
// timeout: every counter is exactly what the script made, and what the engine's
// Counters count; the processes by state are CountByState's, every state reported.
func TestWorkflowMetricsCountWhatTheEngineDid(t *testing.T) {
	r := newWorkflowRig(t, workflow.Config{
		Actors: map[string]workflow.ActorPrefs{
			"pay":   {Retry: workflow.RetryPolicy{MaxAttempts: 2, Initial: time.Second}},
			"ship":  {WorkTimeout: time.Minute},
			"audit": {TaskTimeout: 30 * time.Second},
		},
		Processes: map[string]workflow.ProcessPrefs{
			"order":  {ProcessTimeout: time.Hour, IdleTimeout: 2 * time.Hour},
			"refund": {IdleTimeout: 2 * time.Hour},
		},
	})
	ctx := t.Context()
	reg, err := r.w.WatchEngine(r.e)
	require.NoError(t, err)
	t.Cleanup(func() { _ = reg.Unregister() })
	got := collect(t, r.reader)
	assert.Equal(t, map[string]metricdata.Metrics{"feedkit.workflow.processes": got["feedkit.workflow.processes"]}, got,
		"before anything, the level alone")
	assert.Equal(t, byState(0, 0, 0, 0, 0), points(got["feedkit.workflow.processes"]), "every state, 0 included")

	// Four orders and two refunds start; a start with a key held gets its process back
	// and is not counted.
	o1, o2, o3 := r.start("order", ""), r.start("order", ""), r.start("order", "")
	r1, r2 := r.start("refund", ""), r.start("refund", "k")
	_, created, err := r.e.Start(ctx, workflow.StartRequest{Type: "refund", IdempotencyKey: "k",
		Start: workflow.TaskSpec{ActorType: "check"}})
	require.NoError(t, err)
	require.False(t, created)

	// The five start tasks are polled and decided: o1 goes on to pay, o2 to ship, r2 to
	// audit; r1 finishes; o3's check fails for good (check does not retry).
	checks := map[string]workflow.Task{}
	for range 5 {
		task := r.poll("check")
		checks[task.ProcessID] = task
	}
	r.release(checks[o1.ID], "", "pay")
	r.release(checks[o2.ID], "", "ship")
	r.release(checks[o3.ID], "declined")
	r.release(checks[r1.ID], "")
	r.release(checks[r2.ID], "", "audit")

	// pay fails, is retried a second later, and fails for good: o1 fails. An empty poll
	// is not counted.
	r.release(r.poll("pay"), "declined")
	_, ok, err := r.e.Poll(ctx, "pay")
	require.NoError(t, err)
	require.False(t, ok, "the retry waits its backoff")
	r.clk.Advance(time.Second)
	r.release(r.poll("pay"), "declined again")

	// ship is polled and not answered: its work timeout takes it back. The same scan
	// fails the audit task, never polled, at its task timeout: r2 fails. ship is polled
	// again and finishes: o2 finishes.
	r.poll("ship")
	r.clk.Advance(time.Minute)
	r.recover()
	r.release(r.poll("ship"), "")

	// o3 is restarted from failed, then aborted.
	_, err = r.e.Restart(ctx, o3.ID, "", "try again")
	require.NoError(t, err)
	require.NoError(t, r.e.Abort(ctx, o3.ID, "cancelled"))

	// o4 runs past its process timeout, its check left waiting.
	r.start("order", "")
	r.clk.Advance(time.Hour)
	r.recover()

	got = collect(t, r.reader)
	want := map[string][]point{
		"feedkit.workflow.processes.started": {
			{attrs: []string{"feedkit.process.type=order"}, value: 4},
			{attrs: []string{"feedkit.process.type=refund"}, value: 2},
		},
		"feedkit.workflow.processes.restarted": {
			{attrs: []string{"feedkit.process.type=order", "feedkit.state=failed"}, value: 1},
		},
		"feedkit.workflow.processes.ended": {
			{attrs: []string{"feedkit.process.type=order", "feedkit.state=aborted"}, value: 1},   // o3
			{attrs: []string{"feedkit.process.type=order", "feedkit.state=failed"}, value: 2},    // o3, o1
			{attrs: []string{"feedkit.process.type=order", "feedkit.state=finished"}, value: 1},  // o2
			{attrs: []string{"feedkit.process.type=refund", "feedkit.state=failed"}, value: 1},   // r2
			{attrs: []string{"feedkit.process.type=refund", "feedkit.state=finished"}, value: 1}, // r1
		},
		"feedkit.workflow.tasks.polled": {
			{attrs: []string{"feedkit.actor.type=check"}, value: 5},
			{attrs: []string{"feedkit.actor.type=pay"}, value: 2},
			{attrs: []string{"feedkit.actor.type=ship"}, value: 2},
		},
		"feedkit.workflow.tasks.released": {
			{attrs: []string{"feedkit.actor.type=check", "feedkit.result=failed"}, value: 1},
			{attrs: []string{"feedkit.actor.type=check", "feedkit.result=finished"}, value: 4},
			{attrs: []string{"feedkit.actor.type=pay", "feedkit.result=failed"}, value: 1},
			{attrs: []string{"feedkit.actor.type=pay", "feedkit.result=retried"}, value: 1},
			{attrs: []string{"feedkit.actor.type=ship", "feedkit.result=finished"}, value: 1},
		},
		"feedkit.workflow.tasks.timeouts": {
			{attrs: []string{"feedkit.actor.type=audit", "feedkit.timeout.kind=task"}, value: 1},
			{attrs: []string{"feedkit.actor.type=ship", "feedkit.timeout.kind=work"}, value: 1},
		},
		"feedkit.workflow.processes.timeouts": {
			{attrs: []string{"feedkit.process.type=order"}, value: 1},
		},
		// o4 runs; o2 and r1 finished; o1 and r2 failed; o3 aborted.
		"feedkit.workflow.processes": byState(1, 2, 2, 1, 0),
	}
	assert.Len(t, got, len(want), "no repair was made: %v", mapKeys(got))
	for name, w := range want {
		assert.Equal(t, w, points(got[name]), name)
	}
	assert.Equal(t, countPoints(t, r.e), points(got["feedkit.workflow.processes"]), "the store's count")

	// The engine's own counters count the same timeouts.
	c := r.e.Counters()
	sum := func(name, kind string) (n uint64) {
		for _, p := range points(got[name]) {
			if kind == "" || slices.Contains(p.attrs, "feedkit.timeout.kind="+kind) {
				n += uint64(p.value)
			}
		}
		return n
	}
	assert.Equal(t, c.WorkTimeouts, sum("feedkit.workflow.tasks.timeouts", "work"))
	assert.Equal(t, map[string]uint64{"ship": 1}, c.WorkTimeoutsByActor)
	assert.Equal(t, c.TaskTimeouts, sum("feedkit.workflow.tasks.timeouts", "task"))
	assert.Equal(t, c.ProcessTimeouts, sum("feedkit.workflow.processes.timeouts", ""))
	assert.Equal(t, uint64(1), c.TaskTimeouts)
	assert.Equal(t, uint64(1), c.ProcessTimeouts)
	assert.Zero(t, c.ProcessesBroken+c.GraphsRepaired+c.ProcessesFinished, "nothing to repair: %+v", c)
}

// The count is made with the collection's context, at each collection; a count that
// fails reports nothing of the level, returns its error to the collection, and leaves
// the counters reported.
func TestWatchEngineCountsWithTheCollectionsContext(t *testing.T) {
	r := newWorkflowRig(t, workflow.Config{})
	reg, err := r.w.WatchEngine(r.e)
	require.NoError(t, err)
	t.Cleanup(func() { _ = reg.Unregister() })
	r.start("order", "")

	ctx := context.WithValue(t.Context(), ctxKey{}, "collection 1")
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.reader.Collect(ctx, &rm))
	assert.Equal(t, "collection 1", r.store.marked.Load())
	assert.Equal(t, byState(1, 0, 0, 0, 0), points(metricNamed(t, rm, "feedkit.workflow.processes")))

	r.store.fail.Store(true)
	ctx = context.WithValue(t.Context(), ctxKey{}, "collection 2")
	err = r.reader.Collect(ctx, &rm)
	require.ErrorIs(t, err, errCount)
	assert.ErrorContains(t, err, "otelfeedkit: feedkit.workflow.processes: workflow: count of ")
	assert.Equal(t, "collection 2", r.store.marked.Load())
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			assert.NotEqual(t, "feedkit.workflow.processes", m.Name, "nothing of a count that failed")
		}
	}
	assert.Equal(t, []point{{attrs: []string{"feedkit.process.type=order"}, value: 1}},
		points(metricNamed(t, rm, "feedkit.workflow.processes.started")))

	// The store back, the level is back.
	r.store.fail.Store(false)
	assert.Equal(t, byState(1, 0, 0, 0, 0), points(collect(t, r.reader)["feedkit.workflow.processes"]))
}

// metricNamed returns the metric of rm named name.
func metricNamed(t *testing.T, rm metricdata.ResourceMetrics, name string) metricdata.Metrics {
	t.Helper()
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m
			}
		}
	}
	t.Fatalf("%s was not reported", name)
	return metricdata.Metrics{}
}

// One WorkflowMetrics watches one engine: a second WatchEngine is refused, with why,
// until the first is unregistered; unregistered, the level is no longer reported.
func TestWatchEngineRefusesASecondEngine(t *testing.T) {
	a := newWorkflowRig(t, workflow.Config{})
	b, err := workflow.New(workflow.NewMemoryStore(), workflow.Config{})
	require.NoError(t, err)
	w, reader := a.w, a.reader
	_, err = w.WatchEngine(nil)
	assert.EqualError(t, err, "otelfeedkit: WatchEngine: the Engine is nil")
	reg, err := w.WatchEngine(a.e)
	require.NoError(t, err)
	for _, e := range []*workflow.Engine{a.e, b} {
		_, err = w.WatchEngine(e)
		assert.EqualError(t, err, "otelfeedkit: WatchEngine: an engine is watched already; a WorkflowMetrics watches one (unregister the first to watch another)")
	}
	require.NoError(t, reg.Unregister())
	require.NoError(t, reg.Unregister(), "a second Unregister does nothing")
	assert.NotContains(t, collect(t, reader), "feedkit.workflow.processes")

	// b's store is empty, a's holds one process: the registration in force is b's.
	a.start("order", "")
	reg, err = w.WatchEngine(b)
	require.NoError(t, err)
	assert.Equal(t, byState(0, 0, 0, 0, 0), points(collect(t, reader)["feedkit.workflow.processes"]))
	require.NoError(t, reg.Unregister())
}

// After a key's first call, the workflow observer's calls allocate nothing: an engine
// makes them on its callers' paths.
func TestWorkflowCallsAllocateNothingAfterAKeysFirst(t *testing.T) {
	w, _ := newWorkflowMetrics(t)
	calls := func() {
		w.WorkflowProcessStarted("order")
		w.WorkflowProcessRestarted("order", workflow.ProcessFailed)
		w.WorkflowProcessEnded("order", workflow.ProcessFinished)
		w.WorkflowTaskPolled("check")
		w.WorkflowTaskReleased("check", workflow.ReleaseRetried)
		w.WorkflowTaskTimeout(workflow.TimeoutWork, "check")
		w.WorkflowProcessTimeout("order")
		w.WorkflowRepaired("order", workflow.RepairTaskCreated)
	}
	calls()
	assert.Zero(t, testing.AllocsPerRun(100, calls))
}
