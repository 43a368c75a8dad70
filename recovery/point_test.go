package recovery_test

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/recovery"
)

// lagging sends an alive of producer p stamped lag behind our clock, as a late feed or a
// backlog delivers it, and reports it processed when processed is set.
func (r *rig) lagging(p int, lag time.Duration, processed bool) time.Time {
	stamp := r.clk.Now().Add(-lag)
	r.system(0, &feed.Alive{Header: feed.Header{Producer: p, Timestamp: stamp}, Subscribed: true})
	if processed {
		r.m.ProcessedThrough(p, stamp)
		r.flush()
	}
	return stamp
}

// failed tells the manager that the listener call for a message of p stamped at failed.
func (r *rig) failed(p int, at time.Time) {
	r.m.ListenerFailed(&feed.Header{Producer: p, Event: feed.MustParseURN("sr:match:42"), Timestamp: at}, feed.MessageOddsChange)
	r.flush()
}

// The recovery point is the feed's timestamp of the last alive before which everything
// was processed: not the alives received, and not our clock.
func TestRecoveryPointIsTheLastProcessedAliveInTheFeedsClock(t *testing.T) {
	r := newRig(t, recovery.Config{})
	r.healthy(1)
	r.advance(10*time.Second, check)
	processed := r.lagging(1, 3*time.Second, true)
	assert.Equal(t, processed, r.state(1).LastSubscribedAt, "the feed's timestamp, 3 s behind ours")
	assert.Equal(t, 3*time.Second, r.state(1).ClockDrift)

	r.advance(10*time.Second, check)
	r.lagging(1, 3*time.Second, false) // received; the messages before it are still queued
	r.advance(10*time.Second, check)
	r.lagging(1, 3*time.Second, false)
	assert.Equal(t, processed, r.state(1).LastSubscribedAt, "alives received do not move the point")

	r.m.HandleConnectionDown(feed.SessionRef{}, nil)
	r.flush()
	assert.Equal(t, "producer 1 down (ConnectionDown) on session 0 (all messages)", r.next())
	assert.Equal(t, processed, r.state(1).LastDisconnectedAt, "disconnected at the point")
	r.alive(1, true)
	assert.Equal(t, processed, r.recovered().after, "recovered from the last processed alive")
}

// An alive read before the recovery completed may have come ahead of the replay on some
// session: being processed through it says nothing of the replay, so the point stays
// where the recovery went back to until an alive read after it is processed.
func TestProcessedAlivesBeforeTheReplayDoNotMoveThePoint(t *testing.T) {
	r := newRig(t, recovery.Config{})
	r.aliveQueued(1, true)
	c := r.recovered()
	r.snapshot(0, 1, c.id)
	require.Equal(t, "producer 1 up (FirstRecoveryCompleted)", r.next())
	assert.Equal(t, c.after, r.state(1).LastSubscribedAt, "where the recovery went back to")

	r.m.ProcessedThrough(1, t0) // the alive read before the snapshot_complete
	r.flush()
	assert.Equal(t, c.after, r.state(1).LastSubscribedAt)
	r.advance(10*time.Second, check)
	r.alive(1, true)
	assert.Equal(t, r.clk.Now(), r.state(1).LastSubscribedAt, "an alive read after the replay")
}

// The point is saved at most once per check interval, so a restart after a backlog was
// lost recovers from a point at or before the last alive processed, never after it.
func TestRestartRecoversFromTheProcessedPointNotTheLastAlive(t *testing.T) {
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			open := s.open(t)
			a := newRigAt(t, recovery.Config{Store: open()}, t0)
			a.healthy(1)
			var processed time.Time
			for range 4 {
				a.advance(10*time.Second, check)
				processed = a.lagging(1, time.Second, true)
			}
			for range 3 { // a listener stuck: alives arrive, nothing is processed
				a.advance(10*time.Second, check)
				a.lagging(1, time.Second, false)
			}
			require.NoError(t, a.m.Close(context.Background()))

			b := newRigAt(t, recovery.Config{Store: open()}, a.clk.Now().Add(time.Minute))
			saved := b.state(1).LastSubscribedAt
			assert.False(t, saved.After(processed), "saved %v, processed through %v", saved, processed)
			assert.False(t, saved.Before(processed.Add(-check)), "saved %v, processed through %v", saved, processed)
			b.alive(1, true)
			assert.Equal(t, saved, b.recovered().after)
		})
	}
}

