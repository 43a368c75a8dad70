package feedapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
)

// scriptedAPI answers each request with the next status of its script (200 with body
// "ok" once the script is spent) and counts the requests by path.
type scriptedAPI struct {
	mu         sync.Mutex
	script     []int
	retryAfter string
	hits       map[string]int
}

func newScriptedAPI(t *testing.T, script ...int) (*scriptedAPI, *httptest.Server) {
	t.Helper()
	a := &scriptedAPI{script: script, hits: make(map[string]int)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.hits[r.URL.Path]++
		status := http.StatusOK
		if len(a.script) > 0 {
			status, a.script = a.script[0], a.script[1:]
		}
		retryAfter := a.retryAfter
		a.mu.Unlock()
		if status == http.StatusTooManyRequests && retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(http.StatusText(status)))
	}))
	t.Cleanup(srv.Close)
	return a, srv
}

func (a *scriptedAPI) count(path string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.hits[path]
}

// responses collects what OnResponse saw.
type responses struct {
	mu  sync.Mutex
	all []feedapi.Response
}

func (r *responses) add(x feedapi.Response) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, x)
}

func (r *responses) list() []feedapi.Response {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]feedapi.Response(nil), r.all...)
}

var t0 = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

// getAsync runs c.Get on a goroutine of its own and returns its result's channel.
func getAsync(ctx context.Context, c *feedapi.Client, path string) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := c.Get(ctx, path, 1<<10)
		done <- err
	}()
	return done
}

// A GET that meets a server error is sent again after the backoff, on the client's
// clock, and succeeds; OnResponse sees both attempts, numbered, with their status.
func TestGetRetriesAServerError(t *testing.T) {
	api, srv := newScriptedAPI(t, http.StatusServiceUnavailable)
	clk := clocktest.NewFake(t0)
	var seen responses
	c, err := feedapi.NewClient(feedapi.Config{BaseURL: srv.URL, AccessToken: "secret", Clock: clk, OnResponse: seen.add})
	require.NoError(t, err)

	done := getAsync(t.Context(), c, "v1/descriptions/en/markets.xml")
	clk.BlockUntil(1) // the backoff's timer
	at, ok := clk.Next()
	require.True(t, ok)
	assert.LessOrEqual(t, at.Sub(t0), feedapi.DefaultRetryInitial, "the first backoff")
	clk.Set(at)
	require.NoError(t, <-done)

	assert.Equal(t, 2, api.count("/v1/descriptions/en/markets.xml"))
	got := seen.list()
	require.Len(t, got, 2)
	assert.Equal(t, []int{1, 2}, []int{got[0].Attempt, got[1].Attempt})
	assert.Equal(t, []int{503, 200}, []int{got[0].StatusCode, got[1].StatusCode})
	assert.Equal(t, "OK", string(got[1].Body))
	assert.Equal(t, "/v1/descriptions/{lang}/markets.xml", got[1].Endpoint)
	assert.Equal(t, feedapi.Stats{Requests: 2, Failures: 1, Retries: 1}, c.Stats())
}

// A GET is sent MaxAttempts times at most; the last answer's error is returned.
func TestGetGivesUpAfterMaxAttempts(t *testing.T) {
	api, srv := newScriptedAPI(t, 500, 502, 503, 504)
	clk := clocktest.NewFake(t0)
	c, err := feedapi.NewClient(feedapi.Config{BaseURL: srv.URL, AccessToken: "secret", Clock: clk, MaxAttempts: 3})
	require.NoError(t, err)

	done := getAsync(t.Context(), c, "v1/x.xml")
	for range 2 {
		clk.BlockUntil(1)
		at, _ := clk.Next()
		clk.Set(at)
	}
	err = <-done
	var apiErr *feed.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 503, apiErr.StatusCode, "the third answer's")
	assert.Equal(t, 3, api.count("/v1/x.xml"))
}

// What a retry cannot change is not retried: a 404, an answer too large. Nor is a
// recovery request, whatever its answer: package recovery retries it within the
// account's limits.
func TestWhatIsNotRetried(t *testing.T) {
	api, srv := newScriptedAPI(t, http.StatusNotFound, http.StatusServiceUnavailable)
	c, err := feedapi.NewClient(feedapi.Config{BaseURL: srv.URL, AccessToken: "secret", Clock: clocktest.NewFake(t0)})
	require.NoError(t, err)

	_, err = c.Get(t.Context(), "v1/missing.xml", 1<<10)
	assert.ErrorIs(t, err, feed.ErrNotFound)
	assert.Equal(t, 1, api.count("/v1/missing.xml"))

	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	err = c.InitiateRecovery(t.Context(), lo, t0, 1)
	assert.ErrorIs(t, err, feed.ErrServerError)
	assert.Equal(t, 1, api.count("/v1/liveodds/recovery/initiate_request"))

	_, err = c.Get(t.Context(), "v1/big.xml", 2) // "OK" and more would do; "OK" is 2 bytes
	require.NoError(t, err)
	_, err = c.Get(t.Context(), "v1/big.xml", 1)
	assert.ErrorContains(t, err, "larger than 1 bytes")
	assert.Equal(t, 2, api.count("/v1/big.xml"))
}

