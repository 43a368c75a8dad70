package locks_test

import (
	"testing"

	"github.com/feedkit/feedkit/examples/locksensors/locks"
	"github.com/feedkit/feedkit/examples/locksensors/locks/lockstest"
)

func TestMemoryStore(t *testing.T) {
	lockstest.Run(t, func(t *testing.T) locks.Store { return locks.NewMemoryStore(0) })
}
