// Package group shares the feed among a group of processes on RabbitMQ: for listeners
// that need more than one process (5,000 messages a second at 1 ms each is five
// cores), and so that no one process is the one point of failure.
//
// One process, the ingress (NewIngress), reads the feed as the single-process SDK
// does: it follows the producers, requests the recoveries and saves the recovery
// point. It republishes every message as it came into the operator's own RabbitMQ,
// over K shard queues (Topology): each match's events always to the same shard, the
// alives and snapshot_completes to every shard. Workers (NewWorker) consume the shards
// and deliver to the same listeners as the SDK, each match's messages in order,
// matches in parallel: a host moves from one process to a group by configuration, not
// by rewriting its listeners.
//
// A producer's up reaches the workers' global listeners once every shard has processed
// the recovery behind it; a down reaches them at once. An up still waiting after
// IngressConfig.BarrierTimeout takes the producer down (feed.ProcessingStalled) and it
// is recovered again.
//
// For fail-over, run two ingresses with the same Recovery.Store in PostgreSQL
// (recovery/pgstore) and a lease as their Toggle (carousel/pgstore.Lease, Failover
// set): a standby takes over when the active one stops or dies, and resumes from the
// saved recovery point, which the lease's generation fences (recovery.FencedStore): an
// ingress that lost the lease cannot save over it. Run two workers per shard: the
// broker switches a shard to the standby when the active worker's connection ends.
// Across either, a listener may get a message twice (a worker's unacknowledged
// messages, a replay from the saved point): listeners must be idempotent, as for any
// recovery.
//
// The ingress picks each event's shard itself (Topology.ShardOf) and, when the feed is
// busy, packs a shard's events into one AMQP message: the broker's cost is per message,
// so batches let one broker take a busy feed. No broker plugin is needed.
//
// Ingress.Stats and Worker.Stats count what each did; promfeedkit.NewGroup and
// otelfeedkit.NewGroup export them for on-call.
//
// examples/group runs the feed, ingresses and workers as separate processes.
package group
