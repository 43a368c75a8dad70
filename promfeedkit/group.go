package promfeedkit

import (
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/feedkit/feedkit/group"
)

// labelShard is the shard queue's number, from 0 to Topology.Shards-1.
const labelShard = "feedkit_shard"

// groupMetric is one metric read from an ingress's or a worker's Stats at each scrape.
type groupMetric[S any] struct {
	desc  *prometheus.Desc
	typ   prometheus.ValueType
	value func(S) float64
}

func groupCounter[S any](name, help string, value func(S) float64, labels ...string) groupMetric[S] {
	return groupMetric[S]{prometheus.NewDesc(name, help, labels, nil), prometheus.CounterValue, value}
}

func groupGauge[S any](name, help string, value func(S) float64, labels ...string) groupMetric[S] {
	return groupMetric[S]{prometheus.NewDesc(name, help, labels, nil), prometheus.GaugeValue, value}
}

// ingressMetrics are read from Ingress.Stats. The publisher's counters are those of
// the current activation: they start from 0 when an ingress becomes active, which
// rate() reads as a counter reset.
var ingressMetrics = []groupMetric[group.IngressStats]{
	groupGauge("feedkit_group_ingress_active", "1 while this ingress is the group's active one.",
		func(s group.IngressStats) float64 { return one(s.Active) }),
	groupCounter("feedkit_group_ingress_activations_total", "Times this ingress became the active one.",
		func(s group.IngressStats) float64 { return float64(s.Activations) }),
	groupGauge("feedkit_group_ingress_epoch", "The lease generation of the current or last activation.",
		func(s group.IngressStats) float64 { return float64(s.Epoch) }),
	groupGauge("feedkit_group_ingress_connected", "1 while the ingress has a link to the group's broker.",
		func(s group.IngressStats) float64 { return one(s.Connected) }),
	groupCounter("feedkit_group_ingress_reconnects_total", "Links to the group's broker made after the first, this activation.",
		func(s group.IngressStats) float64 { return float64(s.Reconnects) }),
	groupCounter("feedkit_group_ingress_published_total", "Messages the ingress published to the group, this activation.",
		func(s group.IngressStats) float64 { return float64(s.Published) }),
	groupCounter("feedkit_group_ingress_confirmed_total", "Published messages the broker confirmed, this activation.",
		func(s group.IngressStats) float64 { return float64(s.Confirmed) }),
	groupGauge("feedkit_group_ingress_unconfirmed", "Published messages awaiting the broker's confirmation.",
		func(s group.IngressStats) float64 { return float64(s.Unconfirmed) }),
	groupCounter("feedkit_group_ingress_batches_total", "AMQP messages that carried several events, this activation.",
		func(s group.IngressStats) float64 { return float64(s.Batches) }),
	groupCounter("feedkit_group_ingress_batched_events_total", "Events carried in batches, this activation.",
		func(s group.IngressStats) float64 { return float64(s.Batched) }),
	groupCounter("feedkit_group_ingress_republished_total", "Messages written again after a lost link or a nack: each may be queued twice.",
		func(s group.IngressStats) float64 { return float64(s.Republished) }),
	groupCounter("feedkit_group_ingress_returned_total", "Messages no queue took: the topology is wrong.",
		func(s group.IngressStats) float64 { return float64(s.Returned) }),
	groupCounter("feedkit_group_barriers_total", "Ups held until every shard processed their recovery.",
		func(s group.IngressStats) float64 { return float64(s.Barriers.Barriers) }),
	groupCounter("feedkit_group_barriers_released_total", "Ups sent to the group once every shard acknowledged.",
		func(s group.IngressStats) float64 { return float64(s.Barriers.Released) }),
	groupCounter("feedkit_group_barriers_timed_out_total", "Ups not acknowledged by every shard in time: the producer was recovered again.",
		func(s group.IngressStats) float64 { return float64(s.Barriers.TimedOut) }),
	groupCounter("feedkit_group_barriers_cancelled_total", "Held ups made moot by a later status of their producer.",
		func(s group.IngressStats) float64 { return float64(s.Barriers.Cancelled) }),
	groupCounter("feedkit_group_global_events_sent_total", "Global events the ingress sent to the workers.",
		func(s group.IngressStats) float64 { return float64(s.Barriers.Globals) }),
}

// workerMetrics are read from Worker.Stats.
var workerMetrics = []groupMetric[group.WorkerStats]{
	groupGauge("feedkit_group_worker_connected", "1 while the worker consumes its shard queues.",
		func(s group.WorkerStats) float64 { return one(s.Connected) }),
	groupCounter("feedkit_group_worker_connects_total", "Links the worker made to the group's broker.",
		func(s group.WorkerStats) float64 { return float64(s.Connects) }),
	groupCounter("feedkit_group_worker_drops_total", "Links the worker lost.",
		func(s group.WorkerStats) float64 { return float64(s.Drops) }),
	groupCounter("feedkit_group_worker_errors_total", "Failures the worker recovered from, reported to its OnError.",
		func(s group.WorkerStats) float64 { return float64(s.Errors) }),
	groupCounter("feedkit_group_worker_global_events_total", "Global events passed to the application's listener.",
		func(s group.WorkerStats) float64 { return float64(s.Globals) }),
	groupCounter("feedkit_group_worker_global_events_dropped_total", "Messages of the control exchange dropped: not a global event, or it did not decode.",
		func(s group.WorkerStats) float64 { return float64(s.BadGlobals) }),
}

