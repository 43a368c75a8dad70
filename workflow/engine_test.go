package workflow_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/workflow"
)

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// faulty is a Store that fails the calls it is told to, for fault injection: a name
// fails the next n calls of that method.
type faulty struct {
	workflow.Store
	mu   sync.Mutex
	fail map[string]int
}

var errInjected = errors.New("injected store failure")

func (f *faulty) failNext(method string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail[method] += n
}

func (f *faulty) should(method string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail[method] > 0 {
		f.fail[method]--
		return fmt.Errorf("%s: %w", method, errInjected)
	}
	return nil
}

func (f *faulty) CreateGraph(ctx context.Context, g workflow.Graph) error {
	if err := f.should("CreateGraph"); err != nil {
		return err
	}
	return f.Store.CreateGraph(ctx, g)
}

func (f *faulty) CreateTasks(ctx context.Context, ts []workflow.Task) error {
	if err := f.should("CreateTasks"); err != nil {
		return err
	}
	return f.Store.CreateTasks(ctx, ts)
}

func (f *faulty) UpdateGraph(ctx context.Context, g workflow.Graph) (workflow.Graph, error) {
	if err := f.should("UpdateGraph"); err != nil {
		return g, err
	}
	return f.Store.UpdateGraph(ctx, g)
}

func (f *faulty) UpdateProcess(ctx context.Context, p workflow.Process) (workflow.Process, error) {
	if err := f.should("UpdateProcess"); err != nil {
		return p, err
	}
	return f.Store.UpdateProcess(ctx, p)
}

type rig struct {
	t     *testing.T
	clk   *clocktest.Fake
	store *faulty
	e     *workflow.Engine
	errs  []error
	mu    sync.Mutex
}

func newRig(t *testing.T, cfg workflow.Config) *rig {
	r := &rig{t: t, clk: clocktest.NewFake(t0), store: &faulty{Store: workflow.NewMemoryStore(), fail: map[string]int{}}}
	cfg.Clock = r.clk
	cfg.OnError = func(err error) { r.mu.Lock(); r.errs = append(r.errs, err); r.mu.Unlock() }
	e, err := workflow.New(r.store, cfg)
	require.NoError(t, err)
	r.e = e
	return r
}

func (r *rig) start() workflow.Process {
	r.t.Helper()
	p, _, err := r.e.Start(r.t.Context(), workflow.StartRequest{Type: "order", CustomID: "o-1", Start: workflow.TaskSpec{ActorType: "check", Args: []byte(`{"n":1}`)}})
	require.NoError(r.t, err)
	return p
}

func (r *rig) poll(actor string) workflow.Task {
	r.t.Helper()
	task, ok, err := r.e.Poll(r.t.Context(), actor)
	require.NoError(r.t, err)
	require.True(r.t, ok, "a %s task is ready", actor)
	return task
}

func (r *rig) none(actor string) {
	r.t.Helper()
	_, ok, err := r.e.Poll(r.t.Context(), actor)
	require.NoError(r.t, err)
	require.False(r.t, ok, "no %s task is ready", actor)
}

func (r *rig) release(d workflow.Decision) {
	r.t.Helper()
	require.NoError(r.t, r.e.Release(r.t.Context(), d))
}

// releaseNotApplied releases a decision that the store's failure keeps from being
// applied: Release says so (ErrNotApplied, with the cause), and the decision is
// accepted all the same (sending it again is refused as decided).
func (r *rig) releaseNotApplied(d workflow.Decision) {
	r.t.Helper()
	err := r.e.Release(r.t.Context(), d)
	require.ErrorIs(r.t, err, workflow.ErrNotApplied)
	require.ErrorIs(r.t, err, errInjected)
	require.ErrorIs(r.t, r.e.Release(r.t.Context(), d), workflow.ErrDecided)
}

func (r *rig) process(id string) workflow.Process {
	r.t.Helper()
	p, err := r.store.Process(r.t.Context(), id)
	require.NoError(r.t, err)
	return p
}

func (r *rig) recover() workflow.Report {
	r.t.Helper()
	rep, err := r.e.RecoverDue(r.t.Context())
	require.NoError(r.t, err)
	return rep
}

