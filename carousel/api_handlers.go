package carousel

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"
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
func (a *api) health(w http.ResponseWriter, _ *http.Request) {
	st := a.s.Status()
	h := healthJSON{Status: "ok", Started: st.Started, Active: st.Active, Cycles: len(st.Cycles)}
	// A passive instance runs no cycle: an Unhealthy state left from when it ran is
	// history, and a probe must not have a healthy standby restarted for it.
	if st.Started {
		for _, c := range st.Cycles {
			if c.Metadata.Has(Unhealthy) {
				h.Unhealthy = append(h.Unhealthy, c.ID)
			}
		}
	}
	if len(h.Unhealthy) > 0 {
		h.Status = "unhealthy"
		writeJSON(w, http.StatusServiceUnavailable, h)
		return
	}
	writeJSON(w, http.StatusOK, h)
}

func (a *api) schedulerStatus(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, a.s.Status())
}

func (a *api) start(w http.ResponseWriter, r *http.Request) {
	if err := a.s.Start(r.Context()); err != nil {
		a.writeError(w, r, err)
		return
	}
	a.logAction(r, "start scheduler", "")
	writeJSON(w, http.StatusOK, a.s.Status())
}

func (a *api) shutdown(w http.ResponseWriter, r *http.Request) {
	if err := a.s.Shutdown(r.Context()); err != nil {
		a.writeError(w, r, err)
		return
	}
	a.logAction(r, "shut scheduler down", "")
	writeJSON(w, http.StatusOK, a.s.Status())
}

func (a *api) addCycle(w http.ResponseWriter, r *http.Request) {
	var cfg CycleConfig
	if err := decodeBody(w, r, &cfg); err != nil {
		a.writeError(w, r, err)
		return
	}
	if err := a.s.Add(r.Context(), cfg); err != nil {
		a.writeError(w, r, err)
		return
	}
	a.logAction(r, "add", cfg.Name)
	w.Header().Set("Location", "/cycles/"+url.PathEscape(cfg.Name))
	a.writeCycle(w, r, cfg.Name, http.StatusCreated)
}

func (a *api) getCycle(w http.ResponseWriter, r *http.Request) {
	a.writeCycle(w, r, r.PathValue("id"), http.StatusOK)
}

func (a *api) deleteCycle(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := a.s.Delete(r.Context(), id); err != nil {
		a.writeError(w, r, err)
		return
	}
	a.logAction(r, "delete", id)
	w.WriteHeader(http.StatusNoContent)
}

// throttleJSON is the body of GET and PUT /cycles/{id}/throttle.
type throttleJSON struct {
	// Throttle is a Go duration, e.g. "30s".
	Throttle string `json:"throttle"`
}

func (a *api) getThrottle(w http.ResponseWriter, r *http.Request) {
	d, err := a.s.Throttle(r.PathValue("id"))
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, throttleJSON{Throttle: d.String()})
}

func (a *api) setThrottle(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	// A missing cycle is the first thing to hear of, before what is wrong with the body.
	if _, err := a.s.Cycle(id); err != nil {
		a.writeError(w, r, err)
		return
	}
	var body throttleJSON
	if err := decodeBody(w, r, &body); err != nil {
		a.writeError(w, r, err)
		return
	}
	if strings.TrimSpace(body.Throttle) == "" {
		a.writeError(w, r, &FieldError{Field: "throttle", Problem: "is required"})
		return
	}
	d, err := time.ParseDuration(strings.TrimSpace(body.Throttle))
	if err != nil {
		a.writeError(w, r, &FieldError{Field: "throttle", Value: body.Throttle, Problem: "is not a duration (e.g. 5s, 1m30s)"})
		return
	}
	if err := a.s.SetThrottle(id, d); err != nil {
		a.writeError(w, r, err)
		return
	}
	a.logAction(r, "set throttle", id, "throttle", d)
	writeJSON(w, http.StatusOK, throttleJSON{Throttle: d.String()})
}

// cycleAction answers POST /cycles/{id}/<name> by calling op, with the cycle's status
// after it.
func (a *api) cycleAction(name string, op func(ctx context.Context, id string) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		if err := op(r.Context(), id); err != nil {
			a.writeError(w, r, err)
			return
		}
		a.logAction(r, name, id)
		a.writeCycle(w, r, id, http.StatusOK)
	}
}

// writeCycle answers with the status of the cycle id.
func (a *api) writeCycle(w http.ResponseWriter, r *http.Request, id string, status int) {
	st, err := a.s.Cycle(id)
	if err != nil {
		a.writeError(w, r, err) // deleted meanwhile
		return
	}
	writeJSON(w, status, st)
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
