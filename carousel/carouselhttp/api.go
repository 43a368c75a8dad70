package carouselhttp

import (
	"log/slog"
	"net/http"

	"github.com/feedkit/feedkit/carousel"
	"github.com/feedkit/feedkit/internal/jsonapi"
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
//	GET    /scheduler            the scheduler's carousel.Status
//	POST   /scheduler/start      Start; 409 when passive or another instance is active
//	POST   /scheduler/shutdown   Shutdown; the carousel.Status after it
//	GET    /cycles               the scheduler's carousel.Status, with every cycle
//	POST   /cycles               add the cycle in the body (carousel.CycleConfig JSON); 201
//	GET    /cycles/{id}          the cycle's carousel.CycleStatus
//	DELETE /cycles/{id}          delete the cycle and its saved metadata; 204
//	GET    /cycles/{id}/throttle {"throttle":"30s"}
//	PUT    /cycles/{id}/throttle set it from {"throttle":"5s"}; 409 for a windowed cycle
//	POST   /cycles/{id}/stop     stop the cycle; its carousel.CycleStatus after
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
func NewHandler(s *carousel.Scheduler, opts HandlerOptions) http.Handler {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Title == "" {
		opts.Title = "Carousel"
	}
	a := &api{s: s, log: opts.Logger, title: opts.Title}
	m := jsonapi.NewMux(a.fail)
	m.Route("/{$}", jsonapi.Methods{http.MethodGet: a.statusPage})
	m.Route("/health", jsonapi.Methods{http.MethodGet: a.health})
	m.Route("/scheduler", jsonapi.Methods{http.MethodGet: a.schedulerStatus})
	m.Route("/scheduler/start", jsonapi.Methods{http.MethodPost: a.start})
	m.Route("/scheduler/shutdown", jsonapi.Methods{http.MethodPost: a.shutdown})
	m.Route("/cycles", jsonapi.Methods{http.MethodGet: a.schedulerStatus, http.MethodPost: a.addCycle})
	m.Route("/cycles/{id}", jsonapi.Methods{http.MethodGet: a.getCycle, http.MethodDelete: a.deleteCycle})
	m.Route("/cycles/{id}/throttle", jsonapi.Methods{http.MethodGet: a.getThrottle, http.MethodPut: a.setThrottle})
	m.Route("/cycles/{id}/stop", jsonapi.Methods{http.MethodPost: a.cycleAction("stop", s.StopCycle)})
	m.Route("/cycles/{id}/resume", jsonapi.Methods{http.MethodPost: a.cycleAction("resume", s.ResumeCycle)})
	m.Route("/cycles/{id}/reset", jsonapi.Methods{http.MethodPost: a.cycleAction("reset", s.ResetCycle)})
	// The status page's own buttons are same-origin, so they are let through.
	return jsonapi.ProtectCrossOrigin(m, a.fail, "changes are taken from the status page and from non-browser clients only")
}

// api holds what the handlers share.
type api struct {
	s     *carousel.Scheduler
	log   *slog.Logger
	title string
}
