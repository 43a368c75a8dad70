package recovery_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/recovery"
)

const check = recovery.DefaultCheckInterval

// The first alive of a producer nothing is known about asks for the last ten minutes; a
// snapshot_complete of another request is ignored, the right one makes it healthy.
func TestFirstAliveRecoversAndSnapshotCompleteEndsIt(t *testing.T) {
	r := newRig(t, recovery.Config{})
	r.alive(1, true)
	c := r.recovered()
	assert.Equal(t, 1, c.producer)
	assert.Equal(t, t0.Add(-10*time.Minute), c.after, "rule 2b")
	st := r.state(1)
	assert.Equal(t, recovery.Recovering, st.State)
	assert.Equal(t, c.id, st.RecoverySnapshotID)
	assert.Equal(t, t0, st.RecoveryRequestedAt)
	assert.NotZero(t, c.id, "request ids are never 0")

	r.snapshot(0, 1, c.id+100)
	r.quiet()
	assert.Equal(t, recovery.Recovering, r.state(1).State, "a snapshot of another request is ignored")
	assert.Equal(t, uint64(1), r.m.Stats().SnapshotsIgnored)

	r.snapshot(0, 1, c.id)
	assert.Equal(t, "producer 1 up (FirstRecoveryCompleted)", r.next())
	st = r.state(1)
	assert.Equal(t, recovery.Healthy, st.State)
	assert.True(t, st.Up)
	assert.Zero(t, st.LastDisconnectedAt, "a completed recovery clears the disconnection")
	r.quiet()
}

// healthy brings producer p to healthy through a first recovery, at the current time.
func (r *rig) healthy(p int) {
	r.t.Helper()
	r.alive(p, true)
	c := r.recovered()
	r.snapshot(0, p, c.id)
	require.Equal(r.t, "producer "+itoa(p)+" up (FirstRecoveryCompleted)", r.next())
}

func itoa(i int) string { return string(rune('0' + i)) }

// Missing heartbeat: the check registers the disconnection at the last alive, within one
// check interval of the limit; it does nothing while alives are on time, and nothing a
// second time. When alives resume, the recovery goes back to the disconnection.
func TestMissingHeartbeatRegistersTheDisconnectionAndAlivesResumeRecovery(t *testing.T) {
	r := newRig(t, recovery.Config{})
	r.healthy(1)
	for range 6 { // a minute of alives every 10 s: nothing happens
		r.advance(10*time.Second, check)
		r.alive(1, true)
	}
	r.quiet()
	lastAlive := r.clk.Now()
	// Silence. The limit (15 s) passes at lastAlive+15s; the check runs every 15 s, so the
	// disconnection is found at most one interval later.
	r.advance(15*time.Second-time.Millisecond, time.Second)
	assert.Equal(t, recovery.Healthy, r.state(1).State, "not yet past the limit")
	r.advance(check+time.Millisecond, time.Second)
	assert.Equal(t, "producer 1 down (AliveIntervalViolation)", r.next())
	st := r.state(1)
	assert.Equal(t, recovery.Disconnected, st.State)
	assert.Equal(t, lastAlive, st.LastDisconnectedAt)
	r.advance(5*time.Minute, check)
	r.quiet() // registered once
	r.api.none(t)

	r.alive(1, true)
	c := r.recovered()
	assert.Equal(t, lastAlive, c.after, "rule 4: from last_disconnected_at")
	r.snapshot(0, 1, c.id)
	assert.Equal(t, "producer 1 up (ReturnedFromInactivity)", r.next())
}

