// Package feedkit is a toolkit for services that live on a sports odds feed: consuming it
// reliably, and running the resilient background machinery such a business needs.
//
// The kit is made of packages that are useful alone and that a host wires together:
//
//   - [github.com/feedkit/feedkit/feed]: the odds-feed protocol in the style of the Unified
//     Odds Feed: routing keys, every message type and a fast decoder for it, the
//     OddsFeedListener and GlobalEventsListener interfaces, sessions by message interest,
//     transports, and the recovery API client.
//   - [github.com/feedkit/feedkit/feed/feedtest]: an embedded broker and a feed simulator,
//     in the spirit of net/http/httptest, so that sessions run without RabbitMQ in tests,
//     examples and development.
//   - [github.com/feedkit/feedkit/feed/rabbitmq]: the transport that consumes the feed from
//     RabbitMQ, reconnecting on its own, and a publisher that feeds a broker.
//   - [github.com/feedkit/feedkit/concurrent]: the concurrent listener: each match's
//     messages in order, matches in parallel on a pool of workers, and producer ups held
//     back until every message of their recovery has been processed.
//
// Further packages come with their issues: producer health and recovery with a generic heartbeat monitor, workflow
// timeouts and recovery, and the publish carousel. This root package will assemble the
// odds-feed SDK from them.
//
// Start with examples/oddsfeed: `go run ./examples/oddsfeed` runs the simulator and a
// session on the embedded broker and prints what flows through; with -amqp URL the same
// traffic goes through RabbitMQ.
package feedkit
