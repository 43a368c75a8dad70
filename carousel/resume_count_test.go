package carousel

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// numbered returns n items of collection order, "item-0000" on.
func numbered(from, to int) []Item {
	out := make([]Item, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, Item{ID: fmt.Sprintf("item-%04d", i)})
	}
	return out
}

// countsWithinTotal is a publishes hook that checks, at every wait of the cycle, that its
// completed count is within its total, and its errors within its completed count.
func (r *rig) countsWithinTotal(id string) func(waiting) bool {
	return func(waiting) bool {
		r.assertCountsWithinTotal(id)
		return true
	}
}

func (r *rig) assertCountsWithinTotal(id string) {
	r.t.Helper()
	st, err := r.s.Cycle(id)
	require.NoError(r.t, err)
	m := st.Metadata
	require.LessOrEqual(r.t, m.Completed, m.Total, "iteration %d: completed %d of %d", m.Iteration, m.Completed, m.Total)
	require.LessOrEqual(r.t, m.Errors, m.Completed, "iteration %d: errors %d of %d completed", m.Iteration, m.Errors, m.Completed)
	require.GreaterOrEqual(r.t, m.Completed, 0)
}

// resumeFrom starts wholeCfg's cycle over collection with saved as its saved metadata,
// as a process restarted on a store that holds it.
func resumeFrom(t *testing.T, saved CycleMetadata, collection []Item) *rig {
	t.Helper()
	r := newRig(t, nil)
	r.put("c", collection...)
	saved.CycleID, saved.Config = wholeCfg.Name, wholeCfg
	require.NoError(t, r.store.Save(context.Background(), saved, 0))
	r.add(wholeCfg)
	r.start()
	r.assertCountsWithinTotal(wholeCfg.Name)
	return r
}

// finishIteration runs the resumed iteration to its end, which publishes want, checking
// the counts at every step, and the first publish of the next iteration, which counts
// the collection afresh.
func (r *rig) finishIteration(want []Item, collection []Item) {
	r.t.Helper()
	got := r.publishes(len(want)+1, r.countsWithinTotal(wholeCfg.Name))
	requireSameIDs(r.t, idsOfItems(want), ids(got[:len(want)]), "the rest of the interrupted iteration, in order")
	assert.Equal(r.t, collection[0].ID, got[len(want)].id, "the next iteration starts from the first item")
	r.nextWait() // the publish is counted before the next wait begins
	st, err := r.s.Cycle(wholeCfg.Name)
	require.NoError(r.t, err)
	assert.Equal(r.t, 2, st.Metadata.Iteration, "the next iteration")
	assert.Equal(r.t, len(collection), st.Metadata.Total)
	assert.Equal(r.t, 1, st.Metadata.Completed)
}

// requireSameIDs checks that got is want, naming the first difference rather than
// printing a thousand ids.
func requireSameIDs(t *testing.T, want, got []string, what string) {
	t.Helper()
	for i := range min(len(want), len(got)) {
		if want[i] != got[i] {
			t.Fatalf("%s: publish %d is %s, want %s", what, i, got[i], want[i])
		}
	}
	require.Equal(t, len(want), len(got), what)
}

func idsOfItems(items []Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.ID
	}
	return out
}

// publish-carousel's metadata has a completed count and no last item: publish-carousel
// skips that many items of its cursor. The cycle does the same in its query's order, and its count
// ends at the collection's size, not past it.
func TestResumeByCountSkipsTheItemsCompleted(t *testing.T) {
	r := resumeFrom(t, CycleMetadata{Iteration: 1, Total: 1000, Completed: 300, InProgress: true,
		IterationStart: t0.Add(-time.Hour), States: []State{Running}}, numbered(0, 1000))
	r.finishIteration(numbered(300, 1000), numbered(0, 1000))
}

