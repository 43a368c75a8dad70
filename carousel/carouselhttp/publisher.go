package carouselhttp

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/feedkit/feedkit/carousel"
	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/internal/backoff"
)

// PublisherConfig configures a Publisher. URL is required; every other field has
// a default.
type PublisherConfig struct {
	// URL is where every publication is POSTed: an absolute http or https URL.
	URL string
	// Client sends the requests; nil is a client whose Timeout is Timeout.
	Client *http.Client
	// Timeout bounds each attempt, from sending the request to reading the response,
	// whatever the Client; 0 is 10s. It is measured on the wall clock, not Clock.
	Timeout time.Duration
	// Attempts is the most requests one Publish makes; 0 is 3, and 1 disables retries.
	Attempts int
	// RetryInitial and RetryMax bound the capped exponential backoff, with jitter, between
	// two attempts; 0 is 200ms and 5s. RetryMax caps a server's Retry-After as well.
	RetryInitial, RetryMax time.Duration
	// OriginHeader is the request header that carries [carousel.Publication].Origin; "" is
	// "X-Origin-System-Id".
	OriginHeader string
	// Body encodes a publication as the request body; nil is a JSON object with the fields
	// cycle, origin, collection, id, modified (RFC 3339, absent when zero), iteration and
	// position. It is called once per Publish: every attempt sends the same bytes.
	Body func(ctx context.Context, p carousel.Publication) ([]byte, error)
	// ContentType is the requests' Content-Type; "" is "application/json".
	ContentType string
	// Clock times the waits between attempts; nil is the wall clock (a clocktest.Fake in
	// tests).
	Clock clock.Clock
}

// Publisher is a [carousel.Publisher] that POSTs each publication to a URL. It retries, a
// bounded number of times with backoff, what may succeed later: network errors, 5xx and
// 429 responses, waiting as long as a Retry-After in seconds asks (up to RetryMax). Every
// attempt of one Publish carries the same X-Request-Id, so that the receiver can
// recognise a retry of a request it did process.
//
// Every request carries the publication's identity in headers as well, whatever the
// body: X-Carousel-Cycle, X-Carousel-Iteration and X-Carousel-Position (CycleHeader,
// IterationHeader, PositionHeader), the iteration and position in decimal. A receiver
// that has seen the item in that cycle and iteration is getting a republication after a
// restart or a failover, not a new round (see [carousel.Publication]). It is safe for concurrent
// use.
type Publisher struct {
	url          string
	shownURL     string // without a password, for errors that end up in logs and metadata
	client       *http.Client
	timeout      time.Duration
	attempts     int
	retry        backoff.Policy
	originHeader string
	contentType  string
	body         func(ctx context.Context, p carousel.Publication) ([]byte, error)
	clock        clock.Clock
}

// RequestIDHeader is the header that identifies one Publish across its attempts.
const RequestIDHeader = "X-Request-Id"

// The headers of a publication's identity (see [carousel.Publication]): its cycle's name, its
// iteration and its position in the iteration, both in decimal.
const (
	CycleHeader     = "X-Carousel-Cycle"
	IterationHeader = "X-Carousel-Iteration"
	PositionHeader  = "X-Carousel-Position"
)

