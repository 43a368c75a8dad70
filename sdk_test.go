package feedkit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/rabbitmq"
	"github.com/feedkit/feedkit/recovery"
)

func TestNewRefusesABadConfigNamingTheField(t *testing.T) {
	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	t.Cleanup(broker.Close)
	ok := func() feedkit.Config {
		return feedkit.Config{Transport: broker,
			API: feedapi.Config{BaseURL: "http://127.0.0.1:1", AccessToken: "t"}}
	}
	_, err := feedkit.New(ok())
	require.NoError(t, err)
	cases := []struct {
		change func(*feedkit.Config)
		want   string
	}{
		{func(c *feedkit.Config) { c.Transport = nil }, "Config.Transport and Config.AMQP are both nil"},
		{func(c *feedkit.Config) { c.AMQP = &rabbitmq.Config{URL: "amqp://x"} }, "are both set"},
		{func(c *feedkit.Config) { c.Transport, c.AMQP = nil, &rabbitmq.Config{} }, "Config.AMQP"},
		{func(c *feedkit.Config) { c.API.BaseURL = "" }, "Config.API.BaseURL is empty and recoveries are enabled"},
		{func(c *feedkit.Config) { c.API.AccessToken = "" }, "Config.API"},
		{func(c *feedkit.Config) { c.API.Node = feed.Node(2) }, "Config.API.Node is set: set Config.Node"},
		{func(c *feedkit.Config) { c.Names.Clock = clocktest.NewFake(time.Now()) }, "Config.Names.Clock is set: set Config.Clock"},
		{func(c *feedkit.Config) { c.Recovery.CheckInterval = -1 }, "Config.CheckInterval"},
		{func(c *feedkit.Config) { c.Concurrent = &concurrent.Config{Threads: -1} }, "Config.Concurrent"},
		{func(c *feedkit.Config) { c.Concurrent, c.QueueSize = &concurrent.Config{}, 5 }, "Config.QueueSize is for serial delivery"},
		{func(c *feedkit.Config) { c.QueueSize = -1 }, "Config.QueueSize"},
		{func(c *feedkit.Config) { c.MaxBodySize = -1 }, "feedkit: Config.MaxBodySize -1 must not be negative"},
		{func(c *feedkit.Config) { c.MaxUpHold = 30 }, "feedkit: Config.MaxUpHold 30ns is under the minimum of 1s"},
		{func(c *feedkit.Config) { c.MaxUpHold = 500 * time.Millisecond }, "feedkit: Config.MaxUpHold 500ms is under the minimum of 1s (0 means DefaultMaxUpHold, a negative value no bound)"},
		{func(c *feedkit.Config) { c.Recovery.Observer = newCountingObserver() }, "an Observer is set in a part's config: set Config.Observer"},
		{func(c *feedkit.Config) { c.Concurrent = &concurrent.Config{Observer: newCountingObserver()} }, "set Config.Observer"},
	}
	for _, c := range cases {
		cfg := ok()
		c.change(&cfg)
		_, err := feedkit.New(cfg)
		assert.ErrorContains(t, err, c.want)
	}
	// Without the recovery API, recoveries must be turned off, by config or environment.
	cfg := ok()
	cfg.API = feedapi.Config{}
	cfg.Recovery.Disabled = true
	_, err = feedkit.New(cfg)
	assert.NoError(t, err)
	t.Setenv(feedkit.RecoveryEnabledEnv, "false")
	cfg.Recovery.Disabled = false
	_, err = feedkit.New(cfg)
	assert.NoError(t, err)
}

// The sessions are added between New and Open: Open refuses an SDK without one, and
// AddSession refuses a nil listener and any call once the SDK is open.
func TestAddSessionBeforeOpen(t *testing.T) {
	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	t.Cleanup(broker.Close)
	sdk, err := feedkit.New(feedkit.Config{Transport: broker, Recovery: recovery.Config{Disabled: true}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sdk.Close(context.Background()) })
	assert.EqualError(t, sdk.Open(t.Context()), "feedkit: Open: the SDK has no session: call AddSession or AddForwardingSession first")
	assert.EqualError(t, sdk.AddSession(feed.LiveMessagesOnly, nil), "feedkit: AddSession(live messages only): the listener is nil")
	require.NoError(t, sdk.AddSession(feed.LiveMessagesOnly, feedtest.NewRecorder()))
	require.NoError(t, sdk.Open(t.Context()))
	assert.EqualError(t, sdk.AddSession(feed.PrematchMessagesOnly, feedtest.NewRecorder()),
		"feedkit: AddSession after Open: the sessions are fixed when the SDK opens")
	assert.Len(t, sdk.Stats().Sessions, 1)
}

// With recoveries disabled, a producer is up at its first alive, and the SDK's lifecycle
// holds: Open once, Stats after Close, Close twice.
func TestSDKLifecycleWithRecoveriesDisabled(t *testing.T) {
	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	t.Cleanup(broker.Close)
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	sim, err := feedtest.NewSimulator(broker, feedtest.SimulatorConfig{Producers: []feed.Producer{lo}})
	require.NoError(t, err)
	global := feedtest.NewGlobalRecorder()
	sdk, err := feedkit.New(feedkit.Config{Transport: broker, Global: global,
		Recovery: recovery.Config{Producers: []feed.Producer{lo}, Disabled: true}})
	require.NoError(t, err)
	require.NoError(t, sdk.AddSession(feed.LiveMessagesOnly, feedtest.NewRecorder()))
	require.NoError(t, sdk.AddSession(feed.PrematchMessagesOnly, feedtest.NewRecorder()))
	ctx := t.Context()
	require.NoError(t, sdk.Open(ctx))
	assert.ErrorContains(t, sdk.Open(ctx), "already open")
	assert.Equal(t, "producer 1 down (InitialState)", global.RequireNext(t).String())
	// Each session's up names it; the two sessions report on goroutines of their own.
	assert.ElementsMatch(t, []string{"connection up on session 0 (live messages only)", "connection up on session 1 (prematch messages only)"},
		[]string{global.RequireNext(t).String(), global.RequireNext(t).String()})
	require.NoError(t, sim.SendAlive(ctx, lo.ID, true))
	assert.Equal(t, "producer 1 up (FirstRecoveryCompleted)", global.RequireNext(t).String())
	assert.Empty(t, sim.RecoveryRequests())
	require.NoError(t, broker.Flush(ctx))
	require.NoError(t, sdk.Flush(ctx))
	assert.Equal(t, uint64(1), sdk.Stats().Recovery.DuplicateAlives, "each session delivers the alive; the second copy is dropped")
	require.NoError(t, sdk.Close(ctx))
	require.NoError(t, sdk.Close(ctx))
	st := sdk.Stats()
	require.Len(t, st.Sessions, 2)
	assert.Equal(t, uint64(1), st.Recovery.RecoveriesSkipped)
	require.NotNil(t, st.Delivery[0].Serial)
	assert.ErrorContains(t, sdk.Open(context.Background()), "closed")
}
