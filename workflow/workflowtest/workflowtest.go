// Package workflowtest holds the conformance suite that every implementation of
// workflow.Store passes: workflow's in-memory store and the PostgreSQL one of
// workflow/pgstore. A new implementation calls it from a test:
//
//	func TestStoreConformance(t *testing.T) {
//		workflowtest.TestStore(t, func(t *testing.T) workflow.Store { return newStore(t) })
//	}
//
// TestEngine runs, the same way, the scenarios of a workflow.Engine whose outcome
// depends on its store: several engines on one store, an engine dying between two
// writes, starts repeated and raced under one idempotency key.
//
// The suite uses whole milliseconds and UTC times only, which every implementation keeps
// exactly (PostgreSQL stores no finer than microseconds), and compares entities with
// their times in UTC and empty slices as nil, since a database need not keep the
// difference. It creates a task's process, and a graph's, before the task or graph, so
// that a store may hold them to foreign keys.
package workflowtest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/workflow"
)

// t0 is the start of every scenario; its date does not matter.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// at is t0 plus d: the times of a scenario.
func at(d time.Duration) time.Time { return t0.Add(d) }

// TestStore runs the conformance suite of workflow.Store. newStore must return an empty
// store of its own on every call, and release what it holds when t ends.
func TestStore(t *testing.T, newStore func(t *testing.T) workflow.Store) {
	t.Run("Process", func(t *testing.T) { testEntity(t, newStore, processKind) })
	t.Run("Task", func(t *testing.T) {
		testEntity(t, newStore, taskKind)
		testTasks(t, newStore)
	})
	t.Run("Graph", func(t *testing.T) { testEntity(t, newStore, graphKind) })
	t.Run("Claim", func(t *testing.T) { testClaim(t, newStore) })
	t.Run("CanceledContext", func(t *testing.T) { testCanceled(t, newStore) })
	t.Run("Search", func(t *testing.T) { testSearch(t, newStore) })
	t.Run("Limits", func(t *testing.T) { testLimits(t, newStore) })
	t.Run("Jobs", func(t *testing.T) { testJobs(t, newStore) })
	t.Run("IdempotencyKeys", func(t *testing.T) { testIdempotencyKeys(t, newStore) })
}

// kind is what the generic tests need to know of an entity kind.
type kind[E any] struct {
	name string
	// setup creates what an entity of that id needs (its process); nil: nothing.
	setup  func(t *testing.T, s workflow.Store, id string)
	sample func(id string) E // a new entity with every slice filled, Version 0
	id     func(E) string
	create func(s workflow.Store, ctx context.Context, e E) error
	// createExists is whether creating an existing id is ErrExists; false: it is ignored.
	createExists bool
	get          func(s workflow.Store, ctx context.Context, id string) (E, error)
	update       func(s workflow.Store, ctx context.Context, e E) (E, error)
	due          func(s workflow.Store, ctx context.Context, now time.Time, limit int) ([]E, error)
	version      func(e *E) *int64
	recoveryTime func(e *E) *time.Time
	change       func(e *E, n int) // changes a field other than the id and version
	scribble     func(e *E)        // writes into every slice of e in place
	norm         func(E) E         // the form entities are compared in
}

var processKind = kind[workflow.Process]{
	name: "Process",
	sample: func(id string) workflow.Process {
		return workflow.Process{
			ID: id, Type: "order", CustomID: "custom-" + id, State: workflow.ProcessRunning,
			Start:     workflow.TaskSpec{ActorType: "build", Args: []byte(`{"start":"` + id + `"}`)},
			StartTask: id + "-start", StartedAt: at(-time.Minute),
			IdempotencyKey: "key-" + id, RequestDigest: "digest-" + id,
		}
	},
	id:           func(p workflow.Process) string { return p.ID },
	create:       func(s workflow.Store, ctx context.Context, p workflow.Process) error { return s.CreateProcess(ctx, p) },
	createExists: true,
	get:          workflow.Store.Process,
	update:       workflow.Store.UpdateProcess,
	due:          workflow.Store.DueProcesses,
	version:      func(p *workflow.Process) *int64 { return &p.Version },
	recoveryTime: func(p *workflow.Process) *time.Time { return &p.RecoveryTime },
	change: func(p *workflow.Process, n int) {
		p.State = workflow.ProcessAborted
		p.Reason = fmt.Sprint("aborted by operator ", n)
		p.Start.Args = []byte(fmt.Sprint("args ", n))
	},
	scribble: func(p *workflow.Process) { p.Start.Args[0] = 'X' },
	norm: func(p workflow.Process) workflow.Process {
		p.Start = normSpec(p.Start)
		p.StartedAt = p.StartedAt.UTC()
		p.RecoveryTime = p.RecoveryTime.UTC()
		return p
	},
}

