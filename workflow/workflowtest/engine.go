package workflowtest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/workflow"
)

// TestEngine runs the scenarios of a workflow.Engine whose outcome depends on its
// store (several engines sharing it, an engine dying between two writes, starts with an
// idempotency key), on the stores
// newStore returns, as TestStore does.
func TestEngine(t *testing.T, newStore func(t *testing.T) workflow.Store) {
	t.Run("JobCrash", func(t *testing.T) { testJobCrash(t, newStore) })
	t.Run("SiblingReleases", func(t *testing.T) { testSiblingReleases(t, newStore, 64, false) })
	t.Run("SiblingReleasesInLockstep", func(t *testing.T) { testSiblingReleases(t, newStore, 24, true) })
	t.Run("IdempotentStart", func(t *testing.T) { testIdempotentStart(t, newStore) })
}

// crashProcesses is how many processes a crash scenario's job selects: of three kinds in
// turn, one whose start broke off (no graph, no task), one whose start task's decision
// was accepted but not applied, and a healthy one.
const crashProcesses = 11

// testJobCrash has an engine work a mass recovery job and die after its nth write, for
// every n from its first write to past its last, and another engine finish the job:
// whatever the crash point, the job ends with exact totals, every process counted once,
// and Repaired the number of processes that were broken, each of them repaired.
func testJobCrash(t *testing.T, newStore func(*testing.T) workflow.Store) {
	s := newStore(t)
	ctx := t.Context()
	clk := clocktest.NewFake(t0)
	newEngine := func(s workflow.Store) *workflow.Engine {
		t.Helper()
		e, err := workflow.New(s, workflow.Config{Clock: clk, ScanBatch: 4})
		require.NoError(t, err)
		return e
	}
	setup := newEngine(s)
	for n := 0; ; n++ {
		require.Less(t, n, 1000, "the job ends within a thousand writes")
		// Each crash point has processes of types of its own, which its job selects.
		order, refund := fmt.Sprintf("order-%d", n), fmt.Sprintf("refund-%d", n)
		var (
			broken  int
			checkOf []func(t *testing.T)
		)
		for i := range crashProcesses {
			id := fmt.Sprintf("n%d-p%02d", n, i)
			typ := []string{order, refund}[i%2]
			switch i % 3 {
			case 0: // its start broke off before its graph was created
				p := workflow.Process{ID: id, Type: typ, State: workflow.ProcessRunning,
					Start: workflow.TaskSpec{ActorType: "check"}, StartTask: id + "-start", StartedAt: clk.Now()}
				require.NoError(t, s.CreateProcess(ctx, p))
				broken++
				checkOf = append(checkOf, func(t *testing.T) {
					g := graphOf(t, s, id)
					assert.Equal(t, []string{p.StartTask}, g.NotFinished, "process %s begun", id)
					assert.Equal(t, workflow.TaskQueued, getTask(t, s, p.StartTask).State, "process %s", id)
				})
			case 1: // its start task decided, the decision not applied
				p, _, err := setup.Start(ctx, workflow.StartRequest{Type: typ, Start: workflow.TaskSpec{ActorType: "check"}})
				require.NoError(t, err)
				tk := getTask(t, s, p.StartTask)
				tk.State, tk.Result, tk.RecoveryTime = workflow.TaskFinished, []byte("ok"), time.Time{}
				tk.Next, tk.NextSpecs = []string{id + "-next"}, []workflow.TaskSpec{{ActorType: "ship"}}
				_, err = s.UpdateTask(ctx, tk)
				require.NoError(t, err)
				broken++
				checkOf = append(checkOf, func(t *testing.T) {
					g := graphOf(t, s, p.ID)
					assert.Equal(t, []string{p.StartTask}, g.Finished, "process %s: the decision applied", p.ID)
					assert.Equal(t, []string{id + "-next"}, g.NotFinished, "process %s", p.ID)
					assert.Equal(t, workflow.TaskQueued, getTask(t, s, id+"-next").State, "process %s", p.ID)
				})
			default: // healthy
				p, _, err := setup.Start(ctx, workflow.StartRequest{Type: typ, Start: workflow.TaskSpec{ActorType: "check"}})
				require.NoError(t, err)
				checkOf = append(checkOf, func(t *testing.T) {
					g := graphOf(t, s, p.ID)
					assert.Equal(t, []string{p.StartTask}, g.NotFinished, "process %s left as it was", p.ID)
					assert.Empty(t, g.Finished, "process %s", p.ID)
				})
			}
		}
		job, err := setup.StartJob(ctx, workflow.Query{Types: []string{order, refund}}, []string{refund}, 0)
		require.NoError(t, err)
		require.Equal(t, crashProcesses, job.Total)

		// The engine that dies.
		dead := dieAfter(s, n)
		first := newEngine(dead)
		for range 100 {
			j, err := first.StepJob(ctx, job.ID)
			if err != nil {
				require.ErrorIs(t, err, errKilled, "crash after %d writes", n)
				break
			}
			if j.State == workflow.JobDone {
				break
			}
		}
		survived := !dead.isDead()

		// Its lease runs out; another engine finishes the job.
		clk.Advance(2 * time.Minute)
		second := newEngine(s)
		for range 100 {
			j, err := second.StepJob(ctx, job.ID)
			require.NoError(t, err, "crash after %d writes", n)
			if j.State == workflow.JobDone {
				break
			}
		}
		j, err := s.Job(ctx, job.ID)
		require.NoError(t, err)
		ok := t.Run(fmt.Sprintf("crash after %d writes", n), func(t *testing.T) {
			assert.Equal(t, workflow.JobDone, j.State)
			assert.Equal(t, crashProcesses, j.Total)
			assert.Equal(t, crashProcesses, j.Done, "every process counted once")
			assert.Equal(t, broken, j.Repaired, "every broken process counted repaired, once")
			assert.Zero(t, j.Errors)
			for _, check := range checkOf {
				check(t)
			}
		})
		if !ok || survived {
			// Past the last write the first engine finished the job alone: every crash
			// point has been tried.
			t.Logf("%d crash points", n)
			return
		}
	}
}

// graphOf returns a process's graph.
func graphOf(t *testing.T, s workflow.Store, processID string) workflow.Graph {
	t.Helper()
	g, err := s.Graph(t.Context(), processID)
	require.NoError(t, err)
	return g
}
