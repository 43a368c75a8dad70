package feedkit_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/rabbitmq"
	"github.com/feedkit/feedkit/internal/testenv"
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
		{feedkit.CustomEnvironment("amqp://relay:secret@localhost:5672/feed", "http://localhost:8080"), "custom", "amqp://relay:secret@localhost:5672/feed", "http://localhost:8080"},
	} {
		assert.Equal(t, c.name, c.env.Name)
		assert.Equal(t, c.url, c.env.AMQPURL, c.name)
		assert.Equal(t, c.api, c.env.APIBaseURL, c.name)
	}
}

// A config that sets the broker or the API twice, or lacks the token, is refused at New,
// naming the field; a password in a bad URL is not repeated.
func TestEnvironmentConfigIsChecked(t *testing.T) {
	env := feedkit.CustomEnvironment("amqp://localhost:5672/", "http://localhost:8080")
	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	t.Cleanup(broker.Close)
	for _, c := range []struct {
		cfg  feedkit.Config
		want string
	}{
		{feedkit.Config{Environment: &env}, "Config.AccessToken is empty"},
		{feedkit.Config{AccessToken: "t", Transport: broker}, "Config.AccessToken is set without Config.Environment"},
		{feedkit.Config{Environment: &env, AccessToken: "t", AMQP: &rabbitmq.Config{URL: "amqp://x"}}, "Config.AMQP.URL is set: the environment gives the broker's URL"},
		{feedkit.Config{Environment: &env, AccessToken: "t", AMQP: &rabbitmq.Config{AccessToken: "u"}}, "Config.AMQP.AccessToken is set"},
		{feedkit.Config{Environment: &env, AccessToken: "t", AMQP: &rabbitmq.Config{VirtualHost: "/v"}}, "Config.AMQP's virtual host is set"},
		{feedkit.Config{Environment: &env, AccessToken: "t", AMQP: &rabbitmq.Config{Prefetch: -1}}, "Prefetch -1 must not be negative"},
		{feedkit.Config{Environment: &env, AccessToken: "t", Transport: broker, AMQP: &rabbitmq.Config{}}, "Config.Transport and Config.AMQP are both set"},
		{feedkit.Config{Environment: &env, AccessToken: "t", API: feedapi.Config{BaseURL: "http://x"}}, "Config.API.BaseURL and Config.Environment are both set"},
		{feedkit.Config{Environment: &env, AccessToken: "t", API: feedapi.Config{AccessToken: "u"}}, "Config.API.AccessToken and Config.Environment are both set"},
		{feedkit.Config{Environment: &feedkit.Environment{Name: "mine", AMQPURL: "http://relay:secret@h/", APIBaseURL: "http://x"}, AccessToken: "t"}, `Config.Environment (mine): AMQPURL "http://relay:xxxxx@h/" is not an amqp:// or amqps:// URL`},
		{feedkit.Config{Environment: &feedkit.Environment{Name: "mine", APIBaseURL: "http://x"}, AccessToken: "t"}, "AMQPURL is empty and Config.Transport is nil"},
		{feedkit.Config{Environment: &feedkit.Environment{Name: "mine", AMQPURL: "amqp://h/"}, AccessToken: "t"}, "APIBaseURL is empty"},
		{feedkit.Config{Environment: &env, AccessToken: "t", Recovery: recovery.Config{Clock: clocktest.NewFake(envEpoch)}}, "Config.Recovery.Clock is set: set Config.Clock"},
	} {
		_, err := feedkit.New(c.cfg)
		assert.ErrorContains(t, err, c.want)
		if err != nil {
			assert.NotContains(t, err.Error(), "secret")
		}
	}
}

