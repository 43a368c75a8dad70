package recovery_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/recovery"
)

// RecoverProducer takes a healthy producer down with the reason given, at its recovery
// point, and requests a recovery from there at once, without waiting for an alive; the
// other producers are left alone. The recovery's completion brings it up again.
func TestRecoverProducerTakesAHealthyProducerDownAndRecoversItAtOnce(t *testing.T) {
	r := newRig(t, recovery.Config{})
	r.healthy(1)
	r.healthy(3)
	r.advance(5*time.Second, check)
	r.alive(1, true) // read after the recovery's replay: the point moves to it
	point := r.clk.Now()
	require.Equal(t, point, r.state(1).LastSubscribedAt)

	r.advance(2*time.Second, check)
	require.NoError(t, r.m.RecoverProducer(1, feed.ProcessingStalled))
	r.flush()
	assert.Equal(t, "producer 1 down (ProcessingStalled)", r.next())
	again := r.recovered()
	assert.Equal(t, 1, again.producer)
	assert.Equal(t, point, again.after, "from the recovery point")
	r.quiet()
	r.api.none(t)
	st := r.state(1)
	assert.Equal(t, recovery.Recovering, st.State)
	assert.Equal(t, again.id, st.RecoverySnapshotID)
	assert.Equal(t, point, st.LastDisconnectedAt, "registered as the disconnection: a restart recovers from it too")
	assert.True(t, r.state(3).Up, "the other producer is left alone")

	r.snapshot(0, 1, again.id)
	assert.Equal(t, "producer 1 up (ReturnedFromInactivity)", r.next())
	stats := r.m.Stats()
	assert.Equal(t, uint64(1), stats.RecoveriesForced)
	assert.Equal(t, uint64(1), stats.Disconnections)
	assert.Equal(t, uint64(3), stats.RecoveriesRequested)
	r.quiet()
}

// A producer recovering is recovered again under a new request, from where its recovery
// goes back to (rule 1); the old request's snapshot_complete no longer completes it. It
// is down already, so no status is told.
func TestRecoverProducerRestartsARecoveryUnderWay(t *testing.T) {
	r := newRig(t, recovery.Config{})
	r.alive(1, true)
	first := r.recovered()

	r.advance(3*time.Second, check)
	require.NoError(t, r.m.RecoverProducer(1, feed.Other))
	r.flush()
	second := r.recovered() // no status before the initiation: the producer was down
	assert.Equal(t, first.after, second.after, "rule 1: what the recovery under way covered")
	assert.Greater(t, second.id, first.id)
	r.snapshot(0, 1, first.id)
	r.quiet()
	assert.Equal(t, recovery.Recovering, r.state(1).State, "the old request's replay no longer ends it")

	r.snapshot(0, 1, second.id)
	assert.Equal(t, "producer 1 up (FirstRecoveryCompleted)", r.next())
	assert.Equal(t, uint64(1), r.m.Stats().RecoveriesForced)
	assert.Zero(t, r.m.Stats().Disconnections)
	r.quiet()
}

// A call while the request is being sent asks for another once the API has answered.
func TestRecoverProducerWhileTheRequestIsSent(t *testing.T) {
	api := newBlockingAPI()
	r := newRig(t, recovery.Config{}, withRequester(api))
	r.alive(1, true)
	first := api.next(t)
	require.NoError(t, r.m.RecoverProducer(1, feed.ProcessingStalled))
	r.flush()
	api.none(t)
	api.answer(t, nil)
	assert.Equal(t, initiated(first), r.next())
	second := api.next(t)
	assert.Greater(t, second.id, first.id)
	api.answer(t, nil)
	assert.Equal(t, initiated(second), r.next())
	r.snapshot(0, 1, first.id)
	r.quiet()
	r.snapshot(0, 1, second.id)
	assert.Equal(t, "producer 1 up (FirstRecoveryCompleted)", r.next())
	assert.Equal(t, uint64(1), r.m.Stats().RecoveriesForced)
	r.quiet()
	api.none(t)
}

// A disconnected producer is left as it is: its recovery is due at its next alive.
func TestRecoverProducerLeavesADisconnectedProducerAlone(t *testing.T) {
	r := newRig(t, recovery.Config{})
	require.NoError(t, r.m.RecoverProducer(1, feed.ProcessingStalled))
	r.quiet()
	r.api.none(t)
	assert.Zero(t, r.m.Stats().RecoveriesForced)
	assert.Equal(t, recovery.Disconnected, r.state(1).State)

	r.alive(1, true)
	c := r.recovered()
	assert.Equal(t, t0.Add(-recovery.DefaultAssumedDowntime), c.after)
}

