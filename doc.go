// Package feedkit is a toolkit for services that live on a sports odds feed: consuming it
// reliably, and running the resilient background machinery such a business needs.
//
// The kit is made of packages that are useful alone and that a host wires together:
//
//   - [github.com/feedkit/feedkit/feed]: the odds-feed protocol in the style of the Unified
//     Odds Feed: routing keys, every message type and a fast decoder for it, the
//     OddsFeedListener and GlobalEventsListener interfaces, sessions by message interest,
//     transports, and the recovery API client.
//
//   - [github.com/feedkit/feedkit/feed/markets]: market and outcome names from the
//     Sports API ("Total 2.5", "over 2.5" for market 18, outcome 12, total=2.5), in the
//     languages asked for, read when first needed and kept in bounded caches; the SDK
//     gives its listeners one through SDK.Names.
//
//   - [github.com/feedkit/feedkit/feed/feedtest]: an embedded broker and a feed simulator,
//     in the spirit of net/http/httptest, so that sessions run without RabbitMQ in tests,
//     examples and development.
//
//   - [github.com/feedkit/feedkit/feed/rabbitmq]: the transport that consumes the feed from
//     RabbitMQ, reconnecting on its own, and a publisher that feeds a broker.
//
//   - [github.com/feedkit/feedkit/concurrent]: delivery to your listeners: the concurrent
//     listener (each match's messages in order, matches in parallel on a pool of
//     workers) and its serial twin, SerialDispatcher (one call at a time in arrival order),
//     both on one task tracker that holds a producer's up back until every message of its
//     recovery has been processed.
//
//   - [github.com/feedkit/feedkit/recovery]: producer health and recovery: alives,
//     missing heartbeats and snapshot_complete, where a recovery goes back to, the
//     account-wide rate limits on recovery requests (exact sliding windows, shared through
//     a Ledger), and producer records that survive a restart; recovery/pgstore keeps the
//     ledger and the records in PostgreSQL.
//
//   - [github.com/feedkit/feedkit/heartbeat]: a generic monitor of last-seen times for
//     millions of keys (producers, sensors), with no timer per key.
//
//   - [github.com/feedkit/feedkit/workflow]: durable processes of tasks with worker,
//     task, idle and process timeouts, version-checked transitions and automatic repair
//     (workflow/pgstore keeps it in PostgreSQL), operator search, restart and abort, and
//     mass recovery jobs.
//
//   - [github.com/feedkit/feedkit/carousel]: the publish carousel: cycles that republish
//     a collection, whole or by time window, at a throttle, with their progress persisted
//     (in memory, a file, or PostgreSQL with carousel/pgstore) and an active/passive
//     switch, so that every item reaches downstream systems again without flooding them;
//     carousel/carouselhttp serves its operator API and status page and publishes over
//     HTTP.
//
//   - [github.com/feedkit/feedkit/clock]: the time every component reads; a test passes
//     clock/clocktest's fake to any Config.Clock and moves time instead of sleeping. The
//     components that act on their own goroutine have a Flush to wait for them.
//
// # The SDK
//
// This package assembles the odds-feed SDK: [New] takes a [Config] (a transport, the
// sessions by message interest with their listeners, the recovery API, the recovery
// manager's tunables, and Config.Concurrent: a *concurrent.Config for the concurrent
// listener, nil for serial delivery) and returns an [SDK] to Open and Close. With the
// concurrent listener all sessions share one pool of Config.Concurrent.Threads workers,
// and a match keeps its order across sessions.
//
// Set it up from an access token and an environment, as Sportradar's SDKs are:
// Config.AccessToken with Config.Environment ([Integration], [Production], [Replay], or
// [CustomEnvironment] for another broker and API, such as the simulator's). Open reads
// the bookmaker details (the virtual host, and the token's expiry, warned of within
// Config.TokenExpiryWarning; a refused token fails Open) and the account's producers from
// the API, and follows the active ones (the fixed list of producers is only the fallback
// when the API cannot be read; Config.Recovery.DisabledProducers are never followed).
// Every producer followed is reported down first, with the reason InitialState; each is
// recovered when its alives arrive, and its up reaches the GlobalEventsListener only
// after every message of the recovery behind it has been processed, with either
// delivery. [SDK.RecoverEvent] recovers one event's messages through the same listeners.
// [SDK.Stats] encodes to JSON for an operator's /stats endpoint, and [SDK.Flush] lets a
// test wait until what was read has been processed.
//
// The kit has one rule for what goes where: what a component cannot work without, and
// what an assembler wires in, is an argument of its constructor (recovery.NewManager takes
// the recovery API client, the GlobalEventsListener, the node and the number of sessions;
// concurrent.NewDispatcher the listener and the tracker); a Config holds tunables
// and optional plug-ins with a default (a Store, a Ledger, a Clock, a Logger, OnError).
// So Config.Recovery holds only what you may set, and New wires the rest. New also reads
// the environment, which the components never do: RecoveryEnabledEnv
// (FEEDKIT_RECOVERY_ENABLED=false) turns recoveries off for development, over
// Config.Recovery.Disabled.
//
// A recovery after an outage or a restart goes back to the producer's recovery point: the
// feed's timestamp of the last alive before which every message the sessions read had
// finished its listener call, so that nothing the feed sent is lost, neither what a late
// feed stamped before the outage nor what was queued behind the listeners when a process
// died. A listener call that returns an error or panics holds the point before its
// message, so the next recovery replays it (recovery.Config.AdvancePastFailures turns that
// off). Keep the point in a recovery.FileStore or recovery/pgstore across restarts: with
// the in-memory default, Open warns that a restart would recover the last
// AssumedDowntime only.
//
// Start with examples/oddsfeed: `go run ./examples/oddsfeed` runs the simulator and the
// SDK on the embedded broker through an outage, and prints the disconnection, the
// recovery, the replay and the deferred producer up; with -amqp URL the same traffic goes
// through RabbitMQ.
package feedkit
