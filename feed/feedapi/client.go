package feedapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// Client sends the SDK's requests to the feed's API. It is safe for concurrent use.
type Client struct {
	s settings

	mu      sync.Mutex
	holds   map[string]time.Time // endpoint → no GET before this, after a 429
	details *BookmakerDetails    // the last whoami answer

	requests, failures, retries, held atomic.Uint64
}

// NewClient checks cfg and returns a client. It sends nothing until asked.
func NewClient(cfg Config) (*Client, error) {
	s, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	return &Client{s: s, holds: make(map[string]time.Time)}, nil
}

// answer is a successful answer: its body (up to what the caller keeps) and header,
// and when the request was sent and the answer read.
type answer struct {
	body             []byte
	header           http.Header
	sentAt, answered time.Time
}

// do sends a request without a body, retrying a GET as Config says, and returns the
// answer, keeping up to keep bytes of its body (none when keep is 0). An answer other
// than 2xx is a *feed.APIError; a GET to an endpoint the API paused is a *HeldError.
func (c *Client) do(ctx context.Context, method string, u *url.URL, keep int64) (answer, error) {
	endpoint := c.endpointOf(u)
	attempts := 1
	if method == http.MethodGet {
		attempts = c.s.MaxAttempts
	}
	for attempt := 1; ; attempt++ {
		if method == http.MethodGet {
			if until, ok := c.heldUntil(endpoint); ok {
				c.held.Add(1)
				if o := c.s.Observer; o != nil {
					o.APIRequestHeld(method, endpoint)
				}
				return answer{}, &HeldError{Method: method, URL: u.String(), Endpoint: endpoint, Until: until}
			}
		}
		a, transient, err := c.once(ctx, method, u, endpoint, attempt, keep)
		if err == nil {
			return a, nil
		}
		var apiErr *feed.APIError
		isAPI := errors.As(err, &apiErr)
		if isAPI && apiErr.StatusCode == http.StatusTooManyRequests {
			c.hold(endpoint, apiErr.RetryAfter)
		}
		if attempt >= attempts || ctx.Err() != nil || !transient {
			return answer{}, err
		}
		wait := c.s.retry.Delay(attempt - 1)
		if isAPI && apiErr.RetryAfter > wait {
			if apiErr.RetryAfter > c.s.RetryMax {
				return answer{}, err // longer than we wait: the caller decides
			}
			wait = apiErr.RetryAfter
		}
		if !c.sleep(ctx, wait) {
			return answer{}, err
		}
		c.retries.Add(1)
	}
}

// endpointOf returns the endpoint of u, a URL under the base URL, from the path below
// the base URL's: the same endpoint whatever the API's root.
func (c *Client) endpointOf(u *url.URL) string {
	p := "/" + strings.TrimPrefix(u.EscapedPath(), "/")
	if base := strings.TrimSuffix(c.s.base.EscapedPath(), "/"); base != "" {
		p = strings.TrimPrefix(p, base)
	}
	return Endpoint(p)
}

// once sends one attempt and reports it to OnResponse. transient says whether the same
// request may succeed later: no answer, a body cut short, a rate limit, a server error.
func (c *Client) once(ctx context.Context, method string, u *url.URL, endpoint string, attempt int, keep int64) (a answer, transient bool, err error) {
	if err := ctx.Err(); err != nil {
		return answer{}, false, err // nothing is sent for a caller who has gone
	}
	ctx, cancel := context.WithTimeout(ctx, c.s.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), nil)
	if err != nil {
		return answer{}, false, fmt.Errorf("feedapi: %s %s: %w", method, u.Redacted(), err)
	}
	req.Header.Set("x-access-token", c.s.AccessToken)
	c.requests.Add(1)
	a.sentAt = c.s.Clock.Now()
	resp, err := c.s.HTTPClient.Do(req)
	if err != nil {
		c.failures.Add(1)
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // it would repeat the URL
		}
		err = fmt.Errorf("feedapi: %s %s: %w", method, u.Redacted(), err)
		took := c.s.Clock.Since(a.sentAt)
		c.observe(method, endpoint, 0, took)
		c.report(Response{Method: method, URL: u.String(), Endpoint: endpoint, Attempt: attempt, Err: err,
			SentAt: a.sentAt, Duration: took})
		return answer{}, true, err
	}
	defer func() {
		// Read a little more than we keep, so that the connection can be reused.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
	}()
	a.header = resp.Header
	ok := resp.StatusCode >= 200 && resp.StatusCode < 300
	limit := keep
	if !ok {
		limit = 512 // the start of an error's body is enough to say what it was
	}
	var body []byte
	var readErr error
	if limit > 0 {
		body, readErr = io.ReadAll(io.LimitReader(resp.Body, limit+1))
	}
	a.answered = c.s.Clock.Now()
	c.observe(method, endpoint, resp.StatusCode, a.answered.Sub(a.sentAt))
	c.report(Response{Method: method, URL: u.String(), Endpoint: endpoint, Attempt: attempt,
		StatusCode: resp.StatusCode, Header: resp.Header, Body: body, Err: readErr,
		SentAt: a.sentAt, Duration: a.answered.Sub(a.sentAt)})
	if !ok {
		c.failures.Add(1)
		apiErr := apiError(req, u, resp, body)
		return answer{}, apiErr.Retryable(), apiErr
	}
	switch {
	case readErr != nil:
		c.failures.Add(1)
		return answer{}, true, fmt.Errorf("feedapi: %s %s: reading the answer: %w", method, u.Redacted(), readErr)
	case int64(len(body)) > keep:
		c.failures.Add(1)
		return answer{}, false, fmt.Errorf("feedapi: %s %s: the answer is larger than %d bytes", method, u.Redacted(), keep)
	}
	a.body = body
	return a, false, nil
}

