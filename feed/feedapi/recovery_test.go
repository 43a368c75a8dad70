package feedapi_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
)

const recoveryTestToken = "s3cret-t0ken"

// apiRequest is what the test recovery API saw of one request.
type apiRequest struct {
	Method     string
	Path       string // decoded
	RequestURI string // as sent on the wire
	Query      url.Values
	Token      string
}

// recoveryAPI starts a test server that records every request into the returned channel
// (buffered, so that the handler never waits for the test) and answers with respond.
func recoveryAPI(t *testing.T, respond http.HandlerFunc) (*httptest.Server, <-chan apiRequest) {
	t.Helper()
	got := make(chan apiRequest, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- apiRequest{
			Method:     r.Method,
			Path:       r.URL.Path,
			RequestURI: r.RequestURI,
			Query:      r.URL.Query(),
			Token:      r.Header.Get("x-access-token"),
		}
		if respond != nil {
			respond(w, r)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

func newClient(t *testing.T, cfg feedapi.Config) *feedapi.Client {
	t.Helper()
	if cfg.AccessToken == "" {
		cfg.AccessToken = recoveryTestToken
	}
	c, err := feedapi.NewClient(cfg)
	require.NoError(t, err)
	return c
}

func defaultProducer(t *testing.T, id int) feed.Producer {
	t.Helper()
	p, ok := feed.LookupProducer(feed.DefaultProducers(), id)
	require.True(t, ok, "producer %d", id)
	return p
}

// oneRequest returns the single request the API received; the client call has returned,
// so the handler has already sent it.
func oneRequest(t *testing.T, got <-chan apiRequest) apiRequest {
	t.Helper()
	select {
	case r := <-got:
		select {
		case extra := <-got:
			t.Fatalf("a second request reached the API: %+v", extra)
		default:
		}
		return r
	default:
		t.Fatal("no request reached the API")
		return apiRequest{}
	}
}

func TestClientInitiateRecoverySendsTheRequest(t *testing.T) {
	srv, got := recoveryAPI(t, nil)
	c := newClient(t, feedapi.Config{BaseURL: srv.URL, Node: feed.Node(7)})
	after := time.UnixMilli(1764152400123)

	require.NoError(t, c.InitiateRecovery(t.Context(), defaultProducer(t, 1), after, 42))

	r := oneRequest(t, got)
	assert.Equal(t, http.MethodPost, r.Method)
	assert.Equal(t, "/v1/liveodds/recovery/initiate_request", r.Path)
	assert.Equal(t, url.Values{
		"after":      {"1764152400123"},
		"request_id": {"42"},
		"node_id":    {"7"},
	}, r.Query, "exactly these parameters")
	assert.Equal(t, recoveryTestToken, r.Token)
	assert.NotContains(t, r.RequestURI, recoveryTestToken, "the token travels in the header only")
}

func TestClientAfterIsUnixMillisecondsInAnyZone(t *testing.T) {
	srv, got := recoveryAPI(t, nil)
	c := newClient(t, feedapi.Config{BaseURL: srv.URL})
	zone := time.FixedZone("UTC+5", 5*3600)
	after := time.Date(2025, 11, 26, 10, 20, 0, 123_456_789, zone) // sub-millisecond part truncated

	require.NoError(t, c.InitiateRecovery(t.Context(), defaultProducer(t, 1), after, 1))

	r := oneRequest(t, got)
	assert.Equal(t, "1764134400123", r.Query.Get("after"))
}

func TestClientNodeID(t *testing.T) {
	tests := []struct {
		name     string
		node     feed.NodeID
		want     string
		wantSent bool
	}{
		{"no node", feed.NodeID{}, "", false},
		{"positive", feed.Node(3), "3", true},
		{"zero is a node", feed.Node(0), "0", true},
		{"negative development node", feed.Node(-12), "-12", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, got := recoveryAPI(t, nil)
			c := newClient(t, feedapi.Config{BaseURL: srv.URL, Node: tt.node})

			require.NoError(t, c.InitiateRecovery(t.Context(), defaultProducer(t, 1), time.UnixMilli(1), 5))

			r := oneRequest(t, got)
			_, sent := r.Query["node_id"]
			assert.Equal(t, tt.wantSent, sent, "node_id present")
			assert.Equal(t, tt.want, r.Query.Get("node_id"))
			assert.Equal(t, "5", r.Query.Get("request_id"))
		})
	}
}

func TestClientZeroAfterOmitsTheParameter(t *testing.T) {
	srv, got := recoveryAPI(t, nil)
	c := newClient(t, feedapi.Config{BaseURL: srv.URL})

	require.NoError(t, c.InitiateRecovery(t.Context(), defaultProducer(t, 3), time.Time{}, 9))

	r := oneRequest(t, got)
	assert.Equal(t, "/v1/pre/recovery/initiate_request", r.Path)
	assert.Equal(t, url.Values{"request_id": {"9"}}, r.Query, "no after, no node_id")
}

func TestClientJoinsBaseURLPath(t *testing.T) {
	for _, prefix := range []string{"/api", "/api/", "/api/feed"} {
		t.Run(prefix, func(t *testing.T) {
			srv, got := recoveryAPI(t, nil)
			c := newClient(t, feedapi.Config{BaseURL: srv.URL + prefix})

			require.NoError(t, c.InitiateRecovery(t.Context(), defaultProducer(t, 1), time.Time{}, 1))

			r := oneRequest(t, got)
			want := strings.TrimSuffix(prefix, "/") + "/v1/liveodds/recovery/initiate_request"
			assert.Equal(t, want, r.Path)
		})
	}
}

func TestClientEventRecoveries(t *testing.T) {
	event := feed.MustParseURN("sr:match:1234")
	tests := []struct {
		name     string
		initiate func(c *feedapi.Client, ctx context.Context, p feed.Producer) error
		path     string
	}{
		{"odds", func(c *feedapi.Client, ctx context.Context, p feed.Producer) error {
			return c.InitiateEventRecovery(ctx, p, event, 77)
		}, "/v1/liveodds/odds/events/sr:match:1234/initiate_request"},
		{"stateful messages", func(c *feedapi.Client, ctx context.Context, p feed.Producer) error {
			return c.InitiateEventStatefulRecovery(ctx, p, event, 77)
		}, "/v1/liveodds/stateful_messages/events/sr:match:1234/initiate_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, got := recoveryAPI(t, nil)
			c := newClient(t, feedapi.Config{BaseURL: srv.URL, Node: feed.Node(2)})

			require.NoError(t, tt.initiate(c, t.Context(), defaultProducer(t, 1)))

			r := oneRequest(t, got)
			assert.Equal(t, http.MethodPost, r.Method)
			assert.Equal(t, tt.path, r.Path)
			assert.True(t, strings.HasPrefix(r.RequestURI, tt.path+"?"),
				"the URN's colons are sent as they are: %s", r.RequestURI)
			assert.Equal(t, url.Values{"request_id": {"77"}, "node_id": {"2"}}, r.Query)
			assert.Equal(t, recoveryTestToken, r.Token)
		})
	}
}

func TestClientSuccessStatuses(t *testing.T) {
	for _, status := range []int{http.StatusOK, http.StatusAccepted, http.StatusNoContent} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			srv, got := recoveryAPI(t, func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(status)
			})
			c := newClient(t, feedapi.Config{BaseURL: srv.URL})

			assert.NoError(t, c.InitiateRecovery(t.Context(), defaultProducer(t, 1), time.Time{}, 1))
			oneRequest(t, got)
		})
	}
}

