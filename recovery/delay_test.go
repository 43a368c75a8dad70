package recovery_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/recovery"
)

// quietHeartbeat keeps producer 1's heartbeat limit out of the way of tests that let
// minutes pass without alives.
var quietHeartbeat = map[int]time.Duration{1: time.Hour}

// processed tells the manager a live message of producer p stamped delay ago finished
// processing now.
func (r *rig) processed(p int, delay time.Duration) {
	r.m.ObserveProcessed(&feed.Header{Producer: p, Timestamp: r.clk.Now().Add(-delay)})
}

// A check that finds a live message processed later than MaxProcessingDelay takes the
// producer down (ProcessingQueueDelayViolation); checks without any message change
// nothing; a check whose messages are within the limit brings it up again
// (ProcessingQueueDelayStabilized).
func TestProcessingDelayTakesTheProducerDownUntilItStabilizes(t *testing.T) {
	r := newRig(t, recovery.Config{HeartbeatLimits: quietHeartbeat})
	r.healthy(1)
	r.processed(1, 5*time.Second)
	r.processed(1, 21*time.Second) // the largest delay since the last check counts
	r.processed(1, 2*time.Second)
	r.advance(check, check)
	assert.Equal(t, "producer 1 down, delayed (ProcessingQueueDelayViolation)", r.next())
	st := r.state(1)
	assert.True(t, st.Delayed)
	assert.False(t, st.Up)
	assert.Equal(t, recovery.Healthy, st.State, "a delay is no reason to recover")
	assert.Equal(t, uint64(1), r.m.Stats().DelayViolations)

	r.advance(3*check, check) // nothing processed: nothing known, nothing changes
	r.quiet()
	assert.True(t, r.state(1).Delayed)

	r.processed(1, 25*time.Second) // still late: still down, told once
	r.advance(check, check)
	r.quiet()
	assert.Equal(t, uint64(1), r.m.Stats().DelayViolations)

	r.processed(1, recovery.DefaultMaxProcessingDelay) // the limit itself is in time
	r.advance(check, check)
	assert.Equal(t, "producer 1 up (ProcessingQueueDelayStabilized)", r.next())
	st = r.state(1)
	assert.False(t, st.Delayed)
	assert.True(t, st.Up)
	r.api.none(t)

	r.advance(3*check, check)
	r.quiet()
}

// Which observations count: the delay must exceed the limit; replayed messages (a request
// id), messages without a timestamp and messages of unknown producers are ignored; a
// negative MaxProcessingDelay turns the check off.
func TestProcessingDelayObservations(t *testing.T) {
	cases := []struct {
		name   string
		limit  time.Duration
		header feed.Header
		delay  time.Duration
		late   bool
	}{
		{"at the default limit", 0, feed.Header{Producer: 1}, 20 * time.Second, false},
		{"a millisecond past the default limit", 0, feed.Header{Producer: 1}, 20*time.Second + time.Millisecond, true},
		{"a configured limit", time.Minute, feed.Header{Producer: 1}, 59 * time.Second, false},
		{"past a configured limit", time.Minute, feed.Header{Producer: 1}, time.Minute + 1, true},
		{"a replayed message", 0, feed.Header{Producer: 1, RequestID: 9}, time.Hour, false},
		{"no timestamp", 0, feed.Header{Producer: 1}, -1, false},
		{"an unknown producer", 0, feed.Header{Producer: 99}, time.Hour, false},
		{"the check turned off", -1, feed.Header{Producer: 1}, time.Hour, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, recovery.Config{HeartbeatLimits: quietHeartbeat, MaxProcessingDelay: c.limit})
			r.healthy(1)
			h := c.header
			now := r.clk.Now()
			if c.delay >= 0 {
				h.Timestamp = now.Add(-c.delay)
			}
			r.m.ObserveProcessed(&h)
			r.advance(check, check)
			if c.late {
				assert.Equal(t, "producer 1 down, delayed (ProcessingQueueDelayViolation)", r.next())
			}
			r.quiet()
			assert.Equal(t, c.late, r.state(1).Delayed)
			assert.Equal(t, !c.late, r.state(1).Up)
		})
	}
}

// A producer found delayed while it recovers is not reported up when its recovery
// completes, only once its messages are processed in time again.
func TestDelayedProducerIsNotUpUntilStabilized(t *testing.T) {
	r := newRig(t, recovery.Config{HeartbeatLimits: quietHeartbeat})
	r.alive(1, true)
	c := r.recovered()
	r.processed(1, 30*time.Second)
	r.advance(check, check)
	r.quiet() // down already: nothing to tell
	require.True(t, r.state(1).Delayed)

	r.snapshot(0, 1, c.id)
	r.quiet()
	st := r.state(1)
	assert.Equal(t, recovery.Healthy, st.State)
	assert.False(t, st.Up)
	assert.Equal(t, uint64(1), r.m.Stats().RecoveriesCompleted)

	r.advance(check, check)
	r.quiet()
	r.processed(1, time.Second)
	r.advance(check, check)
	assert.Equal(t, "producer 1 up (ProcessingQueueDelayStabilized)", r.next())
	assert.True(t, r.state(1).Up)
	r.quiet()
}

// A delay that ends while the producer is down for another reason is forgotten quietly:
// the producer comes up with its recovery.
func TestDelayEndingWhileDownIsQuiet(t *testing.T) {
	r := newRig(t, recovery.Config{HeartbeatLimits: quietHeartbeat})
	r.healthy(1)
	r.processed(1, time.Minute)
	r.advance(check, check)
	require.Equal(t, "producer 1 down, delayed (ProcessingQueueDelayViolation)", r.next())
	r.clk.Advance(time.Second)
	r.alive(1, false)
	c := r.recovered()
	r.processed(1, time.Second)
	r.advance(check, check)
	r.quiet()
	assert.False(t, r.state(1).Delayed)
	r.snapshot(0, 1, c.id)
	assert.Equal(t, "producer 1 up (ReturnedFromInactivity)", r.next())
}
