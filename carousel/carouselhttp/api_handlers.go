package carouselhttp

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/feedkit/feedkit/carousel"
	"github.com/feedkit/feedkit/internal/jsonapi"
)

// healthJSON is the body of GET /health.
type healthJSON struct {
	// Status is "ok" or "unhealthy".
	Status  string `json:"status"`
	Started bool   `json:"started"`
	Active  bool   `json:"active"`
	Cycles  int    `json:"cycles"`
	// Unhealthy lists the ids of the unhealthy cycles.
	Unhealthy []string `json:"unhealthy,omitempty"`
}

// health answers 503 while a cycle is unhealthy, so that a probe or a load balancer sees a
// source failing, and 200 otherwise.
func (a *api) health(w http.ResponseWriter, _ *http.Request) error {
	st := a.s.Status()
	h := healthJSON{Status: "ok", Started: st.Started, Active: st.Active, Cycles: len(st.Cycles)}
	// A passive instance runs no cycle: an Unhealthy state left from when it ran is
	// history, and a probe must not have a healthy standby restarted for it.
	if st.Started {
		for _, c := range st.Cycles {
			if c.Metadata.Has(carousel.Unhealthy) {
				h.Unhealthy = append(h.Unhealthy, c.ID)
			}
		}
	}
	if len(h.Unhealthy) > 0 {
		h.Status = "unhealthy"
		return jsonapi.WriteJSON(w, http.StatusServiceUnavailable, h)
	}
	return jsonapi.WriteJSON(w, http.StatusOK, h)
}

func (a *api) schedulerStatus(w http.ResponseWriter, _ *http.Request) error {
	return jsonapi.WriteJSON(w, http.StatusOK, a.s.Status())
}

func (a *api) start(w http.ResponseWriter, r *http.Request) error {
	if err := a.s.Start(r.Context()); err != nil {
		return err
	}
	a.logAction(r, "start scheduler", "")
	return jsonapi.WriteJSON(w, http.StatusOK, a.s.Status())
}

func (a *api) shutdown(w http.ResponseWriter, r *http.Request) error {
	if err := a.s.Shutdown(r.Context()); err != nil {
		return err
	}
	a.logAction(r, "shut scheduler down", "")
	return jsonapi.WriteJSON(w, http.StatusOK, a.s.Status())
}

func (a *api) addCycle(w http.ResponseWriter, r *http.Request) error {
	var cfg carousel.CycleConfig
	if err := jsonapi.DecodeBody(w, r, &cfg); err != nil {
		return err
	}
	if err := a.s.Add(r.Context(), cfg); err != nil {
		return err
	}
	a.logAction(r, "add", cfg.Name)
	w.Header().Set("Location", "/cycles/"+url.PathEscape(cfg.Name))
	return a.writeCycle(w, cfg.Name, http.StatusCreated)
}

func (a *api) getCycle(w http.ResponseWriter, r *http.Request) error {
	return a.writeCycle(w, r.PathValue("id"), http.StatusOK)
}

func (a *api) deleteCycle(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := a.s.Delete(r.Context(), id); err != nil {
		return err
	}
	a.logAction(r, "delete", id)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// throttleJSON is the body of GET and PUT /cycles/{id}/throttle.
type throttleJSON struct {
	// Throttle is a Go duration, e.g. "30s".
	Throttle string `json:"throttle"`
}

func (a *api) getThrottle(w http.ResponseWriter, r *http.Request) error {
	d, err := a.s.Throttle(r.PathValue("id"))
	if err != nil {
		return err
	}
	return jsonapi.WriteJSON(w, http.StatusOK, throttleJSON{Throttle: d.String()})
}

func (a *api) setThrottle(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	// A missing cycle is the first thing to hear of, before what is wrong with the body.
	if _, err := a.s.Cycle(id); err != nil {
		return err
	}
	var body throttleJSON
	if err := jsonapi.DecodeBody(w, r, &body); err != nil {
		return err
	}
	if strings.TrimSpace(body.Throttle) == "" {
		return &carousel.FieldError{Field: "throttle", Problem: "is required"}
	}
	d, err := time.ParseDuration(strings.TrimSpace(body.Throttle))
	if err != nil {
		return &carousel.FieldError{Field: "throttle", Value: body.Throttle, Problem: "is not a duration (e.g. 5s, 1m30s)"}
	}
	if err := a.s.SetThrottle(id, d); err != nil {
		return err
	}
	a.logAction(r, "set throttle", id, "throttle", d)
	return jsonapi.WriteJSON(w, http.StatusOK, throttleJSON{Throttle: d.String()})
}

// cycleAction answers POST /cycles/{id}/<name> by calling op, with the cycle's status
// after it.
func (a *api) cycleAction(name string, op func(ctx context.Context, id string) error) jsonapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id := r.PathValue("id")
		if err := op(r.Context(), id); err != nil {
			return err
		}
		a.logAction(r, name, id)
		return a.writeCycle(w, id, http.StatusOK)
	}
}

// writeCycle answers with the status of the cycle id.
func (a *api) writeCycle(w http.ResponseWriter, id string, status int) error {
	st, err := a.s.Cycle(id)
	if err != nil {
		return err // deleted meanwhile
	}
	return jsonapi.WriteJSON(w, status, st)
}

// logAction records an operator's change, and from where it came: these change what a
// production system publishes.
func (a *api) logAction(r *http.Request, action, cycle string, args ...any) {
	args = append([]any{"action", action, "remote", r.RemoteAddr}, args...)
	if cycle != "" {
		args = append(args, "cycle", cycle)
	}
	a.log.Info("operator action", args...)
}