// After a 429, the client sends nothing more to that endpoint until its Retry-After has
// passed: a request for another event of the same endpoint fails at once with a
// HeldError (ErrTooManyRequests), another endpoint is not held, and once the pause is
// over the endpoint is asked again.
func TestA429HoldsItsEndpoint(t *testing.T) {
	api, srv := newScriptedAPI(t, http.StatusTooManyRequests)
	api.retryAfter = "30"
	clk := clocktest.NewFake(t0)
	c, err := feedapi.NewClient(feedapi.Config{BaseURL: srv.URL, AccessToken: "secret", Clock: clk, MaxAttempts: 1})
	require.NoError(t, err)
	ctx := t.Context()

	_, err = c.Get(ctx, "v1/sports/en/sport_events/sr:match:1/summary.xml", 1<<10)
	var apiErr *feed.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 30*time.Second, apiErr.RetryAfter)

	_, err = c.Get(ctx, "v1/sports/de/sport_events/sr:match:2/summary.xml", 1<<10)
	var held *feedapi.HeldError
	require.ErrorAs(t, err, &held)
	assert.ErrorIs(t, err, feed.ErrTooManyRequests)
	assert.Equal(t, "/v1/sports/{lang}/sport_events/{urn}/summary.xml", held.Endpoint)
	assert.Equal(t, t0.Add(30*time.Second), held.Until)
	assert.Zero(t, api.count("/v1/sports/de/sport_events/sr:match:2/summary.xml"), "not sent")

	_, err = c.Get(ctx, "v1/sports/en/competitors/sr:competitor:1/profile.xml", 1<<10)
	require.NoError(t, err, "another endpoint is not held")

	clk.Advance(30*time.Second - time.Nanosecond)
	_, err = c.Get(ctx, "v1/sports/de/sport_events/sr:match:2/summary.xml", 1<<10)
	require.ErrorAs(t, err, &held, "a nanosecond early")
	clk.Advance(time.Nanosecond)
	_, err = c.Get(ctx, "v1/sports/de/sport_events/sr:match:2/summary.xml", 1<<10)
	require.NoError(t, err, "the pause is over")
	assert.Equal(t, uint64(2), c.Stats().Held)
}

// A GET retried after a 429 waits the Retry-After, not the shorter backoff; a
// Retry-After longer than RetryMax is not waited for: the error returns at once.
func TestRetryAfterPacesTheRetry(t *testing.T) {
	api, srv := newScriptedAPI(t, http.StatusTooManyRequests)
	api.retryAfter = "5"
	clk := clocktest.NewFake(t0)
	c, err := feedapi.NewClient(feedapi.Config{BaseURL: srv.URL, AccessToken: "secret", Clock: clk, RetryMax: 10 * time.Second})
	require.NoError(t, err)
	done := getAsync(t.Context(), c, "v1/x.xml")
	clk.BlockUntil(1)
	at, _ := clk.Next()
	assert.Equal(t, t0.Add(5*time.Second), at)
	clk.Set(at)
	require.NoError(t, <-done)

	api.mu.Lock()
	api.script, api.retryAfter = []int{http.StatusTooManyRequests}, strconv.Itoa(60)
	api.mu.Unlock()
	_, err = c.Get(t.Context(), "v1/y.xml", 1<<10)
	require.ErrorIs(t, err, feed.ErrTooManyRequests)
	assert.Equal(t, 1, api.count("/v1/y.xml"), "a minute is past RetryMax: no wait, no retry")
}

// A caller whose context ends during the backoff gets the last error at once.
func TestGetStopsWaitingWhenTheCallerGoes(t *testing.T) {
	_, srv := newScriptedAPI(t, 503, 503)
	clk := clocktest.NewFake(t0)
	c, err := feedapi.NewClient(feedapi.Config{BaseURL: srv.URL, AccessToken: "secret", Clock: clk})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := getAsync(ctx, c, "v1/x.xml")
	clk.BlockUntil(1)
	cancel()
	assert.ErrorIs(t, <-done, feed.ErrServerError)
}