func TestClientMapsStatusToErrors(t *testing.T) {
	sentinels := []error{feed.ErrBadRequest, feed.ErrUnauthorized, feed.ErrForbidden, feed.ErrNotFound,
		feed.ErrTooManyRequests, feed.ErrServerError}
	tests := []struct {
		status     int
		want       error // nil: no sentinel matches
		retryable  bool
		retryAfter string
		wantAfter  time.Duration
	}{
		{http.StatusBadRequest, feed.ErrBadRequest, false, "", 0},
		{http.StatusUnauthorized, feed.ErrUnauthorized, false, "", 0},
		{http.StatusForbidden, feed.ErrForbidden, false, "", 0},
		{http.StatusNotFound, feed.ErrNotFound, false, "", 0},
		{http.StatusConflict, nil, false, "", 0},
		{http.StatusTooManyRequests, feed.ErrTooManyRequests, true, "7", 7 * time.Second},
		{http.StatusInternalServerError, feed.ErrServerError, true, "", 0},
		{http.StatusBadGateway, feed.ErrServerError, true, "0", 0},
		{http.StatusServiceUnavailable, feed.ErrServerError, true, "Wed, 21 Oct 2015 07:28:00 GMT", 0},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			body := fmt.Sprintf("refused with %d: ", tt.status) + strings.Repeat("x", 2000)
			srv, got := recoveryAPI(t, func(w http.ResponseWriter, _ *http.Request) {
				if tt.retryAfter != "" {
					w.Header().Set("Retry-After", tt.retryAfter)
				}
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, body)
			})
			c := newClient(t, feedapi.Config{BaseURL: srv.URL, Node: feed.Node(1)})

			err := c.InitiateRecovery(t.Context(), defaultProducer(t, 1), time.UnixMilli(1000), 3)
			require.Error(t, err)
			oneRequest(t, got)

			for _, s := range sentinels {
				assert.Equal(t, s == tt.want, errors.Is(err, s), "errors.Is(err, %v)", s)
			}
			var apiErr *feed.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, tt.status, apiErr.StatusCode)
			assert.Equal(t, http.MethodPost, apiErr.Method)
			assert.Equal(t, srv.URL+"/v1/liveodds/recovery/initiate_request?after=1000&node_id=1&request_id=3", apiErr.URL)
			assert.Equal(t, tt.retryable, apiErr.Retryable())
			assert.Equal(t, tt.wantAfter, apiErr.RetryAfter)
			assert.True(t, strings.HasPrefix(body, apiErr.Body), "Body is the start of the body")
			assert.Less(t, len(apiErr.Body), len(body), "a long body is cut")

			msg := err.Error()
			assert.Contains(t, msg, fmt.Sprint(tt.status))
			assert.Contains(t, msg, http.StatusText(tt.status))
			assert.Contains(t, msg, fmt.Sprintf("refused with %d", tt.status))
			assert.NotContains(t, msg, recoveryTestToken)
		})
	}
}

