package promfeedkit_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/rabbitmq"
	"github.com/feedkit/feedkit/internal/testenv"
	"github.com/feedkit/feedkit/promfeedkit"
	"github.com/feedkit/feedkit/recovery"
)

var epoch = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

// levels is flatten kept to the levels read from SDK.Stats: what the observer is told
// is checked apart, and moves here too once the SDK's parts call it.
func levels(t *testing.T, reg prometheus.Gatherer) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for series, v := range flatten(t, reg) {
		name, _, _ := strings.Cut(series, "{")
		if statsLevels[name] {
			out[series] = v
		}
	}
	return out
}

// gate is a listener hook that holds every call until released, and tells when the
// first call has begun.
type gate struct {
	once    sync.Once
	started chan struct{}
	release chan struct{}
}

func newGate() *gate { return &gate{started: make(chan struct{}), release: make(chan struct{})} }

func (g *gate) hook(feed.Message) error {
	g.once.Do(func() { close(g.started) })
	<-g.release
	return nil
}

// wait waits for the first call; only a hang reaches the guard.
func (g *gate) wait(t *testing.T) {
	t.Helper()
	select {
	case <-g.started:
	case <-time.After(time.Minute):
		t.Fatal("no listener call began")
	}
}

func TestWatchSDKRefusesNilAndASecondSDK(t *testing.T) {
	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	t.Cleanup(broker.Close)
	newSDK := func() *feedkit.SDK {
		sdk, err := feedkit.New(feedkit.Config{Transport: broker, Recovery: recovery.Config{Disabled: true}})
		require.NoError(t, err)
		return sdk
	}
	m, err := promfeedkit.New(prometheus.NewRegistry())
	require.NoError(t, err)
	assert.EqualError(t, m.WatchSDK(nil), "promfeedkit: WatchSDK: the SDK is nil")
	sdk := newSDK()
	require.NoError(t, m.WatchSDK(sdk))
	const again = "promfeedkit: WatchSDK: this Metrics already watches an SDK; for another SDK, make another Metrics (on a registry of its own, or on one wrapped with prometheus.WrapRegistererWith and a label telling the SDKs apart)"
	assert.EqualError(t, m.WatchSDK(newSDK()), again)
	assert.EqualError(t, m.WatchSDK(sdk), again, "even the same SDK: one call is the rule")
}