// OnResponse sees a failed attempt too: no status, the error, which names the URL and
// never the token.
func TestOnResponseSeesAFailedAttempt(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there now
	var seen responses
	c, err := feedapi.NewClient(feedapi.Config{BaseURL: url, AccessToken: "s3cret", MaxAttempts: 1, OnResponse: seen.add})
	require.NoError(t, err)
	_, err = c.Get(t.Context(), "v1/users/whoami.xml", 1<<10)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "s3cret")
	got := seen.list()
	require.Len(t, got, 1)
	assert.Zero(t, got[0].StatusCode)
	assert.Equal(t, url+"/v1/users/whoami.xml", got[0].URL)
	assert.ErrorContains(t, got[0].Err, url+"/v1/users/whoami.xml")
	assert.False(t, errors.Is(got[0].Err, feed.ErrServerError))
}

// Endpoint leaves out what varies, and only that.
func TestEndpoint(t *testing.T) {
	for path, want := range map[string]string{
		"/v1/users/whoami.xml":                                         "/v1/users/whoami.xml",
		"/v1/descriptions/producers.xml":                               "/v1/descriptions/producers.xml",
		"/v1/descriptions/de/markets.xml":                              "/v1/descriptions/{lang}/markets.xml",
		"/v1/descriptions/en/markets/534/variants/pre:markettext:1234": "/v1/descriptions/{lang}/markets/{id}/variants/{urn}",
		"/v1/sports/en/sport_events/sr:match:-7/summary.xml":           "/v1/sports/{lang}/sport_events/{urn}/summary.xml",
		"/v1/sports/en/sport_events/sr%3Amatch%3A7/summary.xml":        "/v1/sports/{lang}/sport_events/{urn}/summary.xml",
		"/v1/sports/en/schedules/2026-11-28/schedule.xml":              "/v1/sports/{lang}/schedules/{date}/schedule.xml",
		"/v1/sports/en/sports.xml":                                     "/v1/sports/{lang}/sports.xml",
		"/v1/pre/recovery/initiate_request":                            "/v1/{product}/recovery/initiate_request",
		"/v1/liveodds/odds/events/sr:match:1/initiate_request":         "/v1/{product}/odds/events/{urn}/initiate_request",
		"/v1/p7/stateful_messages/events/sr:match:1/initiate_request":  "/v1/{product}/stateful_messages/events/{urn}/initiate_request",
		"/v1/sports/en/sport_events/not:a-urn/summary.xml":             "/v1/sports/{lang}/sport_events/not:a-urn/summary.xml",
	} {
		assert.Equal(t, want, feedapi.Endpoint(path), path)
	}
}

// BookmakerDetails.ClockOffset is the server's Date against the middle of the request,
// on the client's clock: a server ten seconds ahead is found ten seconds ahead.
func TestWhoAmIReadsTheServersClockOffset(t *testing.T) {
	clk := clocktest.NewFake(t0)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Date", clk.Now().Add(10*time.Second).Format(http.TimeFormat))
		_, _ = w.Write([]byte(`<bookmaker_details bookmaker_id="7" virtual_host="/unifiedfeed/7"/>`))
	}))
	t.Cleanup(srv.Close)
	c, err := feedapi.NewClient(feedapi.Config{BaseURL: srv.URL, AccessToken: "secret", Clock: clk})
	require.NoError(t, err)
	d, err := c.WhoAmI(t.Context())
	require.NoError(t, err)
	require.True(t, d.HasClockOffset)
	// Date counts whole seconds: the server's time was within [t0+10s, t0+11s).
	assert.Equal(t, 10*time.Second+time.Second/2, d.ClockOffset)

	vhost, err := c.VirtualHost(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "/unifiedfeed/7", vhost)
}

// VirtualHost asks whoami when no WhoAmI came before it, once.
func TestVirtualHostAsksOnce(t *testing.T) {
	var hits int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		_, _ = w.Write([]byte(`<bookmaker_details bookmaker_id="7" virtual_host="/unifiedfeed/7"/>`))
	}))
	t.Cleanup(srv.Close)
	c, err := feedapi.NewClient(feedapi.Config{BaseURL: srv.URL, AccessToken: "secret"})
	require.NoError(t, err)
	for range 3 {
		vhost, err := c.VirtualHost(t.Context())
		require.NoError(t, err)
		assert.Equal(t, "/unifiedfeed/7", vhost)
	}
	assert.Equal(t, 1, hits)
}