func TestClientErrorNeverShowsTheToken(t *testing.T) {
	// Even an API that echoes the token back: the error carries the body, so the only
	// guarantee is that the client itself never puts the token in the URL.
	srv, _ := recoveryAPI(t, func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, "invalid token")
	})
	c := newClient(t, feedapi.Config{BaseURL: srv.URL})

	err := c.InitiateEventRecovery(t.Context(), defaultProducer(t, 1), feed.MustParseURN("sr:match:1"), 1)
	require.ErrorIs(t, err, feed.ErrUnauthorized)
	assert.NotContains(t, err.Error(), recoveryTestToken)
	var apiErr *feed.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.NotContains(t, apiErr.URL, recoveryTestToken)
	assert.Equal(t, "invalid token", apiErr.Body)
}

// blockingAPI answers nothing until the request's context ends (the client gave up) or the
// test ends. arrived is signalled when a request is in the handler.
func blockingAPI(t *testing.T) (srv *httptest.Server, arrived <-chan struct{}) {
	t.Helper()
	in := make(chan struct{}, 1)
	stop := make(chan struct{})
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case in <- struct{}{}:
		default:
		}
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(stop) }) // runs first: frees a handler before srv.Close waits for it
	return srv, in
}

func TestClientTimeout(t *testing.T) {
	srv, _ := blockingAPI(t)
	c := newClient(t, feedapi.Config{BaseURL: srv.URL, Timeout: 50 * time.Millisecond})

	err := c.InitiateRecovery(t.Context(), defaultProducer(t, 1), time.Time{}, 1)

	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	var apiErr *feed.APIError
	assert.False(t, errors.As(err, &apiErr), "a timeout is not an API answer")
	assert.NoError(t, t.Context().Err(), "the client's own timeout ended the request")
}

func TestClientHonoursCallerCancellation(t *testing.T) {
	srv, arrived := blockingAPI(t)
	c := newClient(t, feedapi.Config{BaseURL: srv.URL}) // default timeout: 20 s
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	p := defaultProducer(t, 1)
	done := make(chan error, 1)
	go func() { done <- c.InitiateEventStatefulRecovery(ctx, p, feed.MustParseURN("sr:match:1"), 1) }()

	<-arrived
	cancel()
	err := <-done

	assert.ErrorIs(t, err, context.Canceled)
}

func TestClientWithCancelledContextSendsNothing(t *testing.T) {
	srv, got := recoveryAPI(t, nil)
	c := newClient(t, feedapi.Config{BaseURL: srv.URL})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()

	err := c.InitiateRecovery(ctx, defaultProducer(t, 1), time.Time{}, 1)

	assert.ErrorIs(t, err, context.Canceled)
	select {
	case r := <-got:
		t.Errorf("a request reached the API: %+v", r)
	default:
	}
}

type countingTransport struct {
	n    atomic.Int32
	next http.RoundTripper
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

func TestClientUsesTheGivenHTTPClient(t *testing.T) {
	srv, got := recoveryAPI(t, nil)
	tr := &countingTransport{next: srv.Client().Transport}
	c := newClient(t, feedapi.Config{BaseURL: srv.URL, HTTPClient: &http.Client{Transport: tr}})

	require.NoError(t, c.InitiateRecovery(t.Context(), defaultProducer(t, 1), time.Time{}, 1))

	oneRequest(t, got)
	assert.Equal(t, int32(1), tr.n.Load())
}

func TestClientRefusesAProducerWithoutAPIPath(t *testing.T) {
	srv, got := recoveryAPI(t, nil)
	c := newClient(t, feedapi.Config{BaseURL: srv.URL})
	p := feed.Producer{ID: 99, Name: "X", Scope: feed.ScopeLive}

	calls := map[string]func() error{
		"InitiateRecovery": func() error { return c.InitiateRecovery(t.Context(), p, time.Time{}, 1) },
		"InitiateEventRecovery": func() error {
			return c.InitiateEventRecovery(t.Context(), p, feed.MustParseURN("sr:match:1"), 1)
		},
		"InitiateEventStatefulRecovery": func() error {
			return c.InitiateEventStatefulRecovery(t.Context(), p, feed.MustParseURN("sr:match:1"), 1)
		},
	}
	for name, call := range calls {
		err := call()
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "APIPath", name)
		assert.Contains(t, err.Error(), "99", name)
	}
	select {
	case r := <-got:
		t.Errorf("a request reached the API: %+v", r)
	default:
	}
}

