package carousel

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestThrottleFor(t *testing.T) {
	whole := CycleConfig{Type: ThrottledWholeCollection, Throttle: 15 * time.Second}
	fixed := CycleConfig{Type: FixedWindow, TimeWindow: time.Hour, MinimumThrottle: time.Minute}
	scaling := CycleConfig{Type: ScalingWindow, TimeWindow: time.Hour, MinimumThrottle: 10 * time.Second, MaximumThrottle: time.Minute}
	for _, tc := range []struct {
		name string
		cfg  CycleConfig
		span time.Duration // 0: the config's TimeWindow
		n    int
		want time.Duration
	}{
		{"whole collection uses its throttle", whole, 0, 1000, 15 * time.Second},
		{"whole collection, empty", whole, 0, 0, 15 * time.Second},
		{"fixed: two items in an hour, one every 30 min", fixed, 0, 2, 30 * time.Minute},
		{"fixed: one item takes the window", fixed, 0, 1, time.Hour},
		{"fixed: 60 items, exactly the minimum", fixed, 0, 60, time.Minute},
		{"fixed: 65 items, held at the minimum", fixed, 0, 65, time.Minute},
		{"fixed: 7 items, the window divided", fixed, 0, 7, time.Hour / 7},
		{"fixed: empty", fixed, 0, 0, time.Hour},
		{"scaling: 5 items, held at the maximum", scaling, 0, 5, time.Minute},
		{"scaling: 100 items, between the bounds", scaling, 0, 100, 36 * time.Second},
		{"scaling: 1000 items, held at the minimum", scaling, 0, 1000, 10 * time.Second},
		{"scaling: 360 items, exactly the minimum", scaling, 0, 360, 10 * time.Second},
		{"scaling: 60 items, exactly the maximum", scaling, 0, 60, time.Minute},
		{"scaling: empty", scaling, 0, 0, time.Minute},
		{"fixed: resumed, 10 items in the 20 minutes left", fixed, 20 * time.Minute, 10, 2 * time.Minute},
		{"fixed: resumed after its period ended, at the minimum", fixed, -time.Hour, 10, time.Minute},
		{"scaling: resumed, 1 item in the minute left", scaling, time.Minute, 1, time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			span := tc.span
			if span == 0 {
				span = tc.cfg.TimeWindow
			}
			assert.Equal(t, tc.want, throttleFor(tc.cfg, span, tc.n))
		})
	}
}

func TestNextWindow(t *testing.T) {
	fixed := CycleConfig{Type: FixedWindow, TimeWindow: time.Hour}
	scaling := CycleConfig{Type: ScalingWindow, TimeWindow: time.Hour}
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	for _, tc := range []struct {
		name       string
		cfg        CycleConfig
		now, prev  time.Time
		start, end time.Time
	}{
		{"fixed: first window is the last hour", fixed, at(0), time.Time{}, at(-time.Hour), at(0)},
		{"fixed: on schedule, windows tile", fixed, at(time.Hour), at(0), at(0), at(time.Hour)},
		{"fixed: 65-minute iteration, window longer by the 5-minute overrun", fixed, at(65 * time.Minute), at(0), at(0), at(65 * time.Minute)},
		{"fixed: after a short cool-down, the last hour (overlapping)", fixed, at(5 * time.Minute), at(0), at(-55 * time.Minute), at(5 * time.Minute)},
		{"fixed: after a day away, back to the previous end", fixed, at(24 * time.Hour), at(0), at(0), at(24 * time.Hour)},
		{"fixed: previous end in the future, the last hour", fixed, at(0), at(time.Hour), at(-time.Hour), at(0)},
		{"scaling: first window is the last hour", scaling, at(0), time.Time{}, at(-time.Hour), at(0)},
		{"scaling: starts where the previous ended, however short", scaling, at(5 * time.Minute), at(0), at(0), at(5 * time.Minute)},
		{"scaling: an empty window", scaling, at(0), at(0), at(0), at(0)},
		{"scaling: after a day away", scaling, at(24 * time.Hour), at(0), at(0), at(24 * time.Hour)},
		{"scaling: previous end in the future, the last hour", scaling, at(0), at(time.Minute), at(-time.Hour), at(0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start, end := nextWindow(tc.cfg, tc.now, tc.prev)
			assert.Equal(t, tc.start.Sub(t0), start.Sub(t0), "start")
			assert.Equal(t, tc.end.Sub(t0), end.Sub(t0), "end")
		})
	}
}

