package pgstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/internal/pgtest"
	"github.com/feedkit/feedkit/workflow"
	"github.com/feedkit/feedkit/workflow/pgstore"
	"github.com/feedkit/feedkit/workflow/workflowtest"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

func newStore(t testing.TB, pool *pgxpool.Pool) *pgstore.Store {
	t.Helper()
	s, err := pgstore.New(t.Context(), pool, pgstore.Options{})
	require.NoError(t, err)
	return s
}

func TestStoreConformance(t *testing.T) {
	workflowtest.TestStore(t, func(t *testing.T) workflow.Store { return newStore(t, pgtest.Pool(t)) })
}

func TestEngineConformance(t *testing.T) {
	workflowtest.TestEngine(t, func(t *testing.T) workflow.Store { return newStore(t, pgtest.Pool(t)) })
}

var tableNames = []string{"processes", "tasks", "graphs", "queues", "jobs"}

func TestNewIsIdempotent(t *testing.T) {
	pool := pgtest.Pool(t)
	s := newStore(t, pool)
	ctx := t.Context()
	require.NoError(t, s.CreateProcess(ctx, workflow.Process{ID: "p", Type: "order", State: workflow.ProcessRunning, StartedAt: t0}))

	s = newStore(t, pool) // again on the same tables: they are kept, with their rows
	p, err := s.Process(ctx, "p")
	require.NoError(t, err)
	assert.Equal(t, "order", p.Type)
}

// TestNewUpgradesJobs: a jobs table of the version before batches (no batch columns),
// with a job in it, gets the columns from New and keeps the job.
func TestNewUpgradesJobs(t *testing.T) {
	pool := pgtest.Pool(t)
	ctx := t.Context()
	_, err := pool.Exec(ctx, `CREATE TABLE feedkit_workflow_jobs (
		id text PRIMARY KEY, query jsonb NOT NULL, priority text[], rate double precision NOT NULL,
		state smallint NOT NULL, stage integer NOT NULL, cursor_started_at timestamptz, cursor_id text,
		total bigint NOT NULL, done bigint NOT NULL, repaired bigint NOT NULL, errors bigint NOT NULL,
		created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL, leased_until timestamptz,
		version bigint NOT NULL)`)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO feedkit_workflow_jobs VALUES ('old', '{}', NULL, 0, 1, 0, NULL, NULL,
		5, 2, 1, 0, $1, $1, NULL, 3)`, t0)
	require.NoError(t, err)

	s := newStore(t, pool)
	old, err := s.Job(ctx, "old")
	require.NoError(t, err)
	assert.Equal(t, workflow.Job{ID: "old", State: workflow.JobRunning, Total: 5, Done: 2, Repaired: 1,
		CreatedAt: t0, UpdatedAt: t0, Version: 3}, old)
	old.Batch, old.BatchBroken = []string{"p1", "p2"}, []string{"p2"}
	_, err = s.UpdateJob(ctx, old)
	require.NoError(t, err)
	got, err := s.Job(ctx, "old")
	require.NoError(t, err)
	assert.Equal(t, []string{"p1", "p2"}, got.Batch)
	assert.Equal(t, []string{"p2"}, got.BatchBroken)
}

// TestNewConcurrently has processes start together on an empty schema: each creates the
// tables or finds them, and none fails.
func TestNewConcurrently(t *testing.T) {
	p1 := pgtest.Pool(t)
	pools := []*pgxpool.Pool{p1, pgtest.SecondPool(t, p1), pgtest.SecondPool(t, p1)}
	pgtest.Together(t, pools, 12, func(_ int, p *pgxpool.Pool) error {
		_, err := pgstore.New(t.Context(), p, pgstore.Options{})
		return err
	})
	var tables int
	require.NoError(t, p1.QueryRow(t.Context(),
		"SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE 'feedkit_workflow_%'").Scan(&tables))
	assert.Equal(t, len(tableNames), tables)
}

func TestOptionsTablePrefix(t *testing.T) {
	pool := pgtest.Pool(t)
	for _, bad := range []string{"Feedkit_", "9lives_", "my-app_", "my app", `x"; DROP TABLE y; --`, "a.b_", "é_",
		"x_2345678901234567890123456789012345678901234"} {
		_, err := pgstore.New(t.Context(), pool, pgstore.Options{TablePrefix: bad})
		require.ErrorIs(t, err, pgstore.ErrInvalidOptions, "%q", bad)
		assert.Contains(t, err.Error(), "pgstore: Options.TablePrefix")
		assert.Contains(t, err.Error(), fmt.Sprintf("%q", bad))
	}

	longest := "x_234567890123456789012345678901234567890123" // 44 bytes
	for _, prefix := range []string{"myapp_", "_x9", longest} {
		s, err := pgstore.New(t.Context(), pool, pgstore.Options{TablePrefix: prefix})
		require.NoError(t, err, prefix)
		names := []string{prefix + "tasks_queued", prefix + "processes_started", prefix + "processes_custom_id"}
		for _, table := range tableNames {
			names = append(names, prefix+table)
		}
		for _, name := range names {
			var exists bool
			require.NoError(t, pool.QueryRow(t.Context(), "SELECT to_regclass($1) IS NOT NULL", name).Scan(&exists))
			assert.True(t, exists, name)
		}
		require.NoError(t, s.CreateProcess(t.Context(), workflow.Process{ID: "p", StartedAt: t0}))
	}
	var exists bool
	require.NoError(t, pool.QueryRow(t.Context(), "SELECT to_regclass('feedkit_workflow_processes') IS NOT NULL").Scan(&exists))
	assert.False(t, exists, "a prefix replaces the default")
}

