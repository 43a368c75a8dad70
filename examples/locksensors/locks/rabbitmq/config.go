package rabbitmq

import (
	"fmt"
	"log/slog"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/examples/locksensors/locks"
	"github.com/feedkit/feedkit/internal/amqpconn"
)

// Defaults for the zero fields of Config.
const (
	// DefaultQueue is the queue the sensors' readings arrive on.
	DefaultQueue = "lock-readings"
	// DefaultConsumers is how many consumers (AMQP channels) share the queue.
	DefaultConsumers = 4
	// DefaultPrefetch is how many unacknowledged readings the broker sends ahead of
	// each consumer.
	DefaultPrefetch = 500
	// DefaultBatchSize is the most readings handed to the handler at once.
	DefaultBatchSize = 250
	// DefaultConnectionName is the connection name the broker's tools show.
	DefaultConnectionName = "locksensors"
)

// DefaultReconnect is the backoff between connection attempts, and between attempts
// to hand a batch the handler refused.
var DefaultReconnect = locks.Backoff{Initial: 100 * time.Millisecond, Max: 10 * time.Second, Jitter: 0.5}

// maxPrefetch is the largest prefetch count basic.qos can carry (a short).
const maxPrefetch = 65535

// Config configures a Consumer. URL is required; every other field has a default.
type Config struct {
	// URL is the broker's address: amqp://user:pass@host:port/vhost, or amqps://... for
	// TLS.
	URL string
	// Queue is the queue to consume; "" means DefaultQueue. It is declared durable
	// (a classic queue, no arguments) if it is missing.
	Queue string
	// Consumers is how many consumers share the queue, each on an AMQP channel of its
	// own on the one connection; 0 means DefaultConsumers. Each calls the handler from
	// its own goroutine.
	Consumers int
	// Prefetch is how many unacknowledged readings the broker sends ahead of each
	// consumer (basic.qos); 0 means DefaultPrefetch.
	Prefetch int
	// BatchSize is the most readings in one HandleBatch; 0 means DefaultBatchSize, or
	// Prefetch when that is smaller. It may not exceed Prefetch: a consumer cannot
	// hold more unacknowledged readings than the broker lets it have.
	BatchSize int
	// Reconnect is the backoff between connection attempts and between attempts to
	// hand a refused batch again; the zero Backoff means DefaultReconnect.
	Reconnect locks.Backoff
	// ConnectionName is the AMQP connection_name property, which the broker's
	// management tools show; "" means DefaultConnectionName.
	ConnectionName string
	// Logger logs lost connections and handler errors; nil discards.
	Logger *slog.Logger
	// Clock stamps Message.Received and times the backoff; nil is the wall clock.
	Clock clock.Clock
}

// settings is a validated Config with its defaults applied.
type settings struct {
	Config
	uri   amqp.URI
	clock clock.Clock
	log   *slog.Logger
}

// resolve validates cfg, naming the first field that is wrong, and applies the defaults.
func resolve(cfg Config) (*settings, error) {
	const prefix = "rabbitmq.Config."
	uri, err := amqpconn.ParseURL(prefix, cfg.URL)
	if err != nil {
		return nil, err
	}
	if cfg.Queue == "" {
		cfg.Queue = DefaultQueue
	}
	if cfg.Consumers == 0 {
		cfg.Consumers = DefaultConsumers
	}
	if cfg.Prefetch == 0 {
		cfg.Prefetch = DefaultPrefetch
	}
	if cfg.BatchSize == 0 {
		cfg.BatchSize = min(DefaultBatchSize, cfg.Prefetch)
	}
	if cfg.Reconnect == (locks.Backoff{}) {
		cfg.Reconnect = DefaultReconnect
	}
	if cfg.ConnectionName == "" {
		cfg.ConnectionName = DefaultConnectionName
	}
	switch {
	case len(cfg.Queue) > 255:
		// A queue name is an AMQP short string.
		return nil, fmt.Errorf("%sQueue is %d bytes long; the most is 255", prefix, len(cfg.Queue))
	case cfg.Consumers < 0:
		return nil, fmt.Errorf("%sConsumers %d must not be negative", prefix, cfg.Consumers)
	case cfg.Prefetch < 0 || cfg.Prefetch > maxPrefetch:
		return nil, fmt.Errorf("%sPrefetch %d must be within [0, %d]", prefix, cfg.Prefetch, maxPrefetch)
	case cfg.BatchSize < 0:
		return nil, fmt.Errorf("%sBatchSize %d must not be negative", prefix, cfg.BatchSize)
	case cfg.BatchSize > cfg.Prefetch:
		return nil, fmt.Errorf("%sBatchSize %d must be at most Prefetch (%d): the broker never lets a consumer hold more", prefix, cfg.BatchSize, cfg.Prefetch)
	}
	if err := cfg.Reconnect.Validate(prefix + "Reconnect."); err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &settings{Config: cfg, uri: uri, clock: clock.OrReal(cfg.Clock), log: log}, nil
}
