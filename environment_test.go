package feedkit_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/rabbitmq"
	"github.com/feedkit/feedkit/recovery"
)

// The presets are Sportradar's hosts: TLS on 5671, and the replay server paired with
// the integration API.
func TestEnvironmentPresets(t *testing.T) {
	for _, c := range []struct {
		env       feedkit.Environment
		name, url string
		api       string
	}{
		{feedkit.Integration, "integration", "amqps://stgmq.betradar.com:5671/", "https://stgapi.betradar.com"},
		{feedkit.Production, "production", "amqps://mq.betradar.com:5671/", "https://api.betradar.com"},
		{feedkit.Replay, "replay", "amqps://replaymq.betradar.com:5671/", "https://stgapi.betradar.com"},
		{feedkit.CustomEnvironment("localhost", 5672, false, "http://localhost:8080"), "custom", "amqp://localhost:5672/", "http://localhost:8080"},
	} {
		assert.Equal(t, c.name, c.env.Name)
		assert.Equal(t, c.url, c.env.AMQPURL(), c.name)
		assert.Equal(t, c.api, c.env.APIBaseURL, c.name)
	}
}

// A config that sets the broker or the API twice, or lacks the token, is refused at New,
// naming the field.
func TestEnvironmentConfigIsChecked(t *testing.T) {
	env := feedkit.CustomEnvironment("localhost", 5672, false, "http://localhost:8080")
	sessions := []feedkit.SessionConfig{{Listener: feedtest.NewRecorder()}}
	for _, c := range []struct {
		cfg  feedkit.Config
		want string
	}{
		{feedkit.Config{Environment: &env, Sessions: sessions}, "Config.AccessToken is empty"},
		{feedkit.Config{AccessToken: "t", Transport: feedtest.NewBroker(feedtest.BrokerOptions{}), Sessions: sessions}, "Config.AccessToken is set without Config.Environment"},
		{feedkit.Config{Environment: &env, AccessToken: "t", AMQP: &rabbitmq.Config{URL: "amqp://x"}, Sessions: sessions}, "Config.AMQP and Config.Environment are both set"},
		{feedkit.Config{Environment: &env, AccessToken: "t", RecoveryAPI: feed.RecoveryClientConfig{BaseURL: "http://x"}, Sessions: sessions}, "Config.RecoveryAPI.BaseURL and Config.Environment are both set"},
		{feedkit.Config{Environment: &feedkit.Environment{Name: "mine", AMQPHost: "h", AMQPPort: 70000, APIBaseURL: "http://x"}, AccessToken: "t", Sessions: sessions}, "AMQPPort 70000"},
		{feedkit.Config{Environment: &feedkit.Environment{Name: "mine", AMQPPort: 1, APIBaseURL: "http://x"}, AccessToken: "t", Sessions: sessions}, "AMQPHost is empty"},
		{feedkit.Config{Environment: &feedkit.Environment{Name: "mine", AMQPHost: "h", AMQPPort: 1}, AccessToken: "t", Sessions: sessions}, "APIBaseURL is empty"},
	} {
		_, err := feedkit.New(c.cfg)
		assert.ErrorContains(t, err, c.want)
	}
}

// lockedBuffer is a log destination safe for the SDK's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var envEpoch = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

// envRig is an SDK set up from a token and the simulator's environment (its API, and its
// embedded broker as Config.Transport), on a fake clock at envEpoch.
type envRig struct {
	sim    *feedtest.Simulator
	sdk    *feedkit.SDK
	global *feedtest.GlobalRecorder
	log    *lockedBuffer
	errs   *errorLog
}