// The feed's own broker (no login and no virtual host in its URL) is reached with the
// token as user name and the account's virtual host, which the API gives (whoami): here
// a broker that refuses connections, whose errors name the address it was given. Open
// goes on; the API was asked once, and BookmakerDetails has what it said.
func TestEnvironmentBrokerTakesTheVirtualHostFromTheAPI(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close()) // a broker that refuses connections: Open still succeeds

	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	sim, err := feedtest.NewSimulator(feedtest.NewBroker(feedtest.BrokerOptions{}), feedtest.SimulatorConfig{Producers: []feed.Producer{lo}})
	require.NoError(t, err)
	var whoami atomic.Int32
	handler := sim.APIHandler(feedtest.Account{BookmakerID: 42, VirtualHost: "/unifiedfeed/42"})
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/whoami.xml") {
			whoami.Add(1)
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(api.Close)
	env := feedkit.CustomEnvironment("amqp://"+addr+"/", api.URL)
	errs := make(errorSink, 16)
	sdk, err := feedkit.New(feedkit.Config{Environment: &env, AccessToken: feedtest.DefaultAccessToken, Node: feed.Node(1),
		OnError: errs.onError})
	require.NoError(t, err)
	_, known := sdk.BookmakerDetails()
	assert.False(t, known, "before Open")
	require.NoError(t, sdk.AddSession(feed.AllMessages, feedtest.NewRecorder()))
	t.Cleanup(func() { _ = sdk.Close(context.Background()) })
	require.NoError(t, sdk.Open(t.Context()))

	assert.ErrorContains(t, errs.next(t), `rabbitmq: connect to amqp://`+addr+` (vhost "/unifiedfeed/42") (will retry)`)
	assert.Equal(t, int32(1), whoami.Load(), "the transport took the virtual host Open had read")
	d, known := sdk.BookmakerDetails()
	require.True(t, known)
	assert.Equal(t, 42, d.BookmakerID)
	assert.Equal(t, "/unifiedfeed/42", d.VirtualHost)
	assert.NotNil(t, sdk.Stats().Transport, "the environment's broker has the RabbitMQ transport's counters")
}

