package workflow_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/workflow"
)

// Search by type, state, custom id, actor type and start time, with a count and pages.
func TestSearch(t *testing.T) {
	r := newRig(t, workflow.Config{})
	ctx := t.Context()
	var ids []string
	for i := range 5 {
		typ := "order"
		if i%2 == 1 {
			typ = "refund"
		}
		p, _, err := r.e.Start(ctx, workflow.StartRequest{Type: typ, CustomID: string(rune('a' + i)), Start: workflow.TaskSpec{ActorType: "check"}})
		require.NoError(t, err)
		ids = append(ids, p.ID)
		r.clk.Advance(time.Minute)
	}
	ps, total, err := r.e.Search(ctx, workflow.Query{Types: []string{"order"}})
	require.NoError(t, err)
	assert.Equal(t, 3, total)
	assert.Equal(t, []string{ids[0], ids[2], ids[4]}, idsOf(ps))

	ps, total, err = r.e.Search(ctx, workflow.Query{CustomID: "b"})
	require.NoError(t, err)
	assert.Equal(t, 1, total)
	assert.Equal(t, ids[1], ps[0].ID)

	ps, total, err = r.e.Search(ctx, workflow.Query{StartedFrom: t0.Add(time.Minute), StartedTo: t0.Add(3 * time.Minute)})
	require.NoError(t, err)
	assert.Equal(t, 2, total)
	assert.Equal(t, []string{ids[1], ids[2]}, idsOf(ps))

	// Pages of two.
	var seen []string
	q := workflow.Query{Limit: 2}
	for {
		ps, total, err := r.e.Search(ctx, q)
		require.NoError(t, err)
		assert.Equal(t, 5, total)
		if len(ps) == 0 {
			break
		}
		seen = append(seen, idsOf(ps)...)
		last := ps[len(ps)-1]
		q.After = &workflow.Cursor{StartedAt: last.StartedAt, ID: last.ID}
	}
	assert.Equal(t, ids, seen)

	task := r.poll("check")
	r.release(workflow.Decision{TaskID: task.ID, Pass: task.Pass, Next: []workflow.TaskSpec{{ActorType: "pay"}}})
	ps, _, err = r.e.Search(ctx, workflow.Query{ActorType: "pay"})
	require.NoError(t, err)
	assert.Equal(t, []string{ids[0]}, idsOf(ps))
	ps, _, err = r.e.Search(ctx, workflow.Query{States: []workflow.ProcessState{workflow.ProcessRunning}, Types: []string{"refund"}})
	require.NoError(t, err)
	assert.Len(t, ps, 2)
}

// Search takes a page size by the kit's one rule: 0 is a page of DefaultLimit with the
// total of all, a negative size or one above MaxLimit is refused naming Query.Limit;
// a mass recovery job still covers every process, however many pages they fill.
func TestSearchPageLimits(t *testing.T) {
	r := newRig(t, workflow.Config{})
	ctx := t.Context()
	const n = workflow.DefaultLimit + 5
	for range n {
		r.start()
	}
	ps, total, err := r.e.Search(ctx, workflow.Query{})
	require.NoError(t, err)
	assert.Equal(t, workflow.DefaultLimit, len(ps))
	assert.Equal(t, n, total)
	for _, bad := range []int{-1, workflow.MaxLimit + 1} {
		_, _, err := r.e.Search(ctx, workflow.Query{Limit: bad})
		assert.ErrorIs(t, err, workflow.ErrInvalidLimit)
		assert.ErrorContains(t, err, fmt.Sprintf("Query.Limit %d", bad))
	}
	job, err := r.e.StartJob(ctx, workflow.Query{}, nil, 0)
	require.NoError(t, err)
	assert.Equal(t, n, job.Total)
	for range 10 {
		if job, err = r.e.StepJob(ctx, job.ID); err != nil || job.State == workflow.JobDone {
			break
		}
	}
	require.NoError(t, err)
	assert.Equal(t, workflow.JobDone, job.State)
	assert.Equal(t, n, job.Done, "every process checked, over two pages")
}