func newEnvRig(t *testing.T, acct feedtest.Account, token string, margin time.Duration) (*envRig, error) {
	t.Helper()
	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	t.Cleanup(broker.Close)
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	clk := clocktest.NewFake(envEpoch)
	sim, err := feedtest.NewSimulator(broker, feedtest.SimulatorConfig{Producers: []feed.Producer{lo}, Clock: clk})
	require.NoError(t, err)
	api := httptest.NewServer(sim.APIHandler(acct))
	t.Cleanup(api.Close)
	env := feedkit.CustomEnvironment("", 0, false, api.URL)
	r := &envRig{sim: sim, global: feedtest.NewGlobalRecorder(), log: &lockedBuffer{}, errs: &errorLog{}}
	r.sdk, err = feedkit.New(feedkit.Config{
		Environment: &env, AccessToken: token, TokenExpiryWarning: margin,
		Transport: broker, Node: feed.Node(1), Global: r.global,
		Sessions: []feedkit.SessionConfig{{Listener: feedtest.NewRecorder()}},
		Recovery: recovery.Config{Clock: clk},
		OnError:  r.errs.add,
		Logger:   slog.New(slog.NewTextHandler(r.log, nil)),
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.sdk.Close(context.Background()) })
	return r, r.sdk.Open(t.Context())
}

// Set up from a token and an environment, the SDK reads the account's details at Open and
// logs them, follows the account's producers, and recovers them through the
// environment's API.
func TestSDKSetUpFromATokenAndAnEnvironment(t *testing.T) {
	acct := feedtest.Account{BookmakerID: 42, VirtualHost: "/unifiedfeed/42", ExpireAt: envEpoch.AddDate(0, 6, 0)}
	r, err := newEnvRig(t, acct, feedtest.DefaultAccessToken, 0)
	require.NoError(t, err)
	log := r.log.String()
	assert.Contains(t, log, `msg="feedkit: bookmaker details" bookmaker_id=42 virtual_host=/unifiedfeed/42 token_expires_at=2027-05-26T12:00:00.000Z environment=custom`)
	assert.Equal(t, "producer 1 down (InitialState)", r.global.RequireNext(t).String())
	assert.Equal(t, "connection up on session 0 (all messages)", r.global.RequireNext(t).String())
	require.NoError(t, r.sim.SendAlive(t.Context(), 1, true))
	assert.Equal(t, feedtest.CallRecoveryInitiated, r.global.RequireNext(t).Kind)
	assert.Equal(t, "producer 1 up (FirstRecoveryCompleted)", r.global.RequireNext(t).String())
	assert.Empty(t, r.errs.all(), "a token valid for six months is no news")
}

// A token the API refuses fails Open, naming the field it came from.
func TestSDKSetUpWithARefusedTokenFailsOpen(t *testing.T) {
	r, err := newEnvRig(t, feedtest.Account{}, "expired-or-wrong", 0)
	require.ErrorIs(t, err, feed.ErrUnauthorized)
	assert.ErrorContains(t, err, "feedkit: the feed's API refused the access token (Config.AccessToken)")
	assert.Empty(t, r.global.Calls(), "nothing was opened")
	assert.Empty(t, r.sim.RecoveryRequests())
}

// A token that expires within Config.TokenExpiryWarning (a week by default, by the
// SDK's clock) is warned of once at Open, to OnError and the log; Open goes on.
func TestSDKWarnsOfATokenAboutToExpire(t *testing.T) {
	for _, c := range []struct {
		name   string
		expire time.Duration
		margin time.Duration
		warns  bool
	}{
		{"three days, default margin", 72 * time.Hour, 0, true},
		{"exactly the margin", 7 * 24 * time.Hour, 0, true},
		{"a second past the margin", 7*24*time.Hour + time.Second, 0, false},
		{"thirty days, a margin of forty", 30 * 24 * time.Hour, 40 * 24 * time.Hour, true},
		{"three days, a margin of two", 72 * time.Hour, 48 * time.Hour, false},
		{"three days, warning off", 72 * time.Hour, -1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := newEnvRig(t, feedtest.Account{ExpireAt: envEpoch.Add(c.expire)}, feedtest.DefaultAccessToken, c.margin)
			require.NoError(t, err)
			errs := r.errs.all()
			if !c.warns {
				assert.Empty(t, errs)
				return
			}
			require.Len(t, errs, 1)
			assert.True(t, errors.Is(errs[0], feedkit.ErrTokenExpiring), errs[0].Error())
			assert.Contains(t, errs[0].Error(), "in "+c.expire.String())
			assert.Contains(t, r.log.String(), "level=WARN")
		})
	}
}
