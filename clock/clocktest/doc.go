// Package clocktest provides Fake, a clock.Clock that moves only when a test says so:
// timers, tickers and AfterFunc calls fire, in deadline order, as Advance or Set moves the
// fake time past them, each seeing Now at its own deadline. A timer set for a duration of
// zero or less fires at once, as time.Timer's does.
//
// A test that must know that a goroutine has started to wait before it moves the clock
// calls BlockUntil (or BlockUntilContext), which returns once that many timers and
// tickers are pending: a signal, never a sleep.
package clocktest
