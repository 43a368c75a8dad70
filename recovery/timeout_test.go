package recovery_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/recovery"
)

// A recovery whose snapshot_complete does not come within RecoveryTimeout is reported as
// a TimeoutError and requested again for what it covered (rule 1); the old
// request's snapshot_complete no longer ends it, the new one's does.
func TestRecoveryTimeoutRequestsAgain(t *testing.T) {
	const timeout = time.Minute
	r := newRig(t, recovery.Config{RecoveryTimeout: timeout})
	r.alive(1, true)
	first := r.recovered()

	r.advance(timeout, check) // exactly the timeout: not overdue yet
	r.quiet()
	r.api.none(t)
	assert.Equal(t, recovery.Recovering, r.state(1).State)

	r.advance(check, check) // the first check past it
	err := r.nextErr()
	var te *recovery.TimeoutError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, 1, te.Producer)
	assert.Equal(t, first.id, te.RequestID)
	assert.Equal(t, t0, te.RequestedAt)
	assert.Contains(t, err.Error(), "no snapshot_complete in time")

	second := r.recovered()
	assert.Equal(t, first.after, second.after, "rule 1: what the overdue recovery covered")
	assert.Greater(t, second.id, first.id)
	st := r.state(1)
	assert.Equal(t, recovery.Recovering, st.State)
	assert.Equal(t, second.id, st.RecoverySnapshotID)
	assert.Equal(t, r.clk.Now(), st.RecoveryRequestedAt)
	assert.Equal(t, uint64(1), r.m.Stats().RecoveryTimeouts)

	r.snapshot(0, 1, first.id)
	r.quiet()
	assert.Equal(t, recovery.Recovering, r.state(1).State, "the old request's replay no longer ends it")
	assert.Equal(t, uint64(1), r.m.Stats().SnapshotsIgnored)

	r.snapshot(0, 1, second.id)
	assert.Equal(t, "producer 1 up (FirstRecoveryCompleted)", r.next())
	r.quiet()
}

// The old request's snapshot_complete arriving while the new request is being sent does
// not end the recovery either.
func TestOldSnapshotWhileTheRepeatedRequestIsInFlight(t *testing.T) {
	api := newBlockingAPI()
	r := newRig(t, recovery.Config{RecoveryTimeout: time.Minute}, withRequester(api))
	r.alive(1, true)
	first := api.next(t)
	api.answer(t, nil)
	require.Equal(t, initiated(first), r.next())

	r.advance(time.Minute+check, check)
	var te *recovery.TimeoutError
	require.ErrorAs(t, r.nextErr(), &te)
	second := api.next(t) // blocked
	assert.Equal(t, first.after, second.after, "rule 1")
	r.snapshot(0, 1, first.id)
	r.quiet()
	api.answer(t, nil)
	assert.Equal(t, initiated(second), r.next())
	r.quiet()
	assert.Equal(t, recovery.Recovering, r.state(1).State)
	r.snapshot(0, 1, second.id)
	assert.Equal(t, "producer 1 up (FirstRecoveryCompleted)", r.next())
}
