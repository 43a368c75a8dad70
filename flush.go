package feedkit

import (
	"context"
	"fmt"
)

// Flush returns once every message the sessions have read before the call has finished
// its listener call (in a forwarding session, once its Forwarder has finished the
// message's ticket), and the recovery manager has acted on the system messages read
// before it (see recovery.Manager.Flush). With a feedtest.Broker, Broker.Flush first
// makes sure the sessions have read everything published, so a test publishes, then
//
//	broker.Flush(ctx)
//	sdk.Flush(ctx)
//
// and looks at what its listener did, with no polling. Calls of Config.Global run on a
// goroutine of their own and may still be on their way: wait for them on the listener
// (a feedtest.GlobalRecorder). Flush waits for quiet: messages read while it runs are
// waited for too, so with a feed that never pauses it may not return before ctx ends,
// when it returns ctx.Err(). It must not be called from a listener, which would wait for
// itself, nor before Open.
func (s *SDK) Flush(ctx context.Context) error {
	for rc, c := range s.tracker.Snapshot() {
		if c.Pending() == 0 {
			continue
		}
		if err := s.tracker.Wait(ctx, rc); err != nil {
			return err
		}
	}
	if err := s.manager.Flush(ctx); err != nil {
		return fmt.Errorf("feedkit: Flush: %w", err)
	}
	return nil
}
