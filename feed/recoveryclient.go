package feed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Errors of the feed's API (recoveries, the account, the Sports API), matched with
// errors.Is against an *APIError.
var (
	ErrBadRequest      = errors.New("feed: API: bad request")       // 400
	ErrUnauthorized    = errors.New("feed: API: unauthorized")      // 401: bad access token
	ErrForbidden       = errors.New("feed: API: forbidden")         // 403: not allowed for this account or producer
	ErrNotFound        = errors.New("feed: API: not found")         // 404: unknown producer, event, language, ...
	ErrTooManyRequests = errors.New("feed: API: too many requests") // 429: a rate limit
	ErrServerError     = errors.New("feed: API: server error")      // 5xx
)

// APIError is an answer of the feed's API other than success.
type APIError struct {
	StatusCode int
	Method     string
	URL        string        // the request URL (the access token travels in a header, not here)
	Body       string        // the start of the response body
	RetryAfter time.Duration // from a Retry-After header in seconds; 0 when absent
}

func (e *APIError) Error() string {
	msg := fmt.Sprintf("feed: API: %s %s: %d %s", e.Method, e.URL, e.StatusCode, http.StatusText(e.StatusCode))
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// Is matches the sentinel error of the status class.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrBadRequest:
		return e.StatusCode == http.StatusBadRequest
	case ErrUnauthorized:
		return e.StatusCode == http.StatusUnauthorized
	case ErrForbidden:
		return e.StatusCode == http.StatusForbidden
	case ErrNotFound:
		return e.StatusCode == http.StatusNotFound
	case ErrTooManyRequests:
		return e.StatusCode == http.StatusTooManyRequests
	case ErrServerError:
		return e.StatusCode >= 500 && e.StatusCode < 600
	}
	return false
}

// Retryable reports whether the same request may succeed later: a rate limit or a server
// error, as opposed to a request the API will always refuse.
func (e *APIError) Retryable() bool {
	return e.StatusCode == http.StatusTooManyRequests || (e.StatusCode >= 500 && e.StatusCode < 600)
}

// DefaultRecoveryTimeout bounds one recovery API request.
const DefaultRecoveryTimeout = 20 * time.Second

// RecoveryClientConfig configures a RecoveryClient.
type RecoveryClientConfig struct {
	// BaseURL is the API's root, such as https://api.betradar.com. Required.
	BaseURL string
	// AccessToken authenticates the requests (the x-access-token header). Required.
	AccessToken string
	// Node is sent as node_id, so that the replay is routed to this SDK instance.
	Node NodeID
	// HTTPClient sends the requests; nil means a client of its own, which does not follow
	// redirects (a redirected POST becomes a GET, which would start no recovery, and the
	// access token would travel to another host). A client given here should do the same.
	HTTPClient *http.Client
	// Timeout bounds each request; 0 means DefaultRecoveryTimeout.
	Timeout time.Duration
}

// RecoveryClient asks the feed's API to replay messages: the recovery of a producer since
// a moment, or of one event.
type RecoveryClient struct {
	base    *url.URL
	token   string
	node    NodeID
	http    *http.Client
	timeout time.Duration
}

// NewRecoveryClient checks cfg and returns a client.
func NewRecoveryClient(cfg RecoveryClientConfig) (*RecoveryClient, error) {
	if cfg.BaseURL == "" {
		return nil, errors.New("feed: RecoveryClientConfig.BaseURL is empty")
	}
	base, err := url.Parse(cfg.BaseURL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("feed: RecoveryClientConfig.BaseURL %q: want an http or https URL", cfg.BaseURL)
	}
	if cfg.AccessToken == "" {
		return nil, errors.New("feed: RecoveryClientConfig.AccessToken is empty")
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("feed: RecoveryClientConfig.Timeout %v must not be negative", cfg.Timeout)
	}
	c := &RecoveryClient{base: base, token: cfg.AccessToken, node: cfg.Node, http: cfg.HTTPClient, timeout: cfg.Timeout}
	if c.http == nil {
		c.http = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // a 3xx is then an *APIError
		}}
	}
	if c.timeout == 0 {
		c.timeout = DefaultRecoveryTimeout
	}
	return c, nil
}

// InitiateRecovery asks the feed to replay producer p's messages since after, tagged with
// requestID and ended by a snapshot_complete of the same id. A zero after asks for the
// current state only (a full snapshot).
func (c *RecoveryClient) InitiateRecovery(ctx context.Context, p Producer, after time.Time, requestID int64) error {
	q := url.Values{}
	if !after.IsZero() {
		q.Set("after", strconv.FormatInt(after.UnixMilli(), 10))
	}
	return c.post(ctx, p, "recovery/initiate_request", requestID, q)
}

// InitiateEventRecovery asks the feed to resend the current odds of one event.
func (c *RecoveryClient) InitiateEventRecovery(ctx context.Context, p Producer, event URN, requestID int64) error {
	if event.IsZero() {
		return errors.New("feed: event recovery: the event URN is zero")
	}
	return c.post(ctx, p, "odds/events/"+event.String()+"/initiate_request", requestID, url.Values{})
}

// InitiateEventStatefulRecovery asks the feed to resend the stateful messages (bet
// settlements, cancels and their rollbacks) of one event.
func (c *RecoveryClient) InitiateEventStatefulRecovery(ctx context.Context, p Producer, event URN, requestID int64) error {
	if event.IsZero() {
		return errors.New("feed: event recovery: the event URN is zero")
	}
	return c.post(ctx, p, "stateful_messages/events/"+event.String()+"/initiate_request", requestID, url.Values{})
}

func (c *RecoveryClient) post(ctx context.Context, p Producer, path string, requestID int64, q url.Values) error {
	if p.APIPath == "" {
		return fmt.Errorf("feed: recovery for producer %d (%s): its APIPath is empty", p.ID, p.Name)
	}
	q.Set("request_id", strconv.FormatInt(requestID, 10))
	if n, ok := c.node.Int(); ok {
		q.Set("node_id", strconv.Itoa(n))
	}
	u := c.base.JoinPath("v1", p.APIPath, path)
	u.RawQuery = q.Encode()
	_, err := c.do(ctx, http.MethodPost, u, 0)
	if err != nil {
		var apiErr *APIError
		if !errors.As(err, &apiErr) {
			return fmt.Errorf("feed: recovery request for producer %s: %w", p.Name, err)
		}
	}
	return err
}

// do sends a request without a body and returns up to keep bytes of a successful
// answer's body; an answer other than 2xx is an *APIError.
func (c *RecoveryClient) do(ctx context.Context, method string, u *url.URL, keep int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("x-access-token", c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() {
		// Read a little more than we keep, so that the connection can be reused.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
	}()
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if keep == 0 {
			return nil, nil
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, keep+1))
		if err != nil {
			return nil, fmt.Errorf("%s %s: reading the answer: %w", method, u, err)
		}
		if int64(len(body)) > keep {
			return nil, fmt.Errorf("%s %s: the answer is larger than %d bytes", method, u, keep)
		}
		return body, nil
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	apiErr := &APIError{StatusCode: resp.StatusCode, Method: req.Method, URL: u.String(),
		Body: strings.TrimSpace(strings.ToValidUTF8(string(body), ""))}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		apiErr.RetryAfter = time.Duration(s) * time.Second
	}
	return nil, apiErr
}