// A failed listener call holds the point at its message until a recovery replays it.
func TestAFailedCallHoldsThePointUntilARecoveryReplaysIt(t *testing.T) {
	var logs bytes.Buffer
	r := newRig(t, recovery.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	r.healthy(1)
	r.advance(10*time.Second, check)
	r.alive(1, true)
	failedAt := r.clk.Now().Add(2 * time.Second)
	r.failed(1, failedAt)
	r.failed(1, failedAt.Add(time.Second)) // a later failure holds nothing more
	st := r.state(1)
	require.NotNil(t, st.Hold)
	assert.Equal(t, failedAt, st.Hold.Timestamp)
	assert.Equal(t, "sr:match:42", st.Hold.Event.String())

	for range 3 {
		r.advance(10*time.Second, check)
		r.alive(1, true)
	}
	assert.Equal(t, failedAt, r.state(1).LastSubscribedAt, "held at the failed message")
	stats := r.m.Stats()
	assert.Equal(t, uint64(2), stats.ListenerFailures)
	assert.Equal(t, uint64(1), stats.Holds, "held once")
	assert.Equal(t, 1, bytes.Count(logs.Bytes(), []byte("the recovery point is held")), "logged once:\n%s", logs.String())

	r.m.HandleConnectionDown(feed.SessionRef{}, nil)
	r.flush()
	assert.Equal(t, "producer 1 down (ConnectionDown) on session 0 (all messages)", r.next())
	r.advance(time.Second, check)
	r.alive(1, true)
	c := r.recovered()
	assert.Equal(t, failedAt, c.after, "the recovery replays the failed message")
	r.snapshot(0, 1, c.id)
	assert.Equal(t, "producer 1 up (ReturnedFromInactivity)", r.next())
	assert.Nil(t, r.state(1).Hold, "replayed: released")
	assert.Equal(t, uint64(1), r.m.Stats().HoldsReplayed)
	r.advance(10*time.Second, check)
	r.alive(1, true)
	assert.Equal(t, r.clk.Now(), r.state(1).LastSubscribedAt, "the point moves on")
}

// A replayed message is older than the point: its failure takes the point back to it.
func TestAFailedReplayedMessageTakesThePointBack(t *testing.T) {
	r := newRig(t, recovery.Config{})
	r.healthy(1)
	r.advance(10*time.Second, check)
	r.alive(1, true)
	old := r.clk.Now().Add(-time.Minute)
	r.failed(1, old)
	assert.Equal(t, old, r.state(1).LastSubscribedAt)
}

// A hold never outlives the recovery window: past it the message is given up, loudly,
// and the point moves on.
func TestAHoldIsGivenUpPastTheRecoveryWindow(t *testing.T) {
	r := newRig(t, recovery.Config{MaxRecoveryLength: time.Hour, CheckInterval: time.Minute})
	r.healthy(1)
	r.advance(10*time.Second, time.Minute)
	r.alive(1, true)
	failedAt := r.clk.Now()
	r.failed(1, failedAt)
	for r.m.Stats().HoldsGivenUp == 0 {
		require.False(t, r.clk.Now().Sub(failedAt) > time.Hour+time.Minute, "a check a minute past the window gives it up")
		assert.Equal(t, failedAt, r.state(1).LastSubscribedAt, "held within the window")
		r.advance(10*time.Second, time.Minute)
		r.alive(1, true)
	}
	assert.Greater(t, r.clk.Now().Sub(failedAt), time.Hour, "not before the window is over")
	var given *recovery.HoldGivenUpError
	require.ErrorAs(t, r.nextErr(), &given)
	assert.Equal(t, failedAt, given.Hold.Timestamp)
	assert.Contains(t, given.Error(), "GIVING UP the odds_change of sr:match:42")
	assert.Nil(t, r.state(1).Hold)
	assert.Equal(t, uint64(1), r.m.Stats().HoldsGivenUp)
	r.advance(time.Second, time.Minute)
	r.alive(1, true)
	assert.Equal(t, r.clk.Now(), r.state(1).LastSubscribedAt, "the point moves on")
}

func TestAdvancePastFailuresTurnsHoldsOff(t *testing.T) {
	r := newRig(t, recovery.Config{AdvancePastFailures: true})
	r.healthy(1)
	r.advance(10*time.Second, check)
	r.alive(1, true)
	r.failed(1, r.clk.Now())
	r.advance(10*time.Second, check)
	r.alive(1, true)
	assert.Equal(t, r.clk.Now(), r.state(1).LastSubscribedAt)
	assert.Nil(t, r.state(1).Hold)
	assert.Equal(t, uint64(1), r.m.Stats().ListenerFailures)
	assert.Zero(t, r.m.Stats().Holds)
}

// A drift between the feed's clock and ours past 5 s is logged once, and again when it
// comes back.
func TestClockDriftIsMeasuredAndLogged(t *testing.T) {
	var logs bytes.Buffer
	r := newRig(t, recovery.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	r.lagging(1, 5*time.Second, true)
	assert.Equal(t, 5*time.Second, r.state(1).ClockDrift)
	assert.Zero(t, r.m.Stats().DriftWarnings, "5 s is within")
	for range 3 {
		r.clk.Advance(time.Second)
		r.lagging(1, 6*time.Second, true)
	}
	assert.Equal(t, uint64(1), r.m.Stats().DriftWarnings)
	r.clk.Advance(time.Second)
	r.lagging(1, -7*time.Second, true) // ahead counts too, but it is the same episode
	assert.Equal(t, -7*time.Second, r.state(1).ClockDrift)
	r.clk.Advance(10 * time.Second) // past the stamp of the alive ahead
	r.lagging(1, 0, true)
	assert.Equal(t, uint64(1), r.m.Stats().DriftWarnings)
	assert.Equal(t, 1, bytes.Count(logs.Bytes(), []byte("differ by more than 5s")), logs.String())
	assert.Equal(t, 1, bytes.Count(logs.Bytes(), []byte("within 5s of ours again")), logs.String())
}