// TestTimes: times are kept to the microsecond and come back in UTC; a zero time comes
// back zero, whether its column takes NULL or not.
func TestTimes(t *testing.T) {
	pool := pgtest.Pool(t)
	s := newStore(t, pool)
	ctx := t.Context()
	paris := time.FixedZone("CET", 3600)
	fine := t0.Add(1999 * time.Nanosecond).In(paris) // 1.999 µs after t0, in another zone

	require.NoError(t, s.CreateProcess(ctx, workflow.Process{ID: "p", StartedAt: fine, RecoveryTime: fine}))
	p, err := s.Process(ctx, "p")
	require.NoError(t, err)
	assert.Equal(t, at(time.Microsecond), p.StartedAt, "truncated, in UTC")
	assert.Equal(t, at(time.Microsecond), p.RecoveryTime)
	p.StartedAt, p.RecoveryTime = fine.Add(time.Microsecond), time.Time{}
	up, err := s.UpdateProcess(ctx, p)
	require.NoError(t, err)
	assert.Equal(t, at(2*time.Microsecond), up.StartedAt, "an update returns what it stored")
	assert.True(t, up.RecoveryTime.IsZero())
	got, err := s.Process(ctx, "p")
	require.NoError(t, err)
	assert.Equal(t, up, got)

	// A task with every time zero: ready at once, due never.
	require.NoError(t, s.CreateTasks(ctx, []workflow.Task{{ID: "z", ProcessID: "p", Spec: workflow.TaskSpec{ActorType: "a"}, State: workflow.TaskQueued}}))
	tk, err := s.Task(ctx, "z")
	require.NoError(t, err)
	assert.Equal(t, workflow.Task{ID: "z", ProcessID: "p", Spec: workflow.TaskSpec{ActorType: "a"}, State: workflow.TaskQueued, Version: 1}, tk)
	due, err := s.DueTasks(ctx, at(1000*time.Hour), 10)
	require.NoError(t, err)
	assert.Empty(t, due)
	claimed, ok, err := s.Claim(ctx, "a", fine, func(tk *workflow.Task) { tk.State = workflow.TaskInProgress; tk.RecoveryTime = fine })
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, at(time.Microsecond), claimed.RecoveryTime, "a claim returns what it stored")
	last, err := s.LastPolled(ctx, "a")
	require.NoError(t, err)
	assert.Equal(t, at(time.Microsecond), last)

	require.NoError(t, s.CreateGraph(ctx, workflow.Graph{ProcessID: "p"}))
	g, err := s.Graph(ctx, "p")
	require.NoError(t, err)
	assert.Equal(t, workflow.Graph{ProcessID: "p", Version: 1}, g)

	var stored time.Time
	require.NoError(t, pool.QueryRow(ctx, "SELECT started_at FROM feedkit_workflow_processes").Scan(&stored))
	assert.True(t, stored.Equal(at(2*time.Microsecond)), "stored %v", stored)
}