// A process from start to end: the start task schedules two more of other actor types;
// when both are decided the process is finished.
func TestProcessRunsToTheEnd(t *testing.T) {
	r := newRig(t, workflow.Config{})
	p := r.start()
	first := r.poll("check")
	assert.Equal(t, p.StartTask, first.ID)
	assert.Equal(t, []byte(`{"n":1}`), first.Spec.Args)
	assert.Equal(t, workflow.TaskInProgress, first.State)
	assert.NotEmpty(t, first.Pass)
	r.none("check")
	r.release(workflow.Decision{TaskID: first.ID, Pass: first.Pass, Result: []byte("ok"),
		Next: []workflow.TaskSpec{{ActorType: "pay"}, {ActorType: "ship"}}})
	pay, ship := r.poll("pay"), r.poll("ship")
	r.release(workflow.Decision{TaskID: pay.ID, Pass: pay.Pass})
	assert.Equal(t, workflow.ProcessRunning, r.process(p.ID).State)
	r.release(workflow.Decision{TaskID: ship.ID, Pass: ship.Pass})
	assert.Equal(t, workflow.ProcessFinished, r.process(p.ID).State)
	g, err := r.store.Graph(t.Context(), p.ID)
	require.NoError(t, err)
	assert.Empty(t, g.NotFinished)
	assert.ElementsMatch(t, []string{first.ID, pay.ID, ship.ID}, g.Finished)
	assert.ErrorIs(t, r.e.Release(t.Context(), workflow.Decision{TaskID: ship.ID, Pass: ship.Pass}), workflow.ErrDecided)
}

// An actor that never answers: after its work timeout the decision is taken back, queued
// again with a new pass, and counted; the late answer of the first actor is refused when
// its type does not accept the first decision, accepted when it does.
func TestWorkTimeoutRequeuesAndRotatesThePass(t *testing.T) {
	for _, acceptFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("acceptFirst=%v", acceptFirst), func(t *testing.T) {
			r := newRig(t, workflow.Config{Actors: map[string]workflow.ActorPrefs{
				"check": {AcceptFirst: &acceptFirst, WorkTimeout: 30 * time.Second}}})
			p := r.start()
			stuck := r.poll("check")
			r.clk.Advance(30*time.Second - time.Millisecond)
			assert.Zero(t, r.recover().Repaired, "not yet")
			r.clk.Advance(time.Millisecond)
			rep := r.recover()
			assert.Equal(t, 1, rep.Repaired)
			c := r.e.Counters()
			assert.Equal(t, uint64(1), c.WorkTimeouts)
			assert.Equal(t, uint64(1), c.WorkTimeoutsByActor["check"])

			again := r.poll("check")
			assert.Equal(t, stuck.ID, again.ID)
			assert.NotEqual(t, stuck.Pass, again.Pass)
			assert.Equal(t, 2, again.Attempts)
			late := r.e.Release(t.Context(), workflow.Decision{TaskID: stuck.ID, Pass: stuck.Pass})
			if acceptFirst {
				require.NoError(t, late, "the first decision to arrive wins")
				assert.ErrorIs(t, r.e.Release(t.Context(), workflow.Decision{TaskID: again.ID, Pass: again.Pass}), workflow.ErrDecided)
			} else {
				require.ErrorIs(t, late, workflow.ErrStalePass)
				r.release(workflow.Decision{TaskID: again.ID, Pass: again.Pass})
			}
			assert.Equal(t, workflow.ProcessFinished, r.process(p.ID).State)
		})
	}
}

// restartAfterWorkTimeout false: the timeout is a failed decision, and with no retry the
// process fails.
func TestWorkTimeoutWithoutRestartFailsTheTask(t *testing.T) {
	r := newRig(t, workflow.Config{Actors: map[string]workflow.ActorPrefs{"check": {RestartAfterWorkTimeout: new(false)}}})
	p := r.start()
	task := r.poll("check")
	r.clk.Advance(workflow.DefaultWorkTimeout)
	r.recover()
	got, err := r.store.Task(t.Context(), task.ID)
	require.NoError(t, err)
	assert.Equal(t, workflow.TaskFailed, got.State)
	assert.Equal(t, "work timeout", got.Error)
	assert.Equal(t, workflow.ProcessFailed, r.process(p.ID).State)
}

// A failed decision is retried with capped exponential backoff up to MaxAttempts, then
// fails the process.
func TestRetryPolicy(t *testing.T) {
	r := newRig(t, workflow.Config{Actors: map[string]workflow.ActorPrefs{
		"check": {Retry: workflow.RetryPolicy{MaxAttempts: 3, Initial: time.Second, Max: 3 * time.Second}}}})
	p := r.start()
	for i, wait := range []time.Duration{time.Second, 2 * time.Second} {
		task := r.poll("check")
		assert.Equal(t, i+1, task.Attempts)
		r.release(workflow.Decision{TaskID: task.ID, Pass: task.Pass, Error: "card declined"})
		r.clk.Advance(wait - time.Millisecond)
		r.none("check")
		r.clk.Advance(time.Millisecond)
	}
	task := r.poll("check")
	r.release(workflow.Decision{TaskID: task.ID, Pass: task.Pass, Error: "card declined"})
	pr := r.process(p.ID)
	assert.Equal(t, workflow.ProcessFailed, pr.State)
	assert.Contains(t, pr.Reason, "card declined")
}

