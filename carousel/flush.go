package carousel

import "context"

// Flush returns once every cycle has done what is due by the clock's time now and waits
// again, and returns nil; or ctx.Err() if ctx ends first. A cycle waits again when its
// goroutine sleeps on the clock until a time after now (its next publish, the end of a
// cool-down or of a retry's backoff), or when it is not running (never started, stopped,
// passive). Until then Flush waits, whatever the cycle is doing: listing or counting its
// Source, publishing (a Publisher that blocks holds Flush up), saving its metadata.
//
// It is for tests on a fake clock (package clock/clocktest): after Start, Add,
// ResumeCycle or SetThrottle, or after moving the clock, a test calls Flush and then sees
// every publication due by then made and the cycles' metadata up to date, without
// polling or sleeping; between two Flushes it moves the clock with Advance, by no more
// than the time to the next publication it means to see at its own time (timers that one
// Advance passes fire at once, one after the other, and a cycle that wakes late publishes
// late). Flush moves nothing itself.
//
// When Run is going, Flush waits as well until Run has asked the Toggle as it does at its
// last tick at or before now (every ToggleInterval from when it began), and acted on the
// answer: the cycles it starts or shuts down are then waited for as any other. Flush
// does not wait for a Run that has not begun: a test that starts Run on a goroutine
// knows it has begun when its Toggle is first asked (a ToggleFunc can tell it), and moves
// the clock only then, so that Run's ticks count from that time.
func (s *Scheduler) Flush(ctx context.Context) error {
	now := s.cfg.Clock.Now()
	return s.flushed.Wait(ctx, func() bool {
		s.mu.Lock()
		// Run first: the cycles that a finished ask started are in s.cycles, running,
		// and checked below.
		if !s.run.began.IsZero() && (s.asking > 0 || !s.run.covers(s.asked, now)) {
			s.mu.Unlock()
			return false
		}
		cs := make([]*cycle, 0, len(s.cycles))
		for _, c := range s.cycles {
			cs = append(cs, c)
		}
		s.mu.Unlock()
		for _, c := range cs {
			if !c.idle(now) {
				return false
			}
		}
		return true
	})
}