func TestNewClientValidatesTheConfig(t *testing.T) {
	valid := feedapi.Config{BaseURL: "https://api.example.com", AccessToken: "t"}
	tests := []struct {
		name   string
		modify func(*feedapi.Config)
		field  string
	}{
		{"empty BaseURL", func(c *feedapi.Config) { c.BaseURL = "" }, "BaseURL"},
		{"ftp BaseURL", func(c *feedapi.Config) { c.BaseURL = "ftp://api.example.com" }, "BaseURL"},
		{"BaseURL without scheme", func(c *feedapi.Config) { c.BaseURL = "api.example.com" }, "BaseURL"},
		{"BaseURL without host", func(c *feedapi.Config) { c.BaseURL = "http://" }, "BaseURL"},
		{"unparsable BaseURL", func(c *feedapi.Config) { c.BaseURL = "http://[::1" }, "BaseURL"},
		{"empty AccessToken", func(c *feedapi.Config) { c.AccessToken = "" }, "AccessToken"},
		{"negative Timeout", func(c *feedapi.Config) { c.Timeout = -time.Second }, "Timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := valid
			tt.modify(&cfg)
			c, err := feedapi.NewClient(cfg)
			require.Error(t, err)
			assert.Nil(t, c)
			assert.Contains(t, err.Error(), "feedapi: Config."+tt.field)
		})
	}

	for _, ok := range []feedapi.Config{
		valid,
		{BaseURL: "http://localhost:8080/api", AccessToken: "t", Timeout: time.Second, Node: feed.Node(-1)},
	} {
		c, err := feedapi.NewClient(ok)
		require.NoError(t, err, "%+v", ok)
		assert.NotNil(t, c)
	}
}

func ExampleClient_InitiateRecovery() {
	requests := make(chan *http.Request, 1)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests <- r
		w.WriteHeader(http.StatusAccepted)
	}))
	defer api.Close()

	client, err := feedapi.NewClient(feedapi.Config{
		BaseURL:     api.URL,
		AccessToken: "my-token",
		Node:        feed.Node(7),
	})
	if err != nil {
		log.Fatal(err)
	}
	liveOdds, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	after := time.Date(2025, 11, 26, 10, 20, 0, 0, time.UTC)
	err = client.InitiateRecovery(context.Background(), liveOdds, after, 42)
	fmt.Println("error:", err)

	r := <-requests
	fmt.Println(r.Method, r.URL.Path)
	fmt.Println(r.URL.Query().Encode()) // sorted by key
	fmt.Println("token:", r.Header.Get("x-access-token"))
	// Output:
	// error: <nil>
	// POST /v1/liveodds/recovery/initiate_request
	// after=1764152400000&node_id=7&request_id=42
	// token: my-token
}

func TestClientRefusesAZeroEvent(t *testing.T) {
	var hits int
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits++ }))
	t.Cleanup(srv.Close)
	c, err := feedapi.NewClient(feedapi.Config{BaseURL: srv.URL, AccessToken: "t"})
	require.NoError(t, err)
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	assert.ErrorContains(t, c.InitiateEventRecovery(t.Context(), lo, feed.URN{}, 1), "event URN is zero")
	assert.ErrorContains(t, c.InitiateEventStatefulRecovery(t.Context(), lo, feed.URN{}, 1), "event URN is zero")
	assert.Zero(t, hits, "nothing was sent")
}

func TestClientDoesNotFollowRedirects(t *testing.T) {
	var followed bool
	mux := http.NewServeMux()
	mux.HandleFunc("/elsewhere", func(w http.ResponseWriter, r *http.Request) { followed = true })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c, err := feedapi.NewClient(feedapi.Config{BaseURL: srv.URL, AccessToken: "secret"})
	require.NoError(t, err)
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)

	err = c.InitiateRecovery(t.Context(), lo, time.Time{}, 1)
	var apiErr *feed.APIError
	require.ErrorAs(t, err, &apiErr, "a redirect is not a started recovery")
	assert.Equal(t, http.StatusFound, apiErr.StatusCode)
	assert.False(t, followed, "the POST and its token did not follow the redirect")
}
