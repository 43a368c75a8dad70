package workflowtest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/workflow"
)

// testLimits checks the page sizes of SearchProcesses and the Due methods: 0 means
// workflow.DefaultLimit (not "all"), up to workflow.MaxLimit is taken as given, and a
// negative size or one above the maximum is refused with workflow.ErrInvalidLimit, its
// error naming the field.
func testLimits(t *testing.T, newStore func(*testing.T) workflow.Store) {
	s := newStore(t)
	ctx := t.Context()
	const n = workflow.DefaultLimit + 2 // more than a default page
	var tasks []workflow.Task
	for i := range n {
		id := fmt.Sprintf("p%03d", i)
		require.NoError(t, s.CreateProcess(ctx, workflow.Process{ID: id, Type: "order", State: workflow.ProcessRunning,
			StartedAt: at(time.Duration(i) * time.Millisecond), RecoveryTime: at(time.Second)}))
		require.NoError(t, s.CreateGraph(ctx, workflow.Graph{ProcessID: id, ChangedAt: t0, RecoveryTime: at(time.Second)}))
		tasks = append(tasks, workflow.Task{ID: "t" + id, ProcessID: id, Spec: workflow.TaskSpec{ActorType: "pay"},
			State: workflow.TaskQueued, ReadyAt: t0, RecoveryTime: at(time.Second)})
	}
	require.NoError(t, s.CreateTasks(ctx, tasks))
	now := at(time.Minute)

	// sizes asks each API for a page of limit and returns the sizes of the pages, or the
	// errors, by API.
	type answer struct {
		size  int
		err   error
		field string
	}
	ask := func(limit int) map[string]answer {
		out := map[string]answer{}
		ps, total, err := s.SearchProcesses(ctx, workflow.Query{Limit: limit})
		if err == nil {
			assert.Equal(t, n, total, "the total ignores the limit")
		}
		out["SearchProcesses"] = answer{len(ps), err, "Query.Limit"}
		ts, err := s.DueTasks(ctx, now, limit)
		out["DueTasks"] = answer{len(ts), err, "limit"}
		gs, err := s.DueGraphs(ctx, now, limit)
		out["DueGraphs"] = answer{len(gs), err, "limit"}
		dps, err := s.DueProcesses(ctx, now, limit)
		out["DueProcesses"] = answer{len(dps), err, "limit"}
		return out
	}
	for _, c := range []struct {
		name  string
		limit int
		want  int
	}{
		{"zero is the default page", 0, workflow.DefaultLimit},
		{"one", 1, 1},
		{"the maximum", workflow.MaxLimit, n},
	} {
		t.Run(c.name, func(t *testing.T) {
			for api, a := range ask(c.limit) {
				require.NoError(t, a.err, api)
				assert.Equal(t, c.want, a.size, "%s, limit %d", api, c.limit)
			}
		})
	}
	for _, c := range []struct {
		name  string
		limit int
	}{
		{"negative", -1},
		{"above the maximum", workflow.MaxLimit + 1},
	} {
		t.Run(c.name+" is refused", func(t *testing.T) {
			for api, a := range ask(c.limit) {
				require.ErrorIs(t, a.err, workflow.ErrInvalidLimit, "%s, limit %d", api, c.limit)
				assert.Contains(t, a.err.Error(), fmt.Sprintf("%s %d", a.field, c.limit), "%s names the field and the value", api)
				assert.Zero(t, a.size, api)
			}
		})
	}
}
