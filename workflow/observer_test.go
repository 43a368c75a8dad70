package workflow_test

import (
	"context"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/workflow"
)

// recorder is a workflow.Observer that counts what it is told, by method and arguments
// ("released pay retried"), so that a test compares the whole of it with what happened.
type recorder struct {
	mu sync.Mutex
	n  map[string]int
}

func newRecorder() *recorder { return &recorder{n: map[string]int{}} }

func (r *recorder) add(words ...string) {
	key := words[0]
	for _, w := range words[1:] {
		key += " " + w
	}
	r.mu.Lock()
	r.n[key]++
	r.mu.Unlock()
}

func (r *recorder) counts() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.n)
}

func (r *recorder) WorkflowProcessStarted(processType string) { r.add("started", processType) }
func (r *recorder) WorkflowProcessRestarted(processType string, from workflow.ProcessState) {
	r.add("restarted", processType, from.String())
}
func (r *recorder) WorkflowProcessEnded(processType string, state workflow.ProcessState) {
	r.add("ended", processType, state.String())
}
func (r *recorder) WorkflowTaskPolled(actorType string) { r.add("polled", actorType) }
func (r *recorder) WorkflowTaskReleased(actorType string, result workflow.ReleaseResult) {
	r.add("released", actorType, result.String())
}
func (r *recorder) WorkflowTaskTimeout(kind workflow.TimeoutKind, actorType string) {
	r.add("timeout", kind.String(), actorType)
}
func (r *recorder) WorkflowProcessTimeout(processType string) { r.add("process_timeout", processType) }
func (r *recorder) WorkflowRepaired(processType string, kind workflow.RepairKind) {
	r.add("repaired", processType, kind.String())
}

// observed returns a rig whose engine tells rec.
func observed(t *testing.T, cfg workflow.Config) (*rig, *recorder) {
	rec := newRecorder()
	cfg.Observer = rec
	return newRig(t, cfg), rec
}

// startAs starts a process of type typ whose start task is for actor.
func (r *rig) startAs(typ, actor string) workflow.Process {
	r.t.Helper()
	p, created, err := r.e.Start(r.t.Context(), workflow.StartRequest{Type: typ, Start: workflow.TaskSpec{ActorType: actor}})
	require.NoError(r.t, err)
	require.True(r.t, created)
	return p
}

func TestEnumNames(t *testing.T) {
	assert.Equal(t, []string{"finished", "retried", "failed", "unknown"}, []string{workflow.ReleaseFinished.String(),
		workflow.ReleaseRetried.String(), workflow.ReleaseFailed.String(), workflow.ReleaseResult(9).String()})
	assert.Equal(t, []string{"work", "task", "unknown"}, []string{workflow.TimeoutWork.String(),
		workflow.TimeoutTask.String(), workflow.TimeoutKind(9).String()})
	var kinds []string
	for k := workflow.RepairProcessBegun; k <= workflow.RepairProcessRestarted+1; k++ {
		kinds = append(kinds, k.String())
	}
	assert.Equal(t, []string{"process_begun", "restart_completed", "decision_applied", "task_created",
		"process_failed", "process_finished", "process_restarted", "unknown"}, kinds)
}

