package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/internal/pgtest"
	"github.com/feedkit/feedkit/workflow"
	"github.com/feedkit/feedkit/workflow/pgstore"
)

// TestClaimTwoProcesses has two stores on pools of their own, as two processes, claim
// 2,000 queued tasks from 8 goroutines: each task is taken exactly once, and stored as
// its claimer's take left it.
func TestClaimTwoProcesses(t *testing.T) {
	p1 := pgtest.Pool(t)
	stores := []*pgstore.Store{newStore(t, p1), newStore(t, pgtest.SecondPool(t, p1))}
	ctx := t.Context()
	require.NoError(t, stores[0].CreateProcess(ctx, workflow.Process{ID: "p", StartedAt: t0}))
	const n, workers = 2000, 8
	ts := make([]workflow.Task, n)
	for i := range n {
		ts[i] = workflow.Task{ID: fmt.Sprintf("t%04d", i), ProcessID: "p", Spec: workflow.TaskSpec{ActorType: "build"},
			State: workflow.TaskQueued, ReadyAt: at(time.Duration(i%17) * time.Millisecond)}
	}
	require.NoError(t, stores[1].CreateTasks(ctx, ts))

	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		taken = make(map[string][]int)
	)
	start := make(chan struct{})
	for w := range workers {
		s := stores[w%2]
		wg.Go(func() {
			<-start
			for {
				tk, ok, err := s.Claim(ctx, "build", at(time.Minute), func(tk *workflow.Task) {
					tk.State = workflow.TaskInProgress
					tk.Pass = fmt.Sprint("worker-", w)
					tk.Attempts++
				})
				if err != nil {
					t.Errorf("worker %d: %v", w, err)
					return
				}
				if !ok {
					return
				}
				mu.Lock()
				taken[tk.ID] = append(taken[tk.ID], w)
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	require.Len(t, taken, n, "every task taken")
	// Exactly once each between the two processes; how they share is the scheduler's.
	for id, by := range taken {
		require.Len(t, by, 1, "task %s taken by workers %v", id, by)
	}

	var queued, wrong int
	require.NoError(t, p1.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FILTER (WHERE state = %d),
		count(*) FILTER (WHERE state <> %d OR attempts <> 1 OR version <> 2) FROM feedkit_workflow_tasks`,
		workflow.TaskQueued, workflow.TaskInProgress)).Scan(&queued, &wrong))
	assert.Zero(t, queued)
	assert.Zero(t, wrong, "each stored once, in progress, at version 2")
	for _, id := range []string{"t0000", "t1000", "t1999"} {
		tk, err := stores[0].Task(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprint("worker-", taken[id][0]), tk.Pass, "stored as its claimer's take left it")
	}
}

// TestTwoEngines runs two engines, each on a store of its own pool, as two processes on
// one PostgreSQL: 200 processes whose start task schedules two more, started while 8
// goroutines per engine poll every actor type and release what they get. Every task is
// handed out and decided exactly once, and every process ends finished, with a
// consistent graph, and without an error reported.
func TestTwoEngines(t *testing.T) {
	p1 := pgtest.Pool(t)
	stores := []*pgstore.Store{newStore(t, p1), newStore(t, pgtest.SecondPool(t, p1))}
	var (
		errMu sync.Mutex
		errs  []error
	)
	onError := func(err error) {
		errMu.Lock()
		defer errMu.Unlock()
		errs = append(errs, err)
	}
	engines := make([]*workflow.Engine, len(stores))
	for i, s := range stores {
		e, err := workflow.New(s, workflow.Config{OnError: onError})
		require.NoError(t, err)
		engines[i] = e
	}

	const processes, pollers = 200, 8
	const tasks = 3 * processes
	actorTypes := []string{"start", "left", "right"}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var (
		mu       sync.Mutex
		polled   = make(map[string]int) // task id → times handed out
		released = make(map[string]int) // task id → successful releases
		started  []string
		done     atomic.Int64
		wg       sync.WaitGroup
	)
	for i, e := range engines {
		wg.Go(func() {
			for n := range processes / len(engines) {
				p, _, err := e.Start(ctx, workflow.StartRequest{Type: "order", CustomID: fmt.Sprintf("e%d-%d", i, n),
					Start: workflow.TaskSpec{ActorType: "start", Args: []byte("go")}})
				if err != nil {
					t.Errorf("engine %d: start: %v", i, err)
					return
				}
				mu.Lock()
				started = append(started, p.ID)
				mu.Unlock()
			}
		})
		for g := range pollers {
			wg.Go(func() {
				for idle := 0; done.Load() < tasks && ctx.Err() == nil; {
					actorType := actorTypes[(g+idle)%len(actorTypes)]
					tk, ok, err := e.Poll(ctx, actorType)
					if err != nil {
						t.Errorf("engine %d: poll %s: %v", i, actorType, err)
						return
					}
					if !ok {
						idle++
						if idle%len(actorTypes) == 0 {
							// Every queue was empty: pause as an actor's poll interval
							// would, rather than spin on the database.
							select {
							case <-ctx.Done():
							case <-time.After(time.Millisecond):
							}
						}
						continue
					}
					mu.Lock()
					polled[tk.ID]++
					mu.Unlock()
					d := workflow.Decision{TaskID: tk.ID, Pass: tk.Pass, Result: []byte("done by " + actorType)}
					if actorType == "start" {
						d.Next = []workflow.TaskSpec{{ActorType: "left", Args: []byte("l")}, {ActorType: "right", Args: []byte("r")}}
					}
					if err := e.Release(ctx, d); err != nil {
						t.Errorf("engine %d: release %s: %v", i, tk.ID, err)
						continue
					}
					mu.Lock()
					released[tk.ID]++
					mu.Unlock()
					done.Add(1)
				}
			})
		}
	}
	wg.Wait()
	require.NoError(t, ctx.Err(), "every task decided in time")
	require.Len(t, started, processes)
	assert.Len(t, polled, tasks)
	require.Len(t, released, tasks)
	for id, n := range released {
		assert.Equal(t, 1, n, "task %s released %d times", id, n)
		assert.Equal(t, 1, polled[id], "task %s handed out %d times", id, polled[id])
	}
	assert.Empty(t, errs, "no error reported")

	s := stores[0]
	for _, id := range started {
		p, err := s.Process(t.Context(), id)
		require.NoError(t, err)
		assert.Equal(t, workflow.ProcessFinished, p.State, "process %s", id)
		g, err := s.Graph(t.Context(), id)
		require.NoError(t, err)
		assert.Empty(t, g.NotFinished, "process %s", id)
		assert.Len(t, g.Finished, 3, "process %s", id)
		ts, err := s.ProcessTasks(t.Context(), id)
		require.NoError(t, err)
		require.Len(t, ts, 3, "process %s", id)
		for _, tk := range ts {
			assert.Equal(t, workflow.TaskFinished, tk.State, "task %s", tk.ID)
			assert.Equal(t, 1, tk.Attempts, "task %s", tk.ID)
		}
	}
	_, running, err := s.SearchProcesses(t.Context(), workflow.Query{States: []workflow.ProcessState{workflow.ProcessRunning}})
	require.NoError(t, err)
	assert.Zero(t, running)
	_, finished, err := s.SearchProcesses(t.Context(), workflow.Query{Types: []string{"order"}, States: []workflow.ProcessState{workflow.ProcessFinished}, ActorType: "left"})
	require.NoError(t, err)
	assert.Equal(t, processes, finished)
	for _, a := range actorTypes {
		last, err := s.LastPolled(t.Context(), a)
		require.NoError(t, err)
		assert.False(t, last.IsZero(), a)
	}
}

// TestJobTwoEngines has two engines, as two processes, step one mass recovery job
// together: every batch counts once, the priority type's first, and the job ends done
// with every selected process checked.
func TestJobTwoEngines(t *testing.T) {
	p1 := pgtest.Pool(t)
	stores := []*pgstore.Store{newStore(t, p1), newStore(t, pgtest.SecondPool(t, p1))}
	engines := make([]*workflow.Engine, len(stores))
	for i, s := range stores {
		e, err := workflow.New(s, workflow.Config{ScanBatch: 7, OnError: func(err error) { t.Error(err) }})
		require.NoError(t, err)
		engines[i] = e
	}
	ctx := t.Context()
	const processes = 60
	for i := range processes {
		_, _, err := engines[i%2].Start(ctx, workflow.StartRequest{Type: []string{"order", "refund", "audit"}[i%3],
			Start: workflow.TaskSpec{ActorType: "build"}})
		require.NoError(t, err)
	}
	j, err := engines[0].StartJob(ctx, workflow.Query{Types: []string{"order", "refund"}}, []string{"refund"}, 0)
	require.NoError(t, err)
	assert.Equal(t, 40, j.Total)

	var wg sync.WaitGroup
	for i, e := range engines {
		for range 3 {
			wg.Go(func() {
				for ctx.Err() == nil {
					got, err := e.StepJob(ctx, j.ID)
					switch {
					case errors.Is(err, workflow.ErrConflict):
						continue
					case err != nil:
						t.Errorf("engine %d: %v", i, err)
						return
					case got.State == workflow.JobDone:
						return
					}
				}
			})
		}
	}
	wg.Wait()
	j, err = stores[1].Job(ctx, j.ID)
	require.NoError(t, err)
	assert.Equal(t, workflow.JobDone, j.State)
	assert.Equal(t, 40, j.Done, "every batch counted once")
	assert.Zero(t, j.Errors)
	assert.Zero(t, j.Repaired)
	jobs, err := stores[0].Jobs(ctx)
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	assert.Equal(t, j, jobs[0])
}