// TestLastPolledNeverBack: claims arriving out of the order of their nows leave the
// latest.
func TestLastPolledNeverBack(t *testing.T) {
	s := newStore(t, pgtest.Pool(t))
	ctx := t.Context()
	for _, now := range []time.Duration{5, 3, 9, 1} {
		_, _, err := s.Claim(ctx, "a", at(now*time.Second), nil)
		require.NoError(t, err)
	}
	last, err := s.LastPolled(ctx, "a")
	require.NoError(t, err)
	assert.Equal(t, at(9*time.Second), last)
}

func TestErrors(t *testing.T) {
	s := newStore(t, pgtest.Pool(t))
	ctx := t.Context()
	_, err := s.Process(ctx, "missing")
	assert.ErrorIs(t, err, workflow.ErrNotFound)
	assert.EqualError(t, err, "pgstore: process missing: workflow: not found")

	require.NoError(t, s.CreateProcess(ctx, workflow.Process{ID: "p", StartedAt: t0}))
	err = s.CreateProcess(ctx, workflow.Process{ID: "p", StartedAt: t0})
	assert.ErrorIs(t, err, workflow.ErrExists)
	assert.EqualError(t, err, "pgstore: create process p: workflow: already exists")

	_, err = s.UpdateProcess(ctx, workflow.Process{ID: "p", Version: 7})
	assert.ErrorIs(t, err, workflow.ErrConflict)
	assert.EqualError(t, err, "pgstore: update process p: version 7: workflow: changed concurrently")

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	for name, err := range map[string]error{
		"CreateJob":       s.CreateJob(canceled, workflow.Job{ID: "j"}),
		"Job":             second(s.Job(canceled, "j")),
		"UpdateJob":       second(s.UpdateJob(canceled, workflow.Job{ID: "j", Version: 1})),
		"Jobs":            second(s.Jobs(canceled)),
		"SearchProcesses": func() error { _, _, err := s.SearchProcesses(canceled, workflow.Query{}); return err }(),
	} {
		assert.ErrorIs(t, err, context.Canceled, name)
	}
}

func second[T any](_ T, err error) error { return err }

