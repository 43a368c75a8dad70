package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/examples/locksensors/locks"
	"github.com/feedkit/feedkit/examples/locksensors/locks/pgstore"
	"github.com/feedkit/feedkit/examples/locksensors/locks/rabbitmq"
)

// serviceConfig is what a service is made of; the zero value is an in-memory service
// with the defaults.
type serviceConfig struct {
	pgURL   string // PostgreSQL; "" keeps everything in memory
	amqpURL string // RabbitMQ; "" reads from an in-process queue
	queue   string // the RabbitMQ queue; "" is rabbitmq.DefaultQueue

	consumers int // queue consumers; 0 is the queue's default
	prefetch  int // RabbitMQ prefetch per consumer; 0 is the default
	batchSize int // readings per store write; 0 is the queue's default

	silence     time.Duration  // a sensor silent this long is lost; 0 is an hour
	schedule    locks.Schedule // nil is locks.DefaultSchedule
	maxAttempts int            // 0 is locks.DefaultMaxAttempts
	workers     int            // concurrent notification attempts; 0 is the default
	poll        time.Duration  // how often the notifier looks for retries; 0 is the default

	clock  clock.Clock // nil is the wall clock
	logger *slog.Logger

	// For tests: wrapStore wraps the store every part uses; afterBatch is told of every
	// batch the queue handed over, once it has been handled.
	wrapStore  func(locks.Store) locks.Store
	afterBatch func(msgs []locks.Message, err error)
}

// service is the lock-sensor notification service: readings in from a queue, state
// and history in a store, notifications out to the clients, and the operator API.
type service struct {
	cfg      serviceConfig
	pool     *pgxpool.Pool // nil in memory
	store    locks.Store
	ingester *locks.Ingester
	notifier *locks.Notifier
	liveness *locks.Liveness
	local    *locks.LocalQueue  // without RabbitMQ
	consumer *rabbitmq.Consumer // with RabbitMQ
	handler  locks.BatchHandler // what the queue hands batches to: the ingester
	metrics  *metrics           // the parts' Observer, served at /metrics
	api      http.Handler       // the operator API and /metrics
}

// newService connects to the store (applying the schema migrations) and assembles the
// parts. Close releases what it opened.
func newService(ctx context.Context, cfg serviceConfig) (*service, error) {
	if cfg.logger == nil {
		cfg.logger = slog.New(slog.DiscardHandler)
	}
	cfg.clock = clock.OrReal(cfg.clock)
	s := &service{cfg: cfg}
	if cfg.pgURL == "" {
		s.store = locks.NewMemoryStore(0)
	} else {
		pcfg, err := pgxpool.ParseConfig(cfg.pgURL)
		if err != nil {
			return nil, fmt.Errorf("-pg: %w", err)
		}
		// Every consumer writes a batch at a time, and the notifier's attempts each
		// claim and finish: enough connections that neither waits on the other.
		pcfg.MaxConns = max(pcfg.MaxConns, 16)
		if s.pool, err = pgxpool.NewWithConfig(ctx, pcfg); err != nil {
			return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
		}
		st, err := pgstore.New(ctx, s.pool, pgstore.Options{})
		if err != nil {
			s.pool.Close()
			return nil, err
		}
		s.store = st
	}
	if cfg.wrapStore != nil {
		s.store = cfg.wrapStore(s.store)
	}

	// One Observer for the three parts. The gauge of the tracked sensors reads s.liveness
	// at each scrape: only run serves /metrics, after s.liveness is set.
	var err error
	s.metrics, err = newMetrics(func() int { return s.liveness.Stats().Tracked })
	if err == nil {
		s.notifier, err = locks.NewNotifier(s.store, locks.NotifierConfig{Schedule: cfg.schedule,
			MaxAttempts: cfg.maxAttempts, Workers: cfg.workers, PollInterval: cfg.poll, Clock: cfg.clock,
			Logger: cfg.logger, Observer: s.metrics})
	}
	if err == nil {
		s.liveness, err = locks.NewLiveness(s.store, locks.LivenessConfig{Silence: cfg.silence,
			Notified: s.notifier.Wake, Clock: cfg.clock, Logger: cfg.logger, Observer: s.metrics})
	}
	if err == nil {
		s.ingester, err = locks.NewIngester(s.store, locks.IngesterConfig{Seen: s.liveness.Seen,
			Notified: s.notifier.Wake, Clock: cfg.clock, Logger: cfg.logger, Observer: s.metrics})
	}
	var handler locks.BatchHandler = s.ingester
	if cfg.afterBatch != nil {
		handler = locks.BatchHandlerFunc(func(ctx context.Context, msgs []locks.Message) error {
			err := s.ingester.HandleBatch(ctx, msgs)
			cfg.afterBatch(msgs, err)
			return err
		})
	}
	s.handler = handler
	if err == nil {
		if cfg.amqpURL == "" {
			s.local, err = locks.NewLocalQueue(locks.LocalQueueConfig{Consumers: cfg.consumers, BatchSize: cfg.batchSize,
				Clock: cfg.clock, Logger: cfg.logger})
		} else {
			s.consumer, err = rabbitmq.NewConsumer(rabbitmq.Config{URL: cfg.amqpURL, Queue: cfg.queue,
				Consumers: cfg.consumers, Prefetch: cfg.prefetch, BatchSize: cfg.batchSize,
				Clock: cfg.clock, Logger: cfg.logger}, handler)
		}
	}
	if err != nil {
		s.close()
		return nil, err
	}
	s.api = s.metrics.withMetrics(locks.NewHandler(s.store, locks.HandlerOptions{Logger: cfg.logger, Clock: cfg.clock,
		OnReplay: s.notifier.Wake, Stats: func() any { return s.stats() }}))
	return s, nil
}

