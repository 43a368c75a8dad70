package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/feedkit/feedkit/promfeedkit"
)

// serveMetrics serves the group's metrics of this process (promfeedkit.NewGroup, on a
// registry of its own) at /metrics on addr (-http), until ctx ends; watch tells the
// metrics what the process runs. An empty addr serves nothing.
func serveMetrics(ctx context.Context, addr string, watch func(*promfeedkit.GroupMetrics) error, out *printer) error {
	if addr == "" {
		return nil
	}
	reg := prometheus.NewRegistry()
	m, err := promfeedkit.NewGroup(reg)
	if err != nil {
		return err
	}
	if err := watch(m); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("-http %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			out.printf("error: serving metrics: %v", err)
		}
	}()
	context.AfterFunc(ctx, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	})
	out.printf("metrics: http://%s/metrics", ln.Addr())
	return nil
}