// On the embedded broker, with the shared pool and the API: each scrape shows the pool's
// backlog and running calls, the producer's up and the age of its last alive, and the
// names' caches' entries, each as the Stats say. The broker has no transport section:
// its levels are left out.
func TestWatchSDKLevelsOnTheEmbeddedBroker(t *testing.T) {
	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	t.Cleanup(broker.Close)
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	clk := clocktest.NewFake(epoch)
	sim, err := feedtest.NewSimulator(broker, feedtest.SimulatorConfig{Producers: []feed.Producer{lo}, Matches: 1,
		Rate: feedtest.Unlimited, Clock: clk})
	require.NoError(t, err)
	api := httptest.NewServer(sim.APIHandler(feedtest.Account{}))
	t.Cleanup(api.Close)
	env := feedkit.CustomEnvironment("", api.URL)

	reg := prometheus.NewPedanticRegistry()
	m, err := promfeedkit.New(reg, promfeedkit.WithClock(clk), promfeedkit.WithPoolName("workers"))
	require.NoError(t, err)
	sdk, err := feedkit.New(feedkit.Config{
		Environment: &env, AccessToken: feedtest.DefaultAccessToken,
		Transport: broker, Node: feed.Node(1), Clock: clk,
		Recovery:   recovery.Config{Disabled: true}, // up at the first alive
		Concurrent: &concurrent.Config{Name: "workers", Threads: 1},
		Observer:   m,
	})
	require.NoError(t, err)
	g := newGate()
	rec := feedtest.NewRecorder()
	rec.Hook = g.hook
	require.NoError(t, sdk.AddSession(feed.AllMessages, rec))
	t.Cleanup(func() { _ = sdk.Close(context.Background()) })
	assert.Empty(t, levels(t, reg), "no levels before WatchSDK")
	require.NoError(t, m.WatchSDK(sdk))

	ctx := t.Context()
	require.NoError(t, sdk.Open(ctx))
	caches := func(markets, variants float64) map[string]float64 {
		return map[string]float64{
			`feedkit_cache_entries{feedkit_cache="markets"}`:         markets,
			`feedkit_cache_entries{feedkit_cache="variants"}`:        variants,
			`feedkit_cache_entries{feedkit_cache="single_variants"}`: 0,
			`feedkit_cache_entries{feedkit_cache="summaries"}`:       0,
			`feedkit_cache_entries{feedkit_cache="profiles"}`:        0,
			// The sport data's: nothing read.
			`feedkit_cache_entries{feedkit_cache="event_summaries"}`:     0,
			`feedkit_cache_entries{feedkit_cache="fixtures"}`:            0,
			`feedkit_cache_entries{feedkit_cache="competitor_profiles"}`: 0,
			`feedkit_cache_entries{feedkit_cache="player_profiles"}`:     0,
			`feedkit_cache_entries{feedkit_cache="sports"}`:              0,
			`feedkit_cache_entries{feedkit_cache="categories"}`:          0,
			`feedkit_cache_entries{feedkit_cache="tournaments"}`:         0,
			`feedkit_cache_entries{feedkit_cache="seasons"}`:             0,
		}
	}
	with := func(a, b map[string]float64) map[string]float64 {
		out := map[string]float64{}
		for k, v := range a {
			out[k] = v
		}
		for k, v := range b {
			out[k] = v
		}
		return out
	}
	assert.Equal(t, with(caches(0, 0), map[string]float64{
		`feedkit_pool_backlog{feedkit_pool="workers"}`: 0,
		`feedkit_pool_running{feedkit_pool="workers"}`: 0,
		`feedkit_producer_up{feedkit_producer="1"}`:    0, // down until its first alive; none came yet
	}), levels(t, reg))

	// The producer's alive brings it up; its age is the fake clock's advance since.
	require.NoError(t, sim.SendAlive(ctx, lo.ID, true))
	require.NoError(t, broker.Flush(ctx))
	require.NoError(t, sdk.Flush(ctx))
	clk.Advance(7 * time.Second)
	require.NoError(t, sdk.Names().Refresh(ctx, "en")) // one language's markets and variants
	st := sdk.Stats()
	require.Len(t, st.Producers, 1)
	require.True(t, st.Producers[0].Up)
	require.Equal(t, epoch, st.Producers[0].LastAliveAt)
	require.Equal(t, 1, st.Names.Markets.Entries)
	require.Equal(t, 1, st.Names.Variants.Entries)
	assert.Equal(t, with(caches(1, 1), map[string]float64{
		`feedkit_pool_backlog{feedkit_pool="workers"}`:             0,
		`feedkit_pool_running{feedkit_pool="workers"}`:             0,
		`feedkit_producer_up{feedkit_producer="1"}`:                1,
		`feedkit_producer_alive_age_seconds{feedkit_producer="1"}`: 7,
	}), levels(t, reg))

	// The listener holds its first call: the pool runs one, and the rest wait.
	const messages = 40
	require.NoError(t, sim.Publish(ctx, messages))
	require.NoError(t, broker.Flush(ctx)) // every message is in the pool
	g.wait(t)
	before := sdk.Stats().Pool
	got := levels(t, reg)
	after := sdk.Stats().Pool
	require.Equal(t, before.Queued, after.Queued, "the pool stands still while the listener holds")
	require.Equal(t, 1, before.Running)
	// A worker's batch in hand (up to 16) is not counted as queued.
	assert.Positive(t, before.Queued)
	assert.LessOrEqual(t, before.Queued, messages-1)
	assert.Equal(t, float64(before.Queued), got[`feedkit_pool_backlog{feedkit_pool="workers"}`])
	assert.Equal(t, 1.0, got[`feedkit_pool_running{feedkit_pool="workers"}`])

	close(g.release)
	require.NoError(t, sdk.Flush(ctx))
	got = levels(t, reg)
	assert.Equal(t, 0.0, got[`feedkit_pool_backlog{feedkit_pool="workers"}`])
	assert.Equal(t, 0.0, got[`feedkit_pool_running{feedkit_pool="workers"}`])
	assert.Equal(t, messages, rec.Len(), "every message was delivered")
}

