package workflowtest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/workflow"
)

// testSearch checks SearchProcesses: each filter, their combination, the order, the
// total, and keyset pages.
func testSearch(t *testing.T, newStore func(*testing.T) workflow.Store) {
	s := newStore(t)
	ctx := t.Context()
	types := []string{"order", "refund", "audit"}
	states := []workflow.ProcessState{workflow.ProcessRunning, workflow.ProcessFinished, workflow.ProcessBroken}
	var ids []string
	for i := range 9 {
		id := fmt.Sprintf("p%02d", i)
		ids = append(ids, id)
		// Two processes share each start time, so that the order falls back on the id.
		started := at(time.Duration(i/2) * time.Minute)
		require.NoError(t, s.CreateProcess(ctx, workflow.Process{ID: id, Type: types[i%3], CustomID: fmt.Sprintf("c%d", i%4),
			State: states[i%3], StartedAt: started}))
	}
	require.NoError(t, s.CreateTasks(ctx, []workflow.Task{
		{ID: "t1", ProcessID: "p01", Spec: workflow.TaskSpec{ActorType: "pay"}, State: workflow.TaskQueued, ReadyAt: t0},
		{ID: "t2", ProcessID: "p04", Spec: workflow.TaskSpec{ActorType: "pay"}, State: workflow.TaskFinished, ReadyAt: t0},
		{ID: "t3", ProcessID: "p04", Spec: workflow.TaskSpec{ActorType: "ship"}, State: workflow.TaskQueued, ReadyAt: t0},
	}))
	search := func(q workflow.Query) ([]string, int) {
		t.Helper()
		ps, total, err := s.SearchProcesses(ctx, q)
		require.NoError(t, err)
		out := []string{}
		for _, p := range ps {
			out = append(out, p.ID)
		}
		return out, total
	}
	cases := []struct {
		name  string
		q     workflow.Query
		want  []string
		total int
	}{
		{"everything, by start then id", workflow.Query{}, ids, 9},
		{"types", workflow.Query{Types: []string{"refund", "audit"}}, []string{"p01", "p02", "p04", "p05", "p07", "p08"}, 6},
		{"states", workflow.Query{States: []workflow.ProcessState{workflow.ProcessBroken}}, []string{"p02", "p05", "p08"}, 3},
		{"custom id", workflow.Query{CustomID: "c1"}, []string{"p01", "p05"}, 2},
		{"actor type, of any task state", workflow.Query{ActorType: "pay"}, []string{"p01", "p04"}, 2},
		{"start range: from inclusive, to exclusive", workflow.Query{StartedFrom: at(time.Minute), StartedTo: at(3 * time.Minute)}, []string{"p02", "p03", "p04", "p05"}, 4},
		{"combined", workflow.Query{Types: []string{"order", "refund"}, States: []workflow.ProcessState{workflow.ProcessRunning, workflow.ProcessFinished}, StartedFrom: at(time.Minute)}, []string{"p03", "p04", "p06", "p07"}, 4},
		{"limit keeps the total", workflow.Query{Limit: 2}, []string{"p00", "p01"}, 9},
		{"after a cursor between equal start times", workflow.Query{Limit: 3, After: &workflow.Cursor{StartedAt: at(time.Minute), ID: "p02"}}, []string{"p03", "p04", "p05"}, 9},
		{"nothing", workflow.Query{CustomID: "none"}, []string{}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, total := search(c.q)
			assert.Equal(t, c.want, got)
			assert.Equal(t, c.total, total)
		})
	}
	t.Run("pages cover everything once", func(t *testing.T) {
		var seen []string
		q := workflow.Query{Limit: 4}
		for {
			ps, _, err := s.SearchProcesses(ctx, q)
			require.NoError(t, err)
			if len(ps) == 0 {
				break
			}
			for _, p := range ps {
				seen = append(seen, p.ID)
			}
			last := ps[len(ps)-1]
			q.After = &workflow.Cursor{StartedAt: last.StartedAt, ID: last.ID}
		}
		assert.Equal(t, ids, seen)
	})
}

