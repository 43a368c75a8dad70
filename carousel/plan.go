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

// Plan is an iteration of a cycle worked out in advance by CycleConfig.Plan.
type Plan struct {
	// Items is the number of items the iteration publishes.
	Items int
	// Throttle is the interval between two of its publishes, and after its last one. With
	// no items it paces nothing, and is the longest the type allows. The scheduler keeps
	// time to the microsecond: the i-th item (from 0) is published i × Throttle after the
	// iteration began, rounded up to the microsecond (PublishedAt); its pacing computes
	// in float seconds, so a throttle that is not a whole number of microseconds can make
	// a publish a microsecond later still, never earlier.
	Throttle time.Duration
	// Duration is the time from the iteration's start to the next one's: Items ×
	// Throttle rounded up to the microsecond, the first item being published as it
	// starts; CoolDown when there is nothing to publish.
	Duration time.Duration
	// NextWindow is the length of the window the next iteration republishes; 0 for a
	// whole collection. A FixedWindow's is TimeWindow, or longer by the overrun when the
	// minimum throttle made the iteration outlast it; a ScalingWindow's is the Duration,
	// as its windows follow on from each other.
	NextWindow time.Duration
}

// Plan works out an iteration of c that has items to publish, as the scheduler runs it
// when nothing interrupts it: its throttle, how long it takes, and the length of the next
// iteration's window. The scheduler paces its cycles with the same rules (throttleFor,
// nextWindow), so that an operator can preview a cycle's figures without running it:
//
//   - FixedWindow, TimeWindow 1h, 2 items: one every 30 minutes, an hour in all, and the
//     next window is the last hour;
//   - FixedWindow, MinimumThrottle 1m, 65 items: one a minute, 65 minutes, and the next
//     window is 65 minutes long: it reaches back by the 5-minute overrun, so that no item
//     modified meanwhile is missed;
//   - ScalingWindow, MaximumThrottle 1m, 5 items: one a minute, 5 minutes, and the next
//     window is those 5 minutes;
//   - ThrottledWholeCollection, Throttle 15s, 1,000 items: 4h10m a round.
//
// A throttle set by an operator (Scheduler.SetThrottle) is not c's and is not taken into
// account; a negative count is taken as 0.
func (c CycleConfig) Plan(items int) Plan {
	items = max(items, 0)
	p := Plan{Items: items, Throttle: throttleFor(c, c.TimeWindow, items)}
	p.Duration = p.PublishedAt(items)
	if items == 0 {
		p.Duration = c.CoolDown
	}
	if c.Type.Windowed() {
		// Every window ends as its iteration begins; the next begins Duration later.
		began := time.Unix(0, 0) // any instant: only the lengths count
		start, end := nextWindow(c, began.Add(p.Duration), began)
		p.NextWindow = end.Sub(start)
	}
	return p
}

// PublishedAt returns when the i-th item of the iteration (from 0) is published, from the
// iteration's start: i × Throttle, rounded up to the microsecond as the scheduler's pacing
// rounds its waits. PublishedAt(Items) is when the next iteration begins.
func (p Plan) PublishedAt(i int) time.Duration {
	return ceilMicro(time.Duration(i) * p.Throttle)
}

// ceilMicro rounds d up to the microsecond.
func ceilMicro(d time.Duration) time.Duration {
	return (d + time.Microsecond - 1).Truncate(time.Microsecond)
}
