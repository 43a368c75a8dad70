package group_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/group"
	"github.com/feedkit/feedkit/internal/grouptest"
	"github.com/feedkit/feedkit/internal/testenv"
)

// A worker whose listener is stuck on a recovery's message never acknowledges the
// barrier: past BarrierTimeout the producer goes down (ProcessingStalled) and is
// recovered again, and once the listener is free the new recovery's up reaches the
// application, once; the old barrier's late acknowledgement changes nothing.
func TestGroupRecoversAProducerWhoseBarrierIsNotAcknowledged(t *testing.T) {
	url := testenv.AMQPVhost(t)
	top := group.Topology{Prefix: "b", Shards: 2}
	ctx, cancel := context.WithTimeout(t.Context(), 2*guard)
	defer cancel()

	f := grouptest.NewFeed(t, grouptest.FeedOptions{Matches: 10, Rate: 200, AliveInterval: aliveInterval, Seed: 36})
	sim := f.Sim
	// Some traffic before the SDK opens, for its first recovery to replay.
	require.NoError(t, sim.Publish(ctx, 50))

	errs := make(chan error, 100)
	onError := func(err error) {
		select {
		case errs <- err:
		default:
		}
	}
	in, err := group.NewIngress(group.IngressConfig{
		SDK: f.SDKConfig(onError, heartbeatLimit, checkInterval, nil),
		URL: url, Topology: top, BarrierTimeout: time.Second, OnError: onError,
	})
	require.NoError(t, err)

	// The listener holds the first replayed message it gets until released, and with it
	// every other call of a replayed message (they wait on the same Once).
	release := make(chan struct{})
	held := make(chan struct{}, 1)
	done := newProcessed()
	rec := done.listener("w")
	stuck := feedtest.NewRecorder()
	var first sync.Once
	stuck.Hook = func(m feed.Message) error {
		if m.MessageHeader().RequestID != 0 {
			first.Do(func() {
				held <- struct{}{}
				<-release
			})
		}
		return rec.(*feedtest.Recorder).Hook(m)
	}
	a := newApp("w", sim, done)
	w, err := group.NewWorker(group.WorkerConfig{URL: url, Topology: top, Shards: []int{0, 1}, Listener: stuck,
		Global: a, Concurrent: concurrent.Config{Threads: 2}, OnError: onError})
	require.NoError(t, err)

	ran := make(chan error, 2)
	go func() { ran <- w.Run(ctx) }()
	go func() { ran <- in.Run(ctx) }()
	simCtx, stopSim := context.WithCancel(ctx)
	simRan := make(chan error, 1)
	go func() { simRan <- sim.Run(simCtx) }()

	select {
	case <-held:
	case <-time.After(guard):
		t.Fatal("no replayed message reached the listener")
	}
	down := a.waitFor(t, false)
	for down.Reason == feed.InitialState {
		down = a.waitFor(t, false)
	}
	assert.Equal(t, feed.ProcessingStalled, down.Reason, "the barrier's bound passed")
	close(release)
	up := a.waitFor(t, true)
	assert.True(t, up.Reason.IsUp())

	stopSim()
	require.NoError(t, <-simRan)
	st := in.Stats().Barriers
	assert.Equal(t, uint64(1), st.TimedOut)
	assert.Equal(t, uint64(1), st.Released, "one up reached the group")
	log := a.history()
	ups := 0
	for _, l := range log {
		if len(l) > 3 && l[:3] == "up " {
			ups++
		}
	}
	assert.Equal(t, 1, ups, "the application heard one up: %v", log)
	a.mu.Lock()
	assert.Empty(t, a.early, "the up came after its recovery was processed")
	a.mu.Unlock()
	cancel()
	for range 2 {
		<-ran
	}
}