var taskKind = kind[workflow.Task]{
	name:  "Task",
	setup: func(t *testing.T, s workflow.Store, _ string) { ensureProcess(t, s, "p") },
	sample: func(id string) workflow.Task {
		return workflow.Task{
			ID: id, ProcessID: "p", Spec: workflow.TaskSpec{ActorType: "build", Args: []byte("args of " + id)},
			State: workflow.TaskFinished, Pass: "pass-" + id, ReadyAt: at(-time.Minute),
			Deadline: at(time.Hour), Attempts: 2, Result: []byte("result of " + id),
			Next:      []string{id + "-n1", id + "-n2"},
			NextSpecs: []workflow.TaskSpec{{ActorType: "ship", Args: []byte("n1")}, {ActorType: "bill", Args: []byte("n2")}},
		}
	},
	id: func(t workflow.Task) string { return t.ID },
	create: func(s workflow.Store, ctx context.Context, t workflow.Task) error {
		return s.CreateTasks(ctx, []workflow.Task{t})
	},
	get:          workflow.Store.Task,
	update:       workflow.Store.UpdateTask,
	due:          workflow.Store.DueTasks,
	version:      func(t *workflow.Task) *int64 { return &t.Version },
	recoveryTime: func(t *workflow.Task) *time.Time { return &t.RecoveryTime },
	change: func(t *workflow.Task, n int) {
		t.State = workflow.TaskFailed
		t.Error = fmt.Sprint("failed ", n)
		t.Result = nil
		t.Next = []string{fmt.Sprint("next ", n)}
		t.NextSpecs = nil
	},
	scribble: func(t *workflow.Task) {
		t.Spec.Args[0] = 'X'
		if len(t.Result) > 0 {
			t.Result[0] = 'X'
		}
		if len(t.Next) > 0 {
			t.Next[0] = "X"
		}
		if len(t.NextSpecs) > 0 {
			t.NextSpecs[0].ActorType = "X"
			t.NextSpecs[0].Args[0] = 'X'
		}
	},
	norm: normTask,
}

var graphKind = kind[workflow.Graph]{
	name:  "Graph",
	setup: func(t *testing.T, s workflow.Store, id string) { ensureProcess(t, s, id) },
	sample: func(id string) workflow.Graph {
		return workflow.Graph{ProcessID: id, NotFinished: []string{id + "-t2", id + "-t3"}, Finished: []string{id + "-t1"}, ChangedAt: at(-time.Second)}
	},
	id: func(g workflow.Graph) string { return g.ProcessID },
	create: func(s workflow.Store, ctx context.Context, g workflow.Graph) error {
		return s.CreateGraph(ctx, g)
	},
	createExists: true,
	get:          workflow.Store.Graph,
	update:       workflow.Store.UpdateGraph,
	due:          workflow.Store.DueGraphs,
	version:      func(g *workflow.Graph) *int64 { return &g.Version },
	recoveryTime: func(g *workflow.Graph) *time.Time { return &g.RecoveryTime },
	change: func(g *workflow.Graph, n int) {
		g.Finished = append(slices.Clone(g.Finished), g.NotFinished...)
		g.NotFinished = nil
		g.ChangedAt = at(time.Duration(n) * time.Second)
	},
	scribble: func(g *workflow.Graph) {
		if len(g.NotFinished) > 0 {
			g.NotFinished[0] = "X"
		}
		g.Finished[0] = "X"
	},
	norm: func(g workflow.Graph) workflow.Graph {
		g.NotFinished = nilIfEmpty(g.NotFinished)
		g.Finished = nilIfEmpty(g.Finished)
		g.ChangedAt = g.ChangedAt.UTC()
		g.RecoveryTime = g.RecoveryTime.UTC()
		return g
	},
}