// Task timeout: a task still queued when it passes is failed and never handed out; one
// in progress is failed at once with ForceFinishAfterTaskTimeout.
func TestTaskTimeout(t *testing.T) {
	r := newRig(t, workflow.Config{Actors: map[string]workflow.ActorPrefs{"check": {TaskTimeout: time.Minute}}})
	p := r.start()
	r.clk.Advance(time.Minute)
	r.recover()
	r.none("check")
	assert.Equal(t, workflow.ProcessFailed, r.process(p.ID).State)
	assert.Equal(t, uint64(1), r.e.Counters().TaskTimeouts)

	r = newRig(t, workflow.Config{Actors: map[string]workflow.ActorPrefs{"check": {TaskTimeout: 10 * time.Second, ForceFinishAfterTaskTimeout: true}}})
	p = r.start()
	r.poll("check")
	r.clk.Advance(10 * time.Second)
	r.recover()
	assert.Equal(t, workflow.ProcessFailed, r.process(p.ID).State)
}

// The start breaks off after the process is saved: Start still answers, and the
// recovery service begins the process at its early check.
func TestStartBrokenOffIsCompletedByRecovery(t *testing.T) {
	r := newRig(t, workflow.Config{Processes: map[string]workflow.ProcessPrefs{"order": {IdleTimeout: time.Minute}}})
	r.store.failNext("CreateGraph", 1)
	p := r.start()
	require.Len(t, r.errs, 1)
	assert.ErrorIs(t, r.errs[0], errInjected)
	r.none("check")
	r.clk.Advance(time.Minute)
	rep := r.recover()
	assert.Equal(t, 1, rep.Repaired)
	task := r.poll("check")
	r.release(workflow.Decision{TaskID: task.ID, Pass: task.Pass})
	assert.Equal(t, workflow.ProcessFinished, r.process(p.ID).State)
}

// A crash between the graph update and the creation of the next tasks: the decision is
// accepted (Release returns ErrNotApplied), and the graph scan creates the missing tasks
// from the decision.
func TestCrashBetweenGraphUpdateAndEnqueueIsRepairedByTheGraphScan(t *testing.T) {
	r := newRig(t, workflow.Config{Processes: map[string]workflow.ProcessPrefs{"order": {IdleTimeout: time.Minute}}})
	p := r.start()
	first := r.poll("check")
	r.store.failNext("CreateTasks", 1)
	r.releaseNotApplied(workflow.Decision{TaskID: first.ID, Pass: first.Pass, Next: []workflow.TaskSpec{{ActorType: "pay"}}})
	r.none("pay")
	r.clk.Advance(time.Minute)
	rep := r.recover()
	assert.Equal(t, 1, rep.Repaired)
	assert.Equal(t, uint64(1), r.e.Counters().GraphsRepaired)
	pay := r.poll("pay")
	r.release(workflow.Decision{TaskID: pay.ID, Pass: pay.Pass})
	assert.Equal(t, workflow.ProcessFinished, r.process(p.ID).State)
}

// A crash after the task's decision was saved and before the graph took it: the graph
// scan applies the decision.
func TestDecisionNotAppliedToTheGraphIsAppliedByTheGraphScan(t *testing.T) {
	r := newRig(t, workflow.Config{Processes: map[string]workflow.ProcessPrefs{"order": {IdleTimeout: time.Minute}}})
	p := r.start()
	first := r.poll("check")
	r.store.failNext("UpdateGraph", 1)
	r.releaseNotApplied(workflow.Decision{TaskID: first.ID, Pass: first.Pass})
	assert.Equal(t, workflow.ProcessRunning, r.process(p.ID).State)
	r.clk.Advance(time.Minute)
	r.recover()
	assert.Equal(t, workflow.ProcessFinished, r.process(p.ID).State)
}

// A failed decision (no retry left) whose process's end fails: Release says the rest is
// left to recovery, and the graph scan fails the process.
func TestFailedDecisionNotAppliedIsAppliedByTheGraphScan(t *testing.T) {
	r := newRig(t, workflow.Config{Processes: map[string]workflow.ProcessPrefs{"order": {IdleTimeout: time.Minute}}})
	p := r.start()
	first := r.poll("check")
	r.store.failNext("UpdateProcess", 1)
	r.releaseNotApplied(workflow.Decision{TaskID: first.ID, Pass: first.Pass, Error: "declined"})
	assert.Equal(t, workflow.ProcessRunning, r.process(p.ID).State)
	r.clk.Advance(time.Minute)
	r.recover()
	assert.Equal(t, workflow.ProcessFailed, r.process(p.ID).State)
}

