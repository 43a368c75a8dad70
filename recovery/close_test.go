package recovery_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/recovery"
)

// Close of a closed manager returns nil; Open after Close returns ErrClosed.
func TestCloseTwiceAndOpenAfterClose(t *testing.T) {
	r := newRig(t, recovery.Config{})
	r.healthy(1)
	ctx := context.Background()
	require.NoError(t, r.m.Close(ctx))
	require.NoError(t, r.m.Close(ctx))
	assert.ErrorIs(t, r.m.Open(ctx), recovery.ErrClosed)
	// Messages after Close are dropped without blocking.
	r.m.HandleSystem(feed.Event{Key: feed.RoutingKey{Type: feed.MessageAlive}})
	r.handlers[0].HandleSystem(feed.Event{Key: feed.RoutingKey{Type: feed.MessageAlive}})
	r.m.HandleConnectionDown(feed.SessionRef{}, nil)
}

// A manager closed before it was opened cannot be opened; Open twice is refused.
func TestOpenLifecycle(t *testing.T) {
	ctx := context.Background()
	m, err := recovery.NewManager(&fakeAPI{}, nil, feed.NodeID{}, recovery.Config{})
	require.NoError(t, err)
	require.NoError(t, m.Close(ctx))
	require.NoError(t, m.Close(ctx))
	assert.ErrorIs(t, m.Open(ctx), recovery.ErrClosed)

	m, err = recovery.NewManager(&fakeAPI{}, nil, feed.NodeID{}, recovery.Config{})
	require.NoError(t, err)
	require.NoError(t, m.Open(ctx))
	err = m.Open(ctx)
	require.Error(t, err)
	assert.NotErrorIs(t, err, recovery.ErrClosed)
	require.NoError(t, m.Close(ctx))
}

// Close with a request whose API call blocks cancels the call's context and returns; the
// ledger place of the abandoned request is given back.
func TestCloseCancelsARequestInFlight(t *testing.T) {
	api := newBlockingAPI()
	led := newCountingLedger(recovery.NewMemoryLedger())
	r := newRig(t, recovery.Config{Ledger: led}, withRequester(api))
	r.alive(1, true)
	api.next(t)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	require.NoError(t, r.m.Close(ctx))
	select {
	case err := <-api.ended:
		assert.ErrorIs(t, err, context.Canceled)
	default:
		t.Fatal("Close returned before the API call ended")
	}
	reserves, releases := led.calls()
	assert.Equal(t, 1, reserves)
	assert.Equal(t, 1, releases)
}

// Close returns ctx's error when its context ends before a call that ignores
// cancellation returns.
func TestCloseGivesUpWhenItsContextEnds(t *testing.T) {
	release := make(chan struct{})
	called := make(chan struct{})
	stubborn := requesterFunc(func(context.Context, feed.Producer, time.Time, int64) error {
		close(called)
		<-release
		return nil
	})
	r := newRig(t, recovery.Config{}, withRequester(stubborn))
	r.alive(1, true)
	<-called
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, r.m.Close(ctx), context.Canceled)
	// A later Close waits, as the first would have, for the goroutines to be gone.
	again := make(chan error, 1)
	go func() { again <- r.m.Close(context.Background()) }()
	select {
	case err := <-again:
		t.Fatalf("the second Close returned %v while the API call was still running", err)
	default:
	}
	close(release)
	assert.NoError(t, <-again)
}

// Flush is for a manager at work: before Open it returns an error at once, after Close
// ErrClosed, and with its context ended ctx.Err(); none of them waits.
func TestFlushOutsideTheManagersLife(t *testing.T) {
	ctx := context.Background()
	m, err := recovery.NewManager(&fakeAPI{}, nil, feed.NodeID{}, recovery.Config{})
	require.NoError(t, err)
	err = m.Flush(ctx)
	require.ErrorContains(t, err, "Flush before Open")
	assert.NotErrorIs(t, err, recovery.ErrClosed)

	require.NoError(t, m.Open(ctx))
	require.NoError(t, m.Flush(ctx))
	gone, cancel := context.WithCancel(ctx)
	cancel()
	assert.ErrorIs(t, m.Flush(gone), context.Canceled)

	require.NoError(t, m.Close(ctx))
	assert.ErrorIs(t, m.Flush(ctx), recovery.ErrClosed)
}
