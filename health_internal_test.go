package feedkit

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/feedkit/feedkit/feed/rabbitmq"
)

// A transport is stuck only when a link is missing and no attempt was made within its
// bound: connected, connecting for the first time, or reconnecting is live.
func TestTransportStuck(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	const bound = 45 * time.Second
	failed := rabbitmq.Stats{Connected: 1, LastError: "rabbitmq: lost the connection", LastErrorAt: now.Add(-bound - time.Second)}
	assert.Empty(t, stuck(rabbitmq.Stats{Connected: 2}, 2, now, bound), "connected")
	assert.Empty(t, stuck(rabbitmq.Stats{}, 2, now, bound), "connecting for the first time")
	assert.Empty(t, stuck(rabbitmq.Stats{Connected: 2, LastErrorAt: now.Add(-time.Hour)}, 2, now, bound), "an old error, connected since")
	recent := failed
	recent.LastErrorAt = now.Add(-bound)
	assert.Empty(t, stuck(recent, 2, now, bound), "an attempt within the bound: reconnecting")
	assert.Equal(t, "1 of 2 sessions disconnected and no connection attempt for 46s (more than 45s); the last error: rabbitmq: lost the connection",
		stuck(failed, 2, now, bound))
}
