// Package clock lets components read time and wait on it through an interface, so that
// timeouts, heartbeats and throttles are tested by advancing a fake clock instead of
// sleeping.
//
// Production code takes a Clock (Real() when nil); tests pass a *Fake and call Advance.
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
