package feedtest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// Every call is recorded in order, numbered, with its argument, and described in one line.
func TestGlobalRecorderRecordsEveryCallInOrder(t *testing.T) {
	g := feedtest.NewGlobalRecorder()
	ctx := t.Context()
	match := feed.URN{Prefix: "sr", Type: "match", ID: 42}
	after := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	g.OnConnectionDown(ctx, feed.SessionRef{}, errors.New("broker gone"))
	g.OnConnectionDown(ctx, feed.SessionRef{}, nil)
	live := feed.SessionRef{Index: 1, Interest: feed.LiveMessagesOnly}
	g.OnConnectionUp(ctx, live)
	g.OnProducerStatusChange(ctx, feed.ProducerStatus{Producer: 1, Down: true, Reason: feed.ConnectionDown, Session: &live})
	g.OnProducerStatusChange(ctx, feed.ProducerStatus{Producer: 1, Down: true, Reason: feed.AliveIntervalViolation})
	g.OnProducerStatusChange(ctx, feed.ProducerStatus{Producer: 1, Down: true, Delayed: true, Reason: feed.ProcessingQueueDelayViolation})
	g.OnProducerStatusChange(ctx, feed.ProducerStatus{Producer: 3, Reason: feed.FirstRecoveryCompleted})
	g.OnRecoveryInitiated(ctx, feed.RecoveryInitiated{Producer: 1, RequestID: 7, After: after})
	g.OnRecoveryInitiated(ctx, feed.RecoveryInitiated{Producer: 1, RequestID: 9, Kind: feed.EventRecovery, Event: match})
	g.OnEventRecoveryCompleted(ctx, feed.EventRecoveryCompleted{Producer: 1, Event: match, RequestID: 9})

	want := []string{
		"connection down on session 0 (all messages): broker gone",
		"connection down on session 0 (all messages)",
		"connection up on session 1 (live messages only)",
		"producer 1 down (ConnectionDown) on session 1 (live messages only)",
		"producer 1 down (AliveIntervalViolation)",
		"producer 1 down, delayed (ProcessingQueueDelayViolation)",
		"producer 3 up (FirstRecoveryCompleted)",
		"recovery #7 of producer 1 initiated from 2026-01-02T15:04:05Z",
		"event recovery #9 of producer 1 initiated for sr:match:42",
		"event recovery #9 of producer 1 completed for sr:match:42",
	}
	calls := g.RequireCalls(t, len(want))
	require.Len(t, calls, len(want))
	for i, c := range calls {
		assert.Equal(t, want[i], c.String())
		assert.Equal(t, int64(i+1), c.Seq, "call %d", i)
	}
	assert.Equal(t, feedtest.CallConnectionDown, calls[0].Kind)
	assert.EqualError(t, calls[0].Err, "broker gone")
	assert.Equal(t, live, calls[2].Session)
	assert.Equal(t, feedtest.CallProducerStatus, calls[5].Kind)
	assert.Equal(t, feed.ProducerStatus{Producer: 1, Down: true, Delayed: true, Reason: feed.ProcessingQueueDelayViolation}, calls[5].Status)
	assert.Equal(t, feedtest.CallRecoveryInitiated, calls[7].Kind)
	assert.Equal(t, int64(7), calls[7].Recovery.RequestID)
	assert.True(t, after.Equal(calls[7].Recovery.After))
	assert.Equal(t, feedtest.CallEventRecoveryCompleted, calls[9].Kind)
	assert.Equal(t, feed.EventRecoveryCompleted{Producer: 1, Event: match, RequestID: 9}, calls[9].EventRecovery)

	// Next reads them one at a time, in the same order; Unread is what it has left.
	assert.Len(t, g.Unread(), len(want))
	for i := range want {
		assert.Equal(t, want[i], g.RequireNext(t).String())
		assert.Len(t, g.Unread(), len(want)-i-1)
	}
	g.RequireNone(t)
}

// Next waits for a call made after it started waiting, from another goroutine; Wait for a
// number of calls.
func TestGlobalRecorderWaits(t *testing.T) {
	g := feedtest.NewGlobalRecorder()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a guard against a hang
	defer cancel()
	got := make(chan string, 1)
	go func() {
		c, err := g.Next(ctx)
		got <- fmt.Sprint(c, err)
	}()
	g.OnConnectionUp(t.Context(), feed.SessionRef{})
	select {
	case c := <-got:
		assert.Equal(t, "connection up on session 0 (all messages) <nil>", c)
	case <-time.After(time.Minute): // a guard against a hang
		t.Fatal("Next did not return the call")
	}

	waited := make(chan []feedtest.GlobalCall, 1)
	go func() {
		calls, err := g.Wait(ctx, 3)
		assert.NoError(t, err)
		waited <- calls
	}()
	for p := 1; p <= 2; p++ {
		g.OnProducerStatusChange(t.Context(), feed.ProducerStatus{Producer: p, Reason: feed.FirstRecoveryCompleted})
	}
	select {
	case calls := <-waited:
		require.Len(t, calls, 3)
		assert.Equal(t, "producer 2 up (FirstRecoveryCompleted)", calls[2].String())
	case <-time.After(time.Minute):
		t.Fatal("Wait did not return the calls")
	}
	assert.Len(t, g.Unread(), 2, "Wait reads nothing")
}