// testEntity runs the tests every entity kind shares: create, read, conditional update,
// private copies, recovery index.
func testEntity[E any](t *testing.T, newStore func(*testing.T) workflow.Store, k kind[E]) {
	// created makes a store holding the sample entity id (Version 1).
	created := func(t *testing.T, id string) workflow.Store {
		t.Helper()
		s := newStore(t)
		if k.setup != nil {
			k.setup(t, s, id)
		}
		require.NoError(t, k.create(s, t.Context(), k.sample(id)))
		return s
	}
	// want is the sample id as stored with version v.
	want := func(id string, v int64) E {
		e := k.sample(id)
		*k.version(&e) = v
		return e
	}
	equal := func(t *testing.T, want, got E, msgAndArgs ...any) {
		t.Helper()
		assert.Equal(t, k.norm(want), k.norm(got), msgAndArgs...)
	}
	get := func(t *testing.T, s workflow.Store, id string) E {
		t.Helper()
		e, err := k.get(s, t.Context(), id)
		require.NoError(t, err)
		return e
	}

	t.Run("CreateGet", func(t *testing.T) {
		s := created(t, "a")
		equal(t, want("a", 1), get(t, s, "a"), "created with version 1")

		_, err := k.get(s, t.Context(), "missing")
		assert.ErrorIs(t, err, workflow.ErrNotFound)
	})

	t.Run("CreateIgnoresVersion", func(t *testing.T) {
		s := newStore(t)
		if k.setup != nil {
			k.setup(t, s, "a")
		}
		e := k.sample("a")
		*k.version(&e) = 41
		require.NoError(t, k.create(s, t.Context(), e))
		equal(t, want("a", 1), get(t, s, "a"), "a new entity has version 1 whatever it was given")
	})

	t.Run("CreateExisting", func(t *testing.T) {
		s := created(t, "a")
		e := k.sample("a")
		k.change(&e, 1)
		err := k.create(s, t.Context(), e)
		if k.createExists {
			assert.ErrorIs(t, err, workflow.ErrExists)
		} else {
			assert.NoError(t, err, "an existing id is not an error")
		}
		equal(t, want("a", 1), get(t, s, "a"), "the stored entity is left as it is")
	})

	t.Run("Update", func(t *testing.T) {
		s := created(t, "a")
		ctx := t.Context()

		for _, v := range []int64{0, 2} {
			stale := want("a", v)
			k.change(&stale, 1)
			_, err := k.update(s, ctx, stale)
			assert.ErrorIs(t, err, workflow.ErrConflict, "version %d", v)
		}
		equal(t, want("a", 1), get(t, s, "a"), "a refused update changes nothing")

		e := get(t, s, "a")
		k.change(&e, 1)
		got, err := k.update(s, ctx, e)
		require.NoError(t, err)
		assert.Equal(t, int64(2), *k.version(&got), "an update stores the next version")
		wantUpdated := want("a", 1)
		k.change(&wantUpdated, 1)
		*k.version(&wantUpdated) = 2
		equal(t, wantUpdated, got, "the update returns what it stored")
		equal(t, got, get(t, s, "a"), "the update returns what it stored")

		// The version read before the update is stale now.
		k.change(&e, 2)
		_, err = k.update(s, ctx, e)
		assert.ErrorIs(t, err, workflow.ErrConflict)
		equal(t, got, get(t, s, "a"))

		// The returned entity carries the version for the next update.
		k.change(&got, 3)
		got3, err := k.update(s, ctx, got)
		require.NoError(t, err)
		assert.Equal(t, int64(3), *k.version(&got3))

		missing := k.sample("missing")
		*k.version(&missing) = 1
		_, err = k.update(s, ctx, missing)
		assert.ErrorIs(t, err, workflow.ErrNotFound)
	})

	t.Run("Copies", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		if k.setup != nil {
			k.setup(t, s, "a")
		}
		in := k.sample("a")
		require.NoError(t, k.create(s, ctx, in))
		k.scribble(&in)
		equal(t, want("a", 1), get(t, s, "a"), "the store keeps no slice of what it was given")

		out := get(t, s, "a")
		k.scribble(&out)
		equal(t, want("a", 1), get(t, s, "a"), "the store hands out no slice of its own")

		in = get(t, s, "a")
		out, err := k.update(s, ctx, in)
		require.NoError(t, err)
		k.scribble(&in)
		k.scribble(&out)
		equal(t, want("a", 2), get(t, s, "a"), "an update keeps no slice given or returned")

		fresh := want("a", 2)
		*k.recoveryTime(&fresh) = at(time.Second)
		_, err = k.update(s, ctx, fresh)
		require.NoError(t, err)
		due, err := k.due(s, ctx, at(time.Second), 10)
		require.NoError(t, err)
		require.Len(t, due, 1)
		k.scribble(&due[0])
		got := get(t, s, "a")
		*k.version(&fresh) = 3
		equal(t, fresh, got, "the recovery scan hands out no slice of the store's own")
	})

	t.Run("ConcurrentUpdates", func(t *testing.T) {
		s := created(t, "a")
		e := get(t, s, "a")
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			won      []int
			conflict int
		)
		for n := range 8 {
			wg.Go(func() {
				c := e
				k.change(&c, n)
				_, err := k.update(s, t.Context(), c)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won = append(won, n)
				case errors.Is(err, workflow.ErrConflict):
					conflict++
				default:
					t.Errorf("update %d: %v", n, err)
				}
			})
		}
		wg.Wait()
		require.Len(t, won, 1, "one update of a version wins")
		assert.Equal(t, 7, conflict)
		w := want("a", 1)
		k.change(&w, won[0])
		*k.version(&w) = 2
		equal(t, w, get(t, s, "a"), "the winner's update is stored")
	})

	// dueIDs returns the ids of the due entities.
	dueIDs := func(t *testing.T, s workflow.Store, now time.Time, limit int) []string {
		t.Helper()
		es, err := k.due(s, t.Context(), now, limit)
		require.NoError(t, err)
		ids := make([]string, len(es))
		for i, e := range es {
			ids[i] = k.id(e)
			equal(t, get(t, s, ids[i]), e, "a due entity is the stored one")
		}
		return ids
	}
	// withRecovery creates entities due at t0 plus the given offsets; -1 is a zero time.
	withRecovery := func(t *testing.T, s workflow.Store, due map[string]time.Duration) {
		t.Helper()
		for _, id := range sortedKeys(due) {
			if k.setup != nil {
				k.setup(t, s, id)
			}
			e := k.sample(id)
			if d := due[id]; d >= 0 {
				*k.recoveryTime(&e) = at(d)
			}
			require.NoError(t, k.create(s, t.Context(), e))
		}
	}
	// setRecovery updates id's RecoveryTime.
	setRecovery := func(t *testing.T, s workflow.Store, id string, rt time.Time) {
		t.Helper()
		e := get(t, s, id)
		*k.recoveryTime(&e) = rt
		_, err := k.update(s, t.Context(), e)
		require.NoError(t, err)
	}

	t.Run("Due", func(t *testing.T) {
		s := newStore(t)
		withRecovery(t, s, map[string]time.Duration{
			"a": 3 * time.Second, "b": time.Second, "c": -1, "d": 2 * time.Second, "e": 10 * time.Second,
		})
		assert.Equal(t, []string{"b", "d", "a"}, dueIDs(t, s, at(5*time.Second), 10), "earliest first")
		assert.Equal(t, []string{"b", "d"}, dueIDs(t, s, at(5*time.Second), 2), "up to limit")
		assert.Empty(t, dueIDs(t, s, at(time.Second-time.Millisecond), 10), "none is due before its time")
		assert.Equal(t, []string{"b"}, dueIDs(t, s, at(time.Second), 10), "due at its time")
		assert.Equal(t, []string{"b", "d", "a", "e"}, dueIDs(t, s, at(1000*time.Hour), 10),
			"a zero RecoveryTime is never due")
		assert.Equal(t, []string{"b", "d", "a", "e"}, dueIDs(t, s, at(1000*time.Hour), 10),
			"the scan takes nothing out")
	})

	t.Run("DueFollowsUpdates", func(t *testing.T) {
		s := newStore(t)
		withRecovery(t, s, map[string]time.Duration{
			"a": 3 * time.Second, "b": time.Second, "c": -1, "d": 2 * time.Second, "e": 10 * time.Second,
		})
		setRecovery(t, s, "a", at(20*time.Second))
		assert.Equal(t, []string{"b", "d"}, dueIDs(t, s, at(5*time.Second), 10), "pushed into the future")
		setRecovery(t, s, "d", time.Time{})
		assert.Equal(t, []string{"b"}, dueIDs(t, s, at(5*time.Second), 10), "zeroed")
		setRecovery(t, s, "c", at(500*time.Millisecond))
		assert.Equal(t, []string{"c", "b"}, dueIDs(t, s, at(5*time.Second), 10), "given one")
		setRecovery(t, s, "e", at(0))
		assert.Equal(t, []string{"e", "c", "b"}, dueIDs(t, s, at(5*time.Second), 10), "brought forward")
		assert.Equal(t, []string{"e", "c", "b", "a"}, dueIDs(t, s, at(20*time.Second), 10))

		// The recovery service's loop: take the due, push each on, until none is due.
		var seen []string
		for range 10 {
			ids := dueIDs(t, s, at(time.Minute), 2)
			if len(ids) == 0 {
				break
			}
			for _, id := range ids {
				seen = append(seen, id)
				setRecovery(t, s, id, at(time.Hour))
			}
		}
		assert.Equal(t, []string{"e", "c", "b", "a"}, seen, "each handled once, in order")
	})

	t.Run("DueMany", func(t *testing.T) {
		s := newStore(t)
		const n = 300
		due := make(map[string]time.Duration)
		for i := range n {
			// Distinct times in an order unrelated to the ids; a tenth not due yet.
			d := time.Duration((i*7919)%n) * time.Millisecond
			if i%10 == 0 {
				d += time.Hour
			}
			due[fmt.Sprintf("e%03d", i)] = d
		}
		withRecovery(t, s, due)
		var want []string
		for _, id := range sortedKeys(due) {
			if due[id] < time.Hour {
				want = append(want, id)
			}
		}
		slices.SortFunc(want, func(a, b string) int { return cmp.Compare(due[a], due[b]) })
		assert.Equal(t, want[:40], dueIDs(t, s, at(time.Minute), 40))
		assert.Equal(t, want, dueIDs(t, s, at(time.Minute), 1000))
		assert.Equal(t, want[:1], dueIDs(t, s, at(time.Minute), 1))
	})
}

