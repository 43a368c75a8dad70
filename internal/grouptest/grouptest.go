// Package grouptest holds what the tests of a group (package group) share: the feed
// they run on (NewFeed), and a small group on RabbitMQ for the metrics adapters' tests
// (Start), an ingress and a worker of two shards through a recovery and live traffic.
package grouptest

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/group"
	"github.com/feedkit/feedkit/internal/testenv"
	"github.com/feedkit/feedkit/recovery"
)

// Start runs an ingress and a worker of two shards on the RabbitMQ of
// FEEDKIT_AMQP_URL (skipping the test without it) until the producer's up has reached
// the worker through the barrier and the worker has 300 messages; the feed then stops,
// and the ingress and the worker go on until the test ends.
func Start(t *testing.T) (*group.Ingress, *group.Worker) {
	t.Helper()
	url := testenv.AMQPVhost(t)
	top := group.Topology{Prefix: "m", Shards: 2}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	f := NewFeed(t, FeedOptions{Matches: 20, Rate: 500, AliveInterval: 200 * time.Millisecond, Seed: 34})
	sim := f.Sim
	require.NoError(t, sim.Publish(ctx, 100)) // for the first recovery to replay

	onError := func(err error) { t.Log(err) }
	in, err := group.NewIngress(group.IngressConfig{
		SDK: f.SDKConfig(onError, 2*time.Second, 100*time.Millisecond, nil),
		URL: url, Topology: top, OnError: onError,
	})
	require.NoError(t, err)
	rec := feedtest.NewRecorder()
	app := &upListener{up: make(chan struct{}, 1)}
	w, err := group.NewWorker(group.WorkerConfig{URL: url, Topology: top, Shards: []int{0, 1}, Listener: rec,
		Global: app, Concurrent: concurrent.Config{Threads: 2}, OnError: onError})
	require.NoError(t, err)

	runCtx, stop := context.WithCancel(context.Background())
	ran := make(chan error, 2)
	go func() { ran <- w.Run(runCtx) }()
	go func() { ran <- in.Run(runCtx) }()
	t.Cleanup(func() {
		stop()
		for range 2 {
			<-ran
		}
	})
	simCtx, stopSim := context.WithCancel(ctx)
	simRan := make(chan error, 1)
	go func() { simRan <- sim.Run(simCtx) }() // alives and live traffic
	select {
	case <-app.up:
	case <-ctx.Done():
		t.Fatal("grouptest: the producer never came up for the group")
	}
	require.NoError(t, rec.Wait(ctx, 300), "grouptest: the worker has messages")
	stopSim()
	require.NoError(t, <-simRan)
	return in, w
}

// FeedOptions are what a test's feed varies.
type FeedOptions struct {
	Matches       int
	Rate          float64
	AliveInterval time.Duration
	Seed          uint64
}

// Feed is the feed of a group's test: the simulator publishing producer 1's messages to
// an embedded broker, keeping 10 minutes of history, with its API served.
type Feed struct {
	Broker   *feedtest.Broker
	Sim      *feedtest.Simulator
	Env      feedkit.Environment
	Producer feed.Producer
}

// NewFeed starts a Feed, closed when the test ends.
func NewFeed(t *testing.T, o FeedOptions) *Feed {
	t.Helper()
	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	t.Cleanup(broker.Close)
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	sim, err := feedtest.NewSimulator(broker, feedtest.SimulatorConfig{Producers: []feed.Producer{lo}, Matches: o.Matches,
		Rate: o.Rate, AliveInterval: o.AliveInterval, HistoryAge: 10 * time.Minute, Seed: o.Seed})
	require.NoError(t, err)
	api := httptest.NewServer(sim.APIHandler(feedtest.Account{}))
	t.Cleanup(api.Close)
	return &Feed{Broker: broker, Sim: sim, Env: feedkit.CustomEnvironment("", api.URL), Producer: lo}
}

// SDKConfig is an ingress's SDK on the feed: node 1, the producer down after heartbeat
// without an alive, checked every check, its recovery point in store (nil: the SDK's
// default).
func (f *Feed) SDKConfig(onError func(error), heartbeat, check time.Duration, store recovery.Store) feedkit.Config {
	env := f.Env
	return feedkit.Config{Environment: &env, AccessToken: feedtest.DefaultAccessToken, Transport: f.Broker,
		Node: feed.Node(1), OnError: onError,
		Recovery: recovery.Config{HeartbeatLimits: map[int]time.Duration{f.Producer.ID: heartbeat},
			CheckInterval: check, Store: store}}
}

// upListener signals the producer's up, as the group tells it to a worker.
type upListener struct {
	feed.BaseGlobalEventsListener
	up chan struct{}
}

func (l *upListener) OnProducerStatusChange(_ context.Context, s feed.ProducerStatus) {
	if !s.Down {
		select {
		case l.up <- struct{}{}:
		default:
		}
	}
}
