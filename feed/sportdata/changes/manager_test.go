package changes_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/sportdata/changes"
)

// Every change the simulator published is delivered once, at the poll after it, in the
// order of the times; the changes of a second published on both sides of a poll are
// delivered, each once, by the two polls.
func TestEveryChangeDeliveredOnce(t *testing.T) {
	r := newRig(t, feedtest.SimulatorConfig{Seed: 1})
	rec := newRecorder(r.clock)
	m := r.manager(rec, changes.Config{OnError: rec.onError})
	r.run(m)
	assert.Empty(t, rec.changes(), "nothing published yet")

	const rounds = 12
	for range rounds {
		// Just before the poll and just after it, in one second of the clock.
		r.clock.Advance(changes.DefaultInterval - 400*time.Millisecond)
		r.publish(150)
		r.next(m, 400*time.Millisecond)
		r.publish(150)
	}
	r.next(m, changes.DefaultInterval)

	want := r.published()
	require.Greater(t, len(want), 40)
	assert.Equal(t, once(want), rec.counts())
	assert.Empty(t, rec.errors())

	// Each list in the order of the times.
	last := map[changes.Kind]time.Time{}
	for _, c := range rec.changes() {
		assert.False(t, c.UpdatedAt.Before(last[c.Kind]), "%s after %s", c, last[c.Kind])
		last[c.Kind] = c.UpdatedAt
	}
	// The ties this test is about happened: a second whose changes came at two polls.
	polls := map[changes.Change]map[time.Time]bool{}
	rec.mu.Lock()
	for i, c := range rec.got {
		second := changes.Change{Kind: c.Kind, UpdatedAt: c.UpdatedAt}
		if polls[second] == nil {
			polls[second] = map[time.Time]bool{}
		}
		polls[second][rec.when[i]] = true
	}
	rec.mu.Unlock()
	split := 0
	for _, ps := range polls {
		if len(ps) > 1 {
			split++
		}
	}
	assert.Positive(t, split, "some second's changes came at two polls")

	st := m.Stats()
	assert.Equal(t, changes.Stats{Polls: rounds + 2, Requests: 2 * (rounds + 2), Delivered: uint64(len(want)),
		AlreadyDelivered: st.AlreadyDelivered}, st)
	assert.Positive(t, st.AlreadyDelivered, "what the overlap listed again was skipped")
	assert.Equal(t, rounds+2, r.sim.APIRequests(feedtest.RouteFixtureChanges))
	assert.Equal(t, rounds+2, r.sim.APIRequests(feedtest.RouteResultChanges))

	// The cursors are at the latest change of each list.
	for _, c := range m.Cursors() {
		assert.Equal(t, last[c.Kind], c.At, c.Kind)
		assert.NotEmpty(t, c.Events)
		for _, e := range c.Events {
			assert.True(t, want[changes.Change{Kind: c.Kind, Event: e, UpdatedAt: c.At}], "%s %s", c.Kind, e)
		}
	}
	assert.Len(t, m.Cursors(), 2)
}

// Run polls at each multiple of the Interval after it began, not before; a clock that
// jumps over several is not polled once for each.
func TestPollsFallOnTheInterval(t *testing.T) {
	r := newRig(t, feedtest.SimulatorConfig{Seed: 2})
	m := r.manager(newRecorder(r.clock), changes.Config{Interval: 10 * time.Minute})
	r.run(m)
	requests := func() int { return r.sim.APIRequests(feedtest.RouteFixtureChanges) }
	require.Equal(t, 1, requests(), "at once")

	r.clock.Advance(10*time.Minute - time.Nanosecond)
	require.NoError(t, m.Flush(t.Context()))
	assert.Equal(t, 1, requests(), "not before the Interval")
	r.clock.Advance(time.Nanosecond)
	require.NoError(t, m.Flush(t.Context()))
	assert.Equal(t, 2, requests(), "at the Interval")

	// The fake clock steps through each timer's deadline on its way to 45 min: a manager
	// that wakes at once polls at 20 min (and, if it set its next timer before the clock
	// moved on, at 30 and 40); one that wakes after the jump polls once. Whichever
	// goroutine runs first, a poll is made, and never more than one per Interval that
	// fell due (20, 30, 40).
	r.clock.Advance(35 * time.Minute)
	require.NoError(t, m.Flush(t.Context()))
	jumped := requests()
	assert.GreaterOrEqual(t, jumped, 3, "the jump polled")
	assert.LessOrEqual(t, jumped, 5, "at most one poll per Interval that fell due")
	r.clock.Advance(5 * time.Minute)
	require.NoError(t, m.Flush(t.Context()))
	assert.Equal(t, jumped+1, requests(), "the schedule kept: the next at the next multiple")
	assert.Equal(t, uint64(jumped+1), m.Stats().Polls)
}

// With Config.Sport, only that sport's changes are asked for and delivered.
func TestSportFilter(t *testing.T) {
	r := newRig(t, feedtest.SimulatorConfig{Seed: 3, Matches: 12})
	rec := newRecorder(r.clock)
	sport := changes.Config{}.Sport
	sport.Prefix, sport.Type, sport.ID = "sr", "sport", 2
	m := r.manager(rec, changes.Config{Sport: sport})
	r.publish(2000)
	r.run(m)

	sports := map[string]int{}
	for _, s := range r.sim.Sent() {
		sports[s.Key.Event.String()] = s.Key.SportID
	}
	want := map[changes.Change]bool{}
	for c := range r.published() {
		if sports[c.Event.String()] == 2 {
			want[c] = true
		}
	}
	require.NotEmpty(t, want)
	require.Less(t, len(want), len(r.published()))
	assert.Equal(t, once(want), rec.counts())
}

// jumpyClock is a fake clock that moves by jump, once, as a timer is being set: as when
// a test advances the clock while the manager sets its timer.
type jumpyClock struct {
	*clocktest.Fake
	jump atomic.Int64
}

func (c *jumpyClock) NewTimer(d time.Duration) clock.Timer {
	if j := c.jump.Swap(0); j != 0 {
		c.Advance(time.Duration(j))
	}
	return c.Fake.NewTimer(d)
}

// A clock that moves while the manager sets its timer for the next poll does not leave
// the timer late: the poll still falls at the Interval.
func TestTimerSetWhileTheClockMoves(t *testing.T) {
	clk := &jumpyClock{Fake: clocktest.NewFake(start)}
	clk.jump.Store(int64(10 * time.Minute))
	api := &listAPI{}
	m, err := changes.New(api, changes.ListenerFunc(nop), changes.Config{Clock: clk})
	require.NoError(t, err)
	go func() { _ = m.Run(t.Context()) }()
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	require.NoError(t, m.Flush(t.Context()))
	require.NoError(t, clk.BlockUntilContext(t.Context(), 1), "the timer is set")
	require.Equal(t, start.Add(10*time.Minute), clk.Now(), "the clock moved as it was set")

	clk.Advance(50 * time.Minute)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a late timer would never fire
	defer cancel()
	require.NoError(t, m.Flush(ctx))
	assert.Len(t, api.asked(), 4, "the second poll, at the Interval")
}