// A recovery pass at the largest batch goes on past an entity it failed to repair: the
// batch it reads next (one more, to step over the failed one) stays within MaxLimit.
func TestRecoverDueAtTheMaximumBatchStepsOverAFailure(t *testing.T) {
	r := newRig(t, workflow.Config{ScanBatch: workflow.MaxLimit,
		Processes: map[string]workflow.ProcessPrefs{"order": {IdleTimeout: time.Minute}}})
	r.start()
	r.start()
	r.clk.Advance(time.Minute)
	r.store.failNext("UpdateGraph", 1) // the first graph's check fails
	rep, err := r.e.RecoverDue(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 2, rep.Graphs, "both graphs looked at")
}

func idsOf(ps []workflow.Process) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.ID
	}
	return out
}

// Restart from the beginning: the old run's task is failed (its actor's decision is
// refused), the new run starts over, and a decision of the old run accepted just before
// changes nothing in the new one.
func TestRestartFromTheBeginning(t *testing.T) {
	r := newRig(t, workflow.Config{})
	p := r.start()
	old := r.poll("check")
	np, err := r.e.Restart(t.Context(), p.ID, "", "bug 42 fixed")
	require.NoError(t, err)
	assert.Equal(t, 1, np.Run)
	assert.Contains(t, np.Reason, "bug 42 fixed")
	assert.ErrorIs(t, r.e.Release(t.Context(), workflow.Decision{TaskID: old.ID, Pass: old.Pass}), workflow.ErrDecided)
	fresh := r.poll("check")
	assert.NotEqual(t, old.ID, fresh.ID)
	assert.Equal(t, 1, fresh.Run)
	r.release(workflow.Decision{TaskID: fresh.ID, Pass: fresh.Pass})
	assert.Equal(t, workflow.ProcessFinished, r.process(p.ID).State)
}

// Restart from a given task of a finished process: the new run starts with that task's
// spec.
func TestRestartFromATask(t *testing.T) {
	r := newRig(t, workflow.Config{})
	p := r.start()
	first := r.poll("check")
	r.release(workflow.Decision{TaskID: first.ID, Pass: first.Pass, Next: []workflow.TaskSpec{{ActorType: "pay", Args: []byte("42")}}})
	pay := r.poll("pay")
	r.release(workflow.Decision{TaskID: pay.ID, Pass: pay.Pass})
	require.Equal(t, workflow.ProcessFinished, r.process(p.ID).State)

	_, err := r.e.Restart(t.Context(), p.ID, pay.ID, "payment provider replayed")
	require.NoError(t, err)
	assert.Equal(t, workflow.ProcessRunning, r.process(p.ID).State)
	again := r.poll("pay")
	assert.Equal(t, []byte("42"), again.Spec.Args)
	r.none("check")
	r.release(workflow.Decision{TaskID: again.ID, Pass: again.Pass})
	assert.Equal(t, workflow.ProcessFinished, r.process(p.ID).State)
	_, err = r.e.Restart(t.Context(), p.ID, "no-such-task", "x")
	assert.ErrorIs(t, err, workflow.ErrNotFound)
}

// Abort: the process stops, its task's decision is refused, and it cannot be aborted twice.
func TestAbort(t *testing.T) {
	r := newRig(t, workflow.Config{})
	p := r.start()
	task := r.poll("check")
	require.NoError(t, r.e.Abort(t.Context(), p.ID, "customer cancelled"))
	pr := r.process(p.ID)
	assert.Equal(t, workflow.ProcessAborted, pr.State)
	assert.Equal(t, "customer cancelled", pr.Reason)
	assert.ErrorIs(t, r.e.Release(t.Context(), workflow.Decision{TaskID: task.ID, Pass: task.Pass}), workflow.ErrDecided)
	assert.ErrorIs(t, r.e.Abort(t.Context(), p.ID, "again"), workflow.ErrNotRunning)
}

