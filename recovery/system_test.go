package recovery_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/recovery"
)

// rawSystem hands the manager a system message of type typ with a raw body.
func (r *rig) rawSystem(typ feed.MessageType, body []byte) feed.RoutingKey {
	key := feed.RoutingKey{Type: typ}
	r.m.HandleSystem(feed.Event{RawKey: key.String(), Key: key, Body: body})
	r.flush()
	return key
}

// A system message that cannot be decoded is reported as a MalformedError with its raw
// body, matching feed.ErrMalformedMessage; the manager goes on with the next message.
func TestMalformedSystemMessagesAreReportedAndSkipped(t *testing.T) {
	cases := []struct {
		name string
		typ  feed.MessageType
		body string
	}{
		{"alive, not XML", feed.MessageAlive, "this is not xml"},
		{"alive, truncated", feed.MessageAlive, `<alive product="1" timestamp="17952`},
		{"alive, bad product", feed.MessageAlive, `<alive product="one" timestamp="1795262400000" subscribed="1"/>`},
		{"alive, empty", feed.MessageAlive, ""},
		{"snapshot_complete, not XML", feed.MessageSnapshotComplete, "{\"request_id\": 1}"},
		{"snapshot_complete, bad request id", feed.MessageSnapshotComplete, `<snapshot_complete product="1" timestamp="1795262400000" request_id="x"/>`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, recovery.Config{})
			body := []byte(c.body)
			key := r.rawSystem(c.typ, body)
			err := r.nextErr()
			var me *recovery.MalformedError
			require.ErrorAs(t, err, &me)
			assert.Equal(t, body, me.Body)
			assert.Equal(t, key.String(), me.RoutingKey)
			assert.ErrorIs(t, err, feed.ErrMalformedMessage)
			assert.Contains(t, err.Error(), key.String())
			r.quiet()
			r.api.none(t)
			stats := r.m.Stats()
			assert.Equal(t, uint64(1), stats.Malformed)
			assert.Zero(t, stats.Alives)

			r.alive(1, true) // the next good message is processed
			call := r.recovered()
			r.snapshot(0, 1, call.id)
			assert.Equal(t, "producer 1 up (FirstRecoveryCompleted)", r.next())
			r.quiet()
		})
	}
}

// A malformed snapshot_complete does not end the recovery; the good copy after it does.
func TestMalformedSnapshotCompleteDoesNotEndTheRecovery(t *testing.T) {
	r := newRig(t, recovery.Config{})
	r.alive(1, true)
	call := r.recovered()
	r.rawSystem(feed.MessageSnapshotComplete, []byte(`<snapshot_complete product="1" request_id="1"`))
	require.True(t, errors.Is(r.nextErr(), feed.ErrMalformedMessage))
	r.quiet()
	assert.Equal(t, recovery.Recovering, r.state(1).State)
	r.snapshot(0, 1, call.id)
	assert.Equal(t, "producer 1 up (FirstRecoveryCompleted)", r.next())
}

// System messages of producers not configured are counted and ignored.
func TestUnknownProducersAreCountedAndIgnored(t *testing.T) {
	r := newRig(t, recovery.Config{})
	r.alive(99, true)
	r.snapshot(0, 99, 5)
	r.clk.Advance(time.Second)
	r.alive(2, false) // 2 is no producer at all; 6 is one, but not of this manager
	r.alive(6, true)
	r.m.ObserveProcessed(&feed.Header{Producer: 99, Timestamp: r.clk.Now().Add(-time.Hour)})
	r.advance(check, check)
	r.quiet()
	r.api.none(t)
	stats := r.m.Stats()
	assert.Equal(t, uint64(4), stats.UnknownProducer)
	assert.Zero(t, stats.Alives)
	assert.Zero(t, stats.SnapshotsIgnored)
	_, ok := r.m.Producer(99)
	assert.False(t, ok)
	assert.Len(t, r.m.Producers(), 2)
	for _, st := range r.m.Producers() {
		assert.Equal(t, recovery.Disconnected, st.State)
		assert.False(t, st.RecoveryPending)
	}
}

// panickingListener panics in every status change, after telling the test.
type panickingListener struct {
	feed.BaseGlobalEventsListener
	calls chan string
}

func (l panickingListener) OnProducerStatusChange(_ context.Context, s feed.ProducerStatus) {
	l.calls <- s.Reason.String()
	panic("a bug in the customer's listener")
}

// A listener that panics does not stop the manager.
func TestListenerPanicDoesNotStopTheManager(t *testing.T) {
	clk := clocktest.NewFake(t0)
	api := &fakeAPI{calls: make(chan apiCall, 8)}
	l := panickingListener{calls: make(chan string, 8)}
	m, err := recovery.NewManager(api, l, feed.NodeID{}, recovery.Config{Clock: clk, Producers: []feed.Producer{lo}})
	require.NoError(t, err)
	require.NoError(t, m.Open(t.Context()))
	t.Cleanup(func() { require.NoError(t, m.Close(context.Background())) })
	r := &rig{t: t, clk: clk, m: m, api: api, handlers: []feed.SystemHandler{m}}
	assert.Equal(t, "InitialState", <-l.calls, "the panic at Open stops nothing either")
	r.alive(1, true)
	c := api.next(t)
	r.snapshot(0, 1, c.id)
	assert.Equal(t, "FirstRecoveryCompleted", <-l.calls)
	r.clk.Advance(time.Second)
	r.alive(1, false)
	assert.Equal(t, "Other", <-l.calls, "the manager goes on after the panic")
	api.next(t)
}