func TestPlan(t *testing.T) {
	fixed := CycleConfig{Type: FixedWindow, TimeWindow: time.Hour, MinimumThrottle: time.Minute, CoolDown: 5 * time.Minute}
	fixedLongCoolDown := fixed
	fixedLongCoolDown.CoolDown = 2 * time.Hour
	scaling := CycleConfig{Type: ScalingWindow, TimeWindow: time.Hour, MinimumThrottle: 10 * time.Second,
		MaximumThrottle: time.Minute, CoolDown: 5 * time.Minute}
	whole := CycleConfig{Type: ThrottledWholeCollection, Throttle: 15 * time.Second, CoolDown: time.Minute}
	for _, tc := range []struct {
		name  string
		cfg   CycleConfig
		items int
		want  Plan
	}{
		{"fixed: 2 items in an hour, one every 30 minutes", fixed, 2, Plan{2, 30 * time.Minute, time.Hour, time.Hour}},
		{"fixed: 65 items at the 1m minimum take 65 minutes; the next window reaches back by the overrun", fixed, 65,
			Plan{65, time.Minute, 65 * time.Minute, 65 * time.Minute}},
		{"fixed: 60 items, exactly the minimum", fixed, 60, Plan{60, time.Minute, time.Hour, time.Hour}},
		{"fixed: one item takes the window", fixed, 1, Plan{1, time.Hour, time.Hour, time.Hour}},
		{"fixed: 7 items, the window divided, the duration to the microsecond", fixed, 7, Plan{7, time.Hour / 7, time.Hour, time.Hour}},
		{"fixed: nothing, the cool-down; the next window the last hour", fixed, 0, Plan{0, time.Hour, 5 * time.Minute, time.Hour}},
		{"fixed: nothing, a cool-down longer than the window: the next reaches back", fixedLongCoolDown, 0,
			Plan{0, time.Hour, 2 * time.Hour, 2 * time.Hour}},
		{"scaling: 5 items at the 1m maximum take 5 minutes, the next window those", scaling, 5,
			Plan{5, time.Minute, 5 * time.Minute, 5 * time.Minute}},
		{"scaling: 100 items, between the bounds", scaling, 100, Plan{100, 36 * time.Second, time.Hour, time.Hour}},
		{"scaling: 1000 items at the 10s minimum", scaling, 1000,
			Plan{1000, 10 * time.Second, 10000 * time.Second, 10000 * time.Second}},
		{"scaling: nothing, the cool-down", scaling, 0, Plan{0, time.Minute, 5 * time.Minute, 5 * time.Minute}},
		{"whole collection: 1000 items at 15s", whole, 1000, Plan{1000, 15 * time.Second, 4*time.Hour + 10*time.Minute, 0}},
		{"whole collection: nothing, the cool-down", whole, 0, Plan{0, 15 * time.Second, time.Minute, 0}},
		{"a negative count is none", whole, -3, Plan{0, 15 * time.Second, time.Minute, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.cfg.Plan(tc.items))
		})
	}
}

// The scheduler runs an iteration as Plan says: its items at Throttle, the next iteration
// Duration after it began, over a window NextWindow long that holds what was modified
// from its start on, and nothing before.
func TestSchedulerFollowsPlan(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   CycleConfig
		items int
	}{
		{"fixed, 2 items", CycleConfig{Type: FixedWindow, TimeWindow: time.Hour, MinimumThrottle: time.Minute}, 2},
		{"fixed, 65 items, overrun", CycleConfig{Type: FixedWindow, TimeWindow: time.Hour, MinimumThrottle: time.Minute}, 65},
		{"fixed, 7 items", CycleConfig{Type: FixedWindow, TimeWindow: time.Hour, MinimumThrottle: time.Minute}, 7},
		{"scaling, 5 items", CycleConfig{Type: ScalingWindow, TimeWindow: time.Hour, MinimumThrottle: 10 * time.Second, MaximumThrottle: time.Minute}, 5},
		{"scaling, 100 items", CycleConfig{Type: ScalingWindow, TimeWindow: time.Hour, MinimumThrottle: 10 * time.Second, MaximumThrottle: time.Minute}, 100},
		{"whole collection, 10 items", CycleConfig{Type: ThrottledWholeCollection, Throttle: 15 * time.Second}, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Name, cfg.Origin, cfg.Collection, cfg.CoolDown = "c", "o", "c", 5*time.Minute
			plan := cfg.Plan(tc.items)
			r := newRig(t, nil)
			r.put("c", items("i", tc.items, func(i int) time.Time { return t0.Add(-time.Hour + time.Duration(i)*time.Second) })...)
			r.add(cfg)
			r.start()

			got := r.publishes(tc.items, nil)
			for i, at := range offsets(got) {
				onTime(t, plan.PublishedAt(i), at, "item %d, one every Throttle", i)
			}

			if !cfg.Type.Windowed() {
				got = r.publishes(1, nil)
				onTime(t, plan.Duration, got[0].at.Sub(t0), "the next round begins Duration in")
				return
			}
			// Modified at the first instant of the next window, and the instant before; put
			// once the first iteration has listed its last page and waits to end, so that the
			// one before is not in its window still (with 100 items, a multiple of the
			// rig's page size, a listing after the last publish finds the window's end).
			flushCtx, cancel := context.WithTimeout(context.Background(), bound)
			defer cancel()
			require.NoError(t, r.s.Flush(flushCtx))
			next := t0.Add(plan.Duration - plan.NextWindow)
			r.put("c", Item{ID: "first-in-window", Modified: next}, Item{ID: "just-before", Modified: next.Add(-time.Nanosecond)})
			got = r.publishes(1, nil)
			assert.Equal(t, "first-in-window", got[0].id)
			onTime(t, plan.Duration, got[0].at.Sub(t0), "the next iteration begins Duration in")
			st, err := r.s.Cycle("c")
			require.NoError(t, err)
			assert.Equal(t, 2, st.Metadata.Iteration)
			assert.Equal(t, 1, st.Metadata.Total, "nothing modified before the window's start")
			assert.Equal(t, next, st.Metadata.WindowStart, "the window begins where Plan says")
			onTime(t, plan.NextWindow, st.Metadata.WindowEnd.Sub(st.Metadata.WindowStart), "the window's length")
			onTime(t, plan.Duration, st.Metadata.WindowEnd.Sub(t0), "the window ends as the iteration begins")
		})
	}
}

// onTime checks that got, a time the scheduler acted at, is want or at most a microsecond
// later: the pacing computes in float seconds and rounds its waits up to the microsecond,
// so a throttle that is not a whole number of microseconds can come out one late (never
// early, and the windows still meet, so nothing is missed).
func onTime(t *testing.T, want, got time.Duration, msg string, args ...any) {
	t.Helper()
	if got < want || got > want+time.Microsecond {
		t.Errorf("%s: at %v, want %v or a microsecond later", fmt.Sprintf(msg, args...), got, want)
	}
}
