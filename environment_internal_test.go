package feedkit

import (
	"context"
	"net"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/rabbitmq"
)

// The environment's broker is reached with the token as user name and the virtual host
// the account's details give at Open; before Open it is not known, and no session could
// subscribe.
func TestEnvironmentBrokerTakesTheVirtualHostFromWhoAmI(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close()) // a broker that refuses connections: Open still succeeds

	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	sim, err := feedtest.NewSimulator(feedtest.NewBroker(feedtest.BrokerOptions{}), feedtest.SimulatorConfig{Producers: []feed.Producer{lo}})
	require.NoError(t, err)
	api := httptest.NewServer(sim.APIHandler(feedtest.Account{BookmakerID: 42, VirtualHost: "/unifiedfeed/42"}))
	t.Cleanup(api.Close)
	env := CustomEnvironment("127.0.0.1", port, false, api.URL)
	sdk, err := New(Config{Environment: &env, AccessToken: feedtest.DefaultAccessToken, Node: feed.Node(1),
		Sessions: []SessionConfig{{Listener: feedtest.NewRecorder()}}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sdk.Close(context.Background()) })
	et, ok := sdk.transport.(*envTransport)
	require.True(t, ok, "the SDK's transport is the environment's")
	_, known := et.config()
	assert.False(t, known)
	_, err = et.Subscribe(t.Context(), []string{"#"}, nil)
	assert.ErrorContains(t, err, "virtual host is not known yet")

	require.NoError(t, sdk.Open(t.Context()))
	c, known := et.config()
	require.True(t, known)
	c.OnError, c.Logger = nil, nil
	assert.Equal(t, rabbitmq.Config{URL: "amqp://127.0.0.1:" + strconv.Itoa(port) + "/", AccessToken: feedtest.DefaultAccessToken,
		VirtualHost: "/unifiedfeed/42"}, c)
	assert.Equal(t, api.URL, sdk.cfg.RecoveryAPI.BaseURL)
	assert.Equal(t, feedtest.DefaultAccessToken, sdk.cfg.RecoveryAPI.AccessToken)
	assert.NotNil(t, sdk.Stats().Transport, "the environment's broker has the RabbitMQ transport's counters")
}
