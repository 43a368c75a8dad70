package locks

import (
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/feedkit/feedkit/internal/clock"
)

// HandlerOptions configures NewHandler. The zero value is usable.
type HandlerOptions struct {
	// Logger receives the server errors and the operator's changes; nil discards them.
	Logger *slog.Logger
	// Clock is the time a replayed notification is made due at; nil is the wall clock.
	Clock clock.Clock
	// OnReplay, if set, is called after a successful replay, so that the notifier looks
	// for the notification at once instead of at its next poll.
	OnReplay func()
	// Stats, if set, is answered as JSON at GET /stats; without it /stats is a 404.
	Stats func() any
}

// NewHandler returns the operator's HTTP API over s:
//
//	GET    /health                          {"status":"ok"}
//	GET    /stats                           what HandlerOptions.Stats returns; 404 without it
//	GET    /sensors?after=&limit=           {"sensors":[...],"next":"..."}, by id
//	POST   /sensors                         register {"id","address"}; 201 with the sensor, 409 if the id is taken
//	GET    /sensors/{id}                    the sensor
//	PUT    /sensors/{id}                    set its {"address"}; the sensor after
//	DELETE /sensors/{id}                    forget it with its state, links, history and notifications; 204
//	GET    /sensors/{id}/state              its state: {"sensor_id","state" (null until known),"reading_at","changed_at","last_seen","lost"}
//	GET    /sensors/{id}/clients            {"clients":[...]}: the clients linked to it
//	PUT    /sensors/{id}/clients/{client}   link the client to the sensor; 204 (also when already linked)
//	DELETE /sensors/{id}/clients/{client}   unlink them; 204, 404 when they are not linked
//	GET    /sensors/{id}/readings?from=&to=&limit=&cursor=       {"readings":[...],"next_cursor":"..."}, by ts
//	GET    /sensors/{id}/notifications?from=&to=&limit=&cursor=  {"notifications":[...],"next_cursor":"..."}, by time, each with its attempts in "history"
//	GET    /clients?after=&limit=           {"clients":[...],"next":"..."}, by id
//	POST   /clients                         register {"name","url"}; 201 with the client and the id it was given
//	GET    /clients/{id}                    the client
//	PUT    /clients/{id}                    set its {"name","url"}; the client after
//	DELETE /clients/{id}                    forget it and its links; 204
//	GET    /notifications/dead?after=&limit=  {"notifications":[...],"next":"..."}, by id, without their attempts
//	GET    /notifications/{id}              the notification with its attempts in "history"
//	POST   /notifications/{id}/replay       make a dead notification pending again, due now; the notification after, 409 if it is not dead
//	GET    /dead-letters?after=&limit=      {"dead_letters":[...],"next":"..."}: the refused readings, by id
//
// A list comes in pages of limit entries (100 unless given, at most 1000). While more
// follow, the page has "next", to pass as after, or "next_cursor", to pass as cursor
// with the same from and to; the last page has neither. from and to are RFC 3339 times
// that bound a sensor's history to [from, to); either may be left out. A query
// parameter a resource does not take is refused rather than ignored, so that a
// misspelt one does not silently return the wrong page.
//
// Every error is JSON, {"error": "..."}, with "fields" ([{"field", "value", "problem"}])
// when the request had a bad field, a path segment or a query parameter included; a 405
// has an Allow header. A missing sensor, client, link or notification is a 404. A server
// error is a 500, and a Store that outlasted the request's deadline a 503, whose message
// says only that: the details, which may name a database, go to the log. Request
// bodies are limited to 64 KiB (413 beyond) and must hold one JSON object with no
// unknown fields. A browser's cross-origin POST, PUT or DELETE is refused with 403
// (http.CrossOriginProtection).
//
// The handler expects to be mounted at the root of its server: Location headers are
// absolute paths.
func NewHandler(s Store, opts HandlerOptions) http.Handler {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	a := &apiHandler{store: s, log: opts.Logger, clock: clock.OrReal(opts.Clock), onReplay: opts.OnReplay}
	mux := http.NewServeMux()
	a.route(mux, "/health", apiMethods{http.MethodGet: a.health})
	if opts.Stats != nil {
		a.route(mux, "/stats", apiMethods{http.MethodGet: func(w http.ResponseWriter, r *http.Request) error {
			a.writeJSON(w, r, http.StatusOK, opts.Stats())
			return nil
		}})
	}
	a.route(mux, "/sensors", apiMethods{http.MethodGet: a.listSensors, http.MethodPost: a.createSensor})
	a.route(mux, "/sensors/{id}", apiMethods{http.MethodGet: a.getSensor, http.MethodPut: a.updateSensor,
		http.MethodDelete: a.deleteSensor})
	a.route(mux, "/sensors/{id}/state", apiMethods{http.MethodGet: a.sensorState})
	a.route(mux, "/sensors/{id}/clients", apiMethods{http.MethodGet: a.sensorClients})
	a.route(mux, "/sensors/{id}/clients/{client}", apiMethods{http.MethodPut: a.link, http.MethodDelete: a.unlink})
	a.route(mux, "/sensors/{id}/readings", apiMethods{http.MethodGet: a.readings})
	a.route(mux, "/sensors/{id}/notifications", apiMethods{http.MethodGet: a.sensorNotifications})
	a.route(mux, "/clients", apiMethods{http.MethodGet: a.listClients, http.MethodPost: a.createClient})
	a.route(mux, "/clients/{id}", apiMethods{http.MethodGet: a.getClient, http.MethodPut: a.updateClient,
		http.MethodDelete: a.deleteClient})
	// More specific than /notifications/{id}, so the mux prefers it.
	a.route(mux, "/notifications/dead", apiMethods{http.MethodGet: a.deadNotifications})
	a.route(mux, "/notifications/{id}", apiMethods{http.MethodGet: a.getNotification})
	a.route(mux, "/notifications/{id}/replay", apiMethods{http.MethodPost: a.replay})
	a.route(mux, "/dead-letters", apiMethods{http.MethodGet: a.deadLetters})
	// The mux's own 404 is plain text; this catch-all keeps every error JSON.
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		a.fail(w, r, http.StatusNotFound, fmt.Errorf("no such resource: %s", r.URL.Path))
	})
	// The API has no authentication of its own, so a page on another site that an
	// operator's browser shows must not be able to change anything through it (CSRF).
	// Non-browser clients carry neither Origin nor Sec-Fetch-Site and are let through.
	csrf := http.NewCrossOriginProtection()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := csrf.Check(r); err != nil {
			a.fail(w, r, http.StatusForbidden, fmt.Errorf("%v: changes are taken from non-browser clients and same-origin pages only", err))
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// apiHandler holds what the handlers of NewHandler share.
type apiHandler struct {
	store    Store
	log      *slog.Logger
	clock    clock.Clock
	onReplay func()
}

// apiFunc is a handler that returns its error for the caller to answer, so that every
// failure is mapped to a status in one place.
type apiFunc func(w http.ResponseWriter, r *http.Request) error

// apiMethods maps the HTTP methods a path accepts to their handlers.
type apiMethods map[string]apiFunc

// route registers the methods of one path. It dispatches on the method itself, rather
// than with method patterns, because the mux would answer a wrong method in plain text.
func (a *apiHandler) route(mux *http.ServeMux, pattern string, ms apiMethods) {
	ms = maps.Clone(ms)
	if get, ok := ms[http.MethodGet]; ok {
		ms[http.MethodHead] = get // net/http drops the body
	}
	allow := strings.Join(slices.Sorted(maps.Keys(ms)), ", ")
	mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		h, ok := ms[r.Method]
		if !ok {
			w.Header().Set("Allow", allow)
			a.fail(w, r, http.StatusMethodNotAllowed, fmt.Errorf("method %s is not allowed on %s (allowed: %s)", r.Method, r.URL.Path, allow))
			return
		}
		if err := h(w, r); err != nil {
			a.writeError(w, r, err)
		}
	})
}
