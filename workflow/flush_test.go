package workflow_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/workflow"
)

// flushBound guards against a hang; nothing relies on it to pass.
const flushBound = time.Minute

var flushEpoch = time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)

// flushEngine returns an engine on a fake clock whose "pay" actors have five minutes
// for a task, scanning every minute, with processes checked only after an hour idle.
func flushEngine(t *testing.T) (*workflow.Engine, *clocktest.Fake) {
	t.Helper()
	fake := clocktest.NewFake(flushEpoch)
	e, err := workflow.New(workflow.NewMemoryStore(), workflow.Config{Clock: fake, ScanInterval: time.Minute,
		Actors:    map[string]workflow.ActorPrefs{"pay": {WorkTimeout: 5 * time.Minute}},
		Processes: map[string]workflow.ProcessPrefs{"order": {IdleTimeout: time.Hour}}})
	require.NoError(t, err)
	return e, fake
}

// run runs e's recovery service until the test ends.
func run(t *testing.T, e *workflow.Engine) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		assert.ErrorIs(t, <-done, context.Canceled)
	})
}

// takeTask starts an order and has a "pay" actor take its task, at the clock's time.
func takeTask(t *testing.T, ctx context.Context, e *workflow.Engine) workflow.Task {
	t.Helper()
	_, _, err := e.Start(ctx, workflow.StartRequest{Type: "order", Start: workflow.TaskSpec{ActorType: "pay"}})
	require.NoError(t, err)
	task, ok, err := e.Poll(ctx, "pay")
	require.NoError(t, err)
	require.True(t, ok)
	return task
}

// A task whose actor never answers is taken back by the pass of Run at its work
// timeout: Flush returns once that pass is made, and not after an earlier one.
func TestFlushReturnsThePassOfTheClocksTime(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), flushBound)
	defer cancel()
	e, fake := flushEngine(t)
	run(t, e)
	require.NoError(t, e.Flush(ctx)) // the pass Run makes as it begins

	task := takeTask(t, ctx, e)
	fake.Advance(5*time.Minute - time.Second) // 4m59s: the pass of 4m has nothing due
	require.NoError(t, e.Flush(ctx))
	assert.Zero(t, e.Counters().WorkTimeouts)

	fake.Advance(time.Second) // 5m: the work timeout
	require.NoError(t, e.Flush(ctx))
	assert.Equal(t, uint64(1), e.Counters().WorkTimeouts)
	again, ok, err := e.Poll(ctx, "pay")
	require.NoError(t, err)
	require.True(t, ok, "the task is queued again")
	assert.Equal(t, task.ID, again.ID)
	assert.NotEqual(t, task.Pass, again.Pass)

	require.NoError(t, e.Flush(ctx)) // the clock has not moved: nothing more
	assert.Equal(t, uint64(1), e.Counters().WorkTimeouts)
}

// Between two ticks, the pass Run makes by now is the last tick's: what fell due after it
// waits for the next tick, as under Run.
func TestFlushBetweenTicks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), flushBound)
	defer cancel()
	e, fake := flushEngine(t)
	fake.Advance(30 * time.Second)
	takeTask(t, ctx, e) // due at 5m30s
	run(t, e)           // ticks at 1m30s, 2m30s, ...
	require.NoError(t, e.Flush(ctx))

	fake.Advance(5*time.Minute - time.Second) // 5m29s: the pass of the 4m30s tick
	require.NoError(t, e.Flush(ctx))
	assert.Zero(t, e.Counters().WorkTimeouts)
	fake.Advance(time.Second) // 5m30s, a tick: due
	require.NoError(t, e.Flush(ctx))
	assert.Equal(t, uint64(1), e.Counters().WorkTimeouts)

	_, ok, err := e.Poll(ctx, "pay") // taken again at 5m30s: due at 10m30s
	require.NoError(t, err)
	require.True(t, ok)
	fake.Advance(5*time.Minute + 20*time.Second) // 10m50s: the pass of the 10m30s tick has it
	require.NoError(t, e.Flush(ctx))
	assert.Equal(t, uint64(2), e.Counters().WorkTimeouts)
}

// Flush waits for a Run that has not begun, and returns the context's error when there
// is none. In a synctest bubble, synctest.Wait returns once the Flush has either returned
// (the bug) or waits: the check that it has not returned needs no luck.
func TestFlushWaitsForRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// In the bubble, the guard's time passes only once every goroutine is stuck.
		ctx, cancel := context.WithTimeout(t.Context(), flushBound)
		defer cancel()
		e, _ := flushEngine(t)

		ended, stop := context.WithCancel(ctx)
		stop()
		assert.ErrorIs(t, e.Flush(ended), context.Canceled, "no Run has passed")

		flushed := make(chan error, 1)
		go func() { flushed <- e.Flush(ctx) }()
		synctest.Wait()
		select {
		case err := <-flushed:
			t.Fatalf("Flush returned %v before Run began", err)
		default:
		}
		run(t, e)
		require.NoError(t, <-flushed)
	})
}
