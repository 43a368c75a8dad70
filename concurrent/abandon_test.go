package concurrent

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// stuckBetStops blocks every OnBetStop until its context is cancelled.
type stuckBetStops struct {
	feed.BaseOddsFeedListener
	started chan struct{}
	calls   atomic.Int64
}

func (l *stuckBetStops) OnBetStop(ctx context.Context, _ *feed.BetStop) error {
	l.calls.Add(1)
	select {
	case l.started <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return ctx.Err()
}

// TestAbandonedRecoveryDropsItsUp: when a dispatcher closing out of time abandons
// messages of a recovery, the up held back for it is dropped, not forwarded: the customer
// has not seen the whole recovery. An up that arrives after the abandonment is dropped too.
func TestAbandonedRecoveryDropsItsUp(t *testing.T) {
	rec := feedtest.NewGlobalRecorder()
	tr := NewTaskLifecycleTracker()
	g := glNew(t, rec, tr, GateConfig{})
	l := &stuckBetStops{started: make(chan struct{}, 1)}
	c, err := NewDispatcher(l, tr, Config{Threads: 1})
	require.NoError(t, err)
	ctx := context.Background()
	g.OnRecoveryInitiated(ctx, glRecovery(1, 7))
	for i := range 10 {
		m := &feed.BetStop{Header: feed.Header{Producer: 1, RequestID: 7, Event: feed.URN{Prefix: "sr", Type: "match", ID: int64(i) + 1}}}
		require.NoError(t, c.OnBetStop(ctx, m))
	}
	<-l.started
	g.OnProducerStatusChange(ctx, glUp(1))
	require.Equal(t, 1, g.Stats().Held)

	expired, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, c.Close(expired), context.Canceled)
	require.NoError(t, c.Close(ctx))
	require.EqualValues(t, 1, l.calls.Load())
	require.EqualValues(t, 9, tr.Counts(RecoveryContext{Producer: 1, RequestID: 7}).Abandoned)

	g.OnProducerStatusChange(ctx, glUp(1)) // the context is idle now, but incomplete
	g.OnEventRecoveryCompleted(ctx, feed.EventRecoveryCompleted{Producer: 1, RequestID: 7})
	calls := glSentinel(t, g, rec)
	require.NotContains(t, calls, glStatusDesc(glUp(1)), "an up forwarded though 9 of its recovery's messages were abandoned")
	st := g.Stats()
	require.Zero(t, st.Held)
	require.Zero(t, st.Released)
	require.Equal(t, uint64(3), st.Incomplete)
}

// TestRecoveryWithoutRequestIDHoldsNothing: a recovery with no request id cannot be told
// from live traffic, so its up is not held on the live tasks.
func TestRecoveryWithoutRequestIDHoldsNothing(t *testing.T) {
	rec, tr, g := glSetup(t)
	ctx := context.Background()
	glAllocate(tr, RecoveryContext{Producer: 1}, 3) // live traffic in progress
	g.OnRecoveryInitiated(ctx, glRecovery(1, 0))
	g.OnProducerStatusChange(ctx, glUp(1))
	rec.RequireCalls(t, 2)
	require.Zero(t, g.Stats().Held)
}

// TestCloseAfterDoneIgnoresItsContext: closing what is closed already returns nil, whatever
// the context, and abandons nothing.
func TestCloseAfterDoneIgnoresItsContext(t *testing.T) {
	c, err := NewDispatcher(feed.BaseOddsFeedListener{}, NewTaskLifecycleTracker(), Config{Threads: 2})
	require.NoError(t, err)
	g, err := NewStatusGate(feed.BaseGlobalEventsListener{}, NewTaskLifecycleTracker(), GateConfig{})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, c.Close(ctx))
	require.NoError(t, g.Close(ctx))
	expired, cancel := context.WithCancel(ctx)
	cancel()
	for range 100 {
		require.NoError(t, c.Close(expired))
		require.NoError(t, g.Close(expired))
	}
	require.False(t, c.abandon.Load() || c.pool.abandon.Load(), "nothing was given up on")
}

// inlineUnparsable blocks OnUnparsableMessage until released, and reports whether its
// context was cancelled while it ran.
type inlineUnparsable struct {
	feed.BaseOddsFeedListener
	started, release chan struct{}
	ended            atomic.Bool
	ctxErr           chan error
}

func (l *inlineUnparsable) OnUnparsableMessage(ctx context.Context, _ *feed.UnparsableMessage) error {
	close(l.started)
	<-l.release
	l.ctxErr <- ctx.Err()
	l.ended.Store(true)
	return nil
}

// TestCloseWaitsForAnInlineDelivery: with HandleErrorsAsynchronously false, an
// unroutable message delivered on the dispatching goroutine is waited for by Close like
// a worker's call, and its context is not cancelled under it.
func TestCloseWaitsForAnInlineDelivery(t *testing.T) {
	l := &inlineUnparsable{started: make(chan struct{}), release: make(chan struct{}), ctxErr: make(chan error, 1)}
	c, err := NewDispatcher(l, NewTaskLifecycleTracker(), Config{Threads: 1, HandleErrorsAsynchronously: new(false)})
	require.NoError(t, err)
	dispatched := make(chan error, 1)
	go func() {
		dispatched <- c.Dispatch(context.Background(), feed.Event{RawKey: "x", Err: feed.ErrMalformedMessage})
	}()
	<-l.started
	require.Equal(t, 1, c.Stats().Running)
	closed := make(chan bool, 1)
	go func() {
		_ = c.Close(context.Background())
		closed <- l.ended.Load()
	}()
	close(l.release)
	require.True(t, <-closed, "Close returned while the inline call was in progress")
	require.NoError(t, <-l.ctxErr, "the call's context was cancelled though Close did not give up")
	require.NoError(t, <-dispatched)
	require.ErrorIs(t, c.Dispatch(context.Background(), feed.Event{RawKey: "x", Err: feed.ErrMalformedMessage}), feed.ErrDispatcherClosed)
}
