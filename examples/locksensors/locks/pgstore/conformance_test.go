package pgstore_test

import (
	"testing"

	"github.com/feedkit/feedkit/examples/locksensors/locks"
	"github.com/feedkit/feedkit/examples/locksensors/locks/lockstest"
	"github.com/feedkit/feedkit/internal/pgtest"
)

// TestConformance holds the Store to the contract, each subtest on a schema of its own.
func TestConformance(t *testing.T) {
	lockstest.Run(t, func(t *testing.T) locks.Store { return newStore(t, pgtest.Pool(t)) })
}
