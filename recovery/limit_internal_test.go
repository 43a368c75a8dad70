package recovery

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/feedkit/feedkit/heartbeat"
)

func TestPastLimitAndMonitorTimeoutDrawOneBoundary(t *testing.T) {
	const limit = 15 * time.Second
	assert.False(t, pastLimit(limit, limit), "exactly the limit")
	assert.True(t, pastLimit(limit+time.Nanosecond, limit), "the limit and 1ns")
	// The monitor finds a key lost once silent for its whole timeout.
	assert.Equal(t, limit+time.Nanosecond, monitorTimeout(limit))
	for _, huge := range []time.Duration{heartbeat.MaxTimeout - time.Nanosecond, heartbeat.MaxTimeout, math.MaxInt64} {
		assert.Equal(t, heartbeat.MaxTimeout, monitorTimeout(huge), "limit %d: no overflow past the monitor's maximum", huge)
	}
}