// A mass recovery job checks the selected processes, the priority types first, repairs
// what is broken, saves its progress after each batch (a new engine on the same store
// resumes it), and can be paused and resumed.
func TestMassRecoveryJob(t *testing.T) {
	r := newRig(t, workflow.Config{ScanBatch: 2})
	ctx := t.Context()
	var broken []string
	for i := range 6 {
		typ := []string{"order", "refund", "audit"}[i%3]
		if i%2 == 0 {
			r.store.failNext("CreateGraph", 1) // its start breaks off
		}
		p, _, err := r.e.Start(ctx, workflow.StartRequest{Type: typ, Start: workflow.TaskSpec{ActorType: "check"}})
		require.NoError(t, err)
		if i%2 == 0 {
			broken = append(broken, p.ID)
		}
	}
	job, err := r.e.StartJob(ctx, workflow.Query{States: []workflow.ProcessState{workflow.ProcessRunning}}, []string{"refund", "audit"}, 0)
	require.NoError(t, err)
	assert.Equal(t, 6, job.Total)

	job, err = r.e.StepJob(ctx, job.ID)
	require.NoError(t, err)
	assert.Equal(t, 2, job.Done, "the refunds first")
	_, err = r.e.PauseJob(ctx, job.ID)
	require.NoError(t, err)
	paused, err := r.e.StepJob(ctx, job.ID)
	require.NoError(t, err)
	assert.Equal(t, 2, paused.Done, "a paused job does nothing")

	// Another engine on the same store resumes it where it was.
	other, err := workflow.New(r.store, workflow.Config{Clock: r.clk, ScanBatch: 2})
	require.NoError(t, err)
	_, err = other.ResumeJob(ctx, job.ID)
	require.NoError(t, err)
	for range 10 {
		job, err = other.StepJob(ctx, job.ID)
		require.NoError(t, err)
		if job.State == workflow.JobDone {
			break
		}
	}
	assert.Equal(t, workflow.JobDone, job.State)
	assert.Equal(t, 6, job.Done)
	assert.Equal(t, len(broken), job.Repaired)
	assert.Zero(t, job.Errors)
	for range broken {
		r.poll("check") // each broken start was begun
	}
}

// A job's rate paces its checks on the engine's clock: at one a second, a batch of three
// takes two seconds after the first check.
func TestMassRecoveryJobRate(t *testing.T) {
	r := newRig(t, workflow.Config{ScanBatch: 3})
	ctx := t.Context()
	for range 3 {
		r.start()
	}
	job, err := r.e.StartJob(ctx, workflow.Query{}, nil, 1)
	require.NoError(t, err)
	done := make(chan workflow.Job, 1)
	go func() {
		j, err := r.e.StepJob(ctx, job.ID)
		assert.NoError(t, err)
		done <- j
	}()
	for range 2 {
		r.clk.BlockUntil(1) // the job waits for its next place
		select {
		case <-done:
			t.Fatal("the batch finished before its rate allowed")
		default:
		}
		r.clk.Advance(time.Second)
	}
	job = <-done
	assert.Equal(t, 3, job.Done)
	_, err = r.e.StartJob(ctx, workflow.Query{}, nil, -1)
	assert.Error(t, err)
}

// A process that failed or was aborted hands out no more work: its other unfinished tasks
// are cancelled with it.
func TestAProcessOverGetsNoMoreWork(t *testing.T) {
	r := newRig(t, workflow.Config{})
	p := r.start()
	first := r.poll("check")
	r.release(workflow.Decision{TaskID: first.ID, Pass: first.Pass, Next: []workflow.TaskSpec{{ActorType: "pay"}, {ActorType: "ship"}}})
	pay := r.poll("pay")
	r.release(workflow.Decision{TaskID: pay.ID, Pass: pay.Pass, Error: "declined"}) // no retry: the process fails
	assert.Equal(t, workflow.ProcessFailed, r.process(p.ID).State)
	r.none("ship")

	q := r.start()
	require.NoError(t, r.e.Abort(t.Context(), q.ID, "stop"))
	r.none("check")
}