// With serial delivery, each session's backlog is its own, labelled as its listener
// calls are ("session N"), and there is no running count.
func TestWatchSDKSerialSessionsBacklog(t *testing.T) {
	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	t.Cleanup(broker.Close)
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	sim, err := feedtest.NewSimulator(broker, feedtest.SimulatorConfig{Producers: []feed.Producer{lo}, Rate: feedtest.Unlimited})
	require.NoError(t, err)
	reg := prometheus.NewPedanticRegistry()
	m, err := promfeedkit.New(reg)
	require.NoError(t, err)
	sdk, err := feedkit.New(feedkit.Config{Transport: broker, Observer: m,
		Recovery: recovery.Config{Producers: []feed.Producer{lo}, Disabled: true}})
	require.NoError(t, err)
	g := newGate()
	held, free := feedtest.NewRecorder(), feedtest.NewRecorder()
	held.Hook = g.hook
	require.NoError(t, sdk.AddSession(feed.AllMessages, held))
	require.NoError(t, sdk.AddSession(feed.AllMessages, free))
	t.Cleanup(func() { _ = sdk.Close(context.Background()) })
	require.NoError(t, m.WatchSDK(sdk))
	ctx := t.Context()
	require.NoError(t, sdk.Open(ctx))

	const messages = 5
	require.NoError(t, sim.Publish(ctx, messages))
	require.NoError(t, broker.Flush(ctx))
	g.wait(t)
	require.NoError(t, free.Wait(ctx, messages))
	st := sdk.Stats()
	require.Equal(t, messages-1, st.Delivery[0].Serial.Queued, "the first message is with the listener")
	require.Zero(t, st.Delivery[1].Serial.Queued)
	assert.Equal(t, map[string]float64{
		`feedkit_pool_backlog{feedkit_pool="session 0"}`: messages - 1,
		`feedkit_pool_backlog{feedkit_pool="session 1"}`: 0,
		`feedkit_producer_up{feedkit_producer="1"}`:      0,
	}, levels(t, reg))
	close(g.release)
	require.NoError(t, sdk.Flush(ctx))
	assert.Equal(t, map[string]float64{
		`feedkit_pool_backlog{feedkit_pool="session 0"}`: 0,
		`feedkit_pool_backlog{feedkit_pool="session 1"}`: 0,
		`feedkit_producer_up{feedkit_producer="1"}`:      0,
	}, levels(t, reg))
}

// On RabbitMQ, each scrape shows the transport's links up and the bytes received, as
// its Stats count them.
func TestWatchSDKTransportLevelsOnRabbitMQ(t *testing.T) {
	url := testenv.AMQPVhost(t)
	name := "feedkit-" + t.Name() + "-" + url[strings.LastIndex(url, "/")+1:] // the vhost's: unique to this run
	reg := prometheus.NewPedanticRegistry()
	m, err := promfeedkit.New(reg)
	require.NoError(t, err)
	rec, global := feedtest.NewRecorder(), feedtest.NewGlobalRecorder()
	sdk, err := feedkit.New(feedkit.Config{
		AMQP:     &rabbitmq.Config{URL: url, DeclareExchange: true, ConnectionName: name},
		Global:   global,
		Recovery: recovery.Config{Disabled: true},
		Observer: m,
	})
	require.NoError(t, err)
	require.NoError(t, sdk.AddSession(feed.AllMessages, rec))
	t.Cleanup(func() { require.NoError(t, sdk.Close(context.Background())) })
	require.NoError(t, m.WatchSDK(sdk))
	require.NoError(t, sdk.Open(t.Context()))
	for c := global.RequireNext(t); c.Kind != feedtest.CallConnectionUp; c = global.RequireNext(t) {
		require.NotEqual(t, feedtest.CallConnectionDown, c.Kind, c.String())
	}
	transport := func() map[string]float64 {
		out := map[string]float64{}
		for k, v := range levels(t, reg) {
			if strings.HasPrefix(k, "feedkit_transport_") {
				out[k] = v
			}
		}
		return out
	}
	assert.Equal(t, map[string]float64{"feedkit_transport_connected": 1, "feedkit_transport_received_bytes_total": 0}, transport())

	pub, err := rabbitmq.NewPublisher(t.Context(), rabbitmq.Config{URL: url, DeclareExchange: true, ConnectionName: name + "-publisher"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = pub.Close(context.Background()) })
	var bytes int
	const messages = 10
	for id := 1; id <= messages; id++ {
		key := fmt.Sprintf("hi.-.live.bet_stop.1.sr:match.%d.-", id)
		body := fmt.Appendf(nil, `<bet_stop event_id="sr:match:%d" product="1" timestamp="%d"/>`, id, id)
		require.NoError(t, pub.Publish(t.Context(), key, body))
		bytes += len(body)
	}
	require.NoError(t, pub.Flush(t.Context()))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	require.NoError(t, rec.Wait(ctx, messages))
	require.Equal(t, uint64(bytes), sdk.Stats().Transport.Bytes)
	assert.Equal(t, map[string]float64{"feedkit_transport_connected": 1, "feedkit_transport_received_bytes_total": float64(bytes)}, transport())
}

