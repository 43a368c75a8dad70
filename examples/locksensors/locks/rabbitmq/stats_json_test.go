package rabbitmq_test

import (
	"testing"

	"github.com/feedkit/feedkit/examples/locksensors/locks/rabbitmq"
	"github.com/feedkit/feedkit/internal/jsoncheck"
)

// The consumer's counters, served under "queue" at the service's /stats, encode to JSON
// in snake_case, every field set, and decode to the same values.
func TestStatsEncodeToJSON(t *testing.T) {
	jsoncheck.RoundTrip(t, jsoncheck.Filled[rabbitmq.Stats]())
}
