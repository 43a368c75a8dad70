package recovery_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/recovery"
)

func TestDefaultLimitsClasses(t *testing.T) {
	ls := recovery.DefaultLimits()
	require.NoError(t, ls.Validate())
	for _, c := range []struct {
		length time.Duration
		class  int
	}{
		{0, 0}, {29*time.Minute + 59*time.Second, 0}, {30 * time.Minute, 1}, {23 * time.Hour, 1},
		{24*time.Hour - 1, 1}, {24 * time.Hour, 2}, {60 * time.Hour, 2}, {100 * time.Hour, 2},
	} {
		assert.Equal(t, c.class, ls.Class(c.length), "length %v", c.length)
	}
	assert.Equal(t, -1, recovery.Limits{{MinLength: time.Hour, Windows: []recovery.Window{{time.Hour, 1}}}}.Class(time.Minute))
	assert.Equal(t, time.Hour, ls.Horizon(0))
	assert.Equal(t, 2*time.Hour, ls.Horizon(2))
}

func TestLimitsValidateNamesTheField(t *testing.T) {
	w := []recovery.Window{{time.Hour, 1}}
	for _, c := range []struct {
		ls   recovery.Limits
		want string
	}{
		{recovery.Limits{}, "Limits is empty"},
		{recovery.Limits{{MinLength: -1, Windows: w}}, "Limits[0].MinLength"},
		{recovery.Limits{{MinLength: time.Hour, MaxLength: time.Minute, Windows: w}}, "Limits[0].MaxLength"},
		{recovery.Limits{{Windows: w}, {MinLength: time.Hour}}, "Limits[1].Windows is empty"},
		{recovery.Limits{{Windows: []recovery.Window{{time.Hour, 0}}}}, "Limits[0].Windows[0]"},
	} {
		assert.ErrorContains(t, c.ls.Validate(), c.want)
	}
}

// times returns n request times, one every step from start.
func times(start time.Time, n int, step time.Duration) []time.Time {
	out := make([]time.Time, n)
	for i := range out {
		out[i] = start.Add(time.Duration(i) * step)
	}
	return out
}

func TestAllowAtTheWindowEdges(t *testing.T) {
	short := recovery.DefaultLimits()[0].Windows // 60 per hour, 20 per 10 min
	mid := recovery.DefaultLimits()[1].Windows   // 10 per hour, 4 per 10 min
	long := recovery.DefaultLimits()[2].Windows  // 4 per 2 h, 2 per 30 min
	cases := []struct {
		name    string
		past    []time.Time
		now     time.Time
		windows []recovery.Window
		ok      bool
		retryAt time.Time
	}{
		{"nothing before", nil, t0, short, true, time.Time{}},
		{"19 in 10 min: the 20th goes", times(t0, 19, time.Second), t0.Add(time.Minute), short, true, time.Time{}},
		{"20 in 10 min: the 21st waits for the first to leave", times(t0, 20, time.Second), t0.Add(time.Minute), short, false, t0.Add(10 * time.Minute)},
		{"one nanosecond before the first leaves: still refused", times(t0, 20, time.Second), t0.Add(10*time.Minute - 1), short, false, t0.Add(10 * time.Minute)},
		{"the moment the first leaves: allowed", times(t0, 20, time.Second), t0.Add(10 * time.Minute), short, true, time.Time{}},
		{"60 in the hour, each 10-min window under 20: the 61st waits an hour",
			times(t0, 60, time.Minute), t0.Add(59*time.Minute + 30*time.Second), short, false, t0.Add(time.Hour)},
		{"mid: 4 in 10 min", times(t0, 4, time.Minute), t0.Add(5 * time.Minute), mid, false, t0.Add(10 * time.Minute)},
		{"mid: 10 in an hour, spread", times(t0, 10, 6*time.Minute), t0.Add(59 * time.Minute), mid, false, t0.Add(time.Hour)},
		{"long: 2 in 30 min", times(t0, 2, time.Minute), t0.Add(10 * time.Minute), long, false, t0.Add(30 * time.Minute)},
		{"long: 2 in 30 min, exactly at the edge", times(t0, 2, time.Minute), t0.Add(30 * time.Minute), long, true, time.Time{}},
		{"long: 4 in 2 h, 30-min windows fine", times(t0, 4, 31*time.Minute), t0.Add(119 * time.Minute), long, false, t0.Add(2 * time.Hour)},
		{"both windows full: the later wins",
			append(times(t0, 2, time.Minute), times(t0.Add(100*time.Minute), 2, time.Minute)...), t0.Add(102 * time.Minute), long, false, t0.Add(130 * time.Minute)},
		{"a request stamped after now (a clock ahead) counts",
			times(t0.Add(time.Minute), 2, time.Second), t0, long, false, t0.Add(31 * time.Minute)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ok, retryAt := recovery.Allow(c.past, c.now, c.windows)
			assert.Equal(t, c.ok, ok)
			assert.Equal(t, c.retryAt, retryAt)
			if !ok {
				// retryAt is exact: allowed then, refused just before.
				ok, _ = recovery.Allow(c.past, retryAt, c.windows)
				assert.True(t, ok, "allowed at retryAt")
				ok, _ = recovery.Allow(c.past, retryAt.Add(-1), c.windows)
				assert.False(t, ok, "refused just before retryAt")
			}
		})
	}
}

// A sliding window admits no more than its maximum in ANY span of its length, unlike a
// token bucket that refills: simulate a greedy client over two days and check every span.
func TestAllowNeverExceedsAnyWindow(t *testing.T) {
	for class, tier := range recovery.DefaultLimits() {
		var granted []time.Time
		now := t0
		for now.Before(t0.Add(48 * time.Hour)) {
			ok, retryAt := recovery.Allow(granted, now, tier.Windows)
			if ok {
				granted = append(granted, now)
				now = now.Add(time.Second)
				continue
			}
			require.True(t, retryAt.After(now), "class %d: retryAt in the future", class)
			now = retryAt
		}
		for _, w := range tier.Windows {
			for i := range granted {
				n := 0
				for j := i; j < len(granted) && granted[j].Sub(granted[i]) < w.Length; j++ {
					n++
				}
				require.LessOrEqual(t, n, w.Max, "class %d window %v starting at request %d", class, w.Length, i)
			}
		}
		// and it is not stingy: over 48 h the long tier grants 4 per 2 h = 96
		if class == 2 {
			assert.Equal(t, 96, len(granted))
		}
	}
}