// TestSearchProcesses checks every filter, their combinations, the order, the keyset
// pagination and the total.
func TestSearchProcesses(t *testing.T) {
	s := newStore(t, pgtest.Pool(t))
	ctx := t.Context()
	// 30 processes: types order/refund/audit in turn, states running/finished/failed in
	// another turn, start times with ties (every 2 share one), custom ids c0..c9.
	var all []workflow.Process
	for i := range 30 {
		p := workflow.Process{
			ID: fmt.Sprintf("p%02d", 29-i), Type: []string{"order", "refund", "audit"}[i%3],
			CustomID: fmt.Sprintf("c%d", i%10), State: []workflow.ProcessState{workflow.ProcessRunning, workflow.ProcessFinished, workflow.ProcessFailed}[i%4%3],
			StartedAt: at(time.Duration(i/2) * time.Second),
		}
		require.NoError(t, s.CreateProcess(ctx, p))
		p.Version = 1
		all = append(all, p)
	}
	// Tasks of actor type "ship" for some processes, of "build" for others.
	require.NoError(t, s.CreateTasks(ctx, []workflow.Task{
		{ID: "t1", ProcessID: "p03", Spec: workflow.TaskSpec{ActorType: "ship"}, State: workflow.TaskFinished},
		{ID: "t2", ProcessID: "p03", Spec: workflow.TaskSpec{ActorType: "ship"}, State: workflow.TaskQueued},
		{ID: "t3", ProcessID: "p17", Spec: workflow.TaskSpec{ActorType: "ship"}, State: workflow.TaskQueued},
		{ID: "t4", ProcessID: "p20", Spec: workflow.TaskSpec{ActorType: "build"}, State: workflow.TaskQueued},
	}))
	// want is the processes that keep selects, in the order of the results.
	want := func(keep func(p workflow.Process) bool) []workflow.Process {
		var out []workflow.Process
		for _, p := range all {
			if keep(p) {
				out = append(out, p)
			}
		}
		// all is by StartedAt; ties (pairs) by id.
		for i := 0; i+1 < len(out); i++ {
			if out[i].StartedAt.Equal(out[i+1].StartedAt) && out[i].ID > out[i+1].ID {
				out[i], out[i+1] = out[i+1], out[i]
			}
		}
		return out
	}
	cases := []struct {
		name string
		q    workflow.Query
		keep func(p workflow.Process) bool
	}{
		{"all", workflow.Query{}, func(workflow.Process) bool { return true }},
		{"types", workflow.Query{Types: []string{"order", "audit"}}, func(p workflow.Process) bool { return p.Type != "refund" }},
		{"states", workflow.Query{States: []workflow.ProcessState{workflow.ProcessFailed}}, func(p workflow.Process) bool { return p.State == workflow.ProcessFailed }},
		{"custom id", workflow.Query{CustomID: "c3"}, func(p workflow.Process) bool { return p.CustomID == "c3" }},
		{"actor type", workflow.Query{ActorType: "ship"}, func(p workflow.Process) bool { return p.ID == "p03" || p.ID == "p17" }},
		{"started", workflow.Query{StartedFrom: at(3 * time.Second), StartedTo: at(7 * time.Second)}, func(p workflow.Process) bool {
			return !p.StartedAt.Before(at(3*time.Second)) && p.StartedAt.Before(at(7*time.Second))
		}},
		{"combined", workflow.Query{Types: []string{"order", "refund"}, States: []workflow.ProcessState{workflow.ProcessRunning, workflow.ProcessFinished},
			StartedFrom: at(2 * time.Second)}, func(p workflow.Process) bool {
			return p.Type != "audit" && p.State != workflow.ProcessFailed && !p.StartedAt.Before(at(2*time.Second))
		}},
		{"nothing", workflow.Query{Types: []string{"refund"}, ActorType: "build"}, func(p workflow.Process) bool { return false }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := want(c.keep)
			got, total, err := s.SearchProcesses(ctx, c.q)
			require.NoError(t, err)
			assert.Equal(t, len(w), total)
			assert.Equal(t, w, nilIfEmpty(got))

			// Page by 4 from the cursor of the last of each page.
			q := c.q
			q.Limit = 4
			var paged []workflow.Process
			for range 20 {
				page, total, err := s.SearchProcesses(ctx, q)
				require.NoError(t, err)
				assert.Equal(t, len(w), total, "the total ignores Limit and After")
				require.LessOrEqual(t, len(page), 4)
				paged = append(paged, page...)
				if len(page) < 4 {
					break
				}
				last := page[len(page)-1]
				q.After = &workflow.Cursor{StartedAt: last.StartedAt, ID: last.ID}
			}
			assert.Equal(t, w, nilIfEmpty(paged))
		})
	}
}

func nilIfEmpty[S ~[]E, E any](s S) S {
	if len(s) == 0 {
		return nil
	}
	return s
}