// The life of processes: each start, poll, accepted decision and end is told once, and
// what is refused (a start that gets its key's process back, a decision for a task
// decided or cancelled) is not told. Tasks polled = decisions accepted + the one task
// its process's abort took from its actor.
func TestObserverTellsStartsPollsReleasesAndEnds(t *testing.T) {
	r, rec := observed(t, workflow.Config{Actors: map[string]workflow.ActorPrefs{
		"pay": {Retry: workflow.RetryPolicy{MaxAttempts: 2, Initial: time.Second}}}})
	ctx := t.Context()
	var ps []workflow.Process
	for range 3 {
		ps = append(ps, r.start())
	}
	r.clk.Advance(time.Millisecond) // the fourth start task is ready last
	keyed := workflow.StartRequest{Type: "order", IdempotencyKey: "order-4", Start: workflow.TaskSpec{ActorType: "check"}}
	p4, created, err := r.e.Start(ctx, keyed)
	require.NoError(t, err)
	require.True(t, created)
	_, created, err = r.e.Start(ctx, keyed)
	require.NoError(t, err)
	require.False(t, created, "a repeated start is not a start")

	// The three start tasks schedule a payment each; the fourth is aborted in its actor's hands.
	for range 3 {
		task := r.poll("check")
		require.NotEqual(t, p4.ID, task.ProcessID, "ready before it")
		r.release(workflow.Decision{TaskID: task.ID, Pass: task.Pass, Next: []workflow.TaskSpec{{ActorType: "pay"}}})
	}
	aborted := r.poll("check")
	require.NoError(t, r.e.Abort(ctx, p4.ID, "customer cancelled"))
	require.ErrorIs(t, r.e.Release(ctx, workflow.Decision{TaskID: aborted.ID, Pass: aborted.Pass}), workflow.ErrDecided)

	// Every payment is declined once and retried; the retry succeeds, but for ps[1]'s.
	for range 3 {
		task := r.poll("pay")
		r.release(workflow.Decision{TaskID: task.ID, Pass: task.Pass, Error: "declined"})
	}
	r.none("pay")
	r.clk.Advance(time.Second)
	for range 3 {
		task := r.poll("pay")
		d := workflow.Decision{TaskID: task.ID, Pass: task.Pass}
		if task.ProcessID == ps[1].ID {
			d.Error = "declined again"
		}
		r.release(d)
		require.ErrorIs(t, r.e.Release(ctx, d), workflow.ErrDecided, "told once")
	}
	require.Equal(t, workflow.ProcessFailed, r.process(ps[1].ID).State)

	// The failed one is restarted, and finishes.
	_, err = r.e.Restart(ctx, ps[1].ID, "", "card replaced")
	require.NoError(t, err)
	task := r.poll("check")
	r.release(workflow.Decision{TaskID: task.ID, Pass: task.Pass})

	assert.Equal(t, map[string]int{
		"started order":           4,
		"polled check":            5,
		"released check finished": 4,
		"polled pay":              6,
		"released pay retried":    3,
		"released pay finished":   2,
		"released pay failed":     1,
		"ended order aborted":     1,
		"ended order failed":      1,
		"restarted order failed":  1,
		"ended order finished":    3,
	}, rec.counts())
	assert.Equal(t, workflow.Counters{WorkTimeoutsByActor: map[string]uint64{}}, r.e.Counters(), "no timeout, no repair")
}

// Timeouts are told by kind and actor type as the recovery service (or Poll) acts on
// them, once each, as Counters counts them.
func TestObserverTellsTimeouts(t *testing.T) {
	for _, c := range []struct {
		name   string
		actors map[string]workflow.ActorPrefs
		run    func(t *testing.T, r *rig)
		want   map[string]int
	}{{
		name:   "work timeout, queued again",
		actors: map[string]workflow.ActorPrefs{"check": {WorkTimeout: 30 * time.Second}},
		run: func(t *testing.T, r *rig) {
			r.start()
			r.poll("check")
			r.clk.Advance(30*time.Second - time.Millisecond)
			r.recover()
			r.clk.Advance(time.Millisecond)
			r.recover()
			task := r.poll("check")
			r.release(workflow.Decision{TaskID: task.ID, Pass: task.Pass})
		},
		want: map[string]int{"started order": 1, "polled check": 2, "timeout work check": 1,
			"released check finished": 1, "ended order finished": 1},
	}, {
		name:   "work timeout, failed",
		actors: map[string]workflow.ActorPrefs{"check": {RestartAfterWorkTimeout: new(false)}},
		run: func(t *testing.T, r *rig) {
			r.start()
			r.poll("check")
			r.clk.Advance(workflow.DefaultWorkTimeout)
			r.recover()
			r.recover()
		},
		want: map[string]int{"started order": 1, "polled check": 1, "timeout work check": 1, "ended order failed": 1},
	}, {
		name:   "work timeout, retried then failed",
		actors: map[string]workflow.ActorPrefs{"check": {RestartAfterWorkTimeout: new(false), Retry: workflow.RetryPolicy{MaxAttempts: 2}}},
		run: func(t *testing.T, r *rig) {
			r.start()
			r.poll("check")
			r.clk.Advance(workflow.DefaultWorkTimeout)
			r.recover()
			r.clk.Advance(workflow.DefaultRetryInitial)
			r.poll("check")
			r.clk.Advance(workflow.DefaultWorkTimeout)
			r.recover()
		},
		want: map[string]int{"started order": 1, "polled check": 2, "timeout work check": 2, "ended order failed": 1},
	}, {
		name:   "task timeout, queued",
		actors: map[string]workflow.ActorPrefs{"check": {TaskTimeout: time.Minute}},
		run: func(t *testing.T, r *rig) {
			r.start()
			r.clk.Advance(time.Minute)
			r.recover()
			r.none("check")
		},
		want: map[string]int{"started order": 1, "timeout task check": 1, "ended order failed": 1},
	}, {
		name:   "task timeout, found by Poll",
		actors: map[string]workflow.ActorPrefs{"check": {TaskTimeout: time.Minute}},
		run: func(t *testing.T, r *rig) {
			r.start()
			r.start()
			r.clk.Advance(time.Minute)
			r.none("check")
			r.recover()
		},
		want: map[string]int{"started order": 2, "timeout task check": 2, "ended order failed": 2},
	}, {
		name:   "task timeout, forced",
		actors: map[string]workflow.ActorPrefs{"check": {TaskTimeout: 10 * time.Second, ForceFinishAfterTaskTimeout: true}},
		run: func(t *testing.T, r *rig) {
			r.start()
			task := r.poll("check")
			r.clk.Advance(10 * time.Second)
			r.recover()
			require.ErrorIs(t, r.e.Release(t.Context(), workflow.Decision{TaskID: task.ID, Pass: task.Pass}), workflow.ErrDecided)
		},
		want: map[string]int{"started order": 1, "polled check": 1, "timeout task check": 1, "ended order failed": 1},
	}} {
		t.Run(c.name, func(t *testing.T) {
			r, rec := observed(t, workflow.Config{Actors: c.actors})
			c.run(t, r)
			got := rec.counts()
			assert.Equal(t, c.want, got)
			counters := r.e.Counters()
			assert.Equal(t, got["timeout work check"], int(counters.WorkTimeouts))
			assert.Equal(t, got["timeout work check"], int(counters.WorkTimeoutsByActor["check"]))
			assert.Equal(t, got["timeout task check"], int(counters.TaskTimeouts))
		})
	}
}