func apiError(req *http.Request, u *url.URL, resp *http.Response, body []byte) *feed.APIError {
	if len(body) > 512 {
		body = body[:512]
	}
	e := &feed.APIError{StatusCode: resp.StatusCode, Method: req.Method, URL: u.Redacted(),
		Body: strings.TrimSpace(strings.ToValidUTF8(string(body), ""))}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		e.RetryAfter = time.Duration(s) * time.Second
	}
	return e
}

// observe tells the observer of an attempt sent: each one Stats.Requests counts.
func (c *Client) observe(method, endpoint string, status int, took time.Duration) {
	if o := c.s.Observer; o != nil {
		o.APIRequest(method, endpoint, status, took)
	}
}

func (c *Client) report(r Response) {
	if c.s.OnResponse != nil {
		c.s.OnResponse(r)
	}
}

// sleep waits d on the client's clock; false when ctx ended first.
func (c *Client) sleep(ctx context.Context, d time.Duration) bool {
	t := c.s.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-ctx.Done():
		return false
	}
}

// minHold is how long an endpoint is paused after a 429 that gave no Retry-After.
const minHold = time.Second

// hold pauses the GETs of endpoint for the Retry-After of a 429.
func (c *Client) hold(endpoint string, retryAfter time.Duration) {
	until := c.s.Clock.Now().Add(max(retryAfter, minHold))
	c.mu.Lock()
	defer c.mu.Unlock()
	if until.After(c.holds[endpoint]) {
		c.holds[endpoint] = until
	}
}

// heldUntil reports whether endpoint is paused, and until when.
func (c *Client) heldUntil(endpoint string) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	until, ok := c.holds[endpoint]
	if !ok {
		return time.Time{}, false
	}
	if !c.s.Clock.Now().Before(until) {
		delete(c.holds, endpoint)
		return time.Time{}, false
	}
	return until, true
}

// HeldError is a GET the client did not send: the API answered an earlier request to
// the same endpoint with 429 Too Many Requests, and the pause it asked for (its
// Retry-After, a second when it gave none) has not ended. It matches
// feed.ErrTooManyRequests.
type HeldError struct {
	Method   string
	URL      string
	Endpoint string    // the endpoint paused, as Response.Endpoint names it
	Until    time.Time // when the pause ends, on the client's clock
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("feedapi: %s %s: not sent: the API answered 429 Too Many Requests on %s and asked for a pause until %s",
		e.Method, e.URL, e.Endpoint, e.Until.UTC().Format(time.RFC3339))
}

// Is matches feed.ErrTooManyRequests.
func (e *HeldError) Is(target error) bool { return target == feed.ErrTooManyRequests }

// Stats counts what a client did. It encodes to JSON with snake_case names.
type Stats struct {
	// Requests counts the attempts sent, retries included.
	Requests uint64 `json:"requests"`
	// Failures counts the attempts that failed: no answer, an answer other than 2xx, or
	// one that could not be read.
	Failures uint64 `json:"failures"`
	// Retries counts the attempts that were retries of a failed GET.
	Retries uint64 `json:"retries"`
	// Held counts the GETs not sent because the API had paused their endpoint (a 429).
	Held uint64 `json:"held"`
}

// Stats returns the client's counters.
func (c *Client) Stats() Stats {
	return Stats{Requests: c.requests.Load(), Failures: c.failures.Load(), Retries: c.retries.Load(), Held: c.held.Load()}
}