// Whatever the saved metadata claims, the completed count never passes the number of
// items of the iteration: with a count only or a last item, with more completed than the
// collection holds, or with a collection that shrank since the save.
func TestResumedCountNeverPassesTheCollection(t *testing.T) {
	tests := []struct {
		name       string
		saved      CycleMetadata
		collection []Item
		rest       []Item // what the resumed iteration publishes
	}{
		{"count only, more than the collection has (1,300 of 1,000)",
			CycleMetadata{Total: 1000, Completed: 1300}, numbered(0, 1000), nil},
		{"count only, the collection shrank from 1,000 to 400",
			CycleMetadata{Total: 1000, Completed: 700}, numbered(0, 400), nil},
		{"count only, the collection shrank from 1,000 to 800",
			CycleMetadata{Total: 1000, Completed: 700}, numbered(0, 800), numbered(700, 800)},
		{"last item, more completed than the collection has",
			CycleMetadata{Total: 1300, Completed: 1300, Last: Item{ID: "item-0299"}}, numbered(0, 1000), numbered(300, 1000)},
		{"last item, the first items removed since the save",
			CycleMetadata{Total: 1000, Completed: 700, Last: Item{ID: "item-0699"}}, numbered(500, 1000), numbered(700, 1000)},
		{"last item, the last items removed since the save",
			CycleMetadata{Total: 1000, Completed: 700, Last: Item{ID: "item-0699"}}, numbered(0, 600), nil},
		{"last item, errors claimed past the completed count",
			CycleMetadata{Total: 1000, Completed: 700, Errors: 650, Last: Item{ID: "item-0699"}}, numbered(600, 800), numbered(700, 800)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			saved := tt.saved
			saved.Iteration, saved.InProgress, saved.IterationStart = 1, true, t0.Add(-time.Hour)
			r := resumeFrom(t, saved, tt.collection)
			r.finishIteration(tt.rest, tt.collection)
		})
	}
}

// Items added while an iteration runs, after the point it has reached, are published by
// it: they count in its total, so that its completed count stays within it.
func TestItemsAddedDuringAnIterationCountInItsTotal(t *testing.T) {
	r := newRig(t, nil)
	r.put("c", numbered(0, 10)...)
	r.add(wholeCfg)
	r.start()
	first := r.publishes(4, r.countsWithinTotal(wholeCfg.Name))
	requireSameIDs(t, idsOfItems(numbered(0, 4)), ids(first), "the first publishes")
	r.put("c", numbered(10, 13)...)
	rest := r.publishes(9, r.countsWithinTotal(wholeCfg.Name))
	requireSameIDs(t, idsOfItems(numbered(4, 13)), ids(rest), "the rest, with the items added")
	r.nextWait() // the throttle after the last item: the iteration has ended
	st, err := r.s.Cycle(wholeCfg.Name)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Metadata.Iteration)
	assert.Equal(t, 13, st.Metadata.Completed)
	assert.Equal(t, 13, st.Metadata.Total, "the items added count in the iteration's total")
}

// publish-carousel's JSON has no inProgress: its completed count is the progress of the
// iteration that was running (publish-carousel saves it at shutdown, and resumes by it).
func TestPublishCarouselJSONWithoutInProgressResumesByCount(t *testing.T) {
	raw := `{"cycleId":"whole","config":{"name":"whole","type":"ThrottledWholeCollection","origin":"o","collection":"c","coolDown":"1m","throttle":"1s"},
		"total":1000,"completed":300,"progress":0.3,"errors":2,"iteration":4,"currentUuid":"item-0299","states":["running"]}`
	var m CycleMetadata
	require.NoError(t, json.Unmarshal([]byte(raw), &m))
	assert.True(t, m.InProgress, "a completed count without inProgress is an iteration under way")
	assert.Equal(t, 300, m.Completed)
	assert.Zero(t, m.Last)

	var done CycleMetadata
	require.NoError(t, json.Unmarshal([]byte(`{"cycleId":"whole","total":1000,"completed":0,"iteration":4}`), &done))
	assert.False(t, done.InProgress, "nothing completed: nothing to resume")

	r := resumeFrom(t, m, numbered(0, 1000))
	got := r.publishes(1, nil)
	assert.Equal(t, "item-0300", got[0].id)
	st, err := r.s.Cycle(wholeCfg.Name)
	require.NoError(t, err)
	assert.Equal(t, 4, st.Metadata.Iteration, "the same iteration")
}
