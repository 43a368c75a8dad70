package feedtest_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed/feedtest"
)

// Flush returns once every message published before it has been handed over and the
// receiver's Receive has returned: while the receiver is held it waits, and once it
// returns every message is there, in order, with nothing to wait for. It runs in a
// synctest bubble, so that the check that Flush waits needs no luck.
func TestBrokerFlushWaitsForTheReceivers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := feedtest.NewBroker(feedtest.BrokerOptions{})
		t.Cleanup(b.Close)
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a guard against a hang
		defer cancel()
		require.NoError(t, b.Flush(ctx), "no queue: nothing to wait for")

		held, free := feedtest.NewReceiverRecorder(), feedtest.NewReceiverRecorder()
		for _, r := range []*feedtest.ReceiverRecorder{held, free} {
			sub, err := b.Subscribe(ctx, []string{"#"}, r)
			require.NoError(t, err)
			t.Cleanup(func() { _ = sub.Close(context.Background()) })
		}
		held.Hold()
		defer held.Release() // a failed check still lets the receiver go, and the bubble end
		for i := range 5 {
			require.NoError(t, b.Publish(ctx, "hi.-.live.odds_change.1.sr:match."+string(rune('1'+i))+".-", []byte("<odds_change/>")))
		}
		flushed := make(chan error, 1)
		go func() { flushed <- b.Flush(ctx) }()
		// The held receiver has the first message in Receive and four queued. synctest.Wait
		// returns once the Flush has returned (the bug) or waits.
		assert.Equal(t, feedtest.CallReceiverUp, held.RequireNext(t).Kind)
		assert.Equal(t, feedtest.CallReceive, held.RequireNext(t).Kind)
		synctest.Wait()
		select {
		case err := <-flushed:
			t.Fatalf("Flush returned (%v) while a receiver held its messages", err)
		default:
		}
		held.Release()
		require.NoError(t, <-flushed)
		for _, r := range []*feedtest.ReceiverRecorder{held, free} {
			calls := r.Calls()
			require.Len(t, calls, 6, "up and the five messages, all handed over when Flush returned")
			for i, c := range calls[1:] {
				assert.Equal(t, "hi.-.live.odds_change.1.sr:match."+string(rune('1'+i))+".-", c.Delivery.RoutingKey)
			}
		}
	})
}

// Messages lost to a Disconnect, and a deleted queue, hold Flush no longer; an ended
// context ends it.
func TestBrokerFlushAfterLossesAndOnAnEndedContext(t *testing.T) {
	b := feedtest.NewBroker(feedtest.BrokerOptions{})
	t.Cleanup(b.Close)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a guard against a hang
	defer cancel()
	held := feedtest.NewReceiverRecorder()
	sub, err := b.Subscribe(ctx, []string{"#"}, held)
	require.NoError(t, err)
	assert.Equal(t, feedtest.CallReceiverUp, held.RequireNext(t).Kind)
	held.Hold()
	for range 3 {
		require.NoError(t, b.Publish(ctx, "-.-.-.alive.-.-.-.-", []byte("<alive/>")))
	}
	assert.Equal(t, feedtest.CallReceive, held.RequireNext(t).Kind) // the first is in Receive, two queued

	ended, stop := context.WithCancel(ctx)
	stop()
	assert.ErrorIs(t, b.Flush(ended), context.Canceled)

	b.Disconnect(errors.New("gone")) // the two queued are lost
	held.Release()
	require.NoError(t, b.Flush(ctx))
	assert.Equal(t, feedtest.CallReceiverDown, held.RequireNext(t).Kind, "nothing but the loss came after the first message")
	assert.Equal(t, uint64(2), b.Stats().DroppedOnDown)

	b.Reconnect()
	held.Hold()
	require.NoError(t, b.Publish(ctx, "-.-.-.alive.-.-.-.-", []byte("<alive/>")))
	require.NoError(t, b.Publish(ctx, "-.-.-.alive.-.-.-.-", []byte("<alive/>")))
	assert.Equal(t, feedtest.CallReceiverUp, held.RequireNext(t).Kind)
	assert.Equal(t, feedtest.CallReceive, held.RequireNext(t).Kind) // held in Receive, one queued
	flushed, closed := make(chan error, 1), make(chan error, 1)
	go func() { flushed <- b.Flush(ctx) }()
	go func() { closed <- sub.Close(ctx) }() // waits for the Receive in progress
	held.Release()
	require.NoError(t, <-closed)
	require.NoError(t, <-flushed, "a deleted queue holds Flush no longer")
}