func TestJobs(t *testing.T) {
	s := newStore(t, pgtest.Pool(t))
	ctx := t.Context()
	j := workflow.Job{
		ID: "j1",
		Query: workflow.Query{Types: []string{"order"}, States: []workflow.ProcessState{workflow.ProcessRunning, workflow.ProcessBroken},
			CustomID: "c", ActorType: "ship", StartedFrom: at(-time.Hour), StartedTo: at(time.Hour).Add(1500 * time.Nanosecond),
			Limit: 10, After: &workflow.Cursor{StartedAt: at(time.Second), ID: "p1"}},
		Priority: []string{"order", "refund"}, Rate: 12.5, State: workflow.JobRunning, Stage: 1,
		Cursor: &workflow.Cursor{StartedAt: at(2 * time.Second), ID: "p9"}, Total: 100, Done: 40, Repaired: 3, Errors: 1,
		Batch: []string{"p8", "p9"}, BatchBroken: []string{"p9"},
		CreatedAt: at(time.Minute), UpdatedAt: at(2 * time.Minute), Version: 9,
	}
	require.NoError(t, s.CreateJob(ctx, j))
	assert.ErrorIs(t, s.CreateJob(ctx, j), workflow.ErrExists)
	want := j
	want.Query.StartedTo = at(time.Hour).Add(time.Microsecond)
	want.Version = 1
	got, err := s.Job(ctx, "j1")
	require.NoError(t, err)
	assert.Equal(t, want, got)
	_, err = s.Job(ctx, "missing")
	assert.ErrorIs(t, err, workflow.ErrNotFound)

	got.State, got.Cursor, got.Stage, got.Done, got.UpdatedAt = workflow.JobPaused, nil, 2, 41, at(3*time.Minute)
	up, err := s.UpdateJob(ctx, got)
	require.NoError(t, err)
	assert.Equal(t, int64(2), up.Version)
	again, err := s.Job(ctx, "j1")
	require.NoError(t, err)
	assert.Equal(t, up, again)
	_, err = s.UpdateJob(ctx, got)
	assert.ErrorIs(t, err, workflow.ErrConflict)
	_, err = s.UpdateJob(ctx, workflow.Job{ID: "missing", Version: 1})
	assert.ErrorIs(t, err, workflow.ErrNotFound)

	// Jobs by CreatedAt, the empty one too.
	require.NoError(t, s.CreateJob(ctx, workflow.Job{ID: "j0", State: workflow.JobDone, CreatedAt: at(0), UpdatedAt: at(0)}))
	require.NoError(t, s.CreateJob(ctx, workflow.Job{ID: "j2", State: workflow.JobRunning, CreatedAt: at(time.Hour), UpdatedAt: at(time.Hour)}))
	js, err := s.Jobs(ctx)
	require.NoError(t, err)
	ids := make([]string, len(js))
	for i, j := range js {
		ids[i] = j.ID
	}
	assert.Equal(t, []string{"j0", "j1", "j2"}, ids)
	assert.Equal(t, workflow.Job{ID: "j0", State: workflow.JobDone, CreatedAt: at(0), UpdatedAt: at(0), Version: 1}, js[0])
	assert.Equal(t, up, js[1])
}

// TestClaimBrokenOff: a claim whose context ends between its select and its write
// leaves the task queued, for the next claim; a take's change of ID or Version is
// ignored.
func TestClaimBrokenOff(t *testing.T) {
	s := newStore(t, pgtest.Pool(t))
	ctx := t.Context()
	require.NoError(t, s.CreateProcess(ctx, workflow.Process{ID: "p", StartedAt: t0}))
	require.NoError(t, s.CreateTasks(ctx, []workflow.Task{
		{ID: "a", ProcessID: "p", Spec: workflow.TaskSpec{ActorType: "build"}, State: workflow.TaskQueued, ReadyAt: t0},
	}))
	broken, cancel := context.WithCancel(ctx)
	_, ok, err := s.Claim(broken, "build", at(time.Second), func(tk *workflow.Task) {
		tk.State = workflow.TaskInProgress
		cancel()
	})
	assert.ErrorIs(t, err, context.Canceled)
	assert.False(t, ok)
	tk, err := s.Task(ctx, "a")
	require.NoError(t, err)
	assert.Equal(t, workflow.TaskQueued, tk.State, "rolled back")
	assert.Equal(t, int64(1), tk.Version)

	// The cancelled claim's connection is closed under the server, which rolls its
	// transaction back, and releases the row's lock, when it notices: until then SKIP
	// LOCKED passes the row over. It must become claimable again; the guard is a hang's.
	guard, stop := context.WithTimeout(ctx, time.Minute)
	defer stop()
	for {
		tk, ok, err = s.Claim(ctx, "build", at(2*time.Second), func(tk *workflow.Task) {
			tk.State = workflow.TaskInProgress
			tk.ID, tk.Version = "other", 40
		})
		require.NoError(t, err)
		if ok {
			break
		}
		select {
		case <-guard.Done():
			t.Fatal("the task was never claimable again")
		case <-time.After(5 * time.Millisecond):
		}
	}
	assert.Equal(t, "a", tk.ID)
	assert.Equal(t, int64(2), tk.Version)
	got, err := s.Task(ctx, "a")
	require.NoError(t, err)
	assert.Equal(t, tk, got)
	_, err = s.Task(ctx, "other")
	assert.ErrorIs(t, err, workflow.ErrNotFound)
}

