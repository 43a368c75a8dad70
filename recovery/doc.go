// Package recovery follows the health of the feed's producers and recovers the messages
// an outage lost, within the account's rate limits.
//
// A Manager takes the system messages of the SDK's sessions (alive, snapshot_complete)
// and the news of a lost connection, checks for missing heartbeats with a
// heartbeat.Monitor, requests recoveries through the recovery API, and tells the
// GlobalEventsListener of every status change and recovery initiation. The root package
// feedkit wires it; it is usable alone.
//
// # Arguments and Config
//
// The kit has one rule for what goes where: what a component cannot work without, and
// what an assembler (the root package's SDK) wires in, is an argument of its constructor;
// a Config holds tunables and optional plug-ins that have a default (here the Store, the
// Ledger, the ProducerSource, the Clock, the Logger, OnError). So NewManager takes the
// Requester that sends the requests, the GlobalEventsListener it reports to and the node
// id, each session that delivers system messages takes a SystemHandler, and Config holds
// only what a user may set. The package reads no environment: the SDK applies
// FEEDKIT_RECOVERY_ENABLED (feedkit.RecoveryEnabledEnv) over Config.Disabled.
//
// # If you know Sportradar's SDK
//
//	Sportradar's SDK                                   package recovery
//	InactivitySeconds, InactivitySecondsPrematch       the producers' HeartbeatLimit, Config.HeartbeatLimits
//	MaxRecoveryTime                                    Config.RecoveryTimeout
//	MinIntervalBetweenRecoveryRequests                 Config.Limits (the API's own limits, counted exactly)
//	DisabledProducers, disableProducer                 Config.DisabledProducers
//	the producers of the account (producers.xml)       Config.ProducerSource (Config.Producers the fallback)
//	setProducerRecoveryFromTimestamp                   a Record saved in the Store before Open
//	onProducerStatusChange, onRecoveryInitiated        the GlobalEventsListener given to NewManager
//	IsProducerDown, LastTimestampBeforeDisconnect      Manager.Producer: ProducerState.Up, LastDisconnectedAt
//
// # States
//
// A producer is Healthy, Disconnected (messages may be missing: alives stopped, the
// connection dropped, or the process has just started) or Recovering (a recovery was
// accepted and its snapshot_complete is awaited). It is up for the customer when Healthy
// and its live messages are processed in time. Every producer followed starts down, and
// Open tells the GlobalEventsListener so (reason feed.InitialState) before anything else.
//
// # Rules
//
// The heartbeat limit of a producer (15 s live, 5 min prematch; Config.HeartbeatLimits) is
// the longest silence allowed: a producer is past it when no alive has come for longer
// than the limit. A silence of exactly the limit is within it, one of the limit and 1ns is
// past it, on both paths that measure a silence, the alive rule and the check. That is
// what Sportradar's SDKs document for their inactivity limit ("if this value is exceeded,
// the producer is considered to be down").
//
//   - An alive with subscribed=1 is measured against the previous one, in our clock: if
//     the previous one came longer ago than the producer's heartbeat limit the producer is
//     disconnected at its recovery point and recovered; a disconnected producer is
//     recovered at its first alive.
//   - An alive with subscribed=0 requests a recovery from the recovery point.
//   - Every CheckInterval (15 s, counted from Open), a healthy producer whose last alive
//     came longer ago than its limit is disconnected (LastDisconnectedAt = that alive,
//     AliveIntervalViolation); a producer already down is left alone. The check that
//     finds it is the first one at which the silence is past the limit, so at most one
//     CheckInterval after the limit ran out. The recovery waits for its alives.
//   - A lost connection disconnects the healthy producers (ConnectionDown) at their
//     recovery point and makes a recovery under way be requested again.
//   - Manager.RecoverProducer does the same for one producer, with the reason given
//     (feed.ProcessingStalled when the messages of its recovery were not processed in
//     time): a healthy producer is disconnected at its recovery point, reported down and
//     recovered at once, without waiting for an alive; a recovery under way is requested
//     again; a producer disconnected already is left to its next alive.
//   - A snapshot_complete whose request id is not the last requested recovery's is
//     ignored; the right one, once received on every session, makes the producer healthy
//     (FirstRecoveryCompleted the first time in the process, then ReturnedFromInactivity).
//   - A recovery goes back, in this order: (1) for a producer recovering, to its
//     RecoveryRequestedAt, or to the disconnection that recovery covers when earlier
//     (the request time alone would lose the span before it when the earlier replay was
//     lost, the reason a recovering producer is recovered again); (2) with no
//     LastDisconnectedAt, to LastSubscribedAt, or else
//     ten minutes (Config.AssumedDowntime); (3) to at most 60 hours
//     (Config.MaxRecoveryLength, or the producer's shorter MaxRecoveryWindow); (4) else to
//     LastDisconnectedAt. The start is chosen when the need arises and registered as the
//     disconnection, so a request postponed by the limits, or a restart, keeps it.
//   - Live messages processed more than Config.MaxProcessingDelay (20 s) after their
//     timestamp make the producer down (ProcessingQueueDelayViolation) until they are in
//     time again (ProcessingQueueDelayStabilized).
//   - With recoveries disabled, a needed recovery is skipped and the producer becomes
//     healthy at once.
//
// # The recovery point
//
// LastSubscribedAt, the point a healthy producer's next recovery starts from (rule 2a),
// and the disconnection registered when it goes down, is in the feed's clock and behind
// the listeners, not in ours and behind the reading goroutine: it is the timestamp of
// the last alive with subscribed=1 before which every message of the producer received,
// on every session, has finished its listener call (ProcessedThrough; the SDK's
// concurrent.TaskLifecycleTracker reports it). The local time at which the alive was
// handled would lose messages twice over: the feed's timestamps lag our
// clock whenever the broker or this process has a backlog (a recovery "after" our clock
// skips what the feed stamped earlier), and alives are read ahead of the event messages
// still queued for the listener (a process that dies with a backlog would never get it
// back). Liveness (the heartbeat limits) is still measured in our clock, between receipts.
//
// The point moves only while the producer is healthy, and only to an alive read after
// the last recovery's snapshot_complete: until then the point is where that recovery
// went back to, since its replay may still be queued. A listener call that returns an
// error or panics (ListenerFailed) holds the point at or before its message's timestamp,
// so that the next recovery replays it (listeners must be idempotent anyway: recoveries
// overlap live traffic); the hold is logged once and shown in ProducerState.Hold, is
// released when a recovery that replays the message completes, and never outlives the
// recovery window: then the message is given up with a HoldGivenUpError.
// Config.AdvancePastFailures turns holds off. The drift between the two clocks (alive
// timestamps against receipt) is in ProducerState.ClockDrift and logged past 5 s, since
// the maximum recovery length and the assumed downtime still read our clock.
//
// # Rate limits
//
// The feed limits the recovery requests of an account, by the length of the recovery:
// 24–60 h: 4 per 2 hours and 2 per 30 minutes; 30 min–24 h: 10 per hour and 4 per 10
// minutes; under 30 min: 60 per hour and 20 per 10 minutes. The limits are exact sliding
// windows (Allow): a request is refused only while a window holds its maximum, and is
// scheduled for the moment the oldest request counted leaves it, with a timer, not a
// loop. Each tier counts the requests of its own length class. Only successful requests
// count: a place is reserved in the Ledger before the API is called, atomically across
// every node and process of the account, and given back when the API refuses or fails.
// Failed requests (5xx, 429, timeouts) are reported and retried with exponential backoff
// (or after the API's Retry-After); the producer stays down meanwhile.
//
// # Metrics
//
// Config.Observer (set for the whole SDK by feedkit.Config.Observer; the otelfeedkit and
// promfeedkit modules implement it) is told what a dashboard counts, as it happens:
// every status change the GlobalEventsListener is told, InitialState included and in
// the same order; the lag of every alive (our clock at its receipt minus its timestamp,
// as ProducerState.ClockDrift); every recovery request, accepted, rate_limited or failed
// (a recovery skipped because recoveries are disabled is none); and how each accepted
// recovery ended, completed or timed_out, with the time it took from its acceptance. Its
// totals are the Stats counters: RecoveriesRequested and EventRecoveriesRequested,
// RequestsRateLimited, RequestsFailed, RecoveriesCompleted, RecoveryTimeouts and their
// event counterparts. It is called once the manager has acted, with none of its locks
// held, but in line with its work: a slow observer slows the manager. What is a level
// rather than an event (producers up, the age of the last alive) is read from Producers.
//
// # Persistence
//
// Records are saved through a Store (MemoryStore, FileStore, pgstore.Store) on every
// change, and the recovery point as it moves at most once per CheckInterval. A restarted
// process starts every producer down and recovers it from where its record says: the
// messages that were queued behind its listeners when it stopped come back.
package recovery