// An environment whose broker logs in with a user and password of its own (a RabbitMQ
// of the operator's, a relay) is reached with them and its URL's virtual host, while
// the API takes the token; Config.AMQP tunes the connection. Every message published to
// the broker reaches the listener.
func TestEnvironmentBrokerWithItsOwnLogin(t *testing.T) {
	url := testenv.AMQPVhost(t) // amqp://guest:guest@127.0.0.1:port/feedkit-test-...
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	sim, err := feedtest.NewSimulator(feedtest.NewBroker(feedtest.BrokerOptions{}), feedtest.SimulatorConfig{Producers: []feed.Producer{lo}})
	require.NoError(t, err)
	api := httptest.NewServer(sim.APIHandler(feedtest.Account{BookmakerID: 42, VirtualHost: "/unifiedfeed/42"}))
	t.Cleanup(api.Close)
	env := feedkit.CustomEnvironment(url, api.URL)
	rec, global := feedtest.NewRecorder(), feedtest.NewGlobalRecorder()
	sdk, err := feedkit.New(feedkit.Config{Environment: &env, AccessToken: feedtest.DefaultAccessToken, Node: feed.Node(1),
		AMQP: &rabbitmq.Config{DeclareExchange: true, Prefetch: 8}, Global: global})
	require.NoError(t, err)
	require.NoError(t, sdk.AddSession(feed.AllMessages, rec))
	t.Cleanup(func() { _ = sdk.Close(context.Background()) })
	require.NoError(t, sdk.Open(t.Context()))
	assert.Equal(t, "connection up on session 0 (all messages)", nextConnectionCall(t, global))
	d, _ := sdk.BookmakerDetails()
	assert.Equal(t, 42, d.BookmakerID, "the API took the token")

	pub, err := rabbitmq.NewPublisher(t.Context(), rabbitmq.Config{URL: url, DeclareExchange: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = pub.Close(context.Background()) })
	const sent = 20
	for id := 1; id <= sent; id++ {
		key := fmt.Sprintf("hi.-.live.bet_stop.1.sr:match.%d.-", id)
		require.NoError(t, pub.Publish(t.Context(), key, fmt.Appendf(nil, `<bet_stop event_id="sr:match:%d" product="1" timestamp="%d"/>`, id, id)))
	}
	require.NoError(t, pub.Flush(t.Context()))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	require.NoError(t, rec.Wait(ctx, sent))
	require.NoError(t, sdk.Flush(ctx))
	assert.Equal(t, uint64(sent), sdk.Stats().Transport.Delivered)
	byEvent := rec.ByEvent()
	assert.Len(t, byEvent, sent, "every message received")
	for ev, ms := range byEvent {
		assert.Len(t, ms, 1, "%s received once", ev)
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
	env := feedkit.CustomEnvironment("", api.URL)
	r := &envRig{sim: sim, global: feedtest.NewGlobalRecorder(), log: &lockedBuffer{}, errs: &errorLog{}}
	r.sdk, err = feedkit.New(feedkit.Config{
		Environment: &env, AccessToken: token, TokenExpiryWarning: margin,
		Transport: broker, Node: feed.Node(1), Global: r.global,
		Clock:   clk,
		OnError: r.errs.add,
		Logger:  slog.New(slog.NewTextHandler(r.log, nil)),
	})
	require.NoError(t, err)
	require.NoError(t, r.sdk.AddSession(feed.AllMessages, feedtest.NewRecorder()))
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
	assert.Contains(t, log, `msg="feedkit: bookmaker details" bookmaker_id=42 virtual_host=/unifiedfeed/42 token_expires_at=2027-05-26T12:00:00.000Z clock_offset=500ms environment=custom`)
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

// Open reads the offset between the API server's clock and this machine's off the
// answer's Date header, keeps it in BookmakerDetails, and warns (ErrClockOffset) when it
// is above Config.ClockOffsetWarning; Open goes on either way.
func TestSDKWarnsOfAClockFarFromTheFeeds(t *testing.T) {
	for _, c := range []struct {
		name    string
		ahead   time.Duration // the API server's clock against the SDK's
		warning time.Duration
		want    string // "" for no warning
	}{
		{"30s ahead", 30 * time.Second, 0, "s ahead of this machine's (Config.ClockOffsetWarning 5s)"},
		{"30s behind", -30 * time.Second, 0, "s behind this machine's (Config.ClockOffsetWarning 5s)"},
		{"within the default", 3 * time.Second, 0, ""},
		{"within a wider warning", 30 * time.Second, time.Minute, ""},
		{"warning off", time.Hour, -1, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			broker := feedtest.NewBroker(feedtest.BrokerOptions{})
			t.Cleanup(broker.Close)
			lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
			sim, err := feedtest.NewSimulator(broker, feedtest.SimulatorConfig{Producers: []feed.Producer{lo},
				Clock: clocktest.NewFake(envEpoch.Add(c.ahead))})
			require.NoError(t, err)
			api := httptest.NewServer(sim.APIHandler(feedtest.Account{BookmakerID: 7, VirtualHost: "/unifiedfeed/7"}))
			t.Cleanup(api.Close)
			env := feedkit.CustomEnvironment("", api.URL)
			errs := &errorLog{}
			sdk, err := feedkit.New(feedkit.Config{Environment: &env, AccessToken: feedtest.DefaultAccessToken,
				Transport: broker, ClockOffsetWarning: c.warning, Clock: clocktest.NewFake(envEpoch), OnError: errs.add})
			require.NoError(t, err)
			require.NoError(t, sdk.AddSession(feed.AllMessages, feedtest.NewRecorder()))
			t.Cleanup(func() { _ = sdk.Close(context.Background()) })
			require.NoError(t, sdk.Open(t.Context()))

			d, ok := sdk.BookmakerDetails()
			require.True(t, ok)
			assert.Equal(t, 7, d.BookmakerID)
			require.True(t, d.HasClockOffset)
			// Date counts whole seconds: the offset is read to within a second.
			assert.InDelta(t, c.ahead.Seconds(), d.ClockOffset.Seconds(), 1)
			var offsets []error
			for _, err := range errs.all() {
				if errors.Is(err, feedkit.ErrClockOffset) {
					offsets = append(offsets, err)
				}
			}
			if c.want == "" {
				assert.Empty(t, offsets)
				return
			}
			require.Len(t, offsets, 1)
			assert.Contains(t, offsets[0].Error(), c.want)
		})
	}
}
