package carouselhttp_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/carousel"
	"github.com/feedkit/feedkit/carousel/carouselhttp"
	"github.com/feedkit/feedkit/clock/clocktest"
)

// reply is one scripted response of a receiver.
type reply struct {
	status     int
	body       string
	retryAfter string
}

// seen is one request a receiver got.
type seen struct {
	method string
	path   string
	header http.Header
	body   string
}

// receiver is an HTTP server that answers with its script in order, repeating the last
// reply, and records every request.
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	script   []reply
	requests []seen
}

func newReceiver(t *testing.T, script ...reply) *receiver {
	t.Helper()
	r := &receiver{script: script}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		n := len(r.requests)
		r.requests = append(r.requests, seen{req.Method, req.URL.Path, req.Header.Clone(), string(b)})
		rep := r.script[min(n, len(r.script)-1)]
		r.mu.Unlock()
		if rep.retryAfter != "" {
			w.Header().Set("Retry-After", rep.retryAfter)
		}
		w.WriteHeader(rep.status)
		_, _ = io.WriteString(w, rep.body)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) seen() []seen {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]seen(nil), r.requests...)
}

var publication = carousel.Publication{
	Cycle:      "content",
	Origin:     "methode",
	Collection: "universal-content",
	Item:       carousel.Item{ID: "a1b2", Modified: time.Date(2024, 5, 6, 7, 8, 9, 10, time.UTC)},
	Iteration:  12,
	Position:   345,
}

func newPublisher(t *testing.T, cfg carouselhttp.PublisherConfig) *carouselhttp.Publisher {
	t.Helper()
	p, err := carouselhttp.NewPublisher(cfg)
	require.NoError(t, err)
	return p
}

// publishAsync runs Publish in a goroutine, for tests that advance the fake clock while it
// waits between attempts.
func publishAsync(ctx context.Context, p carousel.Publisher) <-chan error {
	done := make(chan error, 1)
	go func() { done <- p.Publish(ctx, publication) }()
	return done
}

// waiting returns once Publish waits on clk for a retry, and fails the test if Publish
// returns instead: a test that expects a wait must not hang when there is none.
func waiting(t *testing.T, clk *clocktest.Fake, done <-chan error) {
	t.Helper()
	blocked := make(chan struct{})
	go func() {
		clk.BlockUntil(1)
		close(blocked)
	}()
	select {
	case <-blocked:
	case err := <-done:
		t.Fatalf("Publish returned (%v) instead of waiting to retry", err)
	}
}

// advanceUntilDone moves the clock on by step each time the publisher waits for a retry,
// until Publish returns, and returns its error. The test counts the requests, not the
// steps: a retry timer the publisher sets while one step is firing the previous timer can
// fall due within the same step, and then fires in it (the fake clock fires whatever is
// due by the new time), so the steps a run takes depend on the scheduling.
func advanceUntilDone(t *testing.T, clk *clocktest.Fake, done <-chan error, step time.Duration) error {
	t.Helper()
	for {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		waited := make(chan error, 1)
		go func() { waited <- clk.BlockUntilContext(ctx, 1) }()
		select {
		case err := <-done:
			cancel()
			<-waited
			return err
		case err := <-waited:
			cancel()
			if err != nil {
				t.Fatalf("Publish neither returned nor waited to retry: %v", err)
			}
			clk.Advance(step)
		}
	}
}

