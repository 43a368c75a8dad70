package feedapi

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// Response is one attempt of a request as Config.OnResponse sees it: the answer as it
// came, or the failure that left none.
type Response struct {
	Method string
	// URL is the request's URL. The access token travels in a header, never here.
	URL string
	// Endpoint is the URL's path with what varies left out: URNs as {urn}, languages as
	// {lang}, numbers as {id}, dates as {date}, a recovery's producer as {product}, such
	// as /v1/sports/{lang}/sport_events/{urn}/summary.xml. It names the endpoint in logs and
	// metrics with a bounded set of values.
	Endpoint string
	// Attempt is 1 for the first attempt of a request, 2 for its first retry, and so on.
	Attempt int
	// StatusCode is the answer's status; 0 when no answer came (Err says why).
	StatusCode int
	// Header is the answer's header; nil when no answer came.
	Header http.Header
	// Body is what was read of the answer's body: all of a successful answer that was
	// asked for, the first 512 bytes of another. It is shared with the caller: read it,
	// keep it, never modify it.
	Body []byte
	// Err is why no answer came, or why its body could not be read; nil otherwise. An
	// answer other than 2xx is no Err here: StatusCode tells it.
	Err error
	// SentAt is when the attempt was sent, and Duration how long it took until the
	// answer was read (or the attempt failed), on the client's clock.
	SentAt   time.Time
	Duration time.Duration
}

var (
	datePattern   = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
	numberPattern = regexp.MustCompile(`^-?[0-9]+$`)
)

// Endpoint returns the endpoint of an escaped URL path, as Response.Endpoint names it:
// each segment that is a URN becomes {urn}, a number {id}, a date (2006-01-02) {date},
// the segment after sports or descriptions that is not a document (no ".xml") the
// language, {lang}, and a recovery request's producer segment (liveodds, pre, ...)
// {product}, so that the endpoints stay few however many producers an account has.
func Endpoint(path string) string {
	segs := strings.Split(path, "/")
	for i, seg := range segs {
		switch {
		case seg == "":
		case productSegment(segs, i):
			segs[i] = "{product}"
		case numberPattern.MatchString(seg):
			segs[i] = "{id}"
		case datePattern.MatchString(seg):
			segs[i] = "{date}"
		case strings.Contains(seg, ":") || strings.Contains(seg, "%3A") || strings.Contains(seg, "%3a"):
			if _, err := feed.ParseURN(unescape(seg)); err == nil {
				segs[i] = "{urn}"
			}
		case i > 0 && (segs[i-1] == "sports" || segs[i-1] == "descriptions") && !strings.Contains(seg, "."):
			segs[i] = "{lang}"
		}
	}
	return strings.Join(segs, "/")
}

// productSegment reports whether segs[i] names a producer in a recovery request's path:
// /v1/{product}/recovery/..., /v1/{product}/odds/events/... or
// /v1/{product}/stateful_messages/events/....
func productSegment(segs []string, i int) bool {
	if i != 2 || segs[1] != "v1" || len(segs) < 4 {
		return false
	}
	switch segs[3] {
	case "recovery":
		return true
	case "odds", "stateful_messages":
		return len(segs) > 4 && segs[4] == "events"
	}
	return false
}

// unescape decodes a path segment's %-escapes; a segment that does not decode is kept.
func unescape(seg string) string {
	if !strings.Contains(seg, "%") {
		return seg
	}
	if u, err := url.PathUnescape(seg); err == nil {
		return u
	}
	return seg
}
