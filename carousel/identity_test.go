package carousel

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// places returns where each publication says it stands: "iteration/position item".
func places(ps []published) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = fmt.Sprintf("%d/%d %s", p.iteration, p.position, p.id)
	}
	return out
}

// Every publication carries its cycle, its iteration and its position in the iteration;
// an iteration resumed by a restarted process keeps its number, and its positions go on
// from the last saved.
func TestPublicationsCarryTheirPlaceInTheCycle(t *testing.T) {
	r := newRig(t, nil)
	r.put("c", numbered(0, 5)...)
	r.add(wholeCfg)
	r.start()
	got := r.publishes(7, nil)
	assert.Equal(t, []string{
		"1/1 item-0000", "1/2 item-0001", "1/3 item-0002", "1/4 item-0003", "1/5 item-0004",
		"2/1 item-0000", "2/2 item-0001",
	}, places(got))
	for _, p := range got {
		assert.Equal(t, wholeCfg.Name, p.cycle)
	}
	r.nextWait() // the 7th is recorded
	require.NoError(t, r.s.Shutdown(context.Background()))
	r.held = nil

	// A new process on the same store, an hour later.
	r.clk.Advance(time.Hour)
	r.s = r.scheduler(nil)
	r.add(wholeCfg)
	r.start()
	got = r.publishes(4, nil)
	assert.Equal(t, []string{"2/3 item-0002", "2/4 item-0003", "2/5 item-0004", "3/1 item-0000"}, places(got),
		"iteration 2 resumed where it stopped, then iteration 3")
}

// A position counts the items of the iteration as the collection is when the iteration
// resumes; progress in publish-carousel's format (a count only) goes on after that count.
func TestPositionsOfAResumedIteration(t *testing.T) {
	t.Run("by count", func(t *testing.T) {
		r := resumeFrom(t, CycleMetadata{Iteration: 4, Total: 1000, Completed: 300, InProgress: true,
			IterationStart: t0.Add(-time.Hour), States: []State{Running}}, numbered(0, 1000))
		assert.Equal(t, []string{"4/301 item-0300", "4/302 item-0301"}, places(r.publishes(2, nil)))
	})
	t.Run("after a last item, items before it removed", func(t *testing.T) {
		r := resumeFrom(t, CycleMetadata{Iteration: 2, Total: 1000, Completed: 700, Last: Item{ID: "item-0699"},
			InProgress: true, IterationStart: t0.Add(-time.Hour), States: []State{Running}}, numbered(500, 1000))
		assert.Equal(t, []string{"2/201 item-0700", "2/202 item-0701"}, places(r.publishes(2, nil)),
			"200 items of the iteration come before item-0700 now")
	})
}
