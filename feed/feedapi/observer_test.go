package feedapi_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
)

// apiCall is what an Observer was told of one attempt, or of one request held.
type apiCall struct {
	Method, Endpoint string
	Status           int
	Took             time.Duration
	Held             bool
}

// apiObserver records what a Client tells its Observer, in order.
type apiObserver struct {
	mu    sync.Mutex
	calls []apiCall
}

func (o *apiObserver) APIRequest(method, endpoint string, status int, took time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls = append(o.calls, apiCall{Method: method, Endpoint: endpoint, Status: status, Took: took})
}

func (o *apiObserver) APIRequestHeld(method, endpoint string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls = append(o.calls, apiCall{Method: method, Endpoint: endpoint, Held: true})
}

func (o *apiObserver) list() []apiCall {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]apiCall(nil), o.calls...)
}

// counts returns the attempts and the held requests told.
func (o *apiObserver) counts() (requests, held uint64) {
	for _, c := range o.list() {
		if c.Held {
			held++
		} else {
			requests++
		}
	}
	return requests, held
}

// The Observer is told of every attempt, retries, failures and POSTs included, with its
// endpoint, its status (0 when no answer came) and how long it took on the client's
// clock, and of every GET held after a 429: the same requests as Stats counts.
func TestObserverIsToldOfEveryAttemptAndHold(t *testing.T) {
	api, srv := newScriptedAPI(t, http.StatusServiceUnavailable, http.StatusOK, http.StatusTooManyRequests,
		http.StatusOK, http.StatusAccepted, http.StatusOK, http.StatusOK)
	api.retryAfter = "30"
	clk := clocktest.NewFake(t0)
	// Each answer takes 250ms on the client's clock.
	timed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		clk.Advance(250 * time.Millisecond)
		srv.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(timed.Close)
	obs := &apiObserver{}
	c, err := feedapi.NewClient(feedapi.Config{BaseURL: timed.URL, AccessToken: "secret", Clock: clk, Observer: obs,
		RetryMax: time.Minute})
	require.NoError(t, err)
	ctx := t.Context()

	// 503, then 200 after the backoff.
	done := getAsync(ctx, c, "v1/descriptions/en/markets.xml")
	clk.BlockUntil(1)
	at, ok := clk.Next()
	require.True(t, ok)
	clk.Set(at)
	require.NoError(t, <-done)
	// 429 for 30s: retried after 30s (200); another summary in the meantime is held.
	done = getAsync(ctx, c, "v1/sports/en/sport_events/sr:match:1/summary.xml")
	clk.BlockUntil(1)
	_, err = c.Get(ctx, "v1/sports/de/sport_events/sr:match:2/summary.xml", 1<<10)
	require.ErrorIs(t, err, feed.ErrTooManyRequests)
	at, ok = clk.Next()
	require.True(t, ok)
	clk.Set(at)
	require.NoError(t, <-done)
	// A recovery request (202), an answer too large to keep (200), then no answer at all.
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	require.NoError(t, c.InitiateRecovery(ctx, lo, t0, 7))
	_, err = c.Get(ctx, "v1/users/whoami.xml", 1)
	require.ErrorContains(t, err, "larger than 1 bytes")
	timed.Close()
	done = getAsync(ctx, c, "v1/users/whoami.xml") // sent three times, after two backoffs
	for range 2 {
		clk.BlockUntil(1)
		at, ok = clk.Next()
		require.True(t, ok)
		clk.Set(at)
	}
	require.Error(t, <-done)

	const q = 250 * time.Millisecond
	assert.Equal(t, []apiCall{
		{Method: "GET", Endpoint: "/v1/descriptions/{lang}/markets.xml", Status: 503, Took: q},
		{Method: "GET", Endpoint: "/v1/descriptions/{lang}/markets.xml", Status: 200, Took: q},
		{Method: "GET", Endpoint: "/v1/sports/{lang}/sport_events/{urn}/summary.xml", Status: 429, Took: q},
		{Method: "GET", Endpoint: "/v1/sports/{lang}/sport_events/{urn}/summary.xml", Held: true},
		{Method: "GET", Endpoint: "/v1/sports/{lang}/sport_events/{urn}/summary.xml", Status: 200, Took: q},
		{Method: "POST", Endpoint: "/v1/{product}/recovery/initiate_request", Status: 202, Took: q},
		{Method: "GET", Endpoint: "/v1/users/whoami.xml", Status: 200, Took: q},
		// No answer: status 0, and no time passed on the fake clock.
		{Method: "GET", Endpoint: "/v1/users/whoami.xml"},
		{Method: "GET", Endpoint: "/v1/users/whoami.xml"},
		{Method: "GET", Endpoint: "/v1/users/whoami.xml"},
	}, obs.list())
	st := c.Stats()
	requests, held := obs.counts()
	assert.Equal(t, st.Requests, requests, "every attempt told")
	assert.Equal(t, st.Held, held, "every hold told")
	assert.Equal(t, feedapi.Stats{Requests: 9, Failures: 6, Retries: 4, Held: 1}, st)
}