// testJobs checks the jobs: create, get, conditional update, list by creation.
func testJobs(t *testing.T, newStore func(*testing.T) workflow.Store) {
	s := newStore(t)
	ctx := t.Context()
	j := workflow.Job{ID: "j1", Query: workflow.Query{Types: []string{"order"}, States: []workflow.ProcessState{workflow.ProcessRunning},
		CustomID: "c", ActorType: "pay", StartedFrom: t0, StartedTo: at(time.Hour)},
		Priority: []string{"order", "refund"}, Rate: 2.5, State: workflow.JobRunning, Total: 10,
		CreatedAt: at(time.Minute), UpdatedAt: at(time.Minute), Version: 7}
	require.NoError(t, s.CreateJob(ctx, j))
	assert.ErrorIs(t, s.CreateJob(ctx, j), workflow.ErrExists)
	_, err := s.Job(ctx, "none")
	assert.ErrorIs(t, err, workflow.ErrNotFound)
	got, err := s.Job(ctx, "j1")
	require.NoError(t, err)
	want := j
	want.Version = 1
	assert.Equal(t, normJob(want), normJob(got))

	got.Stage, got.Cursor, got.Done, got.Repaired, got.Errors = 1, &workflow.Cursor{StartedAt: at(time.Second), ID: "p9"}, 4, 2, 1
	got.Batch, got.BatchBroken = []string{"p7", "p8", "p9"}, []string{"p8"}
	got.State = workflow.JobPaused
	updated, err := s.UpdateJob(ctx, got)
	require.NoError(t, err)
	assert.Equal(t, int64(2), updated.Version)
	again, err := s.Job(ctx, "j1")
	require.NoError(t, err)
	assert.Equal(t, normJob(updated), normJob(again))
	assert.Equal(t, []string{"p7", "p8", "p9"}, again.Batch, "the batch in hand, in order")
	assert.Equal(t, []string{"p8"}, again.BatchBroken)
	_, err = s.UpdateJob(ctx, got) // version 1 again
	assert.ErrorIs(t, err, workflow.ErrConflict)
	again.Batch, again.BatchBroken = nil, nil
	emptied, err := s.UpdateJob(ctx, again)
	require.NoError(t, err)
	again, err = s.Job(ctx, "j1")
	require.NoError(t, err)
	assert.Equal(t, normJob(emptied), normJob(again))
	assert.Empty(t, again.Batch, "the batch counted")
	assert.Empty(t, again.BatchBroken)
	_, err = s.UpdateJob(ctx, workflow.Job{ID: "none", Version: 1})
	assert.ErrorIs(t, err, workflow.ErrNotFound)

	require.NoError(t, s.CreateJob(ctx, workflow.Job{ID: "j0", State: workflow.JobRunning, CreatedAt: t0, UpdatedAt: t0}))
	jobs, err := s.Jobs(ctx)
	require.NoError(t, err)
	require.Len(t, jobs, 2)
	assert.Equal(t, "j0", jobs[0].ID, "by creation")
	assert.Equal(t, "j1", jobs[1].ID)
}

// normJob puts a job's times in UTC and empty slices as nil, for comparison.
func normJob(j workflow.Job) workflow.Job {
	j.CreatedAt, j.UpdatedAt = j.CreatedAt.UTC(), j.UpdatedAt.UTC()
	j.Query.StartedFrom, j.Query.StartedTo = j.Query.StartedFrom.UTC(), j.Query.StartedTo.UTC()
	if j.Cursor != nil {
		c := *j.Cursor
		c.StartedAt = c.StartedAt.UTC()
		j.Cursor = &c
	}
	j.Priority = nilIfEmpty(j.Priority)
	j.Batch, j.BatchBroken = nilIfEmpty(j.Batch), nilIfEmpty(j.BatchBroken)
	j.Query.Types = nilIfEmpty(j.Query.Types)
	j.Query.States = nilIfEmpty(j.Query.States)
	return j
}
