package feed

import (
	"errors"
	"fmt"
	"net/http"
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

// APIError is an answer of the feed's API other than success. Package feedapi's client
// returns it; it lives here, beside the feed's other types, so that the packages that
// only read it (recovery, feed/markets) need no HTTP client.
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
