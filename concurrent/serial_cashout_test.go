package concurrent_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// A cashout for a listener without OnCashout makes no call, and its task is completed
// all the same, in its place: the messages after it keep their own tasks, and a
// recovery whose last message is such a cashout releases its up once the listener is
// done with the rest.
func TestSerialDispatcherPassesOverCashoutsItsListenerCannotTake(t *testing.T) {
	tracker := concurrent.NewTaskLifecycleTracker()
	rec := feedtest.NewRecorder()
	obs := newRecordingObserver()
	s := newSerial(t, noCashouts{rec}, tracker, concurrent.SerialConfig{Name: "serial", Observer: obs})
	customer := feedtest.NewGlobalRecorder()
	global, err := concurrent.NewStatusGate(customer, tracker, concurrent.GateConfig{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = global.Close(t.Context()) })
	ctx := testContext(t)

	global.OnRecoveryInitiated(ctx, feed.RecoveryInitiated{Producer: 1, RequestID: 42})
	require.Equal(t, "recovery #42 of producer 1 initiated", customer.RequireNext(t).String())
	odds := message(feed.MessageOddsChange, match(1), 1, 42, 1)
	cash := cashout(match(1), 1, 2)
	cash.RequestID = 42
	require.NoError(t, s.Dispatch(ctx, rawEvent(t, odds)))
	require.NoError(t, s.Dispatch(ctx, rawEvent(t, cash)))
	global.OnProducerStatusChange(ctx, feed.ProducerStatus{Producer: 1, Reason: feed.FirstRecoveryCompleted})
	assert.Equal(t, "producer 1 up (FirstRecoveryCompleted)", customer.RequireNext(t).String(),
		"the up waits for the odds change only: the cashout is passed over")
	assert.Equal(t, concurrent.TaskCounts{Allocated: 2, Started: 2, Completed: 2},
		tracker.Counts(concurrent.RecoveryContext{Producer: 1, RequestID: 42}))

	// A live message after it has its own task: started and completed with its call.
	require.NoError(t, s.Dispatch(ctx, rawEvent(t, cashout(match(2), 1, 3))))
	require.NoError(t, s.Dispatch(ctx, rawEvent(t, message(feed.MessageBetStop, match(2), 1, 0, 4))))
	require.NoError(t, s.Close(ctx))
	assert.Equal(t, concurrent.TaskCounts{Allocated: 2, Started: 2, Completed: 2},
		tracker.Counts(concurrent.RecoveryContext{Producer: 1}))
	assert.Equal(t, 2, rec.Len(), "the odds change and the bet stop")
	calls, _, _, _ := obs.snapshot()
	assert.Equal(t, map[callKey]int{
		{"serial", 1, feed.MessageOddsChange, concurrent.CallReturned}: 1,
		{"serial", 1, feed.MessageBetStop, concurrent.CallReturned}:    1,
	}, calls, "a cashout passed over is no call")
}
