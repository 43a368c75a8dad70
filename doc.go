// Package feedkit is a toolkit for services that live on a sports odds feed: consuming it
// reliably, and running the resilient background machinery such a business needs.
//
// The kit is made of packages that are useful alone and that a host wires together:
//
//   - [github.com/feedkit/feedkit/feed]: the odds-feed protocol in the style of the Unified
//     Odds Feed: routing keys, every message type and a fast decoder for it, the
//     OddsFeedListener and GlobalEventsListener interfaces, sessions by message interest,
//     and transports.
//
//   - [github.com/feedkit/feedkit/feed/feedapi]: the client of the feed's HTTP API (the
//     account, its producers, recovery requests, Sports API documents), through which
//     every request of the SDK goes, with its retries, timeouts and a hook that sees each
//     raw answer.
//
//   - [github.com/feedkit/feedkit/feed/markets]: market and outcome names from the
//     Sports API ("Total 2.5", "over 2.5" for market 18, outcome 12, total=2.5), in the
//     languages asked for, read when first needed and kept in bounded caches; the SDK
//     gives its listeners one through SDK.Names.
//
//   - [github.com/feedkit/feedkit/feed/sportdata]: the sport data behind the messages
//     (events, fixtures, competitors, players, tournaments, schedules, timelines), cached
//     with the languages read merged, exported and imported so that a restart starts
//     warm; the SDK gives its listeners one through SDK.SportData, told of every
//     fixture_change as it arrives.
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
//   - [github.com/feedkit/feedkit/group]: the feed shared by a group of processes on
//     your RabbitMQ: an ingress (a standby takes over through a lease) republishes every
//     message to shard queues hashed by event, and workers deliver them to the same
//     listeners, each match in order; a producer's up reaches your application once
//     every shard has processed its recovery.
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
// This package assembles the odds-feed SDK: [New] takes a [Config] (the environment and
// access token, or a transport and the API's address; the recovery manager's tunables;
// Config.Concurrent: a *concurrent.Config for the concurrent listener, nil for serial
// delivery) and returns an [SDK]; [SDK.AddSession] adds a session per message interest
// with its listener, which may hold what New built ([SDK.Names], [SDK.SportData],
// [SDK.API]); then Open and Close. With the concurrent listener all sessions share one
// pool of Config.Concurrent.Threads workers, and a match keeps its order across sessions.
//
// Set it up from an access token and an environment, as Sportradar's SDKs are:
// Config.AccessToken with Config.Environment ([Integration], [Production], [Replay], or
// [CustomEnvironment] for another broker and API, such as a relay's or the simulator's; a
// broker URL with a login of its own is reached with it, the API with the token). Every
// HTTP request goes through one feedapi.Client ([SDK.API]). Open reads the bookmaker
// details ([SDK.BookmakerDetails]: the virtual host, the token's expiry and the API
// server's clock, warned of within Config.TokenExpiryWarning and past
// Config.ClockOffsetWarning; a refused token fails Open) and the account's producers, and
// follows the active ones (Config.Recovery.Producers is only the fallback when the API
// cannot list them; Config.Recovery.DisabledProducers are never followed). Every producer
// followed is reported down first, with the reason InitialState; each is recovered when
// its alives arrive, and its up reaches the GlobalEventsListener only after every message
// of the recovery behind it has been processed, with either delivery. An up held longer
// than Config.MaxUpHold (an hour by default) means listeners stuck on the recovery: the
// producer is reported down (feed.ProcessingStalled) and recovered again, and
// [SDK.RecoverProducer] does the same on an operator's word.
// [SDK.RecoverEvent] recovers one event's messages through the same listeners.
// [SDK.AddForwardingSession] adds a session whose messages go to a [Forwarder] rather than
// to listeners, as a group of processes' ingress republishes them: the Forwarder
// finishes a ticket of the SDK's task tracker for each event it hands on, and the up
// and the recovery point follow those tickets as they follow the listeners'.
// [SDK.Stats] encodes to JSON for an operator's /stats endpoint, and [SDK.Flush] lets a
// test wait until what was read has been processed. [SDK.HealthHandler] serves the
// liveness and readiness probes of Kubernetes (/healthz, /readyz). Config.Observer is told
// of what every part does, for metrics: the modules github.com/feedkit/feedkit/promfeedkit
// and github.com/feedkit/feedkit/otelfeedkit implement it for Prometheus and
// OpenTelemetry, so the SDK itself depends on neither. Config.Clock is the time of
// everything the SDK builds; a test passes a clocktest.Fake.
//
// The kit has one rule for what goes where: what a component cannot work without, and
// what an assembler wires in, is an argument of its constructor (recovery.NewManager takes
// the API client that sends recovery requests, the GlobalEventsListener and the node;
// concurrent.NewDispatcher the listener and the tracker); a Config holds tunables and
// optional plug-ins with a default (a Store, a Ledger, a Clock, a Logger, OnError). Each
// component owns its logic behind an interface it declares: the RabbitMQ transport asks a
// rabbitmq.VirtualHostSource for the account's virtual host, the recovery manager a
// recovery.ProducerSource for the account's producers, and the feed's API client is
// both. New also reads the environment, which the components never do:
// RecoveryEnabledEnv (FEEDKIT_RECOVERY_ENABLED=false) turns recoveries off for
// development, over Config.Recovery.Disabled.
//
// A recovery after an outage or a restart goes back to the producer's recovery point: the
// feed's timestamp of the last alive before which every message the sessions read had
// finished its listener call, so that nothing the feed sent is lost, neither what a late
// feed stamped before the outage nor what was queued behind the listeners when a process
// died. A listener call that returns an error or panics holds the point before its
// message, so the next recovery replays it (recovery.Config.AdvancePastFailures turns that
// off). Keep the point in a recovery.FileStore or recovery/pgstore across restarts: with
// the in-memory default, Open warns that a restart would recover the last
// AssumedDowntime only. A graceful Close saves the latest point; a process killed without
// it replays up to one Config.Recovery.CheckInterval more after its restart.
//
// Start with examples/oddsfeed: `go run ./examples/oddsfeed` runs the simulator and the
// SDK on the embedded broker through an outage, and prints the disconnection, the
// recovery, the replay and the deferred producer up; with -amqp URL the same traffic goes
// through RabbitMQ.
package feedkit
