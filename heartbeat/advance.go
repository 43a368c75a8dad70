package heartbeat

import (
	"context"
	"time"
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
// on one timer of the Clock, set each time to the next boundary (rather than a ticker
// started at an arbitrary phase), so that under Run a key is found lost at most one Tick
// after its deadline, plus the time the Advance takes. The goroutine that calls Run owns
// it; a Monitor needs no Run when its owner calls Advance from a loop of its own.
func (m *Monitor[K]) Run(ctx context.Context) error {
	clk := m.cfg.clock
	t := clk.NewTimer(m.untilNextTick(clk.Now()))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C():
			// One reading of the clock for both: the next boundary is the one after the
			// time advanced to, so none passes unadvanced while Advance runs.
			now := clk.Now()
			m.Advance(now)
			t.Reset(m.untilNextTick(now))
		}
	}
}

// untilNextTick returns the time from now to the next tick boundary after it.
func (m *Monitor[K]) untilNextTick(now time.Time) time.Duration {
	ns := m.sinceEpoch(now)
	return time.Duration((floorDiv(ns, m.cfg.tick)+1)*m.cfg.tick - ns)
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
