package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/errgroup"

	"github.com/feedkit/feedkit/carousel"
	"github.com/feedkit/feedkit/carousel/carouselhttp"
	"github.com/feedkit/feedkit/carousel/pgstore"
	"github.com/feedkit/feedkit/promfeedkit"
)

// demo is the assembled carousel: its scheduler, the operator API's server, the local
// notifier (when there is one) and the editor, with what must be closed at the end.
type demo struct {
	scheduler   *carousel.Scheduler
	api         *http.Server
	apiLn       net.Listener
	apiAddr     string
	notify      *notifier
	notifySrv   *http.Server
	notifyLn    net.Listener
	notifierURL string
	local       bool // the notifier is ours, so its counts are the whole story
	storage     string
	editor      store
	editEvery   time.Duration
	published   *countingPublisher
	progress    time.Duration // how often to print a progress line; 0: never
	log         *slog.Logger
	closers     []func()
}

// assemble builds the demo from o: collections, store and toggle (memory or PostgreSQL),
// publisher, scheduler with its cycles, and the listeners. Nothing runs yet.
func assemble(ctx context.Context, o options, log *slog.Logger) (_ *demo, err error) {
	d := &demo{log: log, editEvery: o.editEvery, progress: o.progress}
	defer func() {
		if err != nil {
			d.close()
		}
	}()
	cycles, err := loadCycles(o.config)
	if err != nil {
		return nil, err
	}
	rnd := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	now := time.Now()

	// The process's own registry: the scheduler's metrics, served at /metrics.
	reg := prometheus.NewRegistry()
	metrics, err := promfeedkit.NewCarousel(reg)
	if err != nil {
		return nil, err
	}
	cfg := carousel.Config{ToggleInterval: 2 * time.Second, CheckpointInterval: 5 * time.Second, Logger: log, Observer: metrics}
	var source carousel.Source
	if o.pgURL == "" {
		src, err := newMemoryCollections(now, rnd)
		if err != nil {
			return nil, err
		}
		source, cfg.MetadataFile = src, o.metadata
		d.editor = memoryStore{src}
		d.storage = "collections in memory, progress in " + o.metadata
	} else {
		pool, err := pgxpool.New(ctx, o.pgURL)
		if err != nil {
			return nil, fmt.Errorf("-pg: %w", err)
		}
		d.closers = append(d.closers, pool.Close)
		if err := setUpPostgres(ctx, pool, now, rnd); err != nil {
			return nil, fmt.Errorf("-pg: %w", err)
		}
		tables := map[string]string{}
		for _, c := range demoCollections {
			tables[c.name] = pgTable(c.name)
		}
		if source, err = pgstore.NewSource(pool, pgstore.SourceOptions{Tables: tables}); err != nil {
			return nil, err
		}
		if cfg.Store, err = pgstore.NewStore(ctx, pool, pgstore.StoreOptions{}); err != nil {
			return nil, err
		}
		lease, err := pgstore.NewLease(pool, pgstore.LeaseOptions{Failover: o.failover})
		if err != nil {
			return nil, err
		}
		d.closers = append(d.closers, func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = lease.Close(ctx)
		})
		cfg.Toggle = lease
		d.editor = pgStore{pool}
		d.storage = "collections, progress and lease in PostgreSQL"
	}

	d.notifierURL = o.notifier
	if d.notifierURL == "" {
		d.local, d.notify = true, newNotifier()
		if d.notifyLn, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return nil, err
		}
		d.notifySrv = &http.Server{Handler: d.notify, ReadHeaderTimeout: 5 * time.Second}
		d.notifierURL = "http://" + d.notifyLn.Addr().String() + "/notify"
	}
	pub, err := carouselhttp.NewPublisher(carouselhttp.PublisherConfig{URL: d.notifierURL})
	if err != nil {
		return nil, err
	}
	d.published = &countingPublisher{next: pub, until: o.until, byCycle: map[string]int{}}

	if d.scheduler, err = carousel.NewScheduler(source, d.published, cfg); err != nil {
		return nil, err
	}
	for _, c := range cycles {
		if err := d.scheduler.Add(ctx, c); err != nil {
			return nil, err
		}
	}
	if err := metrics.WatchScheduler(d.scheduler); err != nil {
		return nil, err
	}
	if d.apiLn, err = net.Listen("tcp", o.addr); err != nil {
		return nil, fmt.Errorf("-addr: %w", err)
	}
	d.apiAddr = d.apiLn.Addr().String()
	mux := http.NewServeMux()
	mux.Handle("/", carouselhttp.NewHandler(d.scheduler, carouselhttp.HandlerOptions{Logger: log, Title: "Carousel demo"}))
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	d.api = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	return d, nil
}

func loadCycles(path string) ([]carousel.CycleConfig, error) {
	if path != "" {
		return carousel.LoadConfigFile(path)
	}
	cs, err := carousel.ParseConfig(bytes.NewReader(defaultCycles))
	if err != nil {
		return nil, fmt.Errorf("embedded cycles.yml: %w", err)
	}
	return cs, nil
}

// run serves and runs the scheduler, the editor and the notifier until ctx ends, and
// prints a progress line to out every d.progress; the scheduler shuts its cycles down,
// saving their progress, before the servers close.
func (d *demo) run(ctx context.Context, out io.Writer) error {
	g, gctx := errgroup.WithContext(ctx)
	serve := func(srv *http.Server, ln net.Listener) {
		g.Go(func() error {
			if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		})
	}
	serve(d.api, d.apiLn)
	if d.notifySrv != nil {
		serve(d.notifySrv, d.notifyLn)
	}
	g.Go(func() error {
		edit(gctx, d.editor, d.editEvery, rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())),
			func(err error) { d.log.Warn("editing an item", "err", err) })
		return nil
	})
	if d.progress > 0 {
		g.Go(func() error {
			d.showProgress(gctx, out)
			return nil
		})
	}
	g.Go(func() error {
		err := d.scheduler.Run(gctx)
		// The cycles are down: close the servers, gently.
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if d.notifySrv != nil {
			_ = d.notifySrv.Shutdown(shutdownCtx)
		}
		_ = d.api.Shutdown(shutdownCtx)
		return err
	})
	return g.Wait()
}

// showProgress prints a line every d.progress, until ctx ends, saying how many items
// the cycles have republished since the start, so that a run without -v shows it works.
func (d *demo) showProgress(ctx context.Context, out io.Writer) {
	start := time.Now()
	t := time.NewTicker(d.progress)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			printProgress(out, time.Since(start), d.scheduler.Status(), d.published.counts(), d.published.failures())
		}
	}
}

func (d *demo) received() receipt {
	if d.notify == nil {
		return receipt{}
	}
	return d.notify.counts()
}

func (d *demo) close() {
	for i := len(d.closers) - 1; i >= 0; i-- {
		d.closers[i]()
	}
	d.closers = nil
}