func TestHTTPPublisherSendsHeadersAndBody(t *testing.T) {
	r := newReceiver(t, reply{status: http.StatusAccepted})
	p := newPublisher(t, carouselhttp.PublisherConfig{URL: r.URL + "/notify"})

	require.NoError(t, p.Publish(context.Background(), publication))
	require.NoError(t, p.Publish(context.Background(), publication))

	reqs := r.seen()
	require.Len(t, reqs, 2)
	got := reqs[0]
	assert.Equal(t, http.MethodPost, got.method)
	assert.Equal(t, "/notify", got.path)
	assert.Equal(t, "methode", got.header.Get("X-Origin-System-Id"))
	assert.Equal(t, "application/json", got.header.Get("Content-Type"))
	assert.True(t, strings.HasPrefix(got.header.Get(carouselhttp.RequestIDHeader), "carousel-content-a1b2-"), got.header.Get(carouselhttp.RequestIDHeader))
	assert.NotEqual(t, got.header.Get(carouselhttp.RequestIDHeader), reqs[1].header.Get(carouselhttp.RequestIDHeader),
		"two publishes are two requests to the receiver, even of the same item")
	assert.JSONEq(t, `{"cycle":"content","origin":"methode","collection":"universal-content","id":"a1b2",
		"modified":"2024-05-06T07:08:09.00000001Z","iteration":12,"position":345}`, got.body)
	assert.Equal(t, "content", got.header.Get(carouselhttp.CycleHeader))
	assert.Equal(t, "content", got.header.Get("X-Carousel-Cycle"), "the documented name")
	assert.Equal(t, "12", got.header.Get("X-Carousel-Iteration"))
	assert.Equal(t, "345", got.header.Get("X-Carousel-Position"))

	noTime := publication
	noTime.Item.Modified = time.Time{}
	require.NoError(t, p.Publish(context.Background(), noTime))
	var body map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.seen()[2].body), &body))
	assert.NotContains(t, body, "modified", "an item without a time has no modified field")
}

func TestHTTPPublisherCustomBodyAndHeaders(t *testing.T) {
	r := newReceiver(t, reply{status: http.StatusOK})
	p := newPublisher(t, carouselhttp.PublisherConfig{
		URL:          r.URL,
		OriginHeader: "X-Origin",
		ContentType:  "text/plain",
		Body: func(_ context.Context, p carousel.Publication) ([]byte, error) {
			return []byte(p.Collection + "/" + p.Item.ID), nil
		},
	})
	odd := publication
	odd.Item.ID = "line\r\nbreak é"
	require.NoError(t, p.Publish(context.Background(), odd))

	got := r.seen()[0]
	assert.Equal(t, "methode", got.header.Get("X-Origin"))
	assert.Empty(t, got.header.Get("X-Origin-System-Id"))
	assert.Equal(t, "text/plain", got.header.Get("Content-Type"))
	assert.Equal(t, "universal-content/line\r\nbreak é", got.body)
	assert.Equal(t, "content", got.header.Get(carouselhttp.CycleHeader), "the identity is in the headers, whatever the body")
	assert.Equal(t, "12", got.header.Get(carouselhttp.IterationHeader))
	assert.Equal(t, "345", got.header.Get(carouselhttp.PositionHeader))
	assert.True(t, strings.HasPrefix(got.header.Get(carouselhttp.RequestIDHeader), "carousel-content-line__break__-"),
		"bytes a header cannot hold are replaced: %q", got.header.Get(carouselhttp.RequestIDHeader))

	failing := newPublisher(t, carouselhttp.PublisherConfig{URL: r.URL, Body: func(context.Context, carousel.Publication) ([]byte, error) {
		return nil, errors.New("no such template")
	}})
	err := failing.Publish(context.Background(), publication)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no such template")
	assert.Contains(t, err.Error(), `"a1b2"`)
	assert.Len(t, r.seen(), 1, "nothing is sent without a body")
}

