package pgstore_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/internal/pgtest"
	"github.com/feedkit/feedkit/workflow"
)

// BenchmarkPollRelease measures a workflow.Engine handing out a task and applying its
// decision, on the in-memory store and on this one: one op is one Poll and one Release of
// a process's only task, which finishes the task, updates the graph and ends the process
// (on PostgreSQL: the claim's transaction, then the task's, graph's and process's
// conditional writes with their reads). The processes are started before the timer, from
// 8 goroutines.
func BenchmarkPollRelease(b *testing.B) {
	b.Run("memory", func(b *testing.B) { benchmarkPollRelease(b, workflow.NewMemoryStore()) })
	b.Run("postgres", func(b *testing.B) { benchmarkPollRelease(b, newStore(b, pgtest.Pool(b))) })
}

func benchmarkPollRelease(b *testing.B, s workflow.Store) {
	ctx := b.Context()
	e, err := workflow.New(s, workflow.Config{OnError: func(err error) { b.Error(err) }})
	require.NoError(b, err)
	const starters = 8
	var wg sync.WaitGroup
	for w := range starters {
		wg.Go(func() {
			for i := w; i < b.N; i += starters {
				if _, _, err := e.Start(ctx, workflow.StartRequest{Type: "order", CustomID: fmt.Sprint(i),
					Start: workflow.TaskSpec{ActorType: "work", Args: []byte("args")}}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
	result := []byte("result")
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		tk, ok, err := e.Poll(ctx, "work")
		if err != nil || !ok {
			b.Fatalf("poll: %v, %v", ok, err)
		}
		if err := e.Release(ctx, workflow.Decision{TaskID: tk.ID, Pass: tk.Pass, Result: result}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecoveryScan measures the recovery service repairing decisions past their work
// timeout: b.N processes each have their task in progress with an actor that never
// answers; the clock moves past the timeout and one RecoverDue takes every task back and
// queues it again (a conditional write on the task and a push of its graph's check). One
// op is one repaired task; the metric repaired/s is the rate.
func BenchmarkRecoveryScan(b *testing.B) {
	b.Run("memory", func(b *testing.B) { benchmarkRecoveryScan(b, workflow.NewMemoryStore()) })
	b.Run("postgres", func(b *testing.B) { benchmarkRecoveryScan(b, newStore(b, pgtest.Pool(b))) })
}

func benchmarkRecoveryScan(b *testing.B, s workflow.Store) {
	ctx := b.Context()
	clk := clocktest.NewFake(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	e, err := workflow.New(s, workflow.Config{Clock: clk, ScanBatch: 500,
		Processes: map[string]workflow.ProcessPrefs{"order": {IdleTimeout: 24 * time.Hour}},
		OnError:   func(err error) { b.Error(err) }})
	require.NoError(b, err)
	for i := range b.N {
		_, _, err := e.Start(ctx, workflow.StartRequest{Type: "order", CustomID: fmt.Sprint(i), Start: workflow.TaskSpec{ActorType: "work"}})
		require.NoError(b, err)
		_, ok, err := e.Poll(ctx, "work")
		require.NoError(b, err)
		require.True(b, ok)
	}
	clk.Advance(workflow.DefaultWorkTimeout)
	b.ResetTimer()
	start := time.Now()
	rep, err := e.RecoverDue(ctx)
	elapsed := time.Since(start)
	b.StopTimer()
	require.NoError(b, err)
	require.Equal(b, b.N, rep.Repaired, "every task taken back")
	b.ReportMetric(float64(rep.Repaired)/elapsed.Seconds(), "repaired/s")
}
