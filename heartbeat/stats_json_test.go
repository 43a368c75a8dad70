package heartbeat_test

import (
	"testing"

	"github.com/feedkit/feedkit/heartbeat"
	"github.com/feedkit/feedkit/internal/jsoncheck"
)

// The monitor's counters encode to JSON in snake_case, every field set, and decode to
// the same values.
func TestStatsEncodeToJSON(t *testing.T) {
	jsoncheck.RoundTrip(t, jsoncheck.Filled[heartbeat.Stats]())
}
