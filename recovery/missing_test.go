package recovery_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/recovery"
)

// Alives stop while the producer recovers (nothing to register then: it is down
// already), and its snapshot_complete still arrives. The producer is healthy, yet no alive
// has come for longer than its limit: the next check must register the disconnection,
// as the seed's MissingHeartbeatWorker does at each of its runs.
func TestAlivesMissingWhenARecoveryCompletesAreFound(t *testing.T) {
	r := newRig(t, recovery.Config{})
	r.alive(1, true) // the last alive
	c := r.recovered()
	r.advance(time.Minute, check) // no alives: the producer is recovering, nothing to tell
	r.quiet()
	r.snapshot(0, 1, c.id)
	require.Equal(t, "producer 1 up (FirstRecoveryCompleted)", r.next())

	r.advance(check, check)
	st := r.state(1)
	require.Equal(t, recovery.Disconnected, st.State,
		"no alive for %v (limit %v) and the producer stays healthy", r.clk.Now().Sub(t0), lo.HeartbeatLimit)
	assert.Equal(t, "producer 1 down (AliveIntervalViolation)", r.next())
	// No alive was read after the first recovery's replay: the recovery point is still
	// where that recovery went back to.
	point := t0.Add(-recovery.DefaultAssumedDowntime)
	assert.Equal(t, point, st.LastDisconnectedAt)

	r.alive(1, true)
	again := r.recovered()
	assert.Equal(t, point, again.after, "rule 4")
}

// The same with a request postponed by the rate limits: alives stop while the producer
// waits, the request goes out at RetryAt, its recovery completes, the producer must be
// found missing at the next check.
func TestAlivesMissingAfterAPostponedRecoveryAreFound(t *testing.T) {
	inner := recovery.NewMemoryLedger()
	fill(t, inner, recovery.DefaultAccount, shortLen, spread(t0.Add(-9*time.Minute), time.Second, 20)...)
	r := newRig(t, recovery.Config{Ledger: inner})
	r.alive(1, true)
	re := requestErr(t, r.nextErr())
	r.advance(re.RetryAt.Sub(r.clk.Now()), check)
	c := r.recovered()
	r.snapshot(0, 1, c.id)
	require.Equal(t, "producer 1 up (FirstRecoveryCompleted)", r.next())
	r.advance(check, check)
	require.Equal(t, recovery.Disconnected, r.state(1).State, "a minute without alives")
	assert.Equal(t, "producer 1 down (AliveIntervalViolation)", r.next())
}

// Alives that keep coming through a recovery leave the producer healthy after it.
func TestAlivesOnTimeThroughARecoveryKeepItHealthy(t *testing.T) {
	r := newRig(t, recovery.Config{})
	r.alive(1, true)
	c := r.recovered()
	for range 6 {
		r.advance(10*time.Second, check)
		r.alive(1, true)
	}
	r.snapshot(0, 1, c.id)
	require.Equal(t, "producer 1 up (FirstRecoveryCompleted)", r.next())
	for range 6 {
		r.advance(10*time.Second, check)
		r.alive(1, true)
	}
	r.quiet()
	assert.Equal(t, recovery.Healthy, r.state(1).State)
}