// A process running past its process timeout is told at each ProcessTimeout, as
// Counters counts it.
func TestObserverTellsProcessTimeouts(t *testing.T) {
	r, rec := observed(t, workflow.Config{Processes: map[string]workflow.ProcessPrefs{
		"long": {ProcessTimeout: time.Hour, IdleTimeout: 5 * time.Hour}}})
	r.startAs("long", "check")
	r.clk.Advance(time.Hour - time.Second)
	r.recover()
	for range 3 {
		r.clk.Advance(time.Hour)
		r.recover()
	}
	assert.Equal(t, map[string]int{"started long": 1, "process_timeout long": 3}, rec.counts())
	assert.Equal(t, uint64(3), r.e.Counters().ProcessTimeouts)
}

// Each kind of repair is told once, whoever makes it: the recovery service's scans, a
// start that finds its key's process begun by half, a mass recovery job.
func TestObserverTellsRepairs(t *testing.T) {
	idle := map[string]workflow.ProcessPrefs{"order": {IdleTimeout: time.Minute}}
	for _, c := range []struct {
		name      string
		processes map[string]workflow.ProcessPrefs
		run       func(t *testing.T, r *rig)
		want      map[string]int
	}{{
		name:      "start broken off",
		processes: idle,
		run: func(t *testing.T, r *rig) {
			r.store.failNext("CreateGraph", 1)
			r.start()
			r.clk.Advance(time.Minute)
			r.recover()
			r.recover()
		},
		want: map[string]int{"started order": 1, "repaired order process_begun": 1},
	}, {
		name:      "start broken off, begun by the next start of its key",
		processes: idle,
		run: func(t *testing.T, r *rig) {
			req := workflow.StartRequest{Type: "order", IdempotencyKey: "k", Start: workflow.TaskSpec{ActorType: "check"}}
			r.store.failNext("CreateGraph", 1)
			_, _, err := r.e.Start(t.Context(), req)
			require.NoError(t, err)
			for range 2 {
				_, created, err := r.e.Start(t.Context(), req)
				require.NoError(t, err)
				require.False(t, created)
			}
			r.clk.Advance(time.Minute)
			r.recover()
		},
		want: map[string]int{"started order": 1, "repaired order process_begun": 1},
	}, {
		name:      "restart broken off",
		processes: idle,
		run: func(t *testing.T, r *rig) {
			p := r.start()
			r.store.failNext("UpdateGraph", 1)
			_, err := r.e.Restart(t.Context(), p.ID, "", "again")
			require.NoError(t, err)
			r.clk.Advance(time.Minute)
			r.recover()
			r.recover()
			task := r.poll("check")
			require.Equal(t, 1, task.Run)
		},
		want: map[string]int{"started order": 1, "restarted order running": 1,
			"repaired order restart_completed": 1, "polled check": 1},
	}, {
		name:      "next tasks not created",
		processes: idle,
		run: func(t *testing.T, r *rig) {
			r.start()
			first := r.poll("check")
			r.store.failNext("CreateTasks", 1)
			r.releaseNotApplied(workflow.Decision{TaskID: first.ID, Pass: first.Pass,
				Next: []workflow.TaskSpec{{ActorType: "pay"}, {ActorType: "ship"}}})
			r.clk.Advance(time.Minute)
			r.recover()
			r.recover()
			r.poll("pay")
			r.poll("ship")
		},
		want: map[string]int{"started order": 1, "polled check": 1, "released check finished": 1,
			"repaired order task_created": 2, "polled pay": 1, "polled ship": 1},
	}, {
		name:      "decision not applied",
		processes: idle,
		run: func(t *testing.T, r *rig) {
			r.start()
			first := r.poll("check")
			r.store.failNext("UpdateGraph", 1)
			r.releaseNotApplied(workflow.Decision{TaskID: first.ID, Pass: first.Pass})
			r.clk.Advance(time.Minute)
			r.recover()
			r.recover()
		},
		want: map[string]int{"started order": 1, "polled check": 1, "released check finished": 1,
			"repaired order decision_applied": 1, "ended order finished": 1},
	}, {
		name:      "failed task, process not failed",
		processes: idle,
		run: func(t *testing.T, r *rig) {
			r.start()
			first := r.poll("check")
			r.store.failNext("UpdateProcess", 1)
			r.releaseNotApplied(workflow.Decision{TaskID: first.ID, Pass: first.Pass, Error: "declined"})
			r.clk.Advance(time.Minute)
			r.recover()
			r.recover()
		},
		want: map[string]int{"started order": 1, "polled check": 1, "released check failed": 1,
			"repaired order process_failed": 1, "ended order failed": 1},
	}, {
		name:      "all done, finished by the graph scan",
		processes: idle,
		run: func(t *testing.T, r *rig) {
			r.start()
			first := r.poll("check")
			r.store.failNext("UpdateProcess", 1)
			r.releaseNotApplied(workflow.Decision{TaskID: first.ID, Pass: first.Pass})
			r.clk.Advance(time.Minute)
			r.recover()
			r.recover()
		},
		want: map[string]int{"started order": 1, "polled check": 1, "released check finished": 1,
			"repaired order process_finished": 1, "ended order finished": 1},
	}, {
		name:      "all done, finished by the process scan",
		processes: map[string]workflow.ProcessPrefs{"order": {ProcessTimeout: time.Hour, IdleTimeout: 2 * time.Hour}},
		run: func(t *testing.T, r *rig) {
			r.start()
			first := r.poll("check")
			r.store.failNext("UpdateProcess", 1)
			r.releaseNotApplied(workflow.Decision{TaskID: first.ID, Pass: first.Pass})
			r.clk.Advance(time.Hour)
			r.recover()
			r.recover()
		},
		want: map[string]int{"started order": 1, "polled check": 1, "released check finished": 1,
			"repaired order process_finished": 1, "ended order finished": 1},
	}, {
		name:      "lost task, broken",
		processes: idle,
		run:       func(t *testing.T, r *rig) { r.loseTask(r.start()) },
		want:      map[string]int{"started order": 1, "ended order broken": 1},
	}, {
		name:      "lost task, restarted",
		processes: map[string]workflow.ProcessPrefs{"order": {IdleTimeout: time.Minute, RestartBroken: true}},
		run:       func(t *testing.T, r *rig) { r.loseTask(r.start()) },
		want: map[string]int{"started order": 1, "restarted order running": 1,
			"repaired order process_restarted": 1},
	}} {
		t.Run(c.name, func(t *testing.T) {
			r, rec := observed(t, workflow.Config{Processes: c.processes})
			c.run(t, r)
			assert.Equal(t, c.want, rec.counts())
		})
	}
}

