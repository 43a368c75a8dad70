package feedtest

import (
	"context"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// RecoveryRequest is a recovery request the simulator's API received.
type RecoveryRequest struct {
	Producer  int
	RequestID int64
	After     time.Time // zero for a request without after
	Node      feed.NodeID
	Event     feed.URN // set for a per-event recovery
	Stateful  bool     // a per-event recovery of stateful messages
	Status    int      // the HTTP status answered
}

type recoveryFailure struct{ status, remaining int }

// RecoveryHandler returns the simulator's API, to serve with httptest.NewServer: the
// account's side (APIHandler with a zero Account) and the recovery requests:
//
//	GET  /v1/users/whoami.xml
//	GET  /v1/descriptions/producers.xml
//	POST /v1/{product}/recovery/initiate_request?after=<ms>&request_id=<id>&node_id=<n>
//	POST /v1/{product}/odds/events/{urn}/initiate_request?request_id=<id>&node_id=<n>
//	POST /v1/{product}/stateful_messages/events/{urn}/initiate_request?request_id=<id>&node_id=<n>
//
// An accepted request is answered 202 and then replayed, tagged with the request id and
// routed to the node, followed by a snapshot_complete with the same id: for a producer,
// every message of its live stream published since after; for an event, its latest odds
// change, or its stateful messages (settlements, cancellations and their rollbacks). A request needs the
// x-access-token header (401 otherwise), a known producer (404) and an after within the
// producer's recovery window and within what the simulator's history still holds (400;
// see SimulatorConfig.HistoryBytes).
func (s *Simulator) RecoveryHandler() http.Handler { return s.APIHandler(Account{}) }

// Account is the account the simulator's API describes in whoami.xml.
type Account struct {
	// BookmakerID is the account's id; 0 means DefaultBookmakerID.
	BookmakerID int
	// VirtualHost is the broker's virtual host of the account; "" means "/", the
	// virtual host of a test broker.
	VirtualHost string
	// ExpireAt is when the access token expires; zero means a year after each request,
	// by the simulator's clock.
	ExpireAt time.Time
}

// DefaultBookmakerID is the bookmaker id of the simulator's account when Account gives none.
const DefaultBookmakerID = 1

// APIHandler is RecoveryHandler with acct as the account whoami.xml describes.
// producers.xml lists feed.DefaultProducers and the simulator's producers: those of
// SimulatorConfig.Producers are active, the others inactive, as the feed's API lists
// every producer and marks those the account does not receive. It serves the Sports
// API's descriptions, summaries and profiles too (the Route constants, see sportsapi.go),
// and counts every request (APIRequests). All need the x-access-token header (401
// otherwise).
func (s *Simulator) APIHandler(acct Account) http.Handler {
	mux := newAPIMux()
	s.registerAPI(mux, acct)
	return s.countRequests(mux)
}

// registerAPI adds every route of the API to mux: the account's, the recovery requests',
// the Sports API's, and last the catch-all that answers what none of them takes.
func (s *Simulator) registerAPI(mux *apiMux, acct Account) {
	mux.HandleFunc("GET /v1/users/whoami.xml", func(w http.ResponseWriter, r *http.Request) {
		s.serveWhoAmI(w, r, acct)
	})
	mux.HandleFunc("GET /v1/descriptions/producers.xml", s.serveProducers)
	mux.HandleFunc("POST /v1/{product}/recovery/initiate_request", func(w http.ResponseWriter, r *http.Request) {
		s.serveRecovery(w, r, feed.URN{}, false)
	})
	mux.HandleFunc("POST /v1/{product}/odds/events/{event}/initiate_request", func(w http.ResponseWriter, r *http.Request) {
		s.serveEventRecovery(w, r, false)
	})
	mux.HandleFunc("POST /v1/{product}/stateful_messages/events/{event}/initiate_request", func(w http.ResponseWriter, r *http.Request) {
		s.serveEventRecovery(w, r, true)
	})
	s.registerSportsAPI(mux)
	// What no route takes is answered as the API answers it: a <response>, not Go's
	// plain-text 404.
	mux.HandleFunc(routeUnknown, func(w http.ResponseWriter, r *http.Request) {
		if allowed := otherMethods(mux, r); len(allowed) > 0 {
			w.Header().Set("Allow", strings.Join(allowed, ", "))
			writeResponse(w, r, http.StatusMethodNotAllowed, r.Method+" is not allowed here: "+strings.Join(allowed, ", "))
			return
		}
		notFound(w, r, "no such endpoint: "+r.Method+" "+r.URL.Path)
	})
}

// routeUnknown takes the requests that no route of the API's takes.
const routeUnknown = "/"

// otherMethods returns the methods that a route of mux takes r's path with: a request
// the catch-all got although its path is a route's came with the wrong method (405).
func otherMethods(mux *apiMux, r *http.Request) []string {
	var allowed []string
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		if m == r.Method {
			continue
		}
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := mux.Handler(probe); pattern != routeUnknown && pattern != "" {
			allowed = append(allowed, m)
		}
	}
	return allowed
}

