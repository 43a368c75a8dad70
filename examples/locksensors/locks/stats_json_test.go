package locks_test

import (
	"testing"

	"github.com/feedkit/feedkit/examples/locksensors/locks"
	"github.com/feedkit/feedkit/internal/jsoncheck"
)

// The ingester's, notifier's and liveness's counters encode to JSON in snake_case,
// every field set, and decode to the same values.
func TestStatsEncodeToJSON(t *testing.T) {
	jsoncheck.RoundTrip(t, jsoncheck.Filled[locks.IngestStats]())
	jsoncheck.RoundTrip(t, jsoncheck.Filled[locks.NotifierStats]())
	jsoncheck.RoundTrip(t, jsoncheck.Filled[locks.LivenessStats]())
}
