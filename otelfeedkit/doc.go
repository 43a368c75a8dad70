// Package otelfeedkit exports what a feedkit SDK, a workflow engine, a carousel
// scheduler and a group's processes do as OpenTelemetry metrics, through the metric
// API alone: the host chooses the SDK, the exporters and the views.
//
// New makes the instruments on a MeterProvider (the global one by default). The
// *Metrics it returns is a feedkit.Observer: set it as feedkit.Config.Observer, and
// every part of the SDK tells it what happens as it happens. Levels are not told but
// read: call WatchSDK with the SDK once it is built, and every collection reads
// SDK.Stats once for them.
//
//	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
//	m, err := otelfeedkit.New(otelfeedkit.WithMeterProvider(mp))
//	...
//	sdk, err := feedkit.New(feedkit.Config{..., Observer: m})
//	...
//	reg, err := m.WatchSDK(sdk)
//
// ExampleNew runs this on a ManualReader and prints what it collects.
//
// Three more parts of the kit have their own constructors, on the same scope:
// NewWorkflow for a workflow engine (set it as workflow.Config.Observer, and call
// WatchEngine), NewCarousel for a carousel scheduler (carousel.Config.Observer, and
// WatchScheduler) and NewGroup for a group's ingress and workers (WatchIngress,
// WatchWorker). They are apart from New because each serves its own engine, scheduler
// or process, which a host may run without a feed SDK.
//
// The observer's calls made once per message (FeedMessageReceived, ListenerCalled)
// allocate nothing once their labels have been seen: each key's attribute set is made
// once and kept, with the options that carry it.
//
// # Metrics
//
// Name, unit, instrument and attributes. The Prometheus names are what OpenTelemetry's
// Prometheus exporter makes of these (dots to underscores, the unit's suffix, _total
// for counters: messaging_client_consumed_messages_total,
// feedkit_transport_received_bytes_total, http_client_request_duration_seconds); the
// module github.com/feedkit/feedkit/promfeedkit exports the same names, so that one
// dashboard reads either.
//
//	messaging.client.consumed.messages  {message}  counter    messaging.system feedkit.session feedkit.producer feedkit.message.type
//	feedkit.messages.unparsable         {message}  counter    feedkit.session feedkit.producer feedkit.message.type
//	feedkit.listener.calls              {call}     counter    feedkit.pool feedkit.producer feedkit.message.type feedkit.result
//	messaging.process.duration          s          histogram  feedkit.pool feedkit.message.type
//	feedkit.queue.wait.duration         s          histogram  feedkit.pool
//	feedkit.pool.backlog                {task}     gauge*     feedkit.pool
//	feedkit.pool.running                {call}     gauge*     feedkit.pool
//	feedkit.producer.up                 {producer} gauge*     feedkit.producer
//	feedkit.producer.last_down          {producer} gauge      feedkit.producer feedkit.reason
//	feedkit.producer.downs              {down}     counter    feedkit.producer feedkit.reason
//	feedkit.producer.ups.held           {up}       counter    feedkit.producer feedkit.recovery.kind
//	feedkit.producer.up.held.duration   s          histogram  feedkit.producer feedkit.recovery.kind
//	feedkit.producer.lag                s          gauge      feedkit.producer
//	feedkit.producer.alive.age          s          gauge*     feedkit.producer
//	feedkit.recovery.requests           {request}  counter    feedkit.producer feedkit.recovery.kind feedkit.result
//	feedkit.recovery.duration           s          histogram  feedkit.producer feedkit.recovery.kind feedkit.result
//	http.client.request.duration        s          histogram  http.request.method url.template http.response.status_code
//	feedkit.api.requests.held           {request}  counter    http.request.method url.template
//	feedkit.cache.reads                 {read}     counter    feedkit.cache feedkit.result
//	feedkit.cache.evictions             {entry}    counter    feedkit.cache
//	feedkit.cache.entries               {entry}    gauge*     feedkit.cache
//	feedkit.transport.connected         {link}     gauge*
//	feedkit.transport.connects          {link}     counter
//	feedkit.transport.drops             {link}     counter
//	feedkit.transport.failed_attempts   {attempt}  counter
//	feedkit.transport.received          By         counter*
//
// A star marks a level that WatchSDK reads from SDK.Stats when the metrics are
// collected: without WatchSDK they are not reported. Everything else moves with the
// observer's calls.
//
// The histograms' bucket boundaries are given as advice, which a View may override:
// microseconds to seconds for the listener calls and their wait, milliseconds to 30 s
// for the API, a tenth of a second to 30 minutes for the recoveries and the ups held.
// messaging.process.duration and feedkit.queue.wait.duration count the calls a pool
// timed only, one in its TimingSample: feedkit.listener.calls counts them all.
//
// # Workflow metrics
//
// NewWorkflow makes these; the star marks the level WatchEngine reads.
//
//	feedkit.workflow.processes.started   {process}  counter  feedkit.process.type
//	feedkit.workflow.processes.restarted {process}  counter  feedkit.process.type feedkit.state
//	feedkit.workflow.processes.ended     {process}  counter  feedkit.process.type feedkit.state
//	feedkit.workflow.processes           {process}  gauge*   feedkit.state
//	feedkit.workflow.tasks.polled        {task}     counter  feedkit.actor.type
//	feedkit.workflow.tasks.released      {task}     counter  feedkit.actor.type feedkit.result
//	feedkit.workflow.tasks.timeouts      {timeout}  counter  feedkit.timeout.kind feedkit.actor.type
//	feedkit.workflow.processes.timeouts  {timeout}  counter  feedkit.process.type
//	feedkit.workflow.repairs             {repair}   counter  feedkit.process.type feedkit.repair.kind
//
// Each engine tells only the changes its own write applied, so the counters of the
// engines sharing a store add up to each change once (but a task created again by two
// engines' scans at the same instant is told by both). feedkit.workflow.processes is the
// store's count, the same from every engine: watch one engine per store. It costs one
// count query per state at each collection, and reports every state, 0 included. A
// broken process counts in feedkit.workflow.processes.ended, not in the repairs.
//
// # Carousel metrics
//
// NewCarousel makes these; the stars mark the levels WatchScheduler reads from
// Scheduler.Status, once per collection.
//
//	feedkit.carousel.published            {item}      counter    feedkit.cycle
//	feedkit.carousel.publish.failures     {item}      counter    feedkit.cycle
//	feedkit.carousel.publish.duration     s           histogram  feedkit.cycle feedkit.result
//	feedkit.carousel.iterations           {iteration} counter    feedkit.cycle
//	feedkit.carousel.iteration.duration   s           histogram  feedkit.cycle
//	feedkit.carousel.failures             {failure}   counter    feedkit.cycle feedkit.carousel.operation
//	feedkit.carousel.fenced               {save}      counter    feedkit.cycle
//	feedkit.carousel.iteration.current    {iteration} gauge*     feedkit.cycle
//	feedkit.carousel.iteration.items      {item}      gauge*     feedkit.cycle
//	feedkit.carousel.iteration.completed  {item}      gauge*     feedkit.cycle
//	feedkit.carousel.iteration.errors     {item}      gauge*     feedkit.cycle
//	feedkit.carousel.iteration.progress   1           gauge*     feedkit.cycle
//	feedkit.carousel.throttle             s           gauge*     feedkit.cycle
//	feedkit.carousel.state                {cycle}     gauge*     feedkit.cycle feedkit.carousel.state
//	feedkit.carousel.unhealthy            {cycle}     gauge*     feedkit.cycle
//	feedkit.carousel.active               {scheduler} gauge*
//
// The publishes are timed with the listener calls' buckets, microseconds to seconds;
// the iterations from a second to a day, since a large collection at a slow throttle,
// or an iteration that stood stopped, runs for hours. A publish that a stop cut short
// is not counted: the resume publishes it again. feedkit.carousel.state is 1 for the
// cycle's main state and 0 for the other three; feedkit.carousel.unhealthy comes beside
// it, since an unhealthy cycle is in a main state as well.
//
// For both, WithMeterProvider is the only option that matters: WithPoolName names the
// SDK's pool, and WithClock the clock of the SDK's alive ages; the carousel measures
// its durations on its own Config.Clock, and the workflow measures none. Their
// Prometheus names are made as above (feedkit_workflow_processes_started_total,
// feedkit_carousel_iteration_progress_ratio, feedkit_carousel_throttle_seconds; a unit
// in braces adds nothing, so feedkit_carousel_state), and promfeedkit's NewWorkflow and
// NewCarousel export the same.
//
// # Group metrics
//
// NewGroup makes these, all levels read when the metrics are collected: WatchIngress
// reads Ingress.Stats, WatchWorker reads Worker.Stats (the shard's with feedkit.shard).
// The counters are the Stats' own: those of an ingress's publisher count from 0 again
// each time the ingress becomes active, which a rate reads as a reset.
//
//	feedkit.group.ingress.active                {ingress}    gauge*
//	feedkit.group.ingress.activations           {activation} counter*
//	feedkit.group.ingress.epoch                 {epoch}      gauge*
//	feedkit.group.ingress.connected             {connection} gauge*
//	feedkit.group.ingress.reconnects            {connection} counter*
//	feedkit.group.ingress.published             {message}    counter*
//	feedkit.group.ingress.confirmed             {message}    counter*
//	feedkit.group.ingress.unconfirmed           {message}    gauge*
//	feedkit.group.ingress.batches               {batch}      counter*
//	feedkit.group.ingress.batched_events        {event}      counter*
//	feedkit.group.ingress.republished           {message}    counter*
//	feedkit.group.ingress.returned              {message}    counter*
//	feedkit.group.barriers                      {barrier}    counter*
//	feedkit.group.barriers.released             {barrier}    counter*
//	feedkit.group.barriers.timed_out            {barrier}    counter*
//	feedkit.group.barriers.cancelled            {barrier}    counter*
//	feedkit.group.global_events.sent            {event}      counter*
//	feedkit.group.worker.connected              {connection} gauge*
//	feedkit.group.worker.connects               {connection} counter*
//	feedkit.group.worker.drops                  {connection} counter*
//	feedkit.group.worker.errors                 {error}      counter*
//	feedkit.group.worker.global_events          {event}      counter*
//	feedkit.group.worker.global_events.dropped  {message}    counter*
//	feedkit.group.shard.active                  {consumer}   gauge*    feedkit.shard
//	feedkit.group.shard.deliveries              {delivery}   counter*  feedkit.shard
//	feedkit.group.shard.redeliveries            {delivery}   counter*  feedkit.shard
//	feedkit.group.shard.batches                 {batch}      counter*  feedkit.shard
//	feedkit.group.shard.events                  {event}      counter*  feedkit.shard
//	feedkit.group.shard.processed               {event}      counter*  feedkit.shard
//	feedkit.group.shard.abandoned               {event}      counter*  feedkit.shard
//	feedkit.group.shard.events_in_flight        {event}      gauge*    feedkit.shard
//	feedkit.group.shard.acked                   {delivery}   counter*  feedkit.shard
//	feedkit.group.shard.invalid                 {delivery}   counter*  feedkit.shard
//	feedkit.group.shard.fenced                  {message}    counter*  feedkit.shard
//	feedkit.group.shard.barriers                {barrier}    counter*  feedkit.shard
//	feedkit.group.shard.barriers.acked          {barrier}    counter*  feedkit.shard
//	feedkit.group.shard.epoch                   {epoch}      gauge*    feedkit.shard
//
// On-call alerts: no ingress active in the group (the sum of
// feedkit.group.ingress.active over its processes is 0 for longer than a fail-over), a
// shard with no active consumer, feedkit.group.barriers.timed_out rising (a worker does
// not keep up, and its producer is recovered again), feedkit.group.ingress.returned
// above 0 (a topology that does not match).
//
// # Attributes
//
//   - messaging.system: "rabbitmq", on every message consumed.
//   - feedkit.session: the session's index and the short name of its interest, as
//     "0:all", "1:live", "2:prematch", "3:hi", "4:lo", "5:virtual", or "6:matches" for
//     feed.SpecifiedMatchesOnly (its events left out).
//   - feedkit.producer: the producer's id in decimal; "0" for a message whose producer
//     is not known (it could not be read).
//   - feedkit.message.type: feed.MessageType's String ("odds_change", "alive",
//     "unknown" for a malformed routing key).
//   - feedkit.pool: the pool's name: the shared pool's Config.Concurrent.Name ("feed"
//     by default; tell WatchSDK's levels another with WithPoolName), "session N" for a
//     serial session's dispatcher.
//   - feedkit.result: how a thing ended, the String of its enum: a listener call's
//     concurrent.CallResult ("returned", "failed", "panicked", "unparsable"), a recovery
//     request's recovery.RequestResult ("accepted", "rate_limited", "failed"), a
//     recovery's recovery.RecoveryResult ("completed", "timed_out"); "hit" or "miss" for
//     a cache read.
//   - feedkit.reason: feed.StatusReason's String ("AliveIntervalViolation",
//     "InitialState", ...).
//   - feedkit.recovery.kind: "producer", "event" or "event_stateful".
//   - feedkit.cache: "markets", "variants", "single_variants", "summaries", "profiles"
//     (the names' caches); "event_summaries", "fixtures", "competitor_profiles",
//     "player_profiles", "sports", "categories", "tournaments", "seasons" (the sport data's).
//   - http.request.method, url.template, http.response.status_code: as OpenTelemetry's
//     HTTP semantic conventions: the method ("_OTHER" for one they do not list), the
//     endpoint's template ("/v1/{lang}/sport_events/{urn}/summary.xml"), the answer's
//     status, left out when no answer came.
//   - feedkit.process.type, feedkit.actor.type: a workflow's process type
//     (StartRequest.Type) and actor type (TaskSpec.ActorType), the program's own names,
//     few and fixed; never a process, task or custom id.
//   - feedkit.state: workflow.ProcessState's String ("running", "finished", "failed",
//     "aborted", "broken"); for a restart, the state the process was restarted from.
//   - feedkit.timeout.kind: workflow.TimeoutKind's String, "work" or "task".
//   - feedkit.repair.kind: workflow.RepairKind's String ("process_begun",
//     "restart_completed", "decision_applied", "task_created", "process_failed",
//     "process_finished", "process_restarted").
//   - feedkit.shard: a group's shard queue number, from 0 to Topology.Shards-1.
//   - feedkit.cycle: a carousel cycle's name (CycleConfig.Name: at most 64 characters,
//     one per configured cycle); never an item's id.
//   - feedkit.carousel.operation: carousel.Op's String, "load", "save", "count" or
//     "list".
//   - feedkit.carousel.state: "starting", "running", "stopped" or "cooldown".
//
// feedkit.result is also a workflow decision's workflow.ReleaseResult ("finished",
// "retried", "failed"), and a carousel publish's "published" or "failed".
//
// feedkit.producer.last_down is 1 for the reason of each producer's last down (a
// ProducerStatusChanged with Down set; InitialState is one, since a producer starts
// down) and is kept while the producer is up again; a later down replaces it. Every such
// change also counts in feedkit.producer.downs.
package otelfeedkit