// testTasks runs the tests of tasks beyond those of every entity.
func testTasks(t *testing.T, newStore func(*testing.T) workflow.Store) {
	t.Run("CreateTasksLeavesExisting", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		ensureProcess(t, s, "p")
		require.NoError(t, s.CreateTasks(ctx, []workflow.Task{
			queued("a", "build", at(0)), queued("b", "build", at(time.Second)),
		}))
		claimed, ok := claim(t, s, "build", at(time.Minute), takeFor("pass-1", at(time.Hour)))
		require.True(t, ok)
		require.Equal(t, "a", claimed.ID)

		// A release completed again: a and b exist, c is new.
		again := queued("a", "build", at(0))
		again.Spec.Args = []byte("other")
		require.NoError(t, s.CreateTasks(ctx, []workflow.Task{again, queued("b", "ship", at(0)), queued("c", "build", at(2*time.Second))}))
		equalTask(t, claimed, getTask(t, s, "a"), "an existing task is left as it is")
		wantB := queued("b", "build", at(time.Second))
		wantB.Version = 1
		equalTask(t, wantB, getTask(t, s, "b"))
		wantC := queued("c", "build", at(2*time.Second))
		wantC.Version = 1
		equalTask(t, wantC, getTask(t, s, "c"))

		next, ok := claim(t, s, "build", at(time.Minute), takeFor("pass-2", at(time.Hour)))
		require.True(t, ok)
		assert.Equal(t, "b", next.ID, "a claimed task is not queued again by its creation")
		_, ok = claim(t, s, "ship", at(time.Minute), takeFor("pass-3", at(time.Hour)))
		assert.False(t, ok, "nor moved to another queue")

		require.NoError(t, s.CreateTasks(ctx, nil), "nothing to create")
	})

	t.Run("ProcessTasks", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		ensureProcess(t, s, "p")
		ensureProcess(t, s, "q")
		ensureProcess(t, s, "empty")
		ts := []workflow.Task{queued("a", "build", at(0)), queued("b", "ship", at(0)), queued("c", "build", at(0))}
		ts[1].State = workflow.TaskFinished
		other := queued("d", "build", at(0))
		other.ProcessID = "q"
		require.NoError(t, s.CreateTasks(ctx, append(ts, other)))
		updated := getTask(t, s, "c")
		updated.State = workflow.TaskInProgress
		updated, err := s.UpdateTask(ctx, updated)
		require.NoError(t, err)

		got, err := s.ProcessTasks(ctx, "p")
		require.NoError(t, err)
		slices.SortFunc(got, func(a, b workflow.Task) int { return cmp.Compare(a.ID, b.ID) })
		require.Len(t, got, 3)
		for i, id := range []string{"a", "b", "c"} {
			equalTask(t, getTask(t, s, id), got[i], "every task of the process, as stored")
		}
		assert.Equal(t, int64(2), got[2].Version)

		got[0].Spec.Args[0] = 'X'
		equalTask(t, queuedV("a", "build", at(0), 1), getTask(t, s, "a"), "no slice of the store's own")

		got, err = s.ProcessTasks(ctx, "q")
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.Equal(t, "d", got[0].ID)

		got, err = s.ProcessTasks(ctx, "empty")
		require.NoError(t, err)
		assert.Empty(t, got, "a process without tasks")
	})

	t.Run("QueueFollowsUpdates", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		ensureProcess(t, s, "p")
		require.NoError(t, s.CreateTasks(ctx, []workflow.Task{
			queued("a", "build", at(1*time.Second)), queued("b", "build", at(2*time.Second)),
			queued("c", "build", at(3*time.Second)), queued("d", "build", at(4*time.Second)),
		}))
		update := func(id string, change func(*workflow.Task)) {
			t.Helper()
			tk := getTask(t, s, id)
			change(&tk)
			_, err := s.UpdateTask(ctx, tk)
			require.NoError(t, err)
		}
		update("d", func(tk *workflow.Task) { tk.ReadyAt = at(0) })                // brought forward
		update("a", func(tk *workflow.Task) { tk.State = workflow.TaskFinished })  // out of the queue
		update("b", func(tk *workflow.Task) { tk.Spec.ActorType = "ship" })        // to another queue
		update("c", func(tk *workflow.Task) { tk.ReadyAt = at(10 * time.Second) }) // pushed back

		var order []string
		for {
			tk, ok := claim(t, s, "build", at(time.Minute), takeFor("p", time.Time{}))
			if !ok {
				break
			}
			order = append(order, tk.ID)
		}
		assert.Equal(t, []string{"d", "c"}, order)
		tk, ok := claim(t, s, "ship", at(time.Minute), takeFor("p", time.Time{}))
		require.True(t, ok)
		assert.Equal(t, "b", tk.ID)
	})
}

