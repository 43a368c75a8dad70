package recovery_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/recovery"
)

// eventAPI is the rig's fake API that recovers events too: each event request is recorded
// and answered with the next scripted error (nil when none), after gate, if set, lets it.
type eventAPI struct {
	*fakeAPI
	events chan eventCall
	gate   chan struct{}
	errs   chan error
}

type eventCall struct {
	producer int
	event    feed.URN
	id       int64
	stateful bool
}

func (a *eventAPI) call(p feed.Producer, event feed.URN, id int64, stateful bool) error {
	a.events <- eventCall{p.ID, event, id, stateful}
	if a.gate != nil {
		<-a.gate
	}
	select {
	case err := <-a.errs:
		return err
	default:
		return nil
	}
}

func (a *eventAPI) InitiateEventRecovery(_ context.Context, p feed.Producer, event feed.URN, id int64) error {
	return a.call(p, event, id, false)
}

func (a *eventAPI) InitiateEventStatefulRecovery(_ context.Context, p feed.Producer, event feed.URN, id int64) error {
	return a.call(p, event, id, true)
}

var match42 = feed.URN{Prefix: "sr", Type: "match", ID: 42}

// newEventRig is a rig whose API recovers events.
func newEventRig(t *testing.T, cfg recovery.Config, opts ...rigOption) (*rig, *eventAPI) {
	t.Helper()
	api := &eventAPI{fakeAPI: &fakeAPI{calls: make(chan apiCall, 64)}, events: make(chan eventCall, 64), errs: make(chan error, 8)}
	r := newRig(t, cfg, append(opts, withRequester(api))...)
	r.api = api.fakeAPI
	return r, api
}

func eventInitiated(id int64) string {
	return fmt.Sprintf("event recovery #%d of producer 1 initiated for sr:match:42", id)
}

func statefulInitiated(id int64) string {
	return fmt.Sprintf("event stateful recovery #%d of producer 1 initiated for sr:match:42", id)
}

func eventCompleted(id int64) string {
	return fmt.Sprintf("event recovery #%d of producer 1 completed for sr:match:42", id)
}

// An event recovery is initiated, then completed once its snapshot_complete has come on
// every session; it changes nothing of the producer's state.
func TestRecoverEventCompletesAtItsSnapshotOnEverySession(t *testing.T) {
	r, api := newEventRig(t, recovery.Config{}, withSessions(2))
	id, err := r.m.RecoverEvent(t.Context(), lo.ID, match42)
	require.NoError(t, err)
	assert.Equal(t, eventCall{lo.ID, match42, id, false}, <-api.events)
	assert.Equal(t, eventInitiated(id), r.next())
	r.snapshot(0, lo.ID, id)
	r.quiet()
	r.snapshot(1, lo.ID, id)
	assert.Equal(t, eventCompleted(id), r.next())
	r.quiet()
	st := r.m.Stats()
	assert.Equal(t, uint64(1), st.EventRecoveriesRequested)
	assert.Equal(t, uint64(1), st.EventRecoveriesCompleted)
	assert.Zero(t, st.SnapshotsIgnored)
	assert.Zero(t, st.RecoveriesRequested)
	assert.Equal(t, recovery.Disconnected, r.state(lo.ID).State)

	stateful, err := r.m.RecoverEventStateful(t.Context(), lo.ID, match42)
	require.NoError(t, err)
	assert.Equal(t, eventCall{lo.ID, match42, stateful, true}, <-api.events)
	assert.Greater(t, stateful, id, "each request has its own id")
	assert.Equal(t, statefulInitiated(stateful), r.next())
}

// A snapshot_complete that comes before the API's answer completes the recovery once the
// answer comes, after its initiation.
func TestRecoverEventSnapshotBeforeTheAPIAnswers(t *testing.T) {
	r, api := newEventRig(t, recovery.Config{})
	api.gate = make(chan struct{})
	type answer struct {
		id  int64
		err error
	}
	done := make(chan answer, 1)
	go func() {
		id, err := r.m.RecoverEvent(context.Background(), lo.ID, match42)
		done <- answer{id, err}
	}()
	c := <-api.events
	r.snapshot(0, lo.ID, c.id)
	r.quiet()
	close(api.gate)
	a := <-done
	require.NoError(t, a.err)
	assert.Equal(t, c.id, a.id)
	assert.Equal(t, eventInitiated(a.id), r.next())
	assert.Equal(t, eventCompleted(a.id), r.next())
	r.quiet()
}

