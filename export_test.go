package feedkit

import (
	"context"
	"time"
)

// WaitFor waits for cond, re-checking it every few milliseconds, bounded by ctx: only for
// what has no signal of its own, such as a RabbitMQ consumer having read what the broker
// holds. On the embedded broker a test flushes instead (Broker.Flush, then SDK.Flush).
var WaitFor = waitFor

func waitFor(ctx context.Context, cond func() bool) error {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for !cond() {
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// FlushManager returns once the SDK's recovery manager has acted on what it was given
// (recovery.Manager.Flush), without waiting for the listeners' or a Forwarder's tasks as
// SDK.Flush does: for a test that holds tasks back on purpose.
func FlushManager(ctx context.Context, s *SDK) error { return s.manager.Flush(ctx) }
