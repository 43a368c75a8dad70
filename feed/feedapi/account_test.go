package feedapi_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// A producers.xml as the feed's API sends it is read whole: each field, the API path from
// api_url, the window from minutes, and the heartbeat limit of the scope.
func TestParseProducerDescriptions(t *testing.T) {
	doc := `<?xml version="1.0" encoding="UTF-8"?>
<producers response_code="OK">
 <producer id="1" name="LO" description="Live Odds" api_url="https://api.betradar.com/v1/liveodds/" active="true" scope="live" stateful_recovery_window_in_minutes="600"/>
 <producer id="5" name="PremiumCricket" description="Premium Cricket" api_url="https://api.betradar.com/v1/premium_cricket/" active="false" scope="live|prematch" stateful_recovery_window_in_minutes="4320"/>
</producers>`
	ps, err := feedapi.ParseProducerDescriptions([]byte(doc))
	require.NoError(t, err)
	require.Equal(t, []feedapi.ProducerDescription{
		{Producer: feed.Producer{ID: 1, Name: "LO", Description: "Live Odds", APIPath: "liveodds", Scope: feed.ScopeLive,
			MaxRecoveryWindow: 10 * time.Hour, HeartbeatLimit: feed.LiveHeartbeatLimit},
			Active: true, APIURL: "https://api.betradar.com/v1/liveodds/"},
		{Producer: feed.Producer{ID: 5, Name: "PremiumCricket", Description: "Premium Cricket", APIPath: "premium_cricket",
			Scope: feed.ScopeLive | feed.ScopePrematch, MaxRecoveryWindow: 72 * time.Hour, HeartbeatLimit: feed.LiveHeartbeatLimit},
			Active: false, APIURL: "https://api.betradar.com/v1/premium_cricket/"},
	}, ps)
	for _, p := range ps {
		require.NoError(t, p.Validate())
	}
}

// A producer that cannot be read fails the whole list, naming the producer and field.
func TestParseProducerDescriptionsRefusesABadProducer(t *testing.T) {
	const ok = `id="1" name="LO" api_url="https://api.betradar.com/v1/liveodds/" active="true" scope="live" stateful_recovery_window_in_minutes="600"`
	for _, c := range []struct{ attrs, want string }{
		{`id="x" name="LO" api_url="https://a/v1/lo/" active="true" scope="live" stateful_recovery_window_in_minutes="1"`, `id "x"`},
		{`id="2" api_url="https://a/v1/lo/" active="true" scope="live" stateful_recovery_window_in_minutes="1"`, `name ""`},
		{`id="2" name="X" api_url="https://a/v1/lo/" active="yes please" scope="live" stateful_recovery_window_in_minutes="1"`, `active "yes please"`},
		{`id="2" name="X" api_url="https://a/v1/lo/" active="true" scope="live|bingo" stateful_recovery_window_in_minutes="1"`, `scope "live|bingo"`},
		{`id="2" name="X" api_url="https://a/v1/lo/" active="true" scope="live"`, `stateful_recovery_window_in_minutes ""`},
		{`id="2" name="X" api_url="/v1/lo/" active="true" scope="live" stateful_recovery_window_in_minutes="1"`, `api_url "/v1/lo/"`},
	} {
		_, err := feedapi.ParseProducerDescriptions([]byte(`<producers><producer ` + ok + `/><producer ` + c.attrs + `/></producers>`))
		require.Error(t, err, c.attrs)
		assert.Contains(t, err.Error(), "producer 1 ", c.attrs)
		assert.Contains(t, err.Error(), c.want, c.attrs)
	}
}

// whoami.xml gives the bookmaker id, the virtual host and the token's expiry.
func TestParseBookmakerDetails(t *testing.T) {
	d, err := feedapi.ParseBookmakerDetails([]byte(`<bookmaker_details response_code="OK" expire_at="2027-01-02T03:04:05Z" bookmaker_id="12345" virtual_host="/unifiedfeed/12345"/>`))
	require.NoError(t, err)
	assert.Equal(t, feedapi.BookmakerDetails{BookmakerID: 12345, VirtualHost: "/unifiedfeed/12345",
		ExpireAt: time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC)}, d)
	_, err = feedapi.ParseBookmakerDetails([]byte(`<bookmaker_details bookmaker_id="0" virtual_host="/v"/>`))
	assert.ErrorContains(t, err, `bookmaker_id "0"`)
	_, err = feedapi.ParseBookmakerDetails([]byte(`<bookmaker_details bookmaker_id="1"/>`))
	assert.ErrorContains(t, err, "virtual_host is empty")
	_, err = feedapi.ParseBookmakerDetails([]byte(`<bookmaker_details bookmaker_id="1" virtual_host="/v" expire_at="soon"/>`))
	assert.ErrorContains(t, err, `expire_at "soon"`)
}

// The client reads both from the simulator's API: whoami describes the account given,
// producers.xml lists every known producer, active for those the simulator sends; a wrong
// token is refused with ErrUnauthorized.
func TestClientReadsTheAccountFromTheSimulator(t *testing.T) {
	clk := clocktest.NewFake(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	all := feed.DefaultProducers()
	lo, _ := feed.LookupProducer(all, 1)
	sim, err := feedtest.NewSimulator(feedtest.NewBroker(feedtest.BrokerOptions{}), feedtest.SimulatorConfig{Producers: []feed.Producer{lo}, Clock: clk})
	require.NoError(t, err)
	expire := time.Date(2027, 5, 1, 0, 0, 0, 0, time.UTC)
	srv := httptest.NewServer(sim.APIHandler(feedtest.Account{BookmakerID: 42, VirtualHost: "/unifiedfeed/42", ExpireAt: expire}))
	t.Cleanup(srv.Close)
	c, err := feedapi.NewClient(feedapi.Config{BaseURL: srv.URL, AccessToken: feedtest.DefaultAccessToken, Clock: clk})
	require.NoError(t, err)

	d, err := c.WhoAmI(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 42, d.BookmakerID)
	assert.Equal(t, "/unifiedfeed/42", d.VirtualHost)
	assert.Equal(t, expire, d.ExpireAt)
	// The simulator's API tells the time of its clock, the client's too, in whole
	// seconds: the offset is within the half second the rounding allows.
	require.True(t, d.HasClockOffset)
	assert.LessOrEqual(t, d.ClockOffset.Abs(), time.Second/2)

	ps, err := c.ProducerDescriptions(t.Context())
	require.NoError(t, err)
	require.Len(t, ps, len(all))
	for i, p := range ps {
		assert.Equal(t, all[i], p.Producer)
		assert.Equal(t, p.ID == 1, p.Active, "producer %d", p.ID)
		assert.Equal(t, srv.URL+"/v1/"+all[i].APIPath+"/", p.APIURL)
	}

	bad, err := feedapi.NewClient(feedapi.Config{BaseURL: srv.URL, AccessToken: "wrong"})
	require.NoError(t, err)
	_, err = bad.WhoAmI(t.Context())
	assert.ErrorIs(t, err, feed.ErrUnauthorized)
	_, err = bad.ProducerDescriptions(t.Context())
	assert.ErrorIs(t, err, feed.ErrUnauthorized)
}
