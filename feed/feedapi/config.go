package feedapi

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/internal/backoff"
	"github.com/feedkit/feedkit/internal/durcheck"
)

// Defaults of Config.
const (
	DefaultTimeout      = 20 * time.Second
	DefaultMaxAttempts  = 3
	DefaultRetryInitial = 500 * time.Millisecond
	DefaultRetryMax     = 10 * time.Second
)

// Config configures a Client. BaseURL and AccessToken are required; every other field
// has a default, its zero value.
type Config struct {
	// BaseURL is the API's root, such as https://api.betradar.com.
	BaseURL string
	// AccessToken authenticates every request (the x-access-token header).
	AccessToken string
	// Node is sent with recovery requests as node_id, so that the feed routes the
	// replay to this SDK instance alone; the zero NodeID sends none.
	Node feed.NodeID
	// HTTPClient sends the requests; nil means a client of its own, which does not follow
	// redirects (a redirected POST becomes a GET, which would start no recovery, and the
	// access token would travel to another host). A client given here should do the same.
	HTTPClient *http.Client
	// Timeout bounds each attempt of a request; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxAttempts is how many times a GET is sent before its error is returned: the
	// first attempt and the retries after a network failure, a server error (5xx) or a
	// rate limit (429). 0 means DefaultMaxAttempts; 1 turns retries off. Recovery
	// requests are sent once whatever it says (see the package doc).
	MaxAttempts int
	// RetryInitial and RetryMax bound the backoff between attempts (doubling, with
	// jitter); 0 means DefaultRetryInitial and DefaultRetryMax. An answer's Retry-After
	// replaces the backoff when it is longer; one longer than RetryMax ends the retries.
	RetryInitial, RetryMax time.Duration
	// OnResponse, when set, sees every answer and every failed attempt (see Response).
	// It is called on the goroutine of the request, before the caller has the result:
	// it must be quick and safe for concurrent use.
	OnResponse func(Response)
	// Clock paces the retries and times the requests; nil is the wall clock.
	Clock clock.Clock
	// Observer is told of every attempt sent and every request held, for metrics; nil
	// tells no one.
	Observer Observer
}

// settings is a Config checked and with its defaults applied.
type settings struct {
	Config
	base  *url.URL
	retry backoff.Policy
}

func (c Config) resolve() (settings, error) {
	const prefix = "feedapi: Config."
	if c.BaseURL == "" {
		return settings{}, errors.New(prefix + "BaseURL is empty")
	}
	base, err := url.Parse(c.BaseURL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return settings{}, fmt.Errorf("%sBaseURL %q: want an http or https URL", prefix, redact(c.BaseURL))
	}
	switch {
	case c.AccessToken == "":
		return settings{}, errors.New(prefix + "AccessToken is empty")
	case c.MaxAttempts < 0:
		return settings{}, fmt.Errorf("%sMaxAttempts %d must not be negative", prefix, c.MaxAttempts)
	}
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"Timeout", c.Timeout}, {"RetryInitial", c.RetryInitial}, {"RetryMax", c.RetryMax}} {
		if f.d < 0 {
			return settings{}, fmt.Errorf("%s%s %v must not be negative", prefix, f.name, f.d)
		}
		if f.d == 0 {
			continue // the default
		}
		if err := durcheck.AtLeast(prefix+f.name, f.d, time.Millisecond); err != nil {
			return settings{}, err
		}
	}
	s := settings{Config: c, base: base}
	if s.Timeout == 0 {
		s.Timeout = DefaultTimeout
	}
	if s.MaxAttempts == 0 {
		s.MaxAttempts = DefaultMaxAttempts
	}
	if s.RetryInitial == 0 {
		s.RetryInitial = DefaultRetryInitial
	}
	if s.RetryMax == 0 {
		s.RetryMax = max(DefaultRetryMax, s.RetryInitial)
	}
	s.retry = backoff.Policy{Initial: s.RetryInitial, Max: s.RetryMax, Jitter: 0.2}
	if err := s.retry.Validate(prefix + "Retry"); err != nil {
		return settings{}, fmt.Errorf("%sRetryMax %v must be at least RetryInitial (%v)", prefix, s.RetryMax, s.RetryInitial)
	}
	s.Clock = clock.OrReal(s.Clock)
	if s.HTTPClient == nil {
		s.HTTPClient = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // a 3xx is then an *APIError
		}}
	}
	return s, nil
}

// redact drops the user information of a URL, for errors.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
