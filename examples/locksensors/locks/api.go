package locks

import (
	"log/slog"
	"net/http"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/internal/jsonapi"
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
//	GET    /sensors/{id}/state              its state: {"sensor_id","state" (null until known),"reading_at","changed_at","last_seen","lost","sequence"}
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
// A list comes in pages of limit entries, by the page-size rule of every list (see
// DefaultLimit): 100 when limit is left out or 0, from 1 to 1000 as given, and a
// negative limit or one above 1000 is a 400, not cut down. While more follow, the page
// has "next", to pass as after, or "next_cursor", to pass as cursor with the same from
// and to; the last page has neither. from and to are RFC 3339 times
// that bound a sensor's history to [from, to); either may be left out. A query
// parameter a resource does not take is refused rather than ignored, so that a
// misspelt one does not silently return the wrong page.
//
// A notification is {"id","sensor_id","client_id","event","state","time","reading_at",
// "sequence","created_at","status","attempts","next_attempt_at",...}: "sequence" is the
// number its client was sent (see Body), as is a state's "sequence", that of the
// sensor's latest event (0 before the first).
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
	m := jsonapi.NewMux(a.fail)
	m.Route("/health", jsonapi.Methods{http.MethodGet: a.health})
	if opts.Stats != nil {
		m.Route("/stats", jsonapi.Methods{http.MethodGet: func(w http.ResponseWriter, _ *http.Request) error {
			return jsonapi.WriteJSON(w, http.StatusOK, opts.Stats())
		}})
	}
	m.Route("/sensors", jsonapi.Methods{http.MethodGet: a.listSensors, http.MethodPost: a.createSensor})
	m.Route("/sensors/{id}", jsonapi.Methods{http.MethodGet: a.getSensor, http.MethodPut: a.updateSensor,
		http.MethodDelete: a.deleteSensor})
	m.Route("/sensors/{id}/state", jsonapi.Methods{http.MethodGet: a.sensorState})
	m.Route("/sensors/{id}/clients", jsonapi.Methods{http.MethodGet: a.sensorClients})
	m.Route("/sensors/{id}/clients/{client}", jsonapi.Methods{http.MethodPut: a.link, http.MethodDelete: a.unlink})
	m.Route("/sensors/{id}/readings", jsonapi.Methods{http.MethodGet: a.readings})
	m.Route("/sensors/{id}/notifications", jsonapi.Methods{http.MethodGet: a.sensorNotifications})
	m.Route("/clients", jsonapi.Methods{http.MethodGet: a.listClients, http.MethodPost: a.createClient})
	m.Route("/clients/{id}", jsonapi.Methods{http.MethodGet: a.getClient, http.MethodPut: a.updateClient,
		http.MethodDelete: a.deleteClient})
	// More specific than /notifications/{id}, so the mux prefers it.
	m.Route("/notifications/dead", jsonapi.Methods{http.MethodGet: a.deadNotifications})
	m.Route("/notifications/{id}", jsonapi.Methods{http.MethodGet: a.getNotification})
	m.Route("/notifications/{id}/replay", jsonapi.Methods{http.MethodPost: a.replay})
	m.Route("/dead-letters", jsonapi.Methods{http.MethodGet: a.deadLetters})
	return jsonapi.ProtectCrossOrigin(m, a.fail, "changes are taken from non-browser clients and same-origin pages only")
}

// apiHandler holds what the handlers of NewHandler share.
type apiHandler struct {
	store    Store
	log      *slog.Logger
	clock    clock.Clock
	onReplay func()
}
