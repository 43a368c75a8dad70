package recovery_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/recovery"
)

// The snapshot_complete of a request may arrive before the API has answered it (the
// replay is short): the recovery completes as soon as the API accepts.
func TestSnapshotCompleteBeforeTheAPIAnswers(t *testing.T) {
	api := newBlockingAPI()
	r := newRig(t, recovery.Config{}, withRequester(api))
	r.alive(1, true)
	c := api.next(t)
	r.snapshot(0, 1, c.id)
	r.quiet()
	st := r.state(1)
	assert.Equal(t, recovery.Disconnected, st.State)
	assert.True(t, st.RecoveryPending)

	api.answer(t, nil)
	assert.Equal(t, t0.Add(-10*time.Minute), c.after)
	assert.Equal(t, initiated(c), r.next())
	assert.Equal(t, "producer 1 up (FirstRecoveryCompleted)", r.next())
	r.quiet()
	assert.Equal(t, recovery.Healthy, r.state(1).State)
	assert.Equal(t, uint64(1), r.m.Stats().RecoveriesCompleted)
}

// With two sessions, an early copy on one and the other after the answer complete it.
func TestEarlySnapshotCompleteOnOneSessionOfTwo(t *testing.T) {
	api := newBlockingAPI()
	r := newRig(t, recovery.Config{}, withRequester(api), withSessions(2))
	r.alive(1, true)
	c := api.next(t)
	r.snapshot(1, 1, c.id)
	api.answer(t, nil)
	assert.Equal(t, initiated(c), r.next())
	r.quiet()
	r.snapshot(0, 1, c.id)
	assert.Equal(t, "producer 1 up (FirstRecoveryCompleted)", r.next())
}

// An early snapshot_complete of a request the API then fails ends nothing: the retry has
// an id of its own.
func TestEarlySnapshotCompleteOfAFailedRequest(t *testing.T) {
	api := newBlockingAPI()
	r := newRig(t, recovery.Config{}, withRequester(api))
	r.alive(1, true)
	first := api.next(t)
	r.snapshot(0, 1, first.id)
	api.answer(t, errBoom)
	re := requestErr(t, r.nextErr())
	r.flush()
	r.setClock(re.RetryAt)
	second := api.next(t)
	assert.Greater(t, second.id, first.id)
	assert.Equal(t, first.after, second.after, "the start chosen when the need arose")
	api.answer(t, nil)
	assert.Equal(t, initiated(second), r.next())
	r.snapshot(0, 1, first.id)
	r.quiet()
	assert.Equal(t, recovery.Recovering, r.state(1).State)
	r.snapshot(0, 1, second.id)
	assert.Equal(t, "producer 1 up (FirstRecoveryCompleted)", r.next())
}

// subscribed=0 while a request is being sent: the replay asked for may miss what the
// feed did not route to us, so once the API accepts, a new request follows for what the
// first one covered (rule 1), and only its snapshot_complete ends the recovery.
func TestUnsubscribedWhileARequestIsInFlight(t *testing.T) {
	api := newBlockingAPI()
	r := newRig(t, recovery.Config{}, withRequester(api))
	r.alive(1, true)
	first := api.next(t)
	r.advance(5*time.Second, check)
	r.alive(1, false)
	r.quiet() // down already
	api.none(t)

	api.answer(t, nil)
	assert.Equal(t, initiated(first), r.next())
	second := api.next(t)
	assert.Equal(t, first.after, second.after, "rule 1: what request 1 covered, its replay may be lost")
	assert.Greater(t, second.id, first.id)
	r.snapshot(0, 1, first.id)
	r.quiet()
	api.answer(t, nil)
	assert.Equal(t, initiated(second), r.next())
	r.snapshot(0, 1, first.id)
	r.quiet()
	r.snapshot(0, 1, second.id)
	assert.Equal(t, "producer 1 up (FirstRecoveryCompleted)", r.next())
	r.quiet()
}

// An ordinary alive (subscribed=1) while the request is being sent needs nothing new: the
// request covers it. Live alives come every 10 s, so an API that takes longer than that
// must not cause a second request.
func TestAliveWhileARequestIsInFlightRequestsNothingMore(t *testing.T) {
	api := newBlockingAPI()
	r := newRig(t, recovery.Config{}, withRequester(api))
	r.alive(1, true)
	first := api.next(t)
	r.advance(10*time.Second, check)
	r.alive(1, true) // the next regular alive; the API has not answered yet
	api.answer(t, nil)
	assert.Equal(t, initiated(first), r.next())
	r.flush()
	require.False(t, r.state(1).RecoveryPending, "a second recovery was requested for an ordinary alive")
	r.snapshot(0, 1, first.id)
	assert.Equal(t, "producer 1 up (FirstRecoveryCompleted)", r.next())
	api.none(t)
	assert.Equal(t, uint64(1), r.m.Stats().RecoveriesRequested)
}

// A lost connection while a request is being sent: its replay may be sent while nothing
// is received, exactly as for a recovery already accepted (which ConnectionDown repeats),
// so once the API accepts it is requested again for what it covered (rule 1).
func TestConnectionDownWhileARequestIsInFlightRequestsAgain(t *testing.T) {
	api := newBlockingAPI()
	r := newRig(t, recovery.Config{}, withRequester(api))
	r.alive(1, true)
	first := api.next(t)
	r.advance(5*time.Second, check)
	r.m.HandleConnectionDown(feed.SessionRef{}, errBoom)
	r.flush()
	r.quiet()
	api.answer(t, nil)
	assert.Equal(t, initiated(first), r.next())
	r.flush()
	require.True(t, r.state(1).RecoveryPending,
		"the replay of request 1 may have been lost with the connection: it must be requested again")
	second := api.next(t)
	assert.Equal(t, first.after, second.after, "rule 1: what request 1 covered")
	api.answer(t, nil)
	assert.Equal(t, initiated(second), r.next())
	r.snapshot(0, 1, first.id)
	r.quiet()
	r.snapshot(0, 1, second.id)
	assert.Equal(t, "producer 1 up (FirstRecoveryCompleted)", r.next())
}