func (s *Simulator) authorized(w http.ResponseWriter, r *http.Request) bool {
	if r.Header.Get("x-access-token") == s.cfg.AccessToken {
		return true
	}
	writeResponse(w, r, http.StatusUnauthorized, "missing or wrong x-access-token")
	return false
}

func (s *Simulator) serveWhoAmI(w http.ResponseWriter, r *http.Request, acct Account) {
	if !s.authorized(w, r) {
		return
	}
	id, vhost, expire := acct.BookmakerID, acct.VirtualHost, acct.ExpireAt
	if id == 0 {
		id = DefaultBookmakerID
	}
	if vhost == "" {
		vhost = "/"
	}
	if expire.IsZero() {
		expire = s.clock.Now().AddDate(1, 0, 0)
	}
	w.Header().Set("Content-Type", "application/xml")
	fmt.Fprintf(w, `<bookmaker_details response_code="OK" expire_at="%s" bookmaker_id="%d" virtual_host="`,
		expire.UTC().Format(time.RFC3339), id)
	_ = xml.EscapeText(w, []byte(vhost))
	fmt.Fprint(w, `"/>`)
}

func (s *Simulator) serveProducers(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	all := feed.DefaultProducers()
	for _, p := range s.cfg.Producers {
		if _, ok := feed.LookupProducer(all, p.ID); !ok {
			all = append(all, p)
		}
	}
	base := "http://" + r.Host
	w.Header().Set("Content-Type", "application/xml")
	fmt.Fprint(w, `<producers response_code="OK">`)
	for _, p := range all {
		if own, ok := feed.LookupProducer(s.cfg.Producers, p.ID); ok {
			p = own
		}
		_, active := feed.LookupProducer(s.cfg.Producers, p.ID)
		fmt.Fprintf(w, `<producer id="%d" name="%s" description="%s" api_url="%s/v1/%s/" active="%t" scope="%s" stateful_recovery_window_in_minutes="%d"/>`,
			p.ID, escapeAttr(p.Name), escapeAttr(p.Description), base, escapeAttr(p.APIPath), active,
			p.Scope, int64(p.MaxRecoveryWindow/time.Minute))
	}
	fmt.Fprint(w, `</producers>`)
}

func escapeAttr(v string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(v))
	return b.String()
}

// NewRecoveryServer starts an httptest.Server with RecoveryHandler; the caller closes it.
func (s *Simulator) NewRecoveryServer() *httptest.Server {
	return httptest.NewServer(s.RecoveryHandler())
}

// FailRecoveries makes the next n recovery requests fail with the HTTP status given, as
// when the API is overloaded (503) or rate limits the account (429). n <= 0 does nothing.
func (s *Simulator) FailRecoveries(status, n int) {
	if n <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = append(s.failures, recoveryFailure{status: status, remaining: n})
}

// RecoveryRequests returns the recovery requests received so far.
func (s *Simulator) RecoveryRequests() []RecoveryRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]RecoveryRequest(nil), s.recoveries...)
}

// WaitReplays waits until the replays of the recovery requests accepted so far are
// published.
func (s *Simulator) WaitReplays() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.replaying > 0 {
		s.replayed.Wait()
	}
}

func (s *Simulator) serveEventRecovery(w http.ResponseWriter, r *http.Request, stateful bool) {
	event, err := feed.ParseURN(r.PathValue("event"))
	if err != nil {
		writeResponse(w, r, http.StatusBadRequest, err.Error())
		return
	}
	s.serveRecovery(w, r, event, stateful)
}