// loseTask adds to p's graph a task that is in no store and no decision, and has the
// recovery service find it.
func (r *rig) loseTask(p workflow.Process) {
	r.t.Helper()
	ctx := r.t.Context()
	g, err := r.store.Graph(ctx, p.ID)
	require.NoError(r.t, err)
	g.NotFinished = append(g.NotFinished, "lost-task")
	_, err = r.store.UpdateGraph(ctx, g)
	require.NoError(r.t, err)
	r.clk.Advance(time.Minute)
	r.recover()
	r.recover()
}

// A mass recovery job's repairs are told as the scans' are: one per repair, so the
// repairs told match the job's Repaired.
func TestObserverTellsRepairsOfAJob(t *testing.T) {
	r, rec := observed(t, workflow.Config{ScanBatch: 2})
	ctx := t.Context()
	for i := range 6 {
		if i%2 == 0 {
			r.store.failNext("CreateGraph", 1) // its start breaks off
		}
		r.start()
	}
	for range 2 { // two decisions not applied
		task := r.poll("check")
		r.store.failNext("UpdateGraph", 1)
		r.releaseNotApplied(workflow.Decision{TaskID: task.ID, Pass: task.Pass, Next: []workflow.TaskSpec{{ActorType: "pay"}}})
	}
	job, err := r.e.StartJob(ctx, workflow.Query{}, nil, 0)
	require.NoError(t, err)
	for range 10 {
		if job, err = r.e.StepJob(ctx, job.ID); err != nil || job.State == workflow.JobDone {
			break
		}
	}
	require.NoError(t, err)
	require.Equal(t, workflow.JobDone, job.State)
	assert.Equal(t, 5, job.Repaired)
	assert.Equal(t, map[string]int{"started order": 6, "polled check": 2, "released check finished": 2,
		"repaired order process_begun": 3, "repaired order decision_applied": 2}, rec.counts())
}