// NewPublisher validates cfg, naming the first bad field in an error that wraps
// [carousel.ErrInvalidConfig], and returns a publisher using it.
func NewPublisher(cfg PublisherConfig) (*Publisher, error) {
	bad := func(field string, v any, problem string) (*Publisher, error) {
		return nil, fmt.Errorf("carouselhttp: PublisherConfig.%s %v %s: %w", field, v, problem, carousel.ErrInvalidConfig)
	}
	if cfg.URL == "" {
		return bad("URL", `""`, "is required")
	}
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		shown := strconv.Quote(cfg.URL)
		if err == nil {
			shown = strconv.Quote(u.Redacted())
		}
		return bad("URL", shown, "must be an absolute http or https URL")
	}
	switch {
	case cfg.Timeout < 0:
		return bad("Timeout", cfg.Timeout, "must not be negative")
	case cfg.Attempts < 0:
		return bad("Attempts", cfg.Attempts, "must not be negative")
	case cfg.RetryInitial < 0:
		return bad("RetryInitial", cfg.RetryInitial, "must not be negative")
	case cfg.RetryMax < 0:
		return bad("RetryMax", cfg.RetryMax, "must not be negative")
	case cfg.OriginHeader != "" && !validHeaderName(cfg.OriginHeader):
		return bad("OriginHeader", strconv.Quote(cfg.OriginHeader), "is not a valid header name")
	}
	h := &Publisher{
		url:          cfg.URL,
		shownURL:     u.Redacted(),
		client:       cfg.Client,
		timeout:      cmp.Or(cfg.Timeout, 10*time.Second),
		attempts:     cmp.Or(cfg.Attempts, 3),
		retry:        backoff.Policy{Initial: cmp.Or(cfg.RetryInitial, 200*time.Millisecond), Max: cmp.Or(cfg.RetryMax, 5*time.Second), Jitter: 0.5},
		originHeader: cmp.Or(cfg.OriginHeader, "X-Origin-System-Id"),
		contentType:  cmp.Or(cfg.ContentType, "application/json"),
		body:         cfg.Body,
		clock:        clock.OrReal(cfg.Clock),
	}
	if h.retry.Max < h.retry.Initial {
		return bad("RetryMax", h.retry.Max, fmt.Sprintf("must be at least RetryInitial (%v)", h.retry.Initial))
	}
	if h.client == nil {
		// A redirect is answered, not followed: Go's client would turn the POST into a
		// GET without its body on a 301, 302 or 303, and report that as the outcome.
		h.client = &http.Client{Timeout: h.timeout, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}}
	}
	if h.body == nil {
		h.body = jsonBody
	}
	return h, nil
}

// validHeaderName reports whether s is an HTTP token (RFC 9110), which the transport
// would otherwise refuse at the first Publish rather than at configuration.
func validHeaderName(s string) bool {
	for i := range len(s) {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return s != ""
}

// jsonBody is the default PublisherConfig.Body.
func jsonBody(_ context.Context, p carousel.Publication) ([]byte, error) {
	return json.Marshal(struct {
		Cycle      string    `json:"cycle"`
		Origin     string    `json:"origin"`
		Collection string    `json:"collection"`
		ID         string    `json:"id"`
		Modified   time.Time `json:"modified,omitzero"`
		Iteration  int       `json:"iteration"`
		Position   int       `json:"position"`
	}{p.Cycle, p.Origin, p.Collection, p.Item.ID, p.Item.Modified, p.Iteration, p.Position})
}

// Publish implements [carousel.Publisher]: it POSTs p, retrying as the PublisherConfig says, and returns
// an error naming the URL, the last status (or network error), the number of attempts
// and the start of the last response's body.
func (h *Publisher) Publish(ctx context.Context, p carousel.Publication) error {
	body, err := h.body(ctx, p)
	if err != nil {
		return fmt.Errorf("carouselhttp: Publisher: encoding the body of cycle %q item %q: %w", p.Cycle, p.Item.ID, err)
	}
	id := requestID(p)
	for attempt := 1; ; attempt++ {
		res := h.try(ctx, body, p, id)
		if res.err == nil && res.status >= 200 && res.status < 300 {
			return nil
		}
		fail := &publishError{url: h.shownURL, cycle: p.Cycle, item: p.Item.ID, attempts: attempt, attempt: res}
		if err := ctx.Err(); err != nil {
			fail.stop = err
			return fail
		}
		if !res.retryable() {
			fail.final = true
			return fail
		}
		if attempt >= h.attempts {
			return fail
		}
		if err := h.wait(ctx, h.delay(res, attempt)); err != nil {
			fail.stop = err
			return fail
		}
	}
}

// attemptResult is what one request came to: a network error, or a status with the start
// of the body.
type attemptResult struct {
	err        error
	status     int
	body       []byte
	retryAfter time.Duration // valid when hasRetryAfter
	// hasRetryAfter tells a "Retry-After: 0" (retry at once) from no Retry-After.
	hasRetryAfter bool
}

// retryable reports whether a later attempt may succeed: a network error other than a
// certificate the server will present again, a 5xx, a 429, or a 408.
func (r attemptResult) retryable() bool {
	if r.err != nil {
		var unknownAuthority x509.UnknownAuthorityError
		var hostname x509.HostnameError
		var invalid x509.CertificateInvalidError
		var verify *tls.CertificateVerificationError
		return !errors.As(r.err, &unknownAuthority) && !errors.As(r.err, &hostname) &&
			!errors.As(r.err, &invalid) && !errors.As(r.err, &verify)
	}
	return r.status >= 500 || r.status == http.StatusTooManyRequests || r.status == http.StatusRequestTimeout
}

// shownBody is how much of a failed response's body an error quotes: enough for a
// server's error message, not a whole page in a log line.
const shownBody = 512

// drainedBody is how much more of a response's body is read and discarded so that the
// connection can be reused; a longer body costs a new connection rather than the time to
// read it.
const drainedBody = 64 << 10

func (h *Publisher) try(ctx context.Context, body []byte, p carousel.Publication, id string) attemptResult {
	// The Client's own Timeout bounds the default client only; this bounds any.
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return attemptResult{err: err}
	}
	req.Header.Set("Content-Type", h.contentType)
	req.Header.Set(h.originHeader, p.Origin)
	req.Header.Set(RequestIDHeader, id)
	req.Header.Set(CycleHeader, p.Cycle)
	req.Header.Set(IterationHeader, strconv.Itoa(p.Iteration))
	req.Header.Set(PositionHeader, strconv.Itoa(p.Position))
	resp, err := h.client.Do(req)
	if err != nil {
		return attemptResult{err: err}
	}
	defer resp.Body.Close()
	res := attemptResult{status: resp.StatusCode}
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		// A read error only shortens what the error quotes; the status is what counts.
		res.body, _ = io.ReadAll(io.LimitReader(resp.Body, shownBody))
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, drainedBody))
	if s, err := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After"))); err == nil && s >= 0 {
		res.retryAfter, res.hasRetryAfter = time.Duration(s)*time.Second, true
	}
	return res
}

