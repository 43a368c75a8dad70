package feedkit

import (
	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
	"github.com/feedkit/feedkit/feed/markets"
	"github.com/feedkit/feedkit/feed/rabbitmq"
	"github.com/feedkit/feedkit/recovery"
)

// Observer is told of what every part of the SDK does as it happens, for metrics: the
// messages read, the listener calls, the producers' changes and recoveries, the API's
// requests, the names' caches and the broker's links. Set Config.Observer; the modules
// github.com/feedkit/feedkit/promfeedkit (Prometheus) and
// github.com/feedkit/feedkit/otelfeedkit (OpenTelemetry) implement it, so that the SDK
// itself depends on neither. What is a level rather than an event (queues, producers
// up, cache entries, bytes received) is read from Stats when the metrics are collected.
//
// Its methods are called on the SDK's goroutines, concurrently, some once per message:
// they must be quick and must not block.
type Observer interface {
	feed.Observer
	concurrent.Observer
	recovery.Observer
	feedapi.Observer
	markets.Observer
	rabbitmq.Observer
}
