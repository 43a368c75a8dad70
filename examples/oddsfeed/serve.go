package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/feedkit/feedkit"
)

// statusHandler serves, for the SDK of the process running now (-http): /healthz and
// /readyz, the probes of SDK.HealthHandler, /metrics, its metrics for Prometheus
// (promfeedkit), and /stats, its counters as JSON. Between
// the two processes of a -restart there is none, and every path answers 503 saying so.
func statusHandler(p *process) http.Handler {
	between := feedkit.Health{Checks: []feedkit.HealthCheck{{Name: "process", Reason: "restarting: the SDK is stopped until the new process opens"}}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
		sdk := p.serving.Load()
		if sdk == nil {
			writeJSON(w, http.StatusServiceUnavailable, between)
			return
		}
		writeJSON(w, http.StatusOK, sdk.Stats())
	})
	probe := func(w http.ResponseWriter, r *http.Request) {
		sdk := p.serving.Load()
		if sdk == nil {
			writeJSON(w, http.StatusServiceUnavailable, between)
			return
		}
		sdk.HealthHandler().ServeHTTP(w, r)
	}
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		reg := p.metrics.Load()
		if reg == nil {
			writeJSON(w, http.StatusServiceUnavailable, between)
			return
		}
		promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(w, r)
	})
	mux.HandleFunc("GET /healthz", probe)
	mux.HandleFunc("GET /readyz", probe)
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// serve serves h on addr until the returned stop is called, and returns the address it
// listens on (addr's port may be 0).
func serve(addr string, h http.Handler) (string, func(), error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(l) // ends with ErrServerClosed at Shutdown: the listener is ours
	}()
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	}
	return l.Addr().String(), stop, nil
}
