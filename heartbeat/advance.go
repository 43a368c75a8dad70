package heartbeat

import (
	"context"
	"time"

	"github.com/feedkit/feedkit/clock"
)

// Advance finds the keys lost by now: every key whose deadline, rounded up to the next
// tick boundary, is at or before now (a tick boundary is the monitor's creation plus a
// multiple of Tick). It marks them lost and calls OnLost for each, on this goroutine and
// outside any lock, unless another goroutine is delivering callbacks of the key's shard
// at that moment (see the package doc). It returns how many keys it found lost.
//
// A key whose deadline had already passed when it was placed (restored, or beaten with
// an old time, or given a shorter timeout) is found by the next Advance, whatever its now.
// A now before an earlier Advance's now is taken as that earlier now: time never goes
// back for the monitor.
func (m *Monitor[K]) Advance(now time.Time) int {
	target := floorDiv(m.sinceEpoch(now), m.cfg.tick)
	note := m.cfg.onLost != nil
	found := 0
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		found += s.advance(target, note)
		m.unlockAndDeliver(s) // also delivers what a panicking callback left behind
	}
	return found
}

// Run calls Advance at every tick boundary until ctx ends, and returns ctx.Err(). It waits
// on one timer of the Clock, set each time for the next boundary (rather than a ticker
// started at an arbitrary phase), so that under Run a key is found lost at most one Tick
// after its deadline, plus the time the Advance takes. The goroutine that calls Run owns
// it; a Monitor needs no Run when its owner calls Advance from a loop of its own.
//
// A boundary that the clock passes while Advance runs, or while the timer is being set, is
// advanced at once: Run never waits for a boundary beyond one the clock has reached.
func (m *Monitor[K]) Run(ctx context.Context) error {
	clk := m.cfg.clock
	var t clock.Timer
	defer func() {
		if t != nil {
			t.Stop()
		}
	}()
	now := clk.Now()
	for {
		next := m.nextTick(now)
		if m.arm(&t, next) {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-t.C():
			}
		} else if err := ctx.Err(); err != nil {
			return err
		}
		// One reading of the clock for the Advance and the boundary after it.
		now = clk.Now()
		m.Advance(now)
	}
}

// arm sets *t (made on first use) to fire at the tick boundary next, in nanoseconds since
// the epoch, and reports whether to wait for it: false when the clock has reached next
// already, before the timer was set or while it was, and Run must advance at once.
//
// A Clock's timer is set by a duration, which the clock counts from its time when the
// timer is set; the duration is read from the clock just before. A clock other than the
// wall clock that moved in between (a fake advanced by another goroutine) would leave the
// timer late by that move, so the timer is set again for what is left until next, until
// the clock stood still around it, as carousel's cycle does. The wall clock never stands
// still, and its moves while a timer is set are too small to matter.
func (m *Monitor[K]) arm(t *clock.Timer, next int64) bool {
	clk := m.cfg.clock
	before := m.sinceEpoch(clk.Now())
	for range 8 { // a clock that never stands still gets the last timer
		if before >= next {
			if *t != nil {
				(*t).Stop()
				select { // a timer that fired as the clock passed next leaves no stale tick
				case <-(*t).C():
				default:
				}
			}
			return false
		}
		if *t == nil {
			*t = clk.NewTimer(time.Duration(next - before))
		} else {
			(*t).Reset(time.Duration(next - before))
		}
		after := m.sinceEpoch(clk.Now())
		if after == before || clk == clock.Real() {
			break
		}
		before = after
	}
	return true
}

// nextTick returns the first tick boundary after now, in nanoseconds since the epoch.
func (m *Monitor[K]) nextTick(now time.Time) int64 {
	return (floorDiv(m.sinceEpoch(now), m.cfg.tick) + 1) * m.cfg.tick
}

// Flush does at once what Run does at the tick boundaries up to the clock's time now: it
// calls Advance(now). It then waits until no callback is owed or being delivered, on any
// goroutine, and returns nil; or ctx.Err() if ctx ends first.
//
// It is for tests on a fake clock (package clocktest): after moving the clock, a test
// calls Flush and then sees every key found lost by then and every OnLost and OnRestored
// returned, whether or not the goroutine of Run has woken yet, and whoever delivers them.
// It needs no Run, and a Run beside it finds nothing more at those boundaries.
func (m *Monitor[K]) Flush(ctx context.Context) error {
	m.Advance(m.cfg.clock.Now())
	return m.delivered.Wait(ctx, m.idle)
}

// idle reports whether no shard owes a callback or is delivering one.
func (m *Monitor[K]) idle() bool {
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		busy := s.delivering || len(s.pending) > 0
		s.mu.Unlock()
		if busy {
			return false
		}
	}
	return true
}
