package workflow_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/workflow"
	"github.com/feedkit/feedkit/workflow/workflowtest"
)

func TestMemoryStoreConformance(t *testing.T) {
	workflowtest.TestStore(t, func(*testing.T) workflow.Store { return workflow.NewMemoryStore() })
}

func TestMemoryStoreEngine(t *testing.T) {
	workflowtest.TestEngine(t, func(*testing.T) workflow.Store { return workflow.NewMemoryStore() })
}

// TestMemoryStoreIndexesRandom checks the heaps behind Claim and DueTasks against a plain
// scan of every task, over a long random mix of claims, updates and scans: the heaps are
// moved in place by every write, and a slip shows only after many moves.
func TestMemoryStoreIndexesRandom(t *testing.T) {
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(1, 2))
	s := workflow.NewMemoryStore()
	actors := []string{"build", "ship", "bill"}
	states := []workflow.TaskState{workflow.TaskQueued, workflow.TaskQueued, workflow.TaskInProgress, workflow.TaskFinished}
	randTime := func() time.Time {
		if rng.IntN(5) == 0 {
			return time.Time{}
		}
		return benchT0.Add(time.Duration(rng.IntN(50)) * time.Second)
	}
	const n = 200
	model := make(map[string]workflow.Task, n)
	var ts []workflow.Task
	for i := range n {
		tk := workflow.Task{
			ID: fmt.Sprintf("t%03d", i), ProcessID: "p", Spec: workflow.TaskSpec{ActorType: actors[rng.IntN(3)]},
			State: states[rng.IntN(len(states))], ReadyAt: randTime(), RecoveryTime: randTime(),
		}
		ts = append(ts, tk)
		tk.Version = 1
		model[tk.ID] = tk
	}
	require.NoError(t, s.CreateTasks(ctx, ts))

	less := func(at func(workflow.Task) time.Time) func(a, b workflow.Task) int {
		return func(a, b workflow.Task) int {
			if c := at(a).Compare(at(b)); c != 0 {
				return c
			}
			return cmp.Compare(a.ID, b.ID)
		}
	}
	ids := func(ts []workflow.Task) []string {
		out := make([]string, len(ts))
		for i, tk := range ts {
			out[i] = tk.ID
		}
		return out
	}
	for op := range 5000 {
		now := benchT0.Add(time.Duration(rng.IntN(60)) * time.Second)
		switch rng.IntN(3) {
		case 0: // claim
			actor := actors[rng.IntN(3)]
			var want []workflow.Task
			for _, tk := range model {
				if tk.State == workflow.TaskQueued && tk.Spec.ActorType == actor && !tk.ReadyAt.After(now) {
					want = append(want, tk)
				}
			}
			slices.SortFunc(want, less(func(tk workflow.Task) time.Time { return tk.ReadyAt }))
			rt, readyAt := randTime(), randTime()
			state := states[rng.IntN(len(states))]
			got, ok, err := s.Claim(ctx, actor, now, func(tk *workflow.Task) {
				tk.State, tk.RecoveryTime, tk.ReadyAt = state, rt, readyAt
			})
			require.NoError(t, err)
			require.Equal(t, len(want) > 0, ok, "op %d", op)
			if ok {
				require.Equal(t, want[0].ID, got.ID, "op %d", op)
				want[0].State, want[0].RecoveryTime, want[0].ReadyAt = state, rt, readyAt
				want[0].Version++
				require.Equal(t, want[0], got, "op %d", op)
				model[got.ID] = got
			}
		case 1: // update
			tk := model[fmt.Sprintf("t%03d", rng.IntN(n))]
			tk.State = states[rng.IntN(len(states))]
			tk.Spec.ActorType = actors[rng.IntN(3)]
			tk.ReadyAt, tk.RecoveryTime = randTime(), randTime()
			got, err := s.UpdateTask(ctx, tk)
			require.NoError(t, err)
			model[tk.ID] = got
		case 2: // scan
			var want []workflow.Task
			for _, tk := range model {
				if !tk.RecoveryTime.IsZero() && !tk.RecoveryTime.After(now) {
					want = append(want, tk)
				}
			}
			slices.SortFunc(want, less(func(tk workflow.Task) time.Time { return tk.RecoveryTime }))
			limit := 1 + rng.IntN(30)
			got, err := s.DueTasks(ctx, now, limit)
			require.NoError(t, err)
			require.Equal(t, ids(want[:min(limit, len(want))]), ids(got), "op %d", op)
		}
	}
}

var benchT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// benchStore returns a store holding n queued tasks of actor type "build", ready one
// microsecond apart from benchT0, and due for recovery in the same order.
func benchStore(b *testing.B, n int) *workflow.MemoryStore {
	b.Helper()
	s := workflow.NewMemoryStore()
	ts := make([]workflow.Task, n)
	for i := range ts {
		ready := benchT0.Add(time.Duration(i) * time.Microsecond)
		ts[i] = workflow.Task{
			ID: fmt.Sprintf("t%06d", i), ProcessID: fmt.Sprintf("p%03d", i%1000),
			Spec:  workflow.TaskSpec{ActorType: "build", Args: []byte(`{"n":1}`)},
			State: workflow.TaskQueued, ReadyAt: ready, RecoveryTime: ready.Add(time.Hour),
		}
	}
	if err := s.CreateTasks(context.Background(), ts); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkMemoryStoreClaim measures the queue of an engine under load: 100,000 queued
// tasks of one actor type; one op claims the earliest and puts it back at the end of the
// queue, so that the queue keeps its length.
func BenchmarkMemoryStoreClaim(b *testing.B) {
	const n = 100_000
	s := benchStore(b, n)
	ctx := context.Background()
	now := benchT0.Add(24 * time.Hour) // every task is ready
	take := func(t *workflow.Task) {
		t.State = workflow.TaskInProgress
		t.Pass = "pass"
		t.Attempts++
	}
	next := benchT0.Add(n * time.Microsecond)
	b.ReportAllocs()
	for b.Loop() {
		t, ok, err := s.Claim(ctx, "build", now, take)
		if err != nil || !ok {
			b.Fatalf("claim: %v %v", ok, err)
		}
		t.State = workflow.TaskQueued
		t.ReadyAt = next
		next = next.Add(time.Microsecond)
		if _, err := s.UpdateTask(ctx, t); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMemoryStoreDueTasks measures the recovery scan when every one of 100,000
// tasks is due: one op reads the first 100, which must not cost a pass over them all.
func BenchmarkMemoryStoreDueTasks(b *testing.B) {
	const n = 100_000
	s := benchStore(b, n)
	ctx := context.Background()
	now := benchT0.Add(24 * time.Hour)
	b.ReportAllocs()
	for b.Loop() {
		ts, err := s.DueTasks(ctx, now, 100)
		if err != nil || len(ts) != 100 {
			b.Fatalf("due: %d %v", len(ts), err)
		}
	}
}