// When the context ends first, Next and Wait say so, and what they waited for.
func TestGlobalRecorderWaitsEndWithTheContext(t *testing.T) {
	g := feedtest.NewGlobalRecorder()
	g.OnConnectionUp(t.Context(), feed.SessionRef{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := g.Next(ctx)
	require.NoError(t, err, "a call is there: no need to wait")
	_, err = g.Next(ctx)
	require.ErrorIs(t, err, context.Canceled)
	assert.ErrorContains(t, err, "global call number 2")
	_, err = g.Wait(ctx, 2)
	require.ErrorIs(t, err, context.Canceled)
	assert.ErrorContains(t, err, "1 global calls recorded, want 2")
	calls, err := g.Wait(ctx, 1)
	require.NoError(t, err)
	assert.Len(t, calls, 1)
}

// The Hook sees each call before it is recorded and its result is the call's Note; a
// panicking Hook leaves the call unrecorded.
func TestGlobalRecorderHook(t *testing.T) {
	g := feedtest.NewGlobalRecorder()
	pending := 3
	g.Hook = func(_ context.Context, c feedtest.GlobalCall) string {
		if c.Kind == feedtest.CallConnectionDown {
			panic("listener bug")
		}
		if c.Kind == feedtest.CallProducerStatus && !c.Status.Down {
			return fmt.Sprintf("pending %d", pending)
		}
		return ""
	}
	g.OnProducerStatusChange(t.Context(), feed.ProducerStatus{Producer: 1, Reason: feed.ReturnedFromInactivity})
	pending = 0
	g.OnProducerStatusChange(t.Context(), feed.ProducerStatus{Producer: 1, Reason: feed.ReturnedFromInactivity})
	require.PanicsWithValue(t, "listener bug", func() { g.OnConnectionDown(t.Context(), feed.SessionRef{}, errors.New("x")) })
	g.OnConnectionUp(t.Context(), feed.SessionRef{})

	var got []string
	for _, c := range g.Calls() {
		got = append(got, c.String())
	}
	assert.Equal(t, []string{
		"producer 1 up (ReturnedFromInactivity): pending 3",
		"producer 1 up (ReturnedFromInactivity): pending 0",
		"connection up on session 0 (all messages)",
	}, got)
	assert.Equal(t, "pending 3", g.Calls()[0].Note)
}

// Stamp orders the test's own actions against the calls.
func TestGlobalRecorderStamp(t *testing.T) {
	g := feedtest.NewGlobalRecorder()
	g.OnConnectionUp(t.Context(), feed.SessionRef{})
	stamp := g.Stamp()
	g.OnConnectionUp(t.Context(), feed.SessionRef{})
	calls := g.Calls()
	require.Len(t, calls, 2)
	assert.Less(t, calls[0].Seq, stamp)
	assert.Greater(t, calls[1].Seq, stamp)
}

// fatalT records a Fatal instead of ending the test, to check what fails a test.
type fatalT struct {
	testing.TB
	fatal string
}

func (f *fatalT) Helper() {}

func (f *fatalT) Fatalf(format string, args ...any) { f.fatal = fmt.Sprintf(format, args...) }

// RequireNone fails on a call not read yet, and only then.
func TestGlobalRecorderRequireNone(t *testing.T) {
	g := feedtest.NewGlobalRecorder()
	ft := &fatalT{TB: t}
	g.RequireNone(ft)
	assert.Empty(t, ft.fatal)
	g.OnConnectionDown(t.Context(), feed.SessionRef{}, errors.New("gone"))
	g.OnConnectionUp(t.Context(), feed.SessionRef{})
	g.RequireNone(ft)
	assert.Equal(t, `feedtest: unexpected global call "connection down on session 0 (all messages): gone" (2 unread)`, ft.fatal)
	ft.fatal = ""
	g.RequireNext(t)
	g.RequireNext(t)
	g.RequireNone(ft)
	assert.Empty(t, ft.fatal)
}

// A SnapshotWaiter hands out the request ids of the snapshot_completes it saw, in order,
// and ignores alives.
func TestSnapshotWaiter(t *testing.T) {
	s := feedtest.NewSnapshotWaiter()
	wctx, wcancel := context.WithTimeout(t.Context(), time.Minute) // a guard against a hang
	defer wcancel()
	got := make(chan int64, 1)
	go func() {
		id, err := s.Next(wctx)
		assert.NoError(t, err)
		got <- id
	}()
	s.HandleSystem(feed.Event{Key: feed.RoutingKey{Type: feed.MessageAlive}, Producer: 1})
	s.HandleSystem(feed.Event{Key: feed.RoutingKey{Type: feed.MessageSnapshotComplete}, Producer: 1, RequestID: 77})
	s.HandleSystem(feed.Event{Key: feed.RoutingKey{Type: feed.MessageSnapshotComplete}, Producer: 1, RequestID: 78})
	select {
	case id := <-got:
		assert.Equal(t, int64(77), id)
	case <-time.After(time.Minute): // a guard against a hang
		t.Fatal("Next did not return the snapshot_complete")
	}
	assert.Equal(t, int64(78), s.RequireNext(t))
	assert.Equal(t, []int64{77, 78}, s.IDs())

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := s.Next(ctx)
	require.ErrorIs(t, err, context.Canceled)
	assert.ErrorContains(t, err, "snapshot_complete number 3")
}
