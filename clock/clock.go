// Package clock is the time the kit's components read and wait on. Every Config.Clock in
// the kit (recovery, heartbeat, workflow, carousel, the RabbitMQ transport, the feed
// simulator and broker) takes a Clock; nil means the wall clock (Real). A test, the kit's
// own or yours, passes a fake from package clocktest and moves time by exactly what a
// rule is about (a heartbeat limit, a recovery window, a carousel throttle) instead of
// sleeping through it.
//
// Go's testing/synctest is the other way to control time, and it works with the kit too:
// leave Config.Clock nil and run the test in a bubble, where time stands still until every
// goroutine of the bubble is blocked, then jumps to the next timer. It suits a test that
// runs components entirely in memory. The fake clock is kept because the kit's own tests,
// and many of a user's, run components beside real RabbitMQ and PostgreSQL connections,
// whose goroutines a bubble cannot hold, and because a test often needs to stop time at an
// exact instant while other goroutines go on working (a limit and 1ns, a check that has
// not yet run). Components that act on goroutines of their own offer a way to wait until
// they have acted on what they were given and on what the clock's time made due:
// recovery.Manager.Flush, heartbeat.Monitor.Flush, workflow.Engine.Flush and
// carousel.Scheduler.Flush. A test advances the fake clock, flushes, and asserts, with no
// polling and no sleep; recovery's ExampleManager_Flush_heartbeatLimit (a producer taken
// down at its heartbeat limit) and carousel's ExampleScheduler_Flush (a fixed window's
// throttle) are written that way, from outside the kit.
//
// Timer and Ticker mirror time.Timer and time.Ticker as interfaces, so that a fake can
// stand in for them.
package clock

import "time"

// Clock is the source of time for a component.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// Since returns the time elapsed since t.
	Since(t time.Time) time.Duration
	// NewTimer creates a timer that fires once after d.
	NewTimer(d time.Duration) Timer
	// NewTicker creates a ticker that fires every d. It panics if d <= 0, as time.NewTicker does.
	NewTicker(d time.Duration) Ticker
	// AfterFunc calls f in its own goroutine after d.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a one-shot timer, as time.Timer.
type Timer interface {
	// C returns the channel on which the time is delivered; nil for a timer made by AfterFunc.
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it stopped a pending timer.
	Stop() bool
	// Reset changes the timer to fire after d; it reports whether the timer was pending.
	Reset(d time.Duration) bool
}

// Ticker delivers ticks at intervals, as time.Ticker.
type Ticker interface {
	// C returns the channel on which the ticks are delivered.
	C() <-chan time.Time
	// Stop turns the ticker off.
	Stop()
	// Reset stops the ticker and resets its period to d.
	Reset(d time.Duration)
}

// Real returns the wall clock.
func Real() Clock { return realClock{} }

// OrReal returns c, or the wall clock when c is nil, so that a config's zero value works.
func OrReal(c Clock) Clock {
	if c == nil {
		return realClock{}
	}
	return c
}

type realClock struct{}

func (realClock) Now() time.Time                  { return time.Now() }
func (realClock) Since(t time.Time) time.Duration { return time.Since(t) }
func (realClock) NewTimer(d time.Duration) Timer  { return realTimer{time.NewTimer(d)} }
func (realClock) NewTicker(d time.Duration) Ticker {
	return realTicker{time.NewTicker(d)}
}
func (realClock) AfterFunc(d time.Duration, f func()) Timer {
	return realTimer{time.AfterFunc(d, f)}
}

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time        { return r.t.C }
func (r realTimer) Stop() bool                 { return r.t.Stop() }
func (r realTimer) Reset(d time.Duration) bool { return r.t.Reset(d) }

type realTicker struct{ t *time.Ticker }

func (r realTicker) C() <-chan time.Time   { return r.t.C }
func (r realTicker) Stop()                 { r.t.Stop() }
func (r realTicker) Reset(d time.Duration) { r.t.Reset(d) }
