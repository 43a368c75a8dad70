package carousel

import (
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
)

// HandlerOptions configures NewHandler. The zero value is usable.
type HandlerOptions struct {
	// Logger receives the operator's actions and the server errors; nil discards them.
	Logger *slog.Logger
	// Title heads the status page; "" is "Carousel".
	Title string
}

// NewHandler returns the operator's HTTP API over s, with its status page at /:
//
//	GET    /                     the status page (HTML; it refreshes itself from /cycles)
//	GET    /health               200 when no cycle is unhealthy, 503 naming those that are
//	GET    /scheduler            the scheduler's Status
//	POST   /scheduler/start      Start; 409 when passive or another instance is active
//	POST   /scheduler/shutdown   Shutdown; the Status after it
//	GET    /cycles               the scheduler's Status, with every cycle
//	POST   /cycles               add the cycle in the body (CycleConfig JSON); 201
//	GET    /cycles/{id}          the cycle's CycleStatus
//	DELETE /cycles/{id}          delete the cycle and its saved metadata; 204
//	GET    /cycles/{id}/throttle {"throttle":"30s"}
//	PUT    /cycles/{id}/throttle set it from {"throttle":"5s"}; 409 for a windowed cycle
//	POST   /cycles/{id}/stop     stop the cycle; its CycleStatus after
//	POST   /cycles/{id}/resume   resume it; 409 when the scheduler is not started
//	POST   /cycles/{id}/reset    forget its progress
//
// Every error is JSON, {"error": "..."}, with "fields" ([{"field", "value", "problem"}])
// when the request had bad fields; a 405 has an Allow header. Request bodies are limited
// to 64 KiB and must hold one JSON object with no unknown fields. A browser's cross-origin
// POST, PUT or DELETE is refused with 403 (http.CrossOriginProtection).
//
// The handler expects to be mounted at the root of its server: Location headers are
// absolute paths. Operations use the request's context, but a started cycle runs on its
// own: a client that goes away stops the call, not the cycles.
func NewHandler(s *Scheduler, opts HandlerOptions) http.Handler {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Title == "" {
		opts.Title = "Carousel"
	}
	a := &api{s: s, log: opts.Logger, title: opts.Title}
	mux := http.NewServeMux()
	a.route(mux, "/{$}", methods{http.MethodGet: a.statusPage})
	a.route(mux, "/health", methods{http.MethodGet: a.health})
	a.route(mux, "/scheduler", methods{http.MethodGet: a.schedulerStatus})
	a.route(mux, "/scheduler/start", methods{http.MethodPost: a.start})
	a.route(mux, "/scheduler/shutdown", methods{http.MethodPost: a.shutdown})
	a.route(mux, "/cycles", methods{http.MethodGet: a.schedulerStatus, http.MethodPost: a.addCycle})
	a.route(mux, "/cycles/{id}", methods{http.MethodGet: a.getCycle, http.MethodDelete: a.deleteCycle})
	a.route(mux, "/cycles/{id}/throttle", methods{http.MethodGet: a.getThrottle, http.MethodPut: a.setThrottle})
	a.route(mux, "/cycles/{id}/stop", methods{http.MethodPost: a.cycleAction("stop", s.StopCycle)})
	a.route(mux, "/cycles/{id}/resume", methods{http.MethodPost: a.cycleAction("resume", s.ResumeCycle)})
	a.route(mux, "/cycles/{id}/reset", methods{http.MethodPost: a.cycleAction("reset", s.ResetCycle)})
	// The mux's own 404 is plain text; this catch-all keeps every error JSON.
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		a.fail(w, r, http.StatusNotFound, fmt.Errorf("no such resource: %s", r.URL.Path))
	})
	// The API has no authentication of its own, so a page on another site that an
	// operator's browser shows must not be able to POST to it (CSRF). Non-browser
	// clients and the status page itself are let through.
	csrf := http.NewCrossOriginProtection()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := csrf.Check(r); err != nil {
			a.fail(w, r, http.StatusForbidden, fmt.Errorf("%v: changes are taken from the status page and from non-browser clients only", err))
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// api holds what the handlers share.
type api struct {
	s     *Scheduler
	log   *slog.Logger
	title string
}

// methods maps the HTTP methods a path accepts to their handlers.
type methods map[string]http.HandlerFunc

// route registers the methods of one path. It dispatches on the method itself, rather
// than with method patterns, because the mux would answer a wrong method in plain text.
func (a *api) route(mux *http.ServeMux, pattern string, ms methods) {
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
		h(w, r)
	})
}