func TestHTTPPublisherRetriesThenSucceeds(t *testing.T) {
	r := newReceiver(t, reply{status: http.StatusServiceUnavailable}, reply{status: http.StatusBadGateway}, reply{status: http.StatusNoContent})
	clk := clocktest.NewFake(time.Unix(0, 0))
	p := newPublisher(t, carouselhttp.PublisherConfig{URL: r.URL, RetryInitial: time.Second, RetryMax: 4 * time.Second, Clock: clk})

	done := publishAsync(context.Background(), p)
	require.NoError(t, advanceUntilDone(t, clk, done, 4*time.Second))

	reqs := r.seen()
	require.Len(t, reqs, 3)
	id := reqs[0].header.Get(carouselhttp.RequestIDHeader)
	assert.NotEmpty(t, id)
	for _, req := range reqs {
		assert.Equal(t, id, req.header.Get(carouselhttp.RequestIDHeader), "retries of one publish share its request id")
		assert.Equal(t, reqs[0].body, req.body)
		for _, h := range []string{carouselhttp.CycleHeader, carouselhttp.IterationHeader, carouselhttp.PositionHeader} {
			assert.Equal(t, reqs[0].header.Get(h), req.header.Get(h), "retries carry the same %s", h)
		}
	}
}

// The first wait is the backoff's first delay: Initial less up to half of it (jitter).
func TestHTTPPublisherBacksOff(t *testing.T) {
	r := newReceiver(t, reply{status: http.StatusInternalServerError}, reply{status: http.StatusOK})
	clk := clocktest.NewFake(time.Unix(0, 0))
	p := newPublisher(t, carouselhttp.PublisherConfig{URL: r.URL, RetryInitial: 2 * time.Second, RetryMax: time.Minute, Clock: clk})

	done := publishAsync(context.Background(), p)
	waiting(t, clk, done)
	clk.Advance(time.Second - time.Nanosecond)
	assert.Equal(t, 1, clk.Pending(), "no retry before half of RetryInitial")
	assert.Len(t, r.seen(), 1)
	clk.Advance(time.Second)
	require.NoError(t, <-done)
	assert.Len(t, r.seen(), 2)
}

func TestHTTPPublisherDoesNotRetryClientErrors(t *testing.T) {
	r := newReceiver(t, reply{status: http.StatusUnprocessableEntity, body: "unknown collection"})
	clk := clocktest.NewFake(time.Unix(0, 0))
	p := newPublisher(t, carouselhttp.PublisherConfig{URL: r.URL + "/notify", Clock: clk})

	err := p.Publish(context.Background(), publication)
	require.Error(t, err)
	assert.Len(t, r.seen(), 1)
	assert.Zero(t, clk.Pending(), "no wait for a retry")
	for _, want := range []string{r.URL + "/notify", "status 422", "after 1 attempt ", "not retried", `"unknown collection"`, `"content"`, `"a1b2"`} {
		assert.Contains(t, err.Error(), want)
	}
}

func TestHTTPPublisherAttemptsExhausted(t *testing.T) {
	long := strings.Repeat("x", 512) + strings.Repeat("y", 100)
	r := newReceiver(t, reply{status: http.StatusBadGateway, body: long})
	clk := clocktest.NewFake(time.Unix(0, 0))
	p := newPublisher(t, carouselhttp.PublisherConfig{URL: r.URL, Attempts: 4, RetryMax: time.Second, Clock: clk})

	done := publishAsync(context.Background(), p)
	err := advanceUntilDone(t, clk, done, time.Second)
	require.Error(t, err)
	assert.Len(t, r.seen(), 4)
	msg := err.Error()
	for _, want := range []string{r.URL, "status 502", "after 4 attempts"} {
		assert.Contains(t, msg, want)
	}
	assert.Contains(t, msg, `body "`+strings.Repeat("x", 512)+`"`, "only the first 512 bytes of the body are quoted")
	assert.NotContains(t, msg, "not retried")
}

func TestHTTPPublisherNetworkErrorsAreRetried(t *testing.T) {
	r := newReceiver(t, reply{status: http.StatusOK})
	url := r.URL
	r.Close() // nothing listens there any more
	clk := clocktest.NewFake(time.Unix(0, 0))
	p := newPublisher(t, carouselhttp.PublisherConfig{URL: url, Attempts: 2, RetryMax: time.Second, Clock: clk})

	done := publishAsync(context.Background(), p)
	waiting(t, clk, done)
	clk.Advance(time.Second)
	err := <-done
	require.Error(t, err)
	assert.Contains(t, err.Error(), url)
	assert.Contains(t, err.Error(), "after 2 attempts")
}