// shardMetrics are read from each of WorkerStats.Shards, labelled by shard.
var shardMetrics = []groupMetric[group.ShardStats]{
	groupGauge("feedkit_group_shard_active", "1 while the worker is the shard queue's active consumer (from its first delivery).",
		func(s group.ShardStats) float64 { return one(s.Active) }, labelShard),
	groupCounter("feedkit_group_shard_deliveries_total", "Deliveries taken from the shard queue, of every kind.",
		func(s group.ShardStats) float64 { return float64(s.Delivered) }, labelShard),
	groupCounter("feedkit_group_shard_redeliveries_total", "Deliveries the broker had delivered before: after a fail-over.",
		func(s group.ShardStats) float64 { return float64(s.Redelivered) }, labelShard),
	groupCounter("feedkit_group_shard_batches_total", "Deliveries that were batches of events.",
		func(s group.ShardStats) float64 { return float64(s.Batches) }, labelShard),
	groupCounter("feedkit_group_shard_events_total", "Events dispatched to the listener.",
		func(s group.ShardStats) float64 { return float64(s.Events) }, labelShard),
	groupCounter("feedkit_group_shard_processed_total", "Events whose listener call ended, however it ended.",
		func(s group.ShardStats) float64 { return float64(s.Processed) }, labelShard),
	groupCounter("feedkit_group_shard_abandoned_total", "Events left unprocessed to the broker when a stop ran out of time.",
		func(s group.ShardStats) float64 { return float64(s.Abandoned) }, labelShard),
	groupGauge("feedkit_group_shard_events_in_flight", "Events dispatched whose listener call has not ended.",
		func(s group.ShardStats) float64 {
			return float64(s.Events) - float64(s.Processed) - float64(s.Abandoned)
		}, labelShard),
	groupCounter("feedkit_group_shard_acked_total", "Deliveries acknowledged to the broker.",
		func(s group.ShardStats) float64 { return float64(s.Acked) }, labelShard),
	groupCounter("feedkit_group_shard_invalid_total", "Deliveries that were not the group's messages, dropped.",
		func(s group.ShardStats) float64 { return float64(s.Invalid) }, labelShard),
	groupCounter("feedkit_group_shard_fenced_total", "Messages of an earlier ingress found after a later one's, dropped.",
		func(s group.ShardStats) float64 { return float64(s.Fenced) }, labelShard),
	groupCounter("feedkit_group_shard_barriers_total", "Barriers taken from the shard queue.",
		func(s group.ShardStats) float64 { return float64(s.Barriers) }, labelShard),
	groupCounter("feedkit_group_shard_barriers_acked_total", "Barriers acknowledged to the ingress.",
		func(s group.ShardStats) float64 { return float64(s.BarriersAcked) }, labelShard),
	groupGauge("feedkit_group_shard_epoch", "The latest ingress lease generation seen in the shard queue.",
		func(s group.ShardStats) float64 { return float64(s.Epoch) }, labelShard),
}

// GroupMetrics exports the counters of a group's ingress and worker (package group)
// that run in this process, read from their Stats at each scrape. Register one per
// process with NewGroup, then call WatchIngress and WatchWorker for what the process
// runs.
type GroupMetrics struct {
	ingress atomic.Pointer[group.Ingress]
	worker  atomic.Pointer[group.Worker]
}

// NewGroup makes a group's metrics and registers them with reg. reg may not be nil.
func NewGroup(reg prometheus.Registerer) (*GroupMetrics, error) {
	if reg == nil {
		return nil, errors.New("promfeedkit: NewGroup: the Registerer is nil (pass a registry: prometheus.NewRegistry(), or prometheus.DefaultRegisterer deliberately)")
	}
	m := &GroupMetrics{}
	if err := reg.Register(groupCollector{m}); err != nil {
		return nil, fmt.Errorf("promfeedkit: NewGroup: %w", err)
	}
	return m, nil
}

// WatchIngress makes each scrape read in.Stats(). A GroupMetrics watches one ingress.
func (m *GroupMetrics) WatchIngress(in *group.Ingress) error {
	if in == nil {
		return errors.New("promfeedkit: WatchIngress: the Ingress is nil")
	}
	if !m.ingress.CompareAndSwap(nil, in) {
		return errors.New("promfeedkit: WatchIngress: this GroupMetrics already watches an ingress")
	}
	return nil
}

// WatchWorker makes each scrape read w.Stats(). A GroupMetrics watches one worker; a
// worker may consume several shards.
func (m *GroupMetrics) WatchWorker(w *group.Worker) error {
	if w == nil {
		return errors.New("promfeedkit: WatchWorker: the Worker is nil")
	}
	if !m.worker.CompareAndSwap(nil, w) {
		return errors.New("promfeedkit: WatchWorker: this GroupMetrics already watches a worker")
	}
	return nil
}

// groupCollector is what NewGroup registers.
type groupCollector struct{ m *GroupMetrics }

// Describe implements prometheus.Collector.
func (c groupCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, g := range ingressMetrics {
		ch <- g.desc
	}
	for _, g := range workerMetrics {
		ch <- g.desc
	}
	for _, g := range shardMetrics {
		ch <- g.desc
	}
}

// Collect implements prometheus.Collector.
func (c groupCollector) Collect(ch chan<- prometheus.Metric) {
	if in := c.m.ingress.Load(); in != nil {
		collectGroup(ch, ingressMetrics, in.Stats())
	}
	if w := c.m.worker.Load(); w != nil {
		st := w.Stats()
		collectGroup(ch, workerMetrics, st)
		for _, s := range st.Shards {
			collectGroup(ch, shardMetrics, s, strconv.Itoa(s.Shard))
		}
	}
}

func collectGroup[S any](ch chan<- prometheus.Metric, metrics []groupMetric[S], s S, labels ...string) {
	for _, g := range metrics {
		ch <- prometheus.MustNewConstMetric(g.desc, g.typ, g.value(s), labels...)
	}
}
