package carousel

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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