// Several actors and two engines at once on one store: each task is told polled once and
// released once, each work timeout once, each repair once, though the engines race for
// them.
func TestObserverTellsOnceUnderConcurrency(t *testing.T) {
	r, rec := observed(t, workflow.Config{Processes: map[string]workflow.ProcessPrefs{"order": {IdleTimeout: time.Minute}}})
	other, err := workflow.New(r.store, workflow.Config{Clock: r.clk, Observer: rec,
		Processes: map[string]workflow.ProcessPrefs{"order": {IdleTimeout: time.Minute}}})
	require.NoError(t, err)
	engines := []*workflow.Engine{r.e, other}
	const processes = 60
	for range processes {
		r.start()
	}
	// Both engines' actors poll and decide every start task; a third of the decisions
	// are not applied (the graph's write fails), and a third of the tasks are left in
	// the actors' hands.
	var wg sync.WaitGroup
	var mu sync.Mutex
	held := 0
	for i := range 8 {
		wg.Go(func() {
			e := engines[i%2]
			for {
				task, ok, err := e.Poll(context.Background(), "check")
				if err != nil || !ok {
					return
				}
				mu.Lock()
				held++
				n := held
				mu.Unlock()
				switch n % 3 {
				case 0:
					continue // never answered
				case 1:
					r.store.failNext("UpdateGraph", 1)
				}
				_ = e.Release(context.Background(), workflow.Decision{TaskID: task.ID, Pass: task.Pass})
			}
		})
	}
	wg.Wait()
	released := rec.counts()["released check finished"]
	require.Equal(t, processes, held)
	require.Equal(t, processes-processes/3, released)

	// Both engines' recovery services take the silent actors' tasks back and apply the
	// decisions left, at once.
	r.clk.Advance(workflow.DefaultWorkTimeout)
	for _, e := range engines {
		wg.Go(func() {
			_, err := e.RecoverDue(context.Background())
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	got := rec.counts()
	assert.Equal(t, processes, got["started order"])
	assert.Equal(t, processes, got["polled check"])
	assert.Equal(t, processes/3, got["timeout work check"], "each task taken back once")
	c1, c2 := r.e.Counters(), other.Counters()
	assert.Equal(t, processes/3, int(c1.WorkTimeouts+c2.WorkTimeouts))
	assert.Equal(t, processes/3, got["repaired order decision_applied"], "each decision left applied once")
	assert.Equal(t, released, got["ended order finished"], "every decision accepted ends its process once")
	assert.Len(t, got, 6, "nothing else: %v", got)
	n, err := r.e.CountByState(t.Context())
	require.NoError(t, err)
	assert.Equal(t, map[workflow.ProcessState]int{workflow.ProcessRunning: processes / 3,
		workflow.ProcessFinished: released, workflow.ProcessFailed: 0, workflow.ProcessAborted: 0,
		workflow.ProcessBroken: 0}, n)
}

// CountByState, the level, agrees with the events told: running = started + restarted
// from an end - ended; each end state = its ends - the restarts from it.
func TestCountByStateMatchesTheEventsTold(t *testing.T) {
	r, rec := observed(t, workflow.Config{Processes: map[string]workflow.ProcessPrefs{"order": {IdleTimeout: time.Minute}}})
	ctx := t.Context()
	zero := map[workflow.ProcessState]int{workflow.ProcessRunning: 0, workflow.ProcessFinished: 0,
		workflow.ProcessFailed: 0, workflow.ProcessAborted: 0, workflow.ProcessBroken: 0}
	n, err := r.e.CountByState(ctx)
	require.NoError(t, err)
	assert.Equal(t, zero, n, "every state, none in it")

	var ps []workflow.Process
	for range 9 {
		ps = append(ps, r.start())
	}
	for i := range 6 { // two finished, two failed, two left in progress, three queued
		task := r.poll("check")
		d := workflow.Decision{TaskID: task.ID, Pass: task.Pass}
		switch i % 3 {
		case 1:
			d.Error = "declined"
		case 2:
			continue
		}
		r.release(d)
	}
	var states []workflow.ProcessState
	for _, p := range ps {
		states = append(states, r.process(p.ID).State)
	}
	aborted := ps[slices.Index(states, workflow.ProcessRunning)]
	require.NoError(t, r.e.Abort(ctx, aborted.ID, "cancelled"))
	failed := ps[slices.Index(states, workflow.ProcessFailed)]
	_, err = r.e.Restart(ctx, failed.ID, "", "retry")
	require.NoError(t, err)
	// One whose start task waits in its queue: a task in progress would reach its work
	// timeout with the graph's check, and its requeuing push the check on.
	waiting := ps[slices.IndexFunc(ps, func(p workflow.Process) bool {
		p = r.process(p.ID)
		task, err := r.store.Task(ctx, p.StartTask)
		require.NoError(t, err)
		return p.State == workflow.ProcessRunning && task.State == workflow.TaskQueued
	})]
	r.loseTask(waiting)
	require.Equal(t, workflow.ProcessBroken, r.process(waiting.ID).State)

	n, err = r.e.CountByState(ctx)
	require.NoError(t, err)
	got := rec.counts()
	assert.Equal(t, map[workflow.ProcessState]int{
		workflow.ProcessRunning: got["started order"] + got["restarted order failed"] - got["ended order finished"] -
			got["ended order failed"] - got["ended order aborted"] - got["ended order broken"],
		workflow.ProcessFinished: got["ended order finished"],
		workflow.ProcessFailed:   got["ended order failed"] - got["restarted order failed"],
		workflow.ProcessAborted:  got["ended order aborted"],
		workflow.ProcessBroken:   got["ended order broken"],
	}, n)
	assert.Equal(t, map[workflow.ProcessState]int{workflow.ProcessRunning: 4, workflow.ProcessFinished: 2,
		workflow.ProcessFailed: 1, workflow.ProcessAborted: 1, workflow.ProcessBroken: 1}, n)
}

// A process whose start broke off after its graph and task were created, before its
// recovery time was set to its process timeout, is looked at by the process scan at its
// idle timeout: that is no process timeout; the first one comes at the ProcessTimeout
// from its start.
func TestProcessTimeoutCountedFromTheStart(t *testing.T) {
	r, rec := observed(t, workflow.Config{Processes: map[string]workflow.ProcessPrefs{
		"order": {ProcessTimeout: time.Hour, IdleTimeout: time.Minute}}})
	r.store.failNext("UpdateProcess", 1)
	r.start()
	require.Len(t, r.errs, 1)
	r.clk.Advance(time.Minute)
	r.recover()
	assert.Zero(t, r.e.Counters().ProcessTimeouts, "a minute after its start")
	r.clk.Advance(time.Hour - time.Minute - time.Second)
	r.recover()
	assert.Zero(t, r.e.Counters().ProcessTimeouts, "a second before its process timeout")
	r.clk.Advance(time.Second)
	r.recover()
	assert.Equal(t, uint64(1), r.e.Counters().ProcessTimeouts)
	assert.Equal(t, map[string]int{"started order": 1, "process_timeout order": 1}, rec.counts())
}