// Every task done but the process not marked finished: the process scan finishes it.
func TestAllDoneButNotFinishedIsFinishedByTheProcessScan(t *testing.T) {
	r := newRig(t, workflow.Config{Processes: map[string]workflow.ProcessPrefs{"order": {ProcessTimeout: time.Hour, IdleTimeout: 2 * time.Hour}}})
	p := r.start()
	first := r.poll("check")
	r.store.failNext("UpdateProcess", 1)
	r.releaseNotApplied(workflow.Decision{TaskID: first.ID, Pass: first.Pass})
	assert.Equal(t, workflow.ProcessRunning, r.process(p.ID).State)
	r.clk.Advance(time.Hour)
	r.recover()
	assert.Equal(t, workflow.ProcessFinished, r.process(p.ID).State)
	assert.Equal(t, uint64(1), r.e.Counters().ProcessesFinished)
}

// A queue nobody polls (its actors are missing): the graph scan leaves the task waiting,
// and the process running; nothing is counted as repaired.
func TestMissingActorsAreWaitedFor(t *testing.T) {
	r := newRig(t, workflow.Config{Processes: map[string]workflow.ProcessPrefs{"order": {IdleTimeout: time.Minute}}})
	p := r.start()
	for range 3 {
		r.clk.Advance(time.Minute)
		assert.Zero(t, r.recover().Repaired)
	}
	assert.Equal(t, workflow.ProcessRunning, r.process(p.ID).State)
	task := r.poll("check")
	assert.Equal(t, 1, task.Attempts, "it was not queued again meanwhile")
}

// Many actors polling and releasing at once: every task is decided exactly once.
func TestConcurrentActorsDecideEachTaskOnce(t *testing.T) {
	r := newRig(t, workflow.Config{})
	const processes = 200
	for range processes {
		r.start()
	}
	var mu sync.Mutex
	decided := map[string]int{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				task, ok, err := r.e.Poll(context.Background(), "check")
				if err != nil || !ok {
					return
				}
				if err := r.e.Release(context.Background(), workflow.Decision{TaskID: task.ID, Pass: task.Pass}); err == nil {
					mu.Lock()
					decided[task.ID]++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	assert.Len(t, decided, processes)
	for id, n := range decided {
		assert.Equal(t, 1, n, "task %s", id)
	}
}

// A task past its task timeout is not handed out even when polled before the recovery
// service got to it.
func TestTaskPastItsTimeoutIsNotHandedOut(t *testing.T) {
	r := newRig(t, workflow.Config{Actors: map[string]workflow.ActorPrefs{"check": {TaskTimeout: time.Minute}}})
	p := r.start()
	r.clk.Advance(time.Minute)
	r.none("check")
	assert.Equal(t, workflow.ProcessFailed, r.process(p.ID).State)
}

// A task the graph lists but no store and no decision knows (lost data): the process is
// marked broken for an operator, or restarted when its type says so.
func TestLostTaskEntityBreaksOrRestartsTheProcess(t *testing.T) {
	for _, restart := range []bool{false, true} {
		t.Run(fmt.Sprintf("restart=%v", restart), func(t *testing.T) {
			r := newRig(t, workflow.Config{Processes: map[string]workflow.ProcessPrefs{"order": {IdleTimeout: time.Minute, RestartBroken: restart}}})
			p := r.start()
			ctx := t.Context()
			g, err := r.store.Graph(ctx, p.ID)
			require.NoError(t, err)
			g.NotFinished = append(g.NotFinished, "lost-task")
			_, err = r.store.UpdateGraph(ctx, g)
			require.NoError(t, err)
			r.clk.Advance(time.Minute)
			r.recover()
			got := r.process(p.ID)
			if !restart {
				assert.Equal(t, workflow.ProcessBroken, got.State)
				assert.Contains(t, got.Reason, "lost-task")
				assert.Equal(t, uint64(1), r.e.Counters().ProcessesBroken)
				return
			}
			assert.Equal(t, workflow.ProcessRunning, got.State)
			assert.Equal(t, 1, got.Run)
			task := r.poll("check")
			assert.Equal(t, 1, task.Run)
			r.release(workflow.Decision{TaskID: task.ID, Pass: task.Pass})
			assert.Equal(t, workflow.ProcessFinished, r.process(p.ID).State)
		})
	}
}
