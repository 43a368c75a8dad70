package carousel

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests run cycles on a fake clock and check when each item is published.

func TestWholeCollectionOnePerThrottle(t *testing.T) {
	r := newRig(t, nil)
	r.put("c", items("x", 3, nil)...)
	r.add(CycleConfig{Name: "whole", Type: ThrottledWholeCollection, Origin: "o", Collection: "c", CoolDown: time.Minute, Throttle: 15 * time.Second})
	r.start()

	got := r.publishes(7, nil)
	assert.Equal(t, []string{"xaa", "xab", "xac", "xaa", "xab", "xac", "xaa"}, ids(got))
	s := 15 * time.Second
	assert.Equal(t, []time.Duration{0, s, 2 * s, 3 * s, 4 * s, 5 * s, 6 * s}, offsets(got), "one every throttle, across iterations too")

	st, err := r.s.Cycle("whole")
	require.NoError(t, err)
	assert.Equal(t, 3, st.Metadata.Iteration)
	assert.Equal(t, 3, st.Metadata.Total)
	assert.Equal(t, s, st.Metadata.Throttle)
}

func TestFixedWindowSpreadsItemsOverTheWindow(t *testing.T) {
	r := newRig(t, nil)
	r.put("c", Item{ID: "old", Modified: t0.Add(-50 * time.Minute)}, Item{ID: "new", Modified: t0.Add(-10 * time.Minute)},
		Item{ID: "too-old", Modified: t0.Add(-61 * time.Minute)})
	r.add(CycleConfig{Name: "fixed", Type: FixedWindow, Origin: "o", Collection: "c", CoolDown: 5 * time.Minute,
		TimeWindow: time.Hour, MinimumThrottle: time.Minute})
	r.start()

	got := r.publishes(2, nil)
	assert.Equal(t, []string{"old", "new"}, ids(got), "by modification time, within the window")
	assert.Equal(t, []time.Duration{0, 30 * time.Minute}, offsets(got), "two items in an hour: one every 30 minutes")

	// Modified during the first iteration: the second window, which begins when the
	// first iteration ends an hour in, has it.
	r.put("c", Item{ID: "during", Modified: t0.Add(20 * time.Minute)})
	got = r.publishes(1, nil)
	assert.Equal(t, "during", got[0].id)
	assert.Equal(t, time.Hour, got[0].at.Sub(t0))
	st, _ := r.s.Cycle("fixed")
	assert.Equal(t, t0, st.Metadata.WindowStart)
	assert.Equal(t, t0.Add(time.Hour), st.Metadata.WindowEnd)
	assert.Equal(t, time.Hour, st.Metadata.Throttle, "one item takes the whole window")
}

func TestFixedWindowOverrunExtendsTheNextWindow(t *testing.T) {
	r := newRig(t, nil)
	r.put("c", items("i", 65, func(i int) time.Time { return t0.Add(-time.Hour + time.Duration(i)*time.Second) })...)
	r.add(CycleConfig{Name: "fixed", Type: FixedWindow, Origin: "o", Collection: "c", CoolDown: 5 * time.Minute,
		TimeWindow: time.Hour, MinimumThrottle: time.Minute})
	r.start()

	got := r.publishes(65, nil)
	assert.Equal(t, 64*time.Minute, got[64].at.Sub(t0), "65 items at the one-minute minimum: the last 64 minutes in")

	// Modified in the overrun's first minutes: a plain last-hour window at 65 minutes
	// would start at 5 minutes and miss it.
	r.put("c", Item{ID: "in-overrun", Modified: t0.Add(2 * time.Minute)})
	got = r.publishes(1, nil)
	assert.Equal(t, "in-overrun", got[0].id)
	assert.Equal(t, 65*time.Minute, got[0].at.Sub(t0), "the iteration took 65 minutes")
	st, _ := r.s.Cycle("fixed")
	assert.Equal(t, t0, st.Metadata.WindowStart, "extended back by the 5-minute overrun")
	assert.Equal(t, t0.Add(65*time.Minute), st.Metadata.WindowEnd)
	assert.Equal(t, 2, st.Metadata.Iteration)
}

func TestScalingWindowClampsAndFollowsOn(t *testing.T) {
	r := newRig(t, nil)
	r.put("c", items("i", 5, func(i int) time.Time { return t0.Add(-time.Duration(i+1) * time.Minute) })...)
	r.add(CycleConfig{Name: "scaling", Type: ScalingWindow, Origin: "o", Collection: "c", CoolDown: 5 * time.Minute,
		TimeWindow: time.Hour, MinimumThrottle: 10 * time.Second, MaximumThrottle: time.Minute})
	r.start()

	got := r.publishes(5, nil)
	assert.Equal(t, []time.Duration{0, time.Minute, 2 * time.Minute, 3 * time.Minute, 4 * time.Minute}, offsets(got),
		"5 items with a one-minute maximum take 5 minutes, not an hour")
	assert.Equal(t, []string{"iae", "iad", "iac", "iab", "iaa"}, ids(got), "oldest first")

	// The next window is the 5 minutes since the first ended: it holds what was
	// modified meanwhile and nothing older.
	r.put("c", Item{ID: "late", Modified: t0.Add(3 * time.Minute)})
	got = r.publishes(1, nil)
	assert.Equal(t, "late", got[0].id)
	assert.Equal(t, 5*time.Minute, got[0].at.Sub(t0))
	st, _ := r.s.Cycle("scaling")
	assert.Equal(t, t0, st.Metadata.WindowStart)
	assert.Equal(t, t0.Add(5*time.Minute), st.Metadata.WindowEnd)
	assert.Equal(t, 1, st.Metadata.Total)
	assert.Equal(t, time.Minute, st.Metadata.Throttle, "one item in an hour, held at the maximum")
}

func TestWindowsCoolDownWhenEmpty(t *testing.T) {
	for _, typ := range []Type{FixedWindow, ScalingWindow} {
		t.Run(string(typ), func(t *testing.T) {
			r := newRig(t, nil)
			r.add(CycleConfig{Name: "w", Type: typ, Origin: "o", Collection: "c", CoolDown: 5 * time.Minute,
				TimeWindow: time.Hour, MinimumThrottle: time.Second, MaximumThrottle: time.Minute})
			r.start()

			w := r.nextWait()
			assert.Equal(t, t0.Add(5*time.Minute), w.until, "an empty window waits the cool-down")
			st, _ := r.s.Cycle("w")
			assert.Equal(t, []State{CoolDown}, st.Metadata.States)

			// Something to publish arrives during the cool-down.
			r.put("c", Item{ID: "a", Modified: t0.Add(time.Minute)})
			r.clk.Set(w.until)
			got := r.publishes(1, nil)
			assert.Equal(t, 5*time.Minute, got[0].at.Sub(t0))
			st, _ = r.s.Cycle("w")
			assert.Equal(t, []State{Running}, st.Metadata.States)
			assert.Equal(t, 2, st.Metadata.Iteration)
		})
	}
}

func TestWholeCollectionCoolsDownWhenEmpty(t *testing.T) {
	r := newRig(t, nil)
	r.add(CycleConfig{Name: "whole", Type: ThrottledWholeCollection, Origin: "o", Collection: "c", CoolDown: time.Minute, Throttle: time.Second})
	r.start()
	w := r.nextWait()
	assert.Equal(t, t0.Add(time.Minute), w.until)
	r.put("c", Item{ID: "a"})
	r.clk.Set(w.until)
	got := r.publishes(2, nil)
	assert.Equal(t, []time.Duration{time.Minute, time.Minute + time.Second}, offsets(got))
}