// With recoveries disabled the producer is down and up again at once.
func TestRecoverProducerWithRecoveriesDisabled(t *testing.T) {
	r := newRig(t, recovery.Config{Disabled: true})
	r.alive(1, true)
	require.Equal(t, "producer 1 up (FirstRecoveryCompleted)", r.next())
	require.NoError(t, r.m.RecoverProducer(1, feed.Other))
	r.flush()
	assert.Equal(t, "producer 1 down (Other)", r.next())
	assert.Equal(t, "producer 1 up (ReturnedFromInactivity)", r.next())
	assert.Equal(t, uint64(2), r.m.Stats().RecoveriesSkipped)
	assert.Equal(t, uint64(1), r.m.Stats().RecoveriesForced)
	r.quiet()
}

// RecoverProducer refuses a reason that does not say down, a producer not followed, and
// a manager not open or closed.
func TestRecoverProducerRefuses(t *testing.T) {
	m, err := recovery.NewManager(&fakeAPI{calls: make(chan apiCall, 1)}, nil, feed.NodeID{}, recovery.Config{Producers: []feed.Producer{lo}})
	require.NoError(t, err)
	assert.EqualError(t, m.RecoverProducer(1, feed.Other), "recovery: RecoverProducer before Open")

	r := newRig(t, recovery.Config{})
	for _, reason := range []feed.StatusReason{feed.FirstRecoveryCompleted, feed.ReturnedFromInactivity,
		feed.ProcessingQueueDelayStabilized, feed.InitialState, 0, 200} {
		err := r.m.RecoverProducer(1, reason)
		assert.ErrorContains(t, err, "does not take a producer down", "reason %s", reason)
	}
	assert.EqualError(t, r.m.RecoverProducer(7, feed.Other), "recovery: RecoverProducer: producer 7 is not followed")
	r.quiet()

	require.NoError(t, m.Close(context.Background()))
	assert.ErrorIs(t, m.RecoverProducer(1, feed.Other), recovery.ErrClosed)
}

// RecoverProducer may be called from the GlobalEventsListener, on the manager's own
// goroutine, without waiting for itself.
func TestRecoverProducerFromTheListener(t *testing.T) {
	api := &fakeAPI{calls: make(chan apiCall, 16)}
	l := &recoverOnUp{done: make(chan struct{})}
	m, err := recovery.NewManager(api, l, feed.NodeID{}, recovery.Config{Producers: []feed.Producer{lo}})
	require.NoError(t, err)
	l.m = m
	h := m.SystemHandler()
	require.NoError(t, m.Open(t.Context()))
	t.Cleanup(func() { require.NoError(t, m.Close(context.Background())) })
	send := func(msg feed.Message) {
		key := feed.RoutingKey{Type: msg.Type()}
		h.HandleSystem(feed.Event{RawKey: key.String(), Key: key, Body: feedtest.Marshal(msg), Producer: 1, RequestID: msg.MessageHeader().RequestID})
	}
	send(&feed.Alive{Header: feed.Header{Producer: 1, Timestamp: time.Now()}, Subscribed: true})
	first := api.next(t)
	send(&feed.SnapshotComplete{Header: feed.Header{Producer: 1, Timestamp: time.Now(), RequestID: first.id}})
	second := api.next(t) // the listener, told of the up, called RecoverProducer
	assert.Greater(t, second.id, first.id)
	select {
	case <-l.done:
	case <-time.After(waitTimeout):
		t.Fatal("the listener did not return")
	}
	require.NoError(t, l.err)
}

// recoverOnUp calls RecoverProducer from its first up.
type recoverOnUp struct {
	feed.BaseGlobalEventsListener
	m    *recovery.Manager
	err  error
	done chan struct{}
	ups  int
}

func (l *recoverOnUp) OnProducerStatusChange(_ context.Context, s feed.ProducerStatus) {
	if s.Down {
		return
	}
	if l.ups++; l.ups == 1 {
		l.err = l.m.RecoverProducer(s.Producer, feed.ProcessingStalled)
		close(l.done)
	}
}