// delay is the wait after attempt (from 1) failed: what the server asked for, up to
// RetryMax, or else the backoff's. A Retry-After date is not honoured, only seconds: it
// would need the two clocks to agree.
func (h *Publisher) delay(res attemptResult, attempt int) time.Duration {
	if res.hasRetryAfter {
		return min(res.retryAfter, h.retry.Max)
	}
	return h.retry.Delay(attempt - 1)
}

func (h *Publisher) wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := h.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C():
		return nil
	}
}

// requestID makes the X-Request-Id of one Publish: readable in the receiver's logs (the
// cycle and item) and unique (the random part). Bytes a header value cannot hold become
// '_', and a long item id is cut, so that no item can make the request invalid.
func requestID(p carousel.Publication) string {
	clean := func(s string, n int) string {
		if len(s) > n {
			s = s[:n]
		}
		return strings.Map(func(r rune) rune {
			if r <= ' ' || r >= 0x7f {
				return '_'
			}
			return r
		}, s)
	}
	return fmt.Sprintf("carousel-%s-%s-%016x", clean(p.Cycle, 64), clean(p.Item.ID, 128), rand.Uint64())
}

// publishError is a Publish that failed: the last attempt's result and why it was the last.
type publishError struct {
	url         string
	cycle, item string
	attempts    int
	attempt     attemptResult
	final       bool  // the last response was not worth retrying
	stop        error // the context ended the retries
}

func (e *publishError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "carouselhttp: Publisher: POST %s (cycle %q, item %q): ", e.url, e.cycle, e.item)
	if e.attempt.err != nil {
		b.WriteString(e.attempt.err.Error())
	} else {
		fmt.Fprintf(&b, "status %d", e.attempt.status)
	}
	fmt.Fprintf(&b, " after %d attempt", e.attempts)
	if e.attempts != 1 {
		b.WriteByte('s')
	}
	switch {
	case e.stop != nil:
		fmt.Fprintf(&b, ", stopped: %v", e.stop)
	case e.final:
		b.WriteString(" (not retried)")
	}
	if e.attempt.err == nil {
		fmt.Fprintf(&b, ": body %q", e.attempt.body)
	}
	return b.String()
}

// Unwrap returns the network error and the context's error, when there are.
func (e *publishError) Unwrap() []error {
	var errs []error
	for _, err := range []error{e.attempt.err, e.stop} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}
