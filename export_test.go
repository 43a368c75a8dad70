package feedkit

import (
	"context"
	"time"
)

// WaitFor waits for cond, re-checking it every few milliseconds: for the end-to-end tests'
// conditions on counters that move on other goroutines with no signal of their own. It is
// bounded by ctx.
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