// run runs the parts until ctx ends, serving the API and /metrics on ln when it is not
// nil, and returns once they have all stopped. It returns an error when a part failed.
func (s *service) run(ctx context.Context, ln net.Listener) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return s.notifier.Run(ctx) })
	g.Go(func() error { return s.liveness.Run(ctx) })
	if s.local != nil {
		g.Go(func() error { return ignoreCanceled(s.local.Run(ctx, s.handler)) })
	} else {
		g.Go(func() error { return s.consumer.Run(ctx) })
	}
	if ln != nil {
		srv := &http.Server{Handler: s.api, ReadHeaderTimeout: 10 * time.Second}
		g.Go(func() error {
			if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		})
		g.Go(func() error {
			<-ctx.Done()
			shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			return srv.Shutdown(shut)
		})
	}
	return g.Wait()
}

// ready returns a channel closed once readings are being consumed.
func (s *service) ready() <-chan struct{} {
	if s.consumer != nil {
		return s.consumer.Ready()
	}
	c := make(chan struct{})
	close(c)
	return c
}

func ignoreCanceled(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	return err
}

// close releases the store's connections.
func (s *service) close() {
	if s.pool != nil {
		s.pool.Close()
	}
}

// publisher sends readings to the service's queue.
type publisher interface {
	Publish(ctx context.Context, body []byte) error
	Close() error
}

// newPublisher returns a publisher to the service's queue: the in-process one, or a
// RabbitMQ connection of its own.
func (s *service) newPublisher(ctx context.Context) (publisher, error) {
	if s.local != nil {
		return localPublisher{s.local}, nil
	}
	queue := s.cfg.queue
	if queue == "" {
		queue = rabbitmq.DefaultQueue
	}
	return rabbitmq.NewPublisher(ctx, s.cfg.amqpURL, queue)
}

type localPublisher struct{ q *locks.LocalQueue }

func (p localPublisher) Publish(ctx context.Context, body []byte) error {
	return p.q.Publish(ctx, body)
}
func (p localPublisher) Close() error { return nil }

// serviceStats is the service's counters, at GET /stats.
type serviceStats struct {
	Ingest   locks.IngestStats   `json:"ingest"`
	Notify   locks.NotifierStats `json:"notify"`
	Liveness locks.LivenessStats `json:"liveness"`
	Queue    any                 `json:"queue"`
	// Pending is -1 when the store could not count them, with PendingError saying why: an
	// unknown count is not a zero.
	Pending      int    `json:"pending_notifications"`
	PendingError string `json:"pending_error,omitempty"`
}

func (s *service) stats() serviceStats {
	st := serviceStats{Ingest: s.ingester.Stats(), Notify: s.notifier.Stats(), Liveness: s.liveness.Stats()}
	if s.consumer != nil {
		st.Queue = s.consumer.Stats()
	} else {
		st.Queue = map[string]int{"queued": s.local.Len()}
	}
	// A bound only a store that hangs reaches: a slow one still gets counted.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, _, err := s.store.Pending(ctx)
	if err != nil {
		n, st.PendingError = -1, err.Error()
	}
	st.Pending = n
	return st
}

// retrySchedule returns the schedule a -retry flag names.
func retrySchedule(name string, unit time.Duration) (locks.Schedule, error) {
	switch name {
	case "exp", "exponential":
		return locks.Exponential{Policy: locks.Backoff{Initial: unit, Max: 10 * time.Minute, Multiplier: 2, Jitter: 0.5}}, nil
	case "log", "logarithmic":
		return locks.Logarithmic{Unit: unit}, nil
	}
	return nil, fmt.Errorf("-retry: %q is neither exp nor log", name)
}
