package feedapi

import "time"

// Observer is told of every request the Client makes, so that a metrics library can
// count and time them (Config.Observer; the otelfeedkit and promfeedkit modules
// implement it). Unlike Config.OnResponse it is given nothing unbounded: no URL, no
// body.
//
// Its methods are called on the goroutines of the Client's callers, concurrently: they
// must be quick and must not block.
type Observer interface {
	// APIRequest is told of each attempt sent, retries included: its method, its
	// endpoint (Endpoint's template, e.g. "/v1/{lang}/sport_events/{urn}/summary.xml"),
	// the status of the answer (0 when none came) and how long it took.
	APIRequest(method, endpoint string, status int, took time.Duration)
	// APIRequestHeld is told of each request not sent because the API had paused its
	// endpoint with a 429: a refusal by the rate limit.
	APIRequestHeld(method, endpoint string)
}
