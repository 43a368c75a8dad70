package feedkit_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/recovery"
)

// TestSessionsShareOneWorkerPool: two sessions with Config.Concurrent.Threads 3 run 3
// workers in all, not 3 each: with every listener call blocked until the test releases
// them, 3 calls run at once, never more; each session's delivery figures are its own, and
// the pool's are their sums.
func TestSessionsShareOneWorkerPool(t *testing.T) {
	const threads, published = 3, 60
	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	t.Cleanup(broker.Close)
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	sim, err := feedtest.NewSimulator(broker, feedtest.SimulatorConfig{
		Matches: 20, Rate: feedtest.Unlimited, Seed: 5, Producers: []feed.Producer{lo}})
	require.NoError(t, err)

	var inFlight, most atomic.Int32
	full, release := make(chan struct{}), make(chan struct{})
	var fullOnce, releaseOnce sync.Once
	hook := func(feed.Message) error {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := most.Load(); n > m; m = most.Load() {
			if most.CompareAndSwap(m, n) {
				break
			}
		}
		if n == threads {
			fullOnce.Do(func() { close(full) })
		}
		<-release
		return nil
	}
	// Both sessions take every message: each match's messages come through both.
	recs := []*feedtest.Recorder{feedtest.NewRecorder(), feedtest.NewRecorder()}
	for _, r := range recs {
		r.Hook = hook
	}
	global := feedtest.NewGlobalRecorder()
	sdk, err := feedkit.New(feedkit.Config{Transport: broker, Global: global,
		Recovery:   recovery.Config{Producers: []feed.Producer{lo}, Disabled: true},
		Concurrent: &concurrent.Config{Threads: threads}})
	require.NoError(t, err)
	require.NoError(t, sdk.AddSession(feed.AllMessages, recs[0]))
	require.NoError(t, sdk.AddSession(feed.AllMessages, recs[1]))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	require.NoError(t, sdk.Open(ctx))
	// The calls are released first: a failed test must not hang in Close.
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }); _ = sdk.Close(context.Background()) })
	global.RequireCalls(t, 2) // each session's connection up

	require.NoError(t, sim.Publish(ctx, published))
	select {
	case <-full:
	case <-ctx.Done():
		t.Fatal("3 listener calls never ran at once")
	}
	st := sdk.Stats()
	require.NotNil(t, st.Pool)
	assert.Equal(t, threads, st.Pool.Running, "every worker in a call")
	assert.Len(t, st.Pool.Workers, threads, "one pool of Threads workers")
	require.Len(t, st.Delivery, 2)
	assert.Equal(t, threads, st.Delivery[0].Concurrent.Running+st.Delivery[1].Concurrent.Running)

	releaseOnce.Do(func() { close(release) })
	for _, r := range recs {
		require.NoError(t, r.Wait(ctx, published))
	}
	require.NoError(t, sdk.Close(ctx)) // the sessions, then the pool: every counter is final
	assert.Equal(t, int32(threads), most.Load(), "never more calls at once than Threads")

	st = sdk.Stats()
	p, d0, d1 := st.Pool, st.Delivery[0].Concurrent, st.Delivery[1].Concurrent
	assert.Equal(t, uint64(published), d0.Completed, "session 0's own deliveries")
	assert.Equal(t, uint64(published), d1.Completed, "session 1's own deliveries")
	assert.Equal(t, uint64(2*published), p.Dispatched)
	assert.Equal(t, uint64(2*published), p.Completed)
	assert.Equal(t, d0.Dispatched+d1.Dispatched, p.Dispatched)
	for i := range threads {
		assert.Equal(t, d0.Workers[i]+d1.Workers[i], p.Workers[i], "worker %d", i)
	}
	assert.Zero(t, p.Listeners, "both sessions' listeners closed")
}
