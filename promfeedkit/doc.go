// Package promfeedkit exports the metrics of a feedkit SDK to Prometheus. It is a module
// of its own, so that the SDK does not depend on the Prometheus client.
//
// New registers the metrics with a registry of yours and returns a Metrics, which is a
// feedkit.Observer: set it as feedkit.Config.Observer, and the SDK tells it what
// happens, as it happens (messages read, listener calls, producers going down,
// recoveries, API requests, cache reads, broker links). What is a level rather than an
// event (queues, producers up, cache entries, bytes received) is read from SDK.Stats
// at each scrape, once Metrics.WatchSDK has the SDK:
//
//	reg := prometheus.NewRegistry()
//	m, err := promfeedkit.New(reg)
//	...
//	sdk, err := feedkit.New(feedkit.Config{ /* ... */ Observer: m})
//	...
//	err = m.WatchSDK(sdk)
//	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// # Metrics
//
// The names are those that OpenTelemetry's Prometheus exporter makes of the metrics of
// github.com/feedkit/feedkit/otelfeedkit, so that one dashboard reads either: the
// attributes' dots are underscores in the labels, and the units are suffixes.
//
//	name                                         type       labels                                                         source
//	messaging_client_consumed_messages_total     counter    messaging_system="rabbitmq", feedkit_session,                  FeedMessageReceived
//	                                                        feedkit_producer, feedkit_message_type
//	feedkit_messages_unparsable_total            counter    feedkit_session, feedkit_producer, feedkit_message_type        FeedMessageUnparsable
//	feedkit_listener_calls_total                 counter    feedkit_pool, feedkit_producer, feedkit_message_type,          ListenerCalled
//	                                                        feedkit_result
//	messaging_process_duration_seconds           histogram  feedkit_pool, feedkit_message_type                             ListenerCalled, timed calls only
//	feedkit_queue_wait_duration_seconds          histogram  feedkit_pool                                                   ListenerCalled, timed calls only
//	feedkit_pool_backlog                         gauge      feedkit_pool                                                   Stats: Pool.Queued, or each serial session's Queued
//	feedkit_pool_running                         gauge      feedkit_pool                                                   Stats: Pool.Running (shared pool only)
//	feedkit_producer_up                          gauge      feedkit_producer                                               Stats: Producers[].Up, 1 or 0
//	feedkit_producer_last_down                   gauge      feedkit_producer, feedkit_reason                               ProducerStatusChanged: 1 for the last down's reason
//	feedkit_producer_downs_total                 counter    feedkit_producer, feedkit_reason                               ProducerStatusChanged, Down only
//	feedkit_producer_ups_held_total              counter    feedkit_producer, feedkit_recovery_kind                        ProducerUpHeld
//	feedkit_producer_up_held_duration_seconds    histogram  feedkit_producer, feedkit_recovery_kind                        ProducerUpReleased
//	feedkit_producer_lag_seconds                 gauge      feedkit_producer                                               ProducerAlive: the last alive's lag
//	feedkit_producer_alive_age_seconds           gauge      feedkit_producer                                               Stats: now - Producers[].LastAliveAt
//	feedkit_recovery_requests_total              counter    feedkit_producer, feedkit_recovery_kind, feedkit_result        RecoveryRequested
//	feedkit_recovery_duration_seconds            histogram  feedkit_producer, feedkit_recovery_kind, feedkit_result        RecoveryEnded
//	http_client_request_duration_seconds         histogram  http_request_method, url_template, http_response_status_code   APIRequest
//	feedkit_api_requests_held_total              counter    http_request_method, url_template                              APIRequestHeld
//	feedkit_cache_reads_total                    counter    feedkit_cache, feedkit_result ("hit", "miss")                  CacheRead
//	feedkit_cache_evictions_total                counter    feedkit_cache                                                  CacheEvicted
//	feedkit_cache_entries                        gauge      feedkit_cache                                                  Stats: Names', SportData's Entries
//	feedkit_transport_connected                  gauge                                                                     Stats: Transport.Connected
//	feedkit_transport_connects_total             counter                                                                   TransportLinkUp
//	feedkit_transport_drops_total                counter                                                                   TransportLinkDown
//	feedkit_transport_failed_attempts_total      counter                                                                   TransportAttemptFailed
//	feedkit_transport_received_bytes_total       counter                                                                   Stats: Transport.Bytes
//
// A level the SDK does not have is left out of the scrape: the pool's running calls
// with serial delivery, the caches' entries without the API, the transport's levels on
// another transport than RabbitMQ.
//
// # Label values
//
// Each is bounded, so that the series stay few:
//
//   - feedkit_session: the session's index and its interest in short, "0:live"; the
//     interests are "all", "live", "prematch", "hi", "lo", "virtual" and "matches"
//     (SpecifiedMatchesOnly).
//   - feedkit_producer: the producer's id, in decimal; "0" for a message that does not
//     say.
//   - feedkit_message_type: feed.MessageType's String ("odds_change", ..., "unknown").
//   - feedkit_pool: the pool's concurrent.Config.Name ("feed" by default in the SDK;
//     WithPoolName must match it for the levels), or "session N" for serial delivery.
//   - feedkit_result: the result enum's String: "returned", "failed", "panicked",
//     "unparsable" for listener calls; "accepted", "rate_limited", "failed" for
//     recovery requests; "completed", "timed_out" for recoveries; "hit", "miss" for
//     cache reads.
//   - feedkit_reason: feed.StatusReason's String ("AliveIntervalViolation", ...). A
//     producer's InitialState, its down at the start, counts as a down.
//   - feedkit_recovery_kind: "producer", "event", "event_stateful".
//   - feedkit_cache: "markets", "variants", "single_variants", "summaries", "profiles"
//     (the names' caches); "event_summaries", "fixtures", "competitor_profiles",
//     "player_profiles", "sports", "categories", "tournaments", "seasons" (the sport data's).
//   - http_request_method and url_template: the request's method and its endpoint's
//     template ("/v1/{lang}/sport_events/{urn}/summary.xml"), never its URL.
//   - http_response_status_code: the answer's status, empty when none came (as
//     OpenTelemetry leaves the attribute out).
//
// # Histograms
//
// Their buckets suit what they time (ListenerBuckets, APIBuckets, RecoveryBuckets,
// HeldBuckets): a listener call and a queue wait from 5 µs to 5 s; an API request from
// 1 ms to 30 s; a recovery from 1 s to 30 min; a held up from 1 ms to 30 min. The
// listener calls are timed for one call in concurrent.Config.TimingSample only
// (reading the clock for each would cost more than the pool's own work per message):
// the histograms' counts are a sample, and feedkit_listener_calls_total is the count.
//
// # The workflow engine and the carousel
//
// NewWorkflow returns a workflow.Observer (set it as workflow.Config.Observer, and call
// WatchEngine for the count by state) and NewCarousel a carousel.Observer (set it as
// carousel.Config.Observer, and call WatchScheduler for the levels). Their metrics:
//
//	name                                          type       labels                                         source
//	feedkit_workflow_processes_started_total      counter    feedkit_process_type                           WorkflowProcessStarted
//	feedkit_workflow_processes_restarted_total    counter    feedkit_process_type, feedkit_state (from)     WorkflowProcessRestarted
//	feedkit_workflow_processes_ended_total        counter    feedkit_process_type, feedkit_state            WorkflowProcessEnded
//	feedkit_workflow_processes                    gauge      feedkit_state                                  Engine.CountByState, at each scrape
//	feedkit_workflow_count_failures_total         counter                                                   scrapes whose count failed
//	feedkit_workflow_tasks_polled_total           counter    feedkit_actor_type                             WorkflowTaskPolled
//	feedkit_workflow_tasks_released_total         counter    feedkit_actor_type, feedkit_result             WorkflowTaskReleased
//	feedkit_workflow_tasks_timeouts_total         counter    feedkit_timeout_kind, feedkit_actor_type       WorkflowTaskTimeout
//	feedkit_workflow_processes_timeouts_total     counter    feedkit_process_type                           WorkflowProcessTimeout
//	feedkit_workflow_repairs_total                counter    feedkit_process_type, feedkit_repair_kind      WorkflowRepaired
//	feedkit_carousel_published_total              counter    feedkit_cycle                                  CarouselPublished
//	feedkit_carousel_publish_failures_total       counter    feedkit_cycle                                  CarouselPublishFailed
//	feedkit_carousel_publish_duration_seconds     histogram  feedkit_cycle, feedkit_result                  both, "published" or "failed"
//	feedkit_carousel_iterations_total             counter    feedkit_cycle                                  CarouselIterationCompleted
//	feedkit_carousel_iteration_duration_seconds   histogram  feedkit_cycle                                  CarouselIterationCompleted
//	feedkit_carousel_failures_total               counter    feedkit_cycle, feedkit_carousel_operation      CarouselFailed
//	feedkit_carousel_fenced_total                 counter    feedkit_cycle                                  CarouselFenced
//	feedkit_carousel_iteration_current            gauge      feedkit_cycle                                  Metadata.Iteration
//	feedkit_carousel_iteration_items              gauge      feedkit_cycle                                  Metadata.Total
//	feedkit_carousel_iteration_completed          gauge      feedkit_cycle                                  Metadata.Completed
//	feedkit_carousel_iteration_errors             gauge      feedkit_cycle                                  Metadata.Errors
//	feedkit_carousel_iteration_progress_ratio     gauge      feedkit_cycle                                  Metadata.Progress()
//	feedkit_carousel_throttle_seconds             gauge      feedkit_cycle                                  Metadata.Throttle
//	feedkit_carousel_state                        gauge      feedkit_cycle, feedkit_carousel_state          1 for Metadata.States[0]
//	feedkit_carousel_unhealthy                    gauge      feedkit_cycle                                  Metadata.Has(Unhealthy)
//	feedkit_carousel_active                       gauge                                                     Scheduler.Status().Active
//
// Their labels are the program's own names, few and fixed: process and actor types
// (StartRequest.Type, TaskSpec.ActorType) and cycle names; the enums' String values
// (workflow.ProcessState, ReleaseResult, TimeoutKind, RepairKind; carousel.Op and
// State). Never a process, task or item id. The count by state is the store's, shared
// by every engine on it: watch it from one engine per store; the counters are told by
// the engine that made each change, so they sum over engines.
//
// # A group's processes
//
// NewGroup exports what a group's ingress and worker (package group) count, read from
// their Stats at each scrape: call WatchIngress and WatchWorker for what the process
// runs. The publisher's counters of an ingress start from 0 each time it becomes the
// active one, which rate() reads as a counter reset.
//
//	name                                              type     labels
//	feedkit_group_ingress_active                      gauge
//	feedkit_group_ingress_activations_total           counter
//	feedkit_group_ingress_epoch                       gauge
//	feedkit_group_ingress_connected                   gauge
//	feedkit_group_ingress_reconnects_total            counter
//	feedkit_group_ingress_published_total             counter
//	feedkit_group_ingress_confirmed_total             counter
//	feedkit_group_ingress_unconfirmed                 gauge
//	feedkit_group_ingress_batches_total               counter
//	feedkit_group_ingress_batched_events_total        counter
//	feedkit_group_ingress_republished_total           counter
//	feedkit_group_ingress_returned_total              counter
//	feedkit_group_barriers_total                      counter
//	feedkit_group_barriers_released_total             counter
//	feedkit_group_barriers_timed_out_total            counter
//	feedkit_group_barriers_cancelled_total            counter
//	feedkit_group_global_events_sent_total            counter
//	feedkit_group_worker_connected                    gauge
//	feedkit_group_worker_connects_total               counter
//	feedkit_group_worker_drops_total                  counter
//	feedkit_group_worker_errors_total                 counter
//	feedkit_group_worker_global_events_total          counter
//	feedkit_group_worker_global_events_dropped_total  counter
//	feedkit_group_shard_active                        gauge    feedkit_shard
//	feedkit_group_shard_deliveries_total              counter  feedkit_shard
//	feedkit_group_shard_redeliveries_total            counter  feedkit_shard
//	feedkit_group_shard_batches_total                 counter  feedkit_shard
//	feedkit_group_shard_events_total                  counter  feedkit_shard
//	feedkit_group_shard_processed_total               counter  feedkit_shard
//	feedkit_group_shard_abandoned_total               counter  feedkit_shard
//	feedkit_group_shard_events_in_flight              gauge    feedkit_shard
//	feedkit_group_shard_acked_total                   counter  feedkit_shard
//	feedkit_group_shard_invalid_total                 counter  feedkit_shard
//	feedkit_group_shard_fenced_total                  counter  feedkit_shard
//	feedkit_group_shard_barriers_total                counter  feedkit_shard
//	feedkit_group_shard_barriers_acked_total          counter  feedkit_shard
//	feedkit_group_shard_epoch                         gauge    feedkit_shard
//
// Alert on: no ingress active in the group (sum(feedkit_group_ingress_active) == 0 for
// longer than a fail-over); a shard with no active consumer
// (sum by (feedkit_shard) (feedkit_group_shard_active) == 0);
// feedkit_group_barriers_timed_out_total rising (a worker does not keep up, and its
// producer is recovered again); feedkit_group_ingress_returned_total above 0 (a
// topology that does not match).
//
// # Cost
//
// The methods called once per message (FeedMessageReceived, ListenerCalled, and
// CacheRead, once per name read) find their series in a map keyed by the call's labels,
// read without a lock, and allocate nothing once the labels have been seen: see
// BenchmarkObserverCalls. The other methods are called a few times a second at most.
package promfeedkit