// An SDK's recovery manager tells the Metrics of its producer's start and recovery, and
// the metrics count what its Stats count: a producer down from the start, one recovery
// requested and completed, its up, and the lag of its alives.
func TestRecoveryMetricsOfAnSDKMatchItsStats(t *testing.T) {
	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	t.Cleanup(broker.Close)
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	sim, err := feedtest.NewSimulator(broker, feedtest.SimulatorConfig{Producers: []feed.Producer{lo}})
	require.NoError(t, err)
	api := httptest.NewServer(sim.RecoveryHandler())
	t.Cleanup(api.Close)
	reg := prometheus.NewPedanticRegistry()
	m, err := promfeedkit.New(reg)
	require.NoError(t, err)
	global := feedtest.NewGlobalRecorder()
	sdk, err := feedkit.New(feedkit.Config{
		Transport: broker, Node: feed.Node(1), Global: global,
		API:        feedapi.Config{BaseURL: api.URL, AccessToken: feedtest.DefaultAccessToken},
		Recovery:   recovery.Config{Producers: []feed.Producer{lo}},
		Concurrent: &concurrent.Config{},
		Observer:   m,
	})
	require.NoError(t, err)
	require.NoError(t, sdk.AddSession(feed.AllMessages, feedtest.NewRecorder()))
	t.Cleanup(func() { _ = sdk.Close(context.Background()) })
	require.NoError(t, m.WatchSDK(sdk))
	ctx := t.Context()
	require.NoError(t, sdk.Open(ctx))
	require.NoError(t, sim.SendAlive(ctx, lo.ID, true)) // the producer's first alive: a recovery
	// Its down and the connection's up come first.
	for global.RequireNext(t).String() != "producer 1 up (FirstRecoveryCompleted)" {
	}
	require.NoError(t, broker.Flush(ctx))
	require.NoError(t, sdk.Flush(ctx))

	st := sdk.Stats().Recovery
	require.Equal(t, uint64(1), st.RecoveriesRequested)
	require.Equal(t, uint64(1), st.RecoveriesCompleted)
	got := flatten(t, reg)
	for series, want := range map[string]float64{
		`feedkit_recovery_requests_total{feedkit_producer="1",feedkit_recovery_kind="producer",feedkit_result="accepted"}`:          float64(st.RecoveriesRequested),
		`feedkit_recovery_duration_seconds_count{feedkit_producer="1",feedkit_recovery_kind="producer",feedkit_result="completed"}`: float64(st.RecoveriesCompleted),
		`feedkit_producer_downs_total{feedkit_producer="1",feedkit_reason="InitialState"}`:                                          1,
		`feedkit_producer_last_down{feedkit_producer="1",feedkit_reason="InitialState"}`:                                            1,
		`feedkit_producer_up{feedkit_producer="1"}`:                                                                                 1,
	} {
		assert.Equal(t, want, got[series], series)
	}
	var downs, requests float64
	for series, v := range got {
		switch name, _, _ := strings.Cut(series, "{"); name {
		case "feedkit_producer_downs_total":
			downs += v
		case "feedkit_recovery_requests_total":
			requests += v
		}
	}
	assert.Equal(t, 1.0, downs, "the producer went down once: at the start")
	assert.Equal(t, float64(st.RecoveriesRequested+st.RequestsRateLimited+st.RequestsFailed), requests)
	assert.Contains(t, got, `feedkit_producer_lag_seconds{feedkit_producer="1"}`, "the alives' lag")
}
