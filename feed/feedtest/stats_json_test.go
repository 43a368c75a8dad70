package feedtest_test

import (
	"testing"

	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/internal/jsoncheck"
)

// The broker's and the simulator's counters encode to JSON in snake_case, every field
// set, and decode to the same values.
func TestStatsEncodeToJSON(t *testing.T) {
	jsoncheck.RoundTrip(t, jsoncheck.Filled[feedtest.BrokerStats]())
	jsoncheck.RoundTrip(t, jsoncheck.Filled[feedtest.SimulatorStats]())
}
