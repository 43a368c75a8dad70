package recovery

import (
	"fmt"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// State is where a producer stands between the feed and this SDK.
type State uint8

// Producer states. A producer is up for the customer only when it is Healthy.
const (
	// Disconnected: messages may have been lost (alives stopped, the connection dropped,
	// or this process has just started) and a recovery must be requested; it is requested
	// when the producer's alives arrive again.
	Disconnected State = iota
	// Recovering: a recovery was requested and accepted; the producer is healthy again
	// when the snapshot_complete with its request id arrives.
	Recovering
	// Healthy: alives arrive in time and every message since the last outage has been
	// received.
	Healthy
)

var stateNames = [...]string{Disconnected: "disconnected", Recovering: "recovering", Healthy: "healthy"}

// String returns the state's name.
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// MarshalText implements encoding.TextMarshaler, so records persist states by name.
func (s State) MarshalText() ([]byte, error) {
	if int(s) >= len(stateNames) {
		return nil, fmt.Errorf("recovery: unknown state %d", uint8(s))
	}
	return []byte(stateNames[s]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (s *State) UnmarshalText(b []byte) error {
	for i, n := range stateNames {
		if n == string(b) {
			*s = State(i)
			return nil
		}
	}
	return fmt.Errorf("recovery: unknown state %q", b)
}

// Record is what the recovery manager remembers of a producer, and what a Store persists
// so that a restarted process recovers from the right time.
type Record struct {
	// Producer is the producer's id on the feed (feed.Producer.ID).
	Producer int `json:"producer"`
	// State is the producer's state.
	State State `json:"state"`
	// LastSubscribedAt is the recovery point, in the feed's clock: the timestamp of the
	// last alive with subscribed=1 before which every message received was processed,
	// held back by a failed listener call (see the package doc).
	LastSubscribedAt time.Time `json:"last_subscribed_at,omitzero"`
	// RecoveryRequestedAt is when the last recovery was requested.
	RecoveryRequestedAt time.Time `json:"recovery_requested_at,omitzero"`
	// RecoverySnapshotID is the request id of the last recovery: the snapshot_complete
	// that ends it carries the same id.
	RecoverySnapshotID int64 `json:"recovery_snapshot_id,omitempty"`
	// RecoveryNodeID is the node the last recovery was requested for.
	RecoveryNodeID feed.NodeID `json:"recovery_node_id,omitzero"`
	// LastDisconnectedAt is the recovery point when a disconnection was registered
	// (alives missing, the connection lost), where the recovery goes back to; zero when
	// the producer has not been disconnected since its last completed recovery.
	LastDisconnectedAt time.Time `json:"last_disconnected_at,omitzero"`
}

// same reports whether r and o hold the same values, times compared as instants.
func (r Record) same(o Record) bool {
	return r.Producer == o.Producer && r.State == o.State && r.LastSubscribedAt.Equal(o.LastSubscribedAt) &&
		r.RecoveryRequestedAt.Equal(o.RecoveryRequestedAt) && r.RecoverySnapshotID == o.RecoverySnapshotID &&
		r.RecoveryNodeID == o.RecoveryNodeID && r.LastDisconnectedAt.Equal(o.LastDisconnectedAt)
}
