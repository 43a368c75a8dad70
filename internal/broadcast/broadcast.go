// Package broadcast lets a goroutine wait, without polling, until a condition on state
// that other goroutines change holds: they call Notify after each change that may make it
// hold, and Wait checks the condition at once and again after every Notify. The kit's
// components use it for their Flush methods, which a test calls to wait until the
// component's goroutines have acted on what they were given.
package broadcast

import (
	"context"
	"sync"
	"sync/atomic"
)

// Signal wakes the goroutines waiting in Wait. The zero value is ready to use; a Signal
// must not be copied after first use.
type Signal struct {
	// waiters counts the goroutines in Wait, so that Notify, which components call on
	// their hot paths (a carousel cycle at every publish), only reads a shared word when
	// nobody waits, as is the case outside tests.
	waiters atomic.Int32
	mu      sync.Mutex
	ch      chan struct{} // closed by the next Notify; nil when nobody took it
}

// Notify wakes every goroutine in Wait to check its condition again. A change that may
// make a condition hold must be made (and visible to the condition) before Notify.
func (s *Signal) Notify() {
	if s.waiters.Load() == 0 {
		// A Wait that begins now checks its condition after this change: it counts itself
		// before it checks, so a Notify that saw no waiter came before the check.
		return
	}
	s.mu.Lock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
	s.mu.Unlock()
}

// Wait returns nil once cond reports true, or ctx.Err() when ctx ends first. It calls
// cond at once and again after every Notify, never with a lock of s held, so cond may
// take the locks of the state it reads.
func (s *Signal) Wait(ctx context.Context, cond func() bool) error {
	s.waiters.Add(1)
	defer s.waiters.Add(-1)
	for {
		// The channel is taken before cond is checked: a Notify after the check closes it.
		s.mu.Lock()
		if s.ch == nil {
			s.ch = make(chan struct{})
		}
		ch := s.ch
		s.mu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