// testClaim runs the tests of Claim and LastPolled.
func testClaim(t *testing.T, newStore func(*testing.T) workflow.Store) {
	t.Run("Order", func(t *testing.T) {
		s := newStore(t)
		ensureProcess(t, s, "p")
		busy := queued("busy", "build", at(0))
		busy.State = workflow.TaskInProgress
		done := queued("done", "build", at(0))
		done.State = workflow.TaskFinished
		require.NoError(t, s.CreateTasks(t.Context(), []workflow.Task{
			queued("t1", "build", at(3*time.Second)), queued("t3", "build", at(time.Second)),
			queued("other", "ship", at(0)), queued("t2", "build", at(time.Second)),
			busy, done, queued("t4", "build", at(2*time.Second)),
		}))
		var order []string
		for range 10 {
			tk, ok := claim(t, s, "build", at(time.Minute), takeFor("p", time.Time{}))
			if !ok {
				break
			}
			order = append(order, tk.ID)
		}
		assert.Equal(t, []string{"t2", "t3", "t4", "t1"}, order,
			"by ReadyAt then id, only queued tasks of the actor type asked")
		tk, ok := claim(t, s, "ship", at(time.Minute), takeFor("p", time.Time{}))
		require.True(t, ok)
		assert.Equal(t, "other", tk.ID)
	})

	t.Run("NotBeforeReadyAt", func(t *testing.T) {
		s := newStore(t)
		ensureProcess(t, s, "p")
		require.NoError(t, s.CreateTasks(t.Context(), []workflow.Task{queued("a", "build", at(5*time.Second))}))
		_, ok := claim(t, s, "build", at(5*time.Second-time.Millisecond), takeFor("p", time.Time{}))
		assert.False(t, ok, "not before its ReadyAt")
		tk, ok := claim(t, s, "build", at(5*time.Second), takeFor("p", time.Time{}))
		require.True(t, ok, "at its ReadyAt")
		assert.Equal(t, "a", tk.ID)
		_, ok = claim(t, s, "build", at(time.Hour), takeFor("p", time.Time{}))
		assert.False(t, ok, "taken once")
		_, ok = claim(t, s, "unknown", at(time.Hour), takeFor("p", time.Time{}))
		assert.False(t, ok, "an actor type never seen")
	})

	t.Run("AppliesTake", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		ensureProcess(t, s, "p")
		require.NoError(t, s.CreateTasks(ctx, []workflow.Task{queued("a", "build", at(0))}))
		var seen workflow.Task
		got, ok, err := s.Claim(ctx, "build", at(time.Second), func(tk *workflow.Task) {
			seen = *tk
			tk.State = workflow.TaskInProgress
			tk.Pass = "pass-1"
			tk.RecoveryTime = at(31 * time.Second)
			tk.Attempts++
		})
		require.NoError(t, err)
		require.True(t, ok)
		equalTask(t, queuedV("a", "build", at(0), 1), seen, "take is given the stored task")

		want := queuedV("a", "build", at(0), 2)
		want.State, want.Pass, want.RecoveryTime, want.Attempts = workflow.TaskInProgress, "pass-1", at(31*time.Second), 1
		equalTask(t, want, got, "the claim returns the task as take left it, with the next version")
		equalTask(t, want, getTask(t, s, "a"), "and stores it")

		_, ok = claim(t, s, "build", at(time.Minute), takeFor("p", time.Time{}))
		assert.False(t, ok, "an in-progress task is not in the queue")

		stale := queuedV("a", "build", at(0), 1)
		stale.State = workflow.TaskFinished
		_, err = s.UpdateTask(ctx, stale)
		assert.ErrorIs(t, err, workflow.ErrConflict, "a change decided on the task before the claim")

		due, err := s.DueTasks(ctx, at(31*time.Second), 10)
		require.NoError(t, err)
		require.Len(t, due, 1, "the recovery time take set is indexed")
		equalTask(t, want, due[0])

		got.Spec.Args[0] = 'X'
		equalTask(t, want, getTask(t, s, "a"), "no slice of the store's own")
	})

	t.Run("TakeLeavesQueued", func(t *testing.T) {
		s := newStore(t)
		ensureProcess(t, s, "p")
		require.NoError(t, s.CreateTasks(t.Context(), []workflow.Task{queued("a", "build", at(0))}))
		later := func(tk *workflow.Task) { tk.ReadyAt = at(time.Minute); tk.Attempts++ }
		_, ok := claim(t, s, "build", at(time.Second), later)
		require.True(t, ok)
		_, ok = claim(t, s, "build", at(30*time.Second), later)
		assert.False(t, ok, "queued again at the ReadyAt take gave")
		tk, ok := claim(t, s, "build", at(time.Minute), later)
		require.True(t, ok)
		assert.Equal(t, 2, tk.Attempts)
		assert.Equal(t, int64(3), tk.Version)
	})

	t.Run("Requeued", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		ensureProcess(t, s, "p")
		require.NoError(t, s.CreateTasks(ctx, []workflow.Task{queued("a", "build", at(0))}))
		tk, ok := claim(t, s, "build", at(time.Second), takeFor("pass-1", at(30*time.Second)))
		require.True(t, ok)

		// Its work timeout: taken back and queued again.
		tk.State = workflow.TaskQueued
		tk.ReadyAt = at(20 * time.Second)
		tk.RecoveryTime = time.Time{}
		_, err := s.UpdateTask(ctx, tk)
		require.NoError(t, err)

		_, ok = claim(t, s, "build", at(10*time.Second), takeFor("pass-2", at(time.Minute)))
		assert.False(t, ok, "not before its new ReadyAt")
		tk, ok = claim(t, s, "build", at(20*time.Second), takeFor("pass-2", at(time.Minute)))
		require.True(t, ok, "claimable again")
		assert.Equal(t, "pass-2", tk.Pass)
		assert.Equal(t, 2, tk.Attempts)
		assert.Equal(t, int64(4), tk.Version)
	})

	t.Run("LastPolled", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		ensureProcess(t, s, "p")
		last, err := s.LastPolled(ctx, "build")
		require.NoError(t, err)
		assert.True(t, last.IsZero(), "never polled")

		_, ok := claim(t, s, "build", at(time.Second), takeFor("p", time.Time{}))
		require.False(t, ok)
		last, err = s.LastPolled(ctx, "build")
		require.NoError(t, err)
		assert.True(t, at(time.Second).Equal(last), "polled with nothing ready: %v", last)

		require.NoError(t, s.CreateTasks(ctx, []workflow.Task{queued("a", "build", at(0))}))
		_, ok = claim(t, s, "build", at(2*time.Second), takeFor("p", time.Time{}))
		require.True(t, ok)
		last, err = s.LastPolled(ctx, "build")
		require.NoError(t, err)
		assert.True(t, at(2*time.Second).Equal(last), "polled with a task taken: %v", last)

		last, err = s.LastPolled(ctx, "ship")
		require.NoError(t, err)
		assert.True(t, last.IsZero(), "each actor type its own")
	})

	t.Run("Concurrent", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		ensureProcess(t, s, "p")
		const n, workers = 1000, 8
		ts := make([]workflow.Task, n)
		for i := range n {
			ts[i] = queued(fmt.Sprintf("t%04d", i), "build", at(time.Duration(i%17)*time.Millisecond))
		}
		require.NoError(t, s.CreateTasks(ctx, ts))

		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			taken = make(map[string][]int)
		)
		for w := range workers {
			wg.Go(func() {
				for {
					tk, ok, err := s.Claim(ctx, "build", at(time.Minute), takeFor(fmt.Sprint("worker-", w), time.Time{}))
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
		wg.Wait()
		require.Len(t, taken, n, "every task taken")
		for id, by := range taken {
			assert.Len(t, by, 1, "task %s taken by workers %v", id, by)
		}
		for _, id := range []string{"t0000", "t0500", "t0999"} {
			tk := getTask(t, s, id)
			assert.Equal(t, workflow.TaskInProgress, tk.State)
			assert.Equal(t, 1, tk.Attempts)
			assert.Equal(t, int64(2), tk.Version)
			assert.Equal(t, fmt.Sprint("worker-", taken[id][0]), tk.Pass, "stored as its worker's take left it")
		}
	})
}

// testCanceled checks that every method gives up on a context that is done.
func testCanceled(t *testing.T, newStore func(*testing.T) workflow.Store) {
	s := newStore(t)
	ensureProcess(t, s, "p")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	p := processKind.sample("p")
	p.Version = 1
	tk := queuedV("a", "build", at(0), 1)
	g := workflow.Graph{ProcessID: "p", Version: 1}
	_, okErr := s.Process(ctx, "p")
	errs := map[string]error{
		"CreateProcess": s.CreateProcess(ctx, processKind.sample("q")),
		"Process":       okErr,
		"CreateTasks":   s.CreateTasks(ctx, []workflow.Task{tk}),
		"CreateGraph":   s.CreateGraph(ctx, g),
	}
	_, errs["UpdateProcess"] = s.UpdateProcess(ctx, p)
	_, errs["Task"] = s.Task(ctx, "a")
	_, errs["UpdateTask"] = s.UpdateTask(ctx, tk)
	_, errs["ProcessTasks"] = s.ProcessTasks(ctx, "p")
	_, errs["Graph"] = s.Graph(ctx, "p")
	_, errs["UpdateGraph"] = s.UpdateGraph(ctx, g)
	_, _, errs["Claim"] = s.Claim(ctx, "build", at(0), takeFor("p", time.Time{}))
	_, errs["LastPolled"] = s.LastPolled(ctx, "build")
	_, errs["DueTasks"] = s.DueTasks(ctx, at(0), 10)
	_, errs["DueGraphs"] = s.DueGraphs(ctx, at(0), 10)
	_, errs["DueProcesses"] = s.DueProcesses(ctx, at(0), 10)
	for _, name := range sortedKeys(errs) {
		assert.ErrorIs(t, errs[name], context.Canceled, name)
	}
}

// queued is a new queued task of process p.
func queued(id, actorType string, readyAt time.Time) workflow.Task {
	return workflow.Task{
		ID: id, ProcessID: "p", Spec: workflow.TaskSpec{ActorType: actorType, Args: []byte("args of " + id)},
		State: workflow.TaskQueued, ReadyAt: readyAt, Deadline: at(time.Hour),
	}
}

// queuedV is queued as stored with version v.
func queuedV(id, actorType string, readyAt time.Time, v int64) workflow.Task {
	t := queued(id, actorType, readyAt)
	t.Version = v
	return t
}

// takeFor is the engine's take: the task goes to an actor under a new pass, with its
// work timeout.
func takeFor(pass string, workTimeout time.Time) func(*workflow.Task) {
	return func(t *workflow.Task) {
		t.State = workflow.TaskInProgress
		t.Pass = pass
		t.RecoveryTime = workTimeout
		t.Attempts++
	}
}

func claim(t *testing.T, s workflow.Store, actorType string, now time.Time, take func(*workflow.Task)) (workflow.Task, bool) {
	t.Helper()
	tk, ok, err := s.Claim(t.Context(), actorType, now, take)
	require.NoError(t, err)
	return tk, ok
}

func getTask(t *testing.T, s workflow.Store, id string) workflow.Task {
	t.Helper()
	tk, err := s.Task(t.Context(), id)
	require.NoError(t, err)
	return tk
}

// ensureProcess creates process id unless it exists.
func ensureProcess(t *testing.T, s workflow.Store, id string) {
	t.Helper()
	err := s.CreateProcess(t.Context(), processKind.sample(id))
	if !errors.Is(err, workflow.ErrExists) {
		require.NoError(t, err)
	}
}

func equalTask(t *testing.T, want, got workflow.Task, msgAndArgs ...any) {
	t.Helper()
	assert.Equal(t, normTask(want), normTask(got), msgAndArgs...)
}

// normTask is a task in the form tasks are compared in: times in UTC, empty slices nil.
func normTask(t workflow.Task) workflow.Task {
	t.Spec = normSpec(t.Spec)
	t.ReadyAt = t.ReadyAt.UTC()
	t.RecoveryTime = t.RecoveryTime.UTC()
	t.Deadline = t.Deadline.UTC()
	t.Result = nilIfEmpty(t.Result)
	t.Next = nilIfEmpty(t.Next)
	if len(t.NextSpecs) == 0 {
		t.NextSpecs = nil
	} else {
		specs := make([]workflow.TaskSpec, len(t.NextSpecs))
		for i, sp := range t.NextSpecs {
			specs[i] = normSpec(sp)
		}
		t.NextSpecs = specs
	}
	return t
}

func normSpec(sp workflow.TaskSpec) workflow.TaskSpec {
	sp.Args = nilIfEmpty(sp.Args)
	return sp
}

func nilIfEmpty[S ~[]E, E any](s S) S {
	if len(s) == 0 {
		return nil
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