// TestCreateTasksAllOrNone: a batch of tasks one of which the database refuses (a NUL
// byte in a text) stores none of them.
func TestCreateTasksAllOrNone(t *testing.T) {
	s := newStore(t, pgtest.Pool(t))
	ctx := t.Context()
	task := func(id string) workflow.Task {
		return workflow.Task{ID: id, ProcessID: "p", Spec: workflow.TaskSpec{ActorType: "build"}, State: workflow.TaskQueued, ReadyAt: t0}
	}
	err := s.CreateTasks(ctx, []workflow.Task{task("a"), task("b"), task("bad\x00"), task("c")})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "pgstore: create 4 tasks:")
	for _, id := range []string{"a", "b", "c"} {
		_, err := s.Task(ctx, id)
		assert.ErrorIs(t, err, workflow.ErrNotFound, id)
	}
	require.NoError(t, s.CreateTasks(ctx, []workflow.Task{task("a"), task("b"), task("a")}), "a repeated id is left as the first")
	ts, err := s.ProcessTasks(ctx, "p")
	require.NoError(t, err)
	assert.Len(t, ts, 2)
}

// TestFreeText: an actor's error, and a reason quoting it, round-trip whatever their
// bytes; an id that PostgreSQL's text cannot hold is refused with an error.
func TestFreeText(t *testing.T) {
	s := newStore(t, pgtest.Pool(t))
	ctx := t.Context()
	odd := "nul \x00, not UTF-8 \xff\xfe, fine é"
	require.NoError(t, s.CreateProcess(ctx, workflow.Process{ID: "p", StartedAt: t0, Reason: odd}))
	p, err := s.Process(ctx, "p")
	require.NoError(t, err)
	assert.Equal(t, odd, p.Reason)

	require.NoError(t, s.CreateTasks(ctx, []workflow.Task{{ID: "a", ProcessID: "p", State: workflow.TaskQueued}}))
	tk, err := s.Task(ctx, "a")
	require.NoError(t, err)
	tk.State, tk.Error = workflow.TaskFailed, odd
	_, err = s.UpdateTask(ctx, tk)
	require.NoError(t, err)
	tk, err = s.Task(ctx, "a")
	require.NoError(t, err)
	assert.Equal(t, odd, tk.Error)

	err = s.CreateProcess(ctx, workflow.Process{ID: "bad\x00", StartedAt: t0})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "pgstore: create process bad\x00: ")
}

// CountByState reads the processes by state from the store, every state present.
func TestCountByState(t *testing.T) {
	s := newStore(t, pgtest.Pool(t))
	ctx := t.Context()
	e, err := workflow.New(s, workflow.Config{})
	require.NoError(t, err)
	want := map[workflow.ProcessState]int{workflow.ProcessRunning: 4, workflow.ProcessFinished: 3,
		workflow.ProcessFailed: 2, workflow.ProcessAborted: 0, workflow.ProcessBroken: 1}
	for st, n := range want {
		for i := range n {
			require.NoError(t, s.CreateProcess(ctx, workflow.Process{ID: fmt.Sprintf("%s-%d", st, i), Type: "order",
				State: st, StartedAt: at(time.Duration(i) * time.Second)}))
		}
	}
	got, err := e.CountByState(ctx)
	require.NoError(t, err)
	assert.Equal(t, want, got)
}