// After a restart, a decision of the old run that the graph had not taken yet changes
// nothing when the graph scan comes by, and a queued task of the old run is not handed out.
func TestOldRunChangesNothingAfterARestart(t *testing.T) {
	r := newRig(t, workflow.Config{Processes: map[string]workflow.ProcessPrefs{"order": {IdleTimeout: time.Minute}}})
	p := r.start()
	first := r.poll("check")
	r.store.failNext("UpdateGraph", 1)
	r.releaseNotApplied(workflow.Decision{TaskID: first.ID, Pass: first.Pass}) // decided; the graph not yet updated
	_, err := r.e.Restart(t.Context(), p.ID, "", "replay")
	require.NoError(t, err)
	r.clk.Advance(time.Minute)
	r.recover()
	assert.Equal(t, workflow.ProcessRunning, r.process(p.ID).State, "the old run's decision does not finish the new run")
	fresh := r.poll("check")
	assert.Equal(t, 1, fresh.Run)
	r.none("check")
	r.release(workflow.Decision{TaskID: fresh.ID, Pass: fresh.Pass})
	assert.Equal(t, workflow.ProcessFinished, r.process(p.ID).State)
}

// A job covers the processes started before it: processes started while it runs do not
// keep it from ending.
func TestMassRecoveryJobEndsWhileProcessesKeepStarting(t *testing.T) {
	r := newRig(t, workflow.Config{ScanBatch: 2})
	ctx := t.Context()
	for range 3 {
		r.start()
	}
	job, err := r.e.StartJob(ctx, workflow.Query{}, nil, 0)
	require.NoError(t, err)
	for range 20 {
		r.clk.Advance(time.Second)
		r.start()
		if job, err = r.e.StepJob(ctx, job.ID); err != nil || job.State == workflow.JobDone {
			break
		}
	}
	require.NoError(t, err)
	assert.Equal(t, workflow.JobDone, job.State)
	assert.Equal(t, 3, job.Total)
	assert.Equal(t, 3, job.Done)
}

// While one engine works a batch of a job (leased), another engine's step leaves the job
// alone: the batch is checked and counted once, at the job's rate.
func TestJobBatchLeasedToOneEngine(t *testing.T) {
	r := newRig(t, workflow.Config{ScanBatch: 3})
	ctx := t.Context()
	for range 3 {
		r.start()
	}
	other, err := workflow.New(r.store, workflow.Config{Clock: r.clk, ScanBatch: 3})
	require.NoError(t, err)
	job, err := r.e.StartJob(ctx, workflow.Query{}, nil, 1)
	require.NoError(t, err)
	done := make(chan workflow.Job, 1)
	go func() {
		j, err := r.e.StepJob(ctx, job.ID)
		assert.NoError(t, err)
		done <- j
	}()
	r.clk.BlockUntil(1) // the first engine holds the lease, waiting for its rate
	j, err := other.StepJob(ctx, job.ID)
	require.NoError(t, err)
	assert.Zero(t, j.Done, "the other engine leaves the leased batch alone")
	for range 2 {
		r.clk.BlockUntil(1)
		r.clk.Advance(time.Second)
	}
	j = <-done
	assert.Equal(t, 3, j.Done)
	assert.True(t, j.LeasedUntil.IsZero(), "the lease is given back")
	j, err = other.StepJob(ctx, job.ID)
	require.NoError(t, err)
	assert.Equal(t, workflow.JobDone, j.State)
	assert.Equal(t, 3, j.Done, "nothing checked twice")
}
