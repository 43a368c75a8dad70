package carousel

import "time"

// This file holds the arithmetic of the cycle types, apart from the goroutine that acts
// on it, so that every case is a table test.
//
// An iteration publishes its n items at start, start+T, ..., start+(n-1)T and ends at
// start+nT, where the next begins: consecutive publishes are T apart, across iterations
// too. A window is [start, end) on the items' modification times, and end is the moment
// the iteration began.

// nextWindow returns the window of a windowed cycle's iteration beginning at now, given
// where the previous window ended (zero for the first).
//
// FixedWindow covers the last TimeWindow, reaching back to the previous end when more
// than TimeWindow has passed since: when the minimum throttle made the previous iteration
// overrun (65 items at one a minute take 65 minutes of a 60-minute window), the next
// window is longer by the overrun (5 minutes), so no item modified meanwhile is missed.
// The same holds after a cool-down longer than the window, or a restart.
//
// ScalingWindow always starts where the previous window ended, however short that makes
// it; its first window is the last TimeWindow.
func nextWindow(c CycleConfig, now, prevEnd time.Time) (start, end time.Time) {
	start = now.Add(-c.TimeWindow)
	switch {
	case prevEnd.IsZero() || prevEnd.After(now):
		// First window, or a previous end in the future (a clock set back): the last
		// TimeWindow.
	case c.Type == ScalingWindow:
		start = prevEnd
	case prevEnd.Before(start):
		start = prevEnd
	}
	return start, now
}

// throttleFor returns the interval between publishes of an iteration of n items spread
// over span: TimeWindow for a new iteration, what is left of its period for one resumed
// after a stop (nothing left: as fast as the minimum allows).
//
// ThrottledWholeCollection uses its Throttle. FixedWindow spreads n items over
// TimeWindow, never faster than MinimumThrottle: 2 items in one hour, one every 30
// minutes. ScalingWindow does the same within [MinimumThrottle, MaximumThrottle]: 5 items
// with a one-minute maximum take 5 minutes. With no items the throttle is the longest the
// type allows (it paces nothing).
func throttleFor(c CycleConfig, span time.Duration, n int) time.Duration {
	if c.Type == ThrottledWholeCollection {
		return c.Throttle
	}
	t := span
	if n > 1 {
		t = span / time.Duration(n)
	}
	t = max(t, c.MinimumThrottle)
	if c.Type == ScalingWindow {
		t = min(t, c.MaximumThrottle)
	}
	return t
}
