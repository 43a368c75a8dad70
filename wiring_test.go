package feedkit

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// A Close that gives up while the reading side is blocked in Dispatch abandons every
// ticket; the Dispatch that then fails must not take another ticket for its own, nor
// finish one twice.
func TestTrackedSerialCloseWhileDispatchIsBlocked(t *testing.T) {
	tracker := concurrent.NewTaskLifecycleTracker()
	gate := make(chan struct{})
	entered := make(chan struct{}, 16)
	rec := feedtest.NewRecorder()
	rec.Hook = func(feed.Message) error {
		entered <- struct{}{}
		<-gate
		return nil
	}
	ts, err := newTrackedSerial(&hooked{l: rec}, tracker, feed.DispatcherOptions{QueueSize: 1})
	require.NoError(t, err)
	rc := concurrent.RecoveryContext{Producer: 1, RequestID: 9}
	ev := func(i int64) feed.Event {
		m := &feed.BetStop{Header: feed.Header{Producer: 1, RequestID: 9, Event: feed.URN{Prefix: "sr", Type: "match", ID: i}}}
		key := feed.RoutingKey{Type: feed.MessageBetStop, Event: m.Event}
		return feed.Event{RawKey: key.String(), Key: key, Body: feedtest.Marshal(m), Producer: 1, RequestID: 9}
	}
	ctx := t.Context()
	require.NoError(t, ts.Dispatch(ctx, ev(1))) // delivered: the listener holds it
	<-entered
	require.NoError(t, ts.Dispatch(ctx, ev(2))) // queued
	blocked := make(chan error, 1)
	go func() { blocked <- ts.Dispatch(ctx, ev(3)) }() // waits for room
	require.NoError(t, waitFor(ctx, func() bool { return tracker.Counts(rc).Allocated == 3 }))

	gone, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, ts.Close(gone), context.Canceled)
	close(gate)
	assert.Error(t, <-blocked, "the blocked Dispatch fails once the dispatcher is closed")
	require.NoError(t, waitFor(ctx, func() bool { return tracker.Pending(rc) == 0 }))
	c := tracker.Counts(rc)
	assert.Equal(t, uint64(3), c.Allocated)
	assert.Equal(t, c.Allocated, c.Completed+c.Abandoned, "every ticket finished once")
}