// An alive late by more than the limit (our listener was down, the feed slow) requests a
// recovery from the previous alive, the recovery point.
func TestLateAliveRequestsRecoveryFromThePreviousAlive(t *testing.T) {
	r := newRig(t, recovery.Config{CheckInterval: time.Hour}) // the check is not what finds it
	r.healthy(1)
	r.clk.Advance(10 * time.Second)
	r.alive(1, true)
	prev := r.clk.Now()
	require.Equal(t, prev, r.state(1).LastSubscribedAt, "processed through the alive after the up")
	r.clk.Advance(16 * time.Second)
	r.alive(1, true)
	assert.Equal(t, "producer 1 down (AliveIntervalViolation)", r.next())
	c := r.recovered()
	assert.Equal(t, prev, c.after)
	assert.Equal(t, prev, r.state(1).LastSubscribedAt, "the point stays while the producer is down")

	// Within the limit nothing happens: the prematch producer allows 5 minutes.
	r.healthy(3)
	r.clk.Advance(4*time.Minute + 59*time.Second)
	r.alive(3, true)
	r.quiet()
	r.api.none(t)
}

// subscribed=0: a recovery for the period since the last subscription (the recovery
// point), which stays there until the producer is healthy again.
func TestUnsubscribedAliveRecoversSinceTheLastSubscription(t *testing.T) {
	r := newRig(t, recovery.Config{})
	r.healthy(1)
	r.advance(10*time.Second, check)
	r.alive(1, true)
	lastSub := r.clk.Now()
	r.advance(5*time.Second, check)
	r.alive(1, false)
	assert.Equal(t, "producer 1 down (Other)", r.next())
	c := r.recovered()
	assert.Equal(t, lastSub, c.after, "rule 2a")
	assert.Equal(t, lastSub, r.state(1).LastSubscribedAt, "the point stays while the producer is down")
	assert.Equal(t, uint64(1), r.m.Stats().Unsubscribed)
}

// Copies of one alive from several sessions count once.
func TestDuplicateAlivesAreDropped(t *testing.T) {
	r := newRig(t, recovery.Config{}, withSessions(2))
	r.alive(1, true)
	r.alive(1, true) // same timestamp: the other session's copy
	r.recovered()
	r.api.none(t)
	assert.Equal(t, uint64(1), r.m.Stats().DuplicateAlives)
}

// With two sessions, the recovery completes when both have delivered the snapshot_complete:
// each follows the replay on its own queue.
func TestSnapshotCompleteIsAwaitedOnEverySession(t *testing.T) {
	r := newRig(t, recovery.Config{}, withSessions(2))
	r.alive(1, true)
	c := r.recovered()
	r.snapshot(1, 1, c.id)
	r.snapshot(1, 1, c.id) // the same session twice is still one
	r.quiet()
	r.snapshot(0, 1, c.id)
	assert.Equal(t, "producer 1 up (FirstRecoveryCompleted)", r.next())
}

// A lost connection disconnects the healthy producers and invalidates a recovery in
// progress, which is requested again for what it covered (rule 1).
func TestConnectionDownDisconnectsAndRepeatsARecoveryInProgress(t *testing.T) {
	r := newRig(t, recovery.Config{})
	r.healthy(1)
	r.alive(3, true)
	c3 := r.recovered()

	r.advance(5*time.Second, check)
	r.m.HandleConnectionDown(feed.SessionRef{Index: 1, Interest: feed.LiveMessagesOnly}, nil)
	r.flush()
	assert.Equal(t, "producer 1 down (ConnectionDown) on session 1 (live messages only)", r.next(), "the status names the session that lost its connection")
	r.quiet() // producer 3 was down already
	r.snapshot(0, 3, c3.id)
	r.quiet() // its replay may be incomplete: the old snapshot no longer completes it

	r.advance(5*time.Second, check)
	r.alive(3, true)
	again := r.recovered()
	assert.Equal(t, c3.after, again.after, "rule 1: what the cut recovery covered")
	r.alive(1, true)
	c1 := r.recovered()
	assert.Equal(t, t0.Add(-recovery.DefaultAssumedDowntime), c1.after,
		"from the recovery point: the first recovery's start, as no alive was read after its replay")
	r.snapshot(0, 3, again.id)
	assert.Equal(t, "producer 3 up (FirstRecoveryCompleted)", r.next())
	r.snapshot(0, 1, c1.id)
	assert.Equal(t, "producer 1 up (ReturnedFromInactivity)", r.next())
}