// An event recovery counts against the account's limits, in the shortest tier, with the
// producers' recoveries: one allowed an hour, a second event recovery is refused with
// the moment it is allowed, and so is the producer's recovery after it. A request the API
// failed gives its place back.
func TestRecoverEventCountsAgainstTheAccountsLimits(t *testing.T) {
	limits := recovery.Limits{{Windows: []recovery.Window{{Length: time.Hour, Max: 1}}}}
	r, api := newEventRig(t, recovery.Config{Limits: limits})
	api.errs <- errBoom
	_, err := r.m.RecoverEvent(t.Context(), lo.ID, match42)
	re := requestErr(t, err)
	assert.ErrorIs(t, re, errBoom)
	assert.Equal(t, match42, re.Event)
	<-api.events

	id, err := r.m.RecoverEvent(t.Context(), lo.ID, match42)
	require.NoError(t, err, "the failed request gave its place back")
	<-api.events
	assert.Equal(t, eventInitiated(id), r.next())

	_, err = r.m.RecoverEventStateful(t.Context(), lo.ID, match42)
	re = requestErr(t, err)
	assert.ErrorIs(t, re, recovery.ErrRateLimited)
	assert.Equal(t, t0.Add(time.Hour), re.RetryAt)
	assert.Len(t, api.events, 0, "nothing sent")

	r.alive(lo.ID, true)
	re = requestErr(t, r.nextErr())
	assert.ErrorIs(t, re, recovery.ErrRateLimited)
	assert.Equal(t, lo.ID, re.Producer)
	assert.True(t, re.Event.IsZero())
	r.api.none(t)
	st := r.m.Stats()
	assert.Equal(t, uint64(1), st.EventRecoveriesRequested)
	assert.Equal(t, uint64(2), st.RequestsRateLimited)
	assert.Equal(t, uint64(1), st.RequestsFailed)
}

// An event recovery whose snapshot_complete does not come within RecoveryTimeout is
// reported and forgotten: a late snapshot_complete completes nothing.
func TestRecoverEventTimesOut(t *testing.T) {
	r, _ := newEventRig(t, recovery.Config{RecoveryTimeout: time.Minute, CheckInterval: 10 * time.Second})
	id, err := r.m.RecoverEvent(t.Context(), lo.ID, match42)
	require.NoError(t, err)
	assert.Equal(t, eventInitiated(id), r.next())
	r.advance(time.Minute, 10*time.Second)
	r.quiet()
	r.advance(10*time.Second, 10*time.Second)
	var te *recovery.TimeoutError
	require.ErrorAs(t, r.nextErr(), &te)
	assert.Equal(t, recovery.TimeoutError{Producer: lo.ID, RequestID: id, RequestedAt: t0, Event: match42}, *te)
	r.snapshot(0, lo.ID, id)
	r.quiet()
	st := r.m.Stats()
	assert.Equal(t, uint64(1), st.EventRecoveryTimeouts)
	assert.Zero(t, st.EventRecoveriesCompleted)
}

// RecoverEvent refuses what it cannot do, saying why.
func TestRecoverEventRefusals(t *testing.T) {
	r, _ := newEventRig(t, recovery.Config{})
	_, err := r.m.RecoverEvent(t.Context(), lo.ID, feed.URN{})
	assert.ErrorContains(t, err, "the event URN is zero")
	_, err = r.m.RecoverEvent(t.Context(), 99, match42)
	assert.ErrorContains(t, err, "producer 99 is not followed")

	plain := newRig(t, recovery.Config{})
	_, err = plain.m.RecoverEvent(t.Context(), lo.ID, match42)
	assert.ErrorIs(t, err, recovery.ErrNoEventRequester)

	m, err := recovery.NewManager(&eventAPI{}, nil, feed.NodeID{}, recovery.Config{})
	require.NoError(t, err)
	_, err = m.RecoverEvent(t.Context(), lo.ID, match42)
	assert.ErrorContains(t, err, "before Open")
	require.NoError(t, m.Close(t.Context()))
	_, err = m.RecoverEvent(t.Context(), lo.ID, match42)
	assert.ErrorIs(t, err, recovery.ErrClosed)
}