// An attempt that outlasts Timeout is abandoned and retried like a network error.
func TestHTTPPublisherTimeoutPerAttempt(t *testing.T) {
	release := make(chan struct{})
	first := true
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		hang := first
		first = false
		mu.Unlock()
		if hang {
			<-release // the client gives up first, or the test ends
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	defer close(release) // before Close, which waits for the handler
	clk := clocktest.NewFake(time.Unix(0, 0))
	p := newPublisher(t, carouselhttp.PublisherConfig{URL: srv.URL, Timeout: 50 * time.Millisecond, RetryMax: time.Second, Clock: clk})

	done := publishAsync(context.Background(), p)
	waiting(t, clk, done)
	clk.Advance(time.Second)
	require.NoError(t, <-done)
}

func TestHTTPPublisherHonoursRetryAfter(t *testing.T) {
	t.Run("seconds", func(t *testing.T) {
		r := newReceiver(t, reply{status: http.StatusTooManyRequests, retryAfter: "2"}, reply{status: http.StatusOK})
		clk := clocktest.NewFake(time.Unix(0, 0))
		// A backoff far longer than the server asks for: the retry must come at 2s.
		p := newPublisher(t, carouselhttp.PublisherConfig{URL: r.URL, RetryInitial: time.Minute, RetryMax: time.Hour, Clock: clk})

		done := publishAsync(context.Background(), p)
		waiting(t, clk, done)
		clk.Advance(2*time.Second - time.Nanosecond)
		assert.Equal(t, 1, clk.Pending(), "still waiting before Retry-After")
		clk.Advance(time.Nanosecond)
		require.NoError(t, <-done)
		assert.Len(t, r.seen(), 2)
	})
	t.Run("capped at RetryMax", func(t *testing.T) {
		r := newReceiver(t, reply{status: http.StatusTooManyRequests, retryAfter: "3600"}, reply{status: http.StatusOK})
		clk := clocktest.NewFake(time.Unix(0, 0))
		p := newPublisher(t, carouselhttp.PublisherConfig{URL: r.URL, RetryMax: 5 * time.Second, Clock: clk})

		done := publishAsync(context.Background(), p)
		waiting(t, clk, done)
		clk.Advance(5 * time.Second)
		require.NoError(t, <-done)
		assert.Len(t, r.seen(), 2)
	})
	t.Run("zero", func(t *testing.T) {
		r := newReceiver(t, reply{status: http.StatusServiceUnavailable, retryAfter: "0"}, reply{status: http.StatusOK})
		clk := clocktest.NewFake(time.Unix(0, 0))
		p := newPublisher(t, carouselhttp.PublisherConfig{URL: r.URL, Clock: clk})

		require.NoError(t, p.Publish(context.Background(), publication), "retried at once, without waiting on the clock")
		assert.Len(t, r.seen(), 2)
	})
}

func TestHTTPPublisherCancelDuringBackoff(t *testing.T) {
	r := newReceiver(t, reply{status: http.StatusServiceUnavailable, body: "maintenance"})
	clk := clocktest.NewFake(time.Unix(0, 0))
	p := newPublisher(t, carouselhttp.PublisherConfig{URL: r.URL, Attempts: 5, Clock: clk})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	done := publishAsync(ctx, p)
	waiting(t, clk, done) // for the second attempt
	cancel()
	err := <-done
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "status 503 after 1 attempt")
	assert.Contains(t, err.Error(), "maintenance")
	assert.Len(t, r.seen(), 1)
	assert.Zero(t, clk.Pending(), "the wait's timer is stopped")
}

