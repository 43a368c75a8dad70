package feedkit

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/feed/rabbitmq"
	"github.com/feedkit/feedkit/recovery"
)

// Health is the SDK's answer to a liveness or a readiness probe: every check it made, and
// whether they all pass.
type Health struct {
	OK     bool          `json:"ok"`
	Checks []HealthCheck `json:"checks"`
}

// HealthCheck is one check of a probe. Reason says why it fails; "" when it passes.
type HealthCheck struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Reason string `json:"reason,omitempty"`
}

func (h *Health) add(name string, reason string) {
	h.Checks = append(h.Checks, HealthCheck{Name: name, OK: reason == "", Reason: reason})
	if reason != "" {
		h.OK = false
	}
}

// Liveness says whether the process should be restarted: it fails only for what a
// restart mends. The SDK must not be closed, and its RabbitMQ transport must be connected
// or reconnecting: a transport that lost its link is live while it makes an attempt at
// least every ReconnectBound; a broker that stays down is no reason to restart, since a
// new process would only wait for it too. Before Open the SDK is live.
func (s *SDK) Liveness() Health {
	h := Health{OK: true}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		h.add("sdk", "the SDK is closed")
	} else {
		h.add("sdk", "")
	}
	if t, ok := s.transport.(*rabbitmq.Transport); ok {
		h.add("transport", s.transportStuck(t))
	}
	return h
}

// transportStuck says why t counts as stuck; "" when it is connected or reconnecting.
func (s *SDK) transportStuck(t *rabbitmq.Transport) string {
	s.listMu.Lock()
	sessions := int64(len(s.sessions))
	s.listMu.Unlock()
	return stuck(t.Stats(), sessions, clock.OrReal(s.cfg.Clock).Now(), t.ReconnectBound())
}

// stuck says why a transport with st, for sessions subscriptions, is stuck at now: links
// missing and no attempt to restore them (each failed attempt is an error) within bound.
func stuck(st rabbitmq.Stats, sessions int64, now time.Time, bound time.Duration) string {
	if st.Connected >= sessions || st.LastErrorAt.IsZero() {
		return "" // connected, or connecting for the first time
	}
	since := now.Sub(st.LastErrorAt)
	if since <= bound {
		return "" // reconnecting
	}
	return fmt.Sprintf("%d of %d sessions disconnected and no connection attempt for %v (more than %v); the last error: %s",
		sessions-st.Connected, sessions, since.Round(time.Second), bound, st.LastError)
}

// Readiness says whether the SDK is delivering what the feed sends: it is open and live,
// and every producer it follows is up, its last alive no older than its heartbeat limit,
// and no recovery of it has run past Config.Recovery.RecoveryTimeout. A process not
// ready is taken out of service (Kubernetes stops routing to it) and left running: it
// becomes ready again on its own once the producers are back.
func (s *SDK) Readiness() Health {
	h := s.Liveness()
	s.mu.Lock()
	open := s.state == 1
	s.mu.Unlock()
	if !open {
		h.add("open", "the SDK is not open") // the producers it follows are known at Open
		return h
	}
	h.add("open", "")
	now := clock.OrReal(s.cfg.Clock).Now()
	timeout := s.cfg.Recovery.RecoveryTimeout
	if timeout == 0 {
		timeout = recovery.DefaultRecoveryTimeout
	}
	for _, p := range s.manager.Producers() {
		h.add(fmt.Sprintf("producer %d", p.Producer), producerNotReady(p, now, timeout))
	}
	return h
}

// producerNotReady says why producer p is not ready; "" when it is.
func producerNotReady(p recovery.ProducerState, now time.Time, timeout time.Duration) string {
	switch {
	case p.State == recovery.Recovering && now.Sub(p.RecoveryRequestedAt) > timeout:
		return fmt.Sprintf("its recovery, requested %v ago, is past Config.Recovery.RecoveryTimeout %v", now.Sub(p.RecoveryRequestedAt).Round(time.Second), timeout)
	case !p.Up:
		return fmt.Sprintf("down (%s)", p.State)
	case p.LastAliveAt.IsZero():
		return "no alive received"
	case now.Sub(p.LastAliveAt) > p.HeartbeatLimit:
		return fmt.Sprintf("last alive %v ago, past its heartbeat limit %v", now.Sub(p.LastAliveAt).Round(time.Millisecond), p.HeartbeatLimit)
	}
	return ""
}

// HealthHandler serves the probes for Kubernetes: /healthz is Liveness (a livenessProbe)
// and /readyz Readiness (a readinessProbe). Each answers 200 when every check passes and
// 503 when one fails, with the Health as its JSON body, naming every check and why it
// fails. Mount it where the paths end in those names, such as at the root of a server
// of its own, or with http.StripPrefix.
func (s *SDK) HealthHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { writeHealth(w, s.Liveness()) })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) { writeHealth(w, s.Readiness()) })
	return mux
}

func writeHealth(w http.ResponseWriter, h Health) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if !h.OK {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(h)
}
