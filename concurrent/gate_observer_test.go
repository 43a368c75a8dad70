package concurrent_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// TestObserverCountsEqualGateStats: the ups and event recovery ends a StatusGate holds
// back are told as held, those it forwards once their tasks are done as released, with
// the recovery's kind; the counts are its Stats' Deferred and Released. Ups dropped
// (cancelled, superseded, at Close) are held and never released.
func TestObserverCountsEqualGateStats(t *testing.T) {
	obs := newRecordingObserver()
	tracker := concurrent.NewTaskLifecycleTracker()
	customer := feedtest.NewGlobalRecorder()
	g, err := concurrent.NewStatusGate(customer, tracker, concurrent.GateConfig{Observer: obs})
	require.NoError(t, err)
	ctx := testContext(t)
	allocate := func(rc concurrent.RecoveryContext, n int) []concurrent.Ticket {
		ks := make([]concurrent.Ticket, n)
		for i := range ks {
			ks[i] = tracker.Allocate(rc)
			ks[i].Start()
		}
		return ks
	}
	up := func(producer int, reason feed.StatusReason) {
		g.OnProducerStatusChange(ctx, feed.ProducerStatus{Producer: producer, Reason: reason})
	}
	recovery := func(producer int, request int64) {
		g.OnRecoveryInitiated(ctx, feed.RecoveryInitiated{Producer: producer, RequestID: request})
	}

	// Producer 1: two ups held together, both released.
	recovery(1, 10)
	ks1 := allocate(concurrent.RecoveryContext{Producer: 1, RequestID: 10}, 3)
	up(1, feed.FirstRecoveryCompleted)
	up(1, feed.ReturnedFromInactivity)
	// Producer 2: held, then cancelled by a down.
	recovery(2, 20)
	allocate(concurrent.RecoveryContext{Producer: 2, RequestID: 20}, 1)
	up(2, feed.FirstRecoveryCompleted)
	g.OnProducerStatusChange(ctx, feed.ProducerStatus{Producer: 2, Down: true, Reason: feed.AliveIntervalViolation})
	// Producer 3: held, then superseded by a newer recovery.
	recovery(3, 30)
	allocate(concurrent.RecoveryContext{Producer: 3, RequestID: 30}, 1)
	up(3, feed.FirstRecoveryCompleted)
	recovery(3, 31)
	// Producer 4: a stateful event recovery's end held and released; an event
	// recovery's end with nothing pending forwarded at once, not held.
	event := match(4)
	g.OnRecoveryInitiated(ctx, feed.RecoveryInitiated{Producer: 4, RequestID: 40, Kind: feed.EventStatefulRecovery, Event: event})
	ks4 := allocate(concurrent.RecoveryContext{Producer: 4, RequestID: 40}, 2)
	g.OnEventRecoveryCompleted(ctx, feed.EventRecoveryCompleted{Producer: 4, Event: event, RequestID: 40})
	g.OnRecoveryInitiated(ctx, feed.RecoveryInitiated{Producer: 4, RequestID: 41, Kind: feed.EventRecovery, Event: event})
	g.OnEventRecoveryCompleted(ctx, feed.EventRecoveryCompleted{Producer: 4, Event: event, RequestID: 41})
	// Producer 5: an up with its recovery's tasks all done is forwarded at once.
	recovery(5, 50)
	for _, k := range allocate(concurrent.RecoveryContext{Producer: 5, RequestID: 50}, 2) {
		k.Complete()
	}
	up(5, feed.FirstRecoveryCompleted)
	// Producer 6: held when the gate closes.
	recovery(6, 60)
	allocate(concurrent.RecoveryContext{Producer: 6, RequestID: 60}, 1)
	up(6, feed.FirstRecoveryCompleted)

	// The releases are told on the goroutine that completes the last task, before
	// Complete returns.
	for _, k := range append(ks1, ks4...) {
		k.Complete()
	}
	st := g.Stats()
	require.NoError(t, g.Close(ctx))

	producer, stateful := feed.ProducerRecovery, feed.EventStatefulRecovery
	obs.mu.Lock()
	defer obs.mu.Unlock()
	assert.Equal(t, map[upKey]int{{1, producer}: 2, {2, producer}: 1, {3, producer}: 1, {4, stateful}: 1, {6, producer}: 1}, obs.held)
	assert.Equal(t, map[upKey]int{{1, producer}: 2, {4, stateful}: 1}, obs.released)
	assert.True(t, obs.heldAtMostReleased, "no release told before its hold")
	assert.Zero(t, obs.negativeHeld)
	assert.Equal(t, uint64(6), st.Deferred)
	assert.Equal(t, uint64(3), st.Released)
	assert.Equal(t, uint64(1), st.Cancelled)
	assert.Equal(t, uint64(1), st.Superseded)
	assert.Equal(t, 1, st.Held, "producer 6's up, until Close")
	held, released := 0, 0
	for _, n := range obs.held {
		held += n
	}
	for _, n := range obs.released {
		released += n
	}
	assert.Equal(t, st.Deferred, uint64(held))
	assert.Equal(t, st.Released, uint64(released))
}
