package feedkit_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/recovery"
)

// RecoveryEnabledEnv overrides Config.Recovery.Disabled both ways; an empty value leaves
// the config alone. The first alive of a producer shows which: a recovery is requested,
// or the producer is up at once with the recovery counted as skipped.
func TestRecoveryEnabledEnvOverridesTheConfig(t *testing.T) {
	cases := []struct {
		env      string
		disabled bool
		requests bool
	}{
		{"", false, true},
		{"", true, false},
		{"true", true, true},
		{"1", true, true},
		{"TRUE", true, true},
		{"true", false, true},
		{"false", false, false},
		{"0", false, false},
		{"F", false, false},
		{"false", true, false},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("env=%q,disabled=%v", c.env, c.disabled), func(t *testing.T) {
			t.Setenv(feedkit.RecoveryEnabledEnv, c.env)
			broker := feedtest.NewBroker(feedtest.BrokerOptions{})
			t.Cleanup(broker.Close)
			lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
			sim, err := feedtest.NewSimulator(broker, feedtest.SimulatorConfig{Producers: []feed.Producer{lo}})
			require.NoError(t, err)
			api := httptest.NewServer(sim.RecoveryHandler())
			t.Cleanup(api.Close)
			global := feedtest.NewGlobalRecorder()
			sdk, err := feedkit.New(feedkit.Config{Transport: broker, Global: global, Node: feed.Node(7),
				API:      feedapi.Config{BaseURL: api.URL, AccessToken: feedtest.DefaultAccessToken},
				Recovery: recovery.Config{Producers: []feed.Producer{lo}, Disabled: c.disabled}})
			require.NoError(t, err)
			require.NoError(t, sdk.AddSession(feed.AllMessages, feedtest.NewRecorder()))
			ctx := t.Context()
			require.NoError(t, sdk.Open(ctx))
			t.Cleanup(func() { require.NoError(t, sdk.Close(context.Background())) })
			require.Equal(t, "producer 1 down (InitialState)", global.RequireNext(t).String())
			require.Equal(t, "connection up on session 0 (all messages)", global.RequireNext(t).String())
			require.NoError(t, sim.SendAlive(ctx, lo.ID, true))
			if c.requests {
				assert.Equal(t, feedtest.CallRecoveryInitiated, global.RequireNext(t).Kind)
				assert.Len(t, sim.RecoveryRequests(), 1)
				assert.Zero(t, sdk.Stats().Recovery.RecoveriesSkipped)
				st, _ := sdk.Producer(lo.ID)
				assert.Equal(t, feed.Node(7), st.RecoveryNodeID, "New wires Config.Node into the manager")
				return
			}
			assert.Equal(t, "producer 1 up (FirstRecoveryCompleted)", global.RequireNext(t).String())
			assert.Empty(t, sim.RecoveryRequests())
			assert.Equal(t, uint64(1), sdk.Stats().Recovery.RecoveriesSkipped)
		})
	}
}

// A value of RecoveryEnabledEnv that is not a boolean is refused by New, naming the
// variable and the value.
func TestRecoveryEnabledEnvBadValueIsRefused(t *testing.T) {
	for _, v := range []string{"maybe", "yes", "on", " true"} {
		t.Run(v, func(t *testing.T) {
			t.Setenv(feedkit.RecoveryEnabledEnv, v)
			broker := feedtest.NewBroker(feedtest.BrokerOptions{})
			t.Cleanup(broker.Close)
			sdk, err := feedkit.New(feedkit.Config{Transport: broker,
				API: feedapi.Config{BaseURL: "http://127.0.0.1:1", AccessToken: "t"}})
			require.Error(t, err)
			assert.Nil(t, sdk)
			assert.Equal(t, fmt.Sprintf("feedkit: environment variable FEEDKIT_RECOVERY_ENABLED=%q is not a boolean", v), err.Error())
		})
	}
}

// Forced on by the environment, recoveries need the recovery API even when the config
// disables them, and New says how to run without.
func TestRecoveryEnabledEnvNeedsTheAPI(t *testing.T) {
	t.Setenv(feedkit.RecoveryEnabledEnv, "true")
	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	t.Cleanup(broker.Close)
	_, err := feedkit.New(feedkit.Config{Transport: broker,
		Recovery: recovery.Config{Disabled: true}})
	assert.ErrorContains(t, err, "Config.API.BaseURL is empty and recoveries are enabled")
	assert.ErrorContains(t, err, "FEEDKIT_RECOVERY_ENABLED=false")
}
