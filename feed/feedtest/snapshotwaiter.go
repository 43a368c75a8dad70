package feedtest

import (
	"context"
	"testing"

	"github.com/feedkit/feedkit/feed"
)

// SnapshotWaiter is a feed.SystemHandler that records the request id of every
// snapshot_complete a session hands it, for a test that drives a recovery by hand and
// waits for its end: Next returns them in order of arrival. It ignores alives. Make one
// with NewSnapshotWaiter; it is safe for concurrent use.
type SnapshotWaiter struct {
	ids journal[int64]
}

var _ feed.SystemHandler = (*SnapshotWaiter)(nil)

// NewSnapshotWaiter returns a SnapshotWaiter that has seen no snapshot_complete.
func NewSnapshotWaiter() *SnapshotWaiter { return &SnapshotWaiter{ids: newJournal[int64]()} }

// HandleSystem records the request id of a snapshot_complete.
func (s *SnapshotWaiter) HandleSystem(ev feed.Event) {
	if ev.Key.Type == feed.MessageSnapshotComplete {
		s.ids.add(ev.RequestID, nil)
	}
}

// Next returns the request id of the oldest snapshot_complete Next has not returned yet,
// waiting for one until ctx ends.
func (s *SnapshotWaiter) Next(ctx context.Context) (int64, error) {
	return s.ids.next(ctx, "snapshot_complete")
}

// RequireNext is Next bounded by t's context and a guard against a hang; it fails t if no
// snapshot_complete comes.
func (s *SnapshotWaiter) RequireNext(t testing.TB) int64 {
	t.Helper()
	return guarded(t, s.Next)
}

// IDs returns the request ids of every snapshot_complete seen, in order.
func (s *SnapshotWaiter) IDs() []int64 { return s.ids.all() }