func (s *Simulator) serveRecovery(w http.ResponseWriter, r *http.Request, event feed.URN, stateful bool) {
	req := RecoveryRequest{Event: event, Stateful: stateful}
	status, msg := s.checkRecovery(r, &req)
	s.mu.Lock()
	if status == http.StatusAccepted && !req.After.IsZero() && req.Event.IsZero() {
		if ok, through := s.history.covers(req.Producer, req.After); !ok {
			status = http.StatusBadRequest
			msg = fmt.Sprintf("after %s reaches back past the history kept: messages up to %s are forgotten (SimulatorConfig.HistoryBytes, HistoryAge)",
				req.After.Format(time.RFC3339Nano), through.Format(time.RFC3339Nano))
		}
	}
	if status == http.StatusAccepted && len(s.failures) > 0 {
		f := &s.failures[0]
		status, msg = f.status, "injected failure"
		if f.remaining--; f.remaining == 0 {
			s.failures = s.failures[1:]
		}
	}
	req.Status = status
	s.recoveries = append(s.recoveries, req)
	var replay []replayed
	if status == http.StatusAccepted {
		replay = s.replayLocked(req)
		// Count the replay before answering, so that WaitReplays after the answer waits for it.
		s.replaying++
	}
	s.mu.Unlock()

	writeResponse(w, r, status, msg)
	if status == http.StatusAccepted {
		go func() {
			defer func() {
				s.mu.Lock()
				s.replaying--
				s.replayed.Broadcast()
				s.mu.Unlock()
			}()
			// The API has answered; the replay goes on without the request's context.
			s.publishReplay(context.Background(), req, replay)
		}()
	}
}

func (s *Simulator) checkRecovery(r *http.Request, req *RecoveryRequest) (int, string) {
	if r.Header.Get("x-access-token") != s.cfg.AccessToken {
		return http.StatusUnauthorized, "missing or wrong x-access-token"
	}
	var producer feed.Producer
	found := false
	for _, p := range s.cfg.Producers {
		if p.APIPath == r.PathValue("product") {
			producer, found = p, true
		}
	}
	if !found {
		return http.StatusNotFound, "unknown product " + r.PathValue("product")
	}
	req.Producer = producer.ID
	q := r.URL.Query()
	id, err := strconv.ParseInt(q.Get("request_id"), 10, 64)
	if err != nil {
		return http.StatusBadRequest, "request_id is not an integer"
	}
	req.RequestID = id
	if v := q.Get("node_id"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return http.StatusBadRequest, "node_id is not an integer"
		}
		req.Node = feed.Node(n)
	}
	if v := q.Get("after"); v != "" {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return http.StatusBadRequest, "after is not a timestamp in milliseconds"
		}
		req.After = time.UnixMilli(ms).UTC()
		if s.clock.Since(req.After) > producer.MaxRecoveryWindow {
			return http.StatusBadRequest, fmt.Sprintf("after is older than the recovery window of %v", producer.MaxRecoveryWindow)
		}
	}
	return http.StatusAccepted, fmt.Sprintf("Request for %s recovery with request_id %d accepted", producer.Name, id)
}

// replayed is a message a recovery resends: its key and body as first published.
type replayed struct {
	key  feed.RoutingKey
	body []byte
}

// replayLocked selects what a recovery resends, in the order it was published: for a
// producer, every message of its live stream since After; for an event's odds, the
// event's latest odds_change; for an event's stateful messages, its settlements,
// cancellations and their rollbacks.
func (s *Simulator) replayLocked(req RecoveryRequest) []replayed {
	var out []replayed
	s.history.each(func(r *record) {
		switch t := r.key.Type; {
		case !r.isLiveEvent() || r.producer != req.Producer:
		case !req.Event.IsZero() && r.key.Event != req.Event:
		case !req.Event.IsZero() && !req.Stateful:
			if t == feed.MessageOddsChange {
				out = append(out[:0], replayed{r.key, r.body}) // only the latest counts
			}
		case req.Stateful && (t == feed.MessageOddsChange || t == feed.MessageBetStop || t == feed.MessageFixtureChange):
		case r.stamp < req.After.UnixMilli():
		default:
			out = append(out, replayed{r.key, r.body})
		}
	})
	return out
}

func (s *Simulator) publishReplay(ctx context.Context, req RecoveryRequest, msgs []replayed) {
	for _, r := range msgs {
		key := r.key
		key.Node = req.Node
		if err := s.send(ctx, key, withRequestID(r, req.RequestID), true); err != nil {
			return // the publisher is gone; the recovery will time out, as a real one would
		}
	}
	s.mu.Lock()
	stamp := s.stampLocked()
	s.mu.Unlock()
	done := &feed.SnapshotComplete{Header: feed.Header{Producer: req.Producer, RequestID: req.RequestID, Timestamp: stamp}}
	_ = s.send(ctx, feed.RoutingKey{Type: feed.MessageSnapshotComplete, Node: req.Node}, done, true)
}

// withRequestID returns the message r holds, tagged with a recovery request id.
func withRequestID(r replayed, id int64) feed.Message {
	m := decodeOwn(r.key.Type, r.body)
	m.MessageHeader().RequestID = id
	return m
}
