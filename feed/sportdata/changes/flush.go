package changes

import (
	"context"
	"errors"
)

// errRunReturned is Flush's error once Run has returned for its context's end.
var errRunReturned = errors.New("changes: Run has returned")

// Flush returns once Run has made the poll due at the Clock's time of the call, and its
// listener calls and saves have returned: after a fake clock's Advance past a multiple
// of Interval, that multiple's poll. Called before Run, it waits for Run to begin. It is
// for tests, the kit's and its users', to wait for the manager instead of polling its
// Stats: advance the clock, Flush, then look at what the listener got.
//
// Flush returns ErrClosed once the manager is closed, an error once Run has returned,
// and ctx.Err() if ctx ends first. It must not be called from the Listener, which runs
// on Run's goroutine: that goroutine would wait for itself.
func (m *Manager) Flush(ctx context.Context) error {
	select {
	case <-m.started:
	case <-m.closing:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	target := m.due(m.cfg.Clock.Now())
	for {
		m.mu.Lock()
		polled, moved, closed := m.polled, m.moved, m.closed
		m.mu.Unlock()
		switch {
		case closed:
			return ErrClosed
		case polled >= target:
			return nil
		}
		select {
		case <-moved:
		case <-m.closing:
		case <-m.done:
			m.mu.Lock()
			polled = m.polled
			m.mu.Unlock()
			if polled >= target {
				return nil
			}
			return errRunReturned
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// setPolled records that Run's poll n is done, for Flush.
func (m *Manager) setPolled(n int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.polled = n
	close(m.moved)
	m.moved = make(chan struct{})
}
