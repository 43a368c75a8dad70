package recovery

import "context"

// Flush waits until the manager has handled everything posted before it, and the tick and
// retry that were due.
func (m *Manager) Flush(ctx context.Context) error {
	b := make(chan struct{})
	select {
	case m.inbox <- input{barrier: b}:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-b:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