func TestHTTPPublisherConfigErrors(t *testing.T) {
	cases := map[string]struct {
		cfg   carouselhttp.PublisherConfig
		field string
	}{
		"no URL":           {carouselhttp.PublisherConfig{}, "PublisherConfig.URL"},
		"relative URL":     {carouselhttp.PublisherConfig{URL: "/notify"}, "PublisherConfig.URL"},
		"other scheme":     {carouselhttp.PublisherConfig{URL: "ftp://host/x"}, "PublisherConfig.URL"},
		"no host":          {carouselhttp.PublisherConfig{URL: "http:///x"}, "PublisherConfig.URL"},
		"unparsable URL":   {carouselhttp.PublisherConfig{URL: "http://[::1"}, "PublisherConfig.URL"},
		"negative timeout": {carouselhttp.PublisherConfig{URL: "http://h", Timeout: -1}, "PublisherConfig.Timeout"},
		"negative attempts": {carouselhttp.PublisherConfig{URL: "http://h", Attempts: -1},
			"PublisherConfig.Attempts"},
		"negative initial": {carouselhttp.PublisherConfig{URL: "http://h", RetryInitial: -1}, "PublisherConfig.RetryInitial"},
		"negative max":     {carouselhttp.PublisherConfig{URL: "http://h", RetryMax: -1}, "PublisherConfig.RetryMax"},
		"max below initial": {carouselhttp.PublisherConfig{URL: "http://h", RetryInitial: time.Second, RetryMax: time.Millisecond},
			"PublisherConfig.RetryMax"},
		"bad header": {carouselhttp.PublisherConfig{URL: "http://h", OriginHeader: "X Origin"}, "PublisherConfig.OriginHeader"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			p, err := carouselhttp.NewPublisher(c.cfg)
			require.Error(t, err)
			assert.Nil(t, p)
			assert.ErrorIs(t, err, carousel.ErrInvalidConfig)
			assert.Contains(t, err.Error(), c.field+" ")
		})
	}

	_, err := carouselhttp.NewPublisher(carouselhttp.PublisherConfig{URL: "ftp://user:secret@host/x"})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "secret", "a password in the URL stays out of the error")
}

func TestHTTPPublisherAnswersRedirectsInsteadOfFollowingThem(t *testing.T) {
	target := newReceiver(t, reply{status: http.StatusAccepted})
	redirect := httptest.NewServer(http.RedirectHandler(target.URL+"/elsewhere", http.StatusFound))
	t.Cleanup(redirect.Close)
	clk := clocktest.NewFake(time.Unix(0, 0))
	p := newPublisher(t, carouselhttp.PublisherConfig{URL: redirect.URL, Clock: clk})

	err := p.Publish(context.Background(), publication)
	assert.ErrorContains(t, err, "status 302")
	assert.Empty(t, target.seen(), "a followed 302 would have become a GET without the body")
	assert.Zero(t, clk.Pending(), "not retried")
}

func TestHTTPPublisherRetriesRequestTimeout(t *testing.T) {
	r := newReceiver(t, reply{status: http.StatusRequestTimeout}, reply{status: http.StatusAccepted})
	clk := clocktest.NewFake(time.Unix(0, 0))
	p := newPublisher(t, carouselhttp.PublisherConfig{URL: r.URL, Clock: clk})
	done := publishAsync(context.Background(), p)
	waiting(t, clk, done)
	clk.Advance(time.Minute)
	require.NoError(t, <-done)
	assert.Len(t, r.seen(), 2)
}

func TestHTTPPublisherDoesNotRetryAnUntrustedCertificate(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusAccepted) }))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is the point
	srv.StartTLS()
	t.Cleanup(srv.Close)
	clk := clocktest.NewFake(time.Unix(0, 0))
	p := newPublisher(t, carouselhttp.PublisherConfig{URL: srv.URL, Clock: clk})
	err := p.Publish(context.Background(), publication)
	assert.ErrorContains(t, err, "certificate")
	assert.Zero(t, clk.Pending(), "the same certificate would be refused again: no retry")
}
