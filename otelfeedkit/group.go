package otelfeedkit

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/feedkit/feedkit/group"
)

// keyShard is the shard queue's number, from 0 to Topology.Shards-1.
const keyShard = attribute.Key("feedkit.shard")

// groupLevel is one instrument read from an ingress's or a worker's Stats when the
// metrics are collected: a counter of the Stats' cumulative counts, or a gauge.
type groupLevel[S any] struct {
	name, unit, desc string
	counter          bool
	value            func(S) int64
	inst             metric.Int64Observable
}

func count[S any](name, unit, desc string, value func(S) int64) *groupLevel[S] {
	return &groupLevel[S]{name: name, unit: unit, desc: desc, counter: true, value: value}
}

func level[S any](name, unit, desc string, value func(S) int64) *groupLevel[S] {
	return &groupLevel[S]{name: name, unit: unit, desc: desc, value: value}
}

func (l *groupLevel[S]) make(mk *maker) {
	var err error
	if l.counter {
		l.inst, err = mk.meter.Int64ObservableCounter(l.name, metric.WithUnit(l.unit), metric.WithDescription(l.desc))
	} else {
		l.inst, err = mk.meter.Int64ObservableGauge(l.name, metric.WithUnit(l.unit), metric.WithDescription(l.desc))
	}
	mk.check(err)
}

func u64(v uint64) int64 { return int64(v) }

// GroupMetrics reports the counters of a group's ingress and worker (package group) that
// run in this process, read from their Stats when the metrics are collected. Make it
// with NewGroup; call WatchIngress and WatchWorker for what the process runs.
type GroupMetrics struct {
	meter                 metric.Meter
	ingress               []*groupLevel[group.IngressStats]
	worker                []*groupLevel[group.WorkerStats]
	shard                 []*groupLevel[group.ShardStats]
	ingressGuard, wkGuard watchGuard
}

// NewGroup makes the group instruments of the package's table. Of the options only
// WithMeterProvider matters.
func NewGroup(opts ...Option) (*GroupMetrics, error) {
	type is = group.IngressStats
	type ws = group.WorkerStats
	type ss = group.ShardStats
	g := &GroupMetrics{
		ingress: []*groupLevel[is]{
			level("feedkit.group.ingress.active", "{ingress}", "1 while this ingress is the group's active one, else 0.",
				func(s is) int64 { return flag(s.Active) }),
			count("feedkit.group.ingress.activations", "{activation}", "Times this ingress became the active one.",
				func(s is) int64 { return u64(s.Activations) }),
			level("feedkit.group.ingress.epoch", "{epoch}", "The lease generation of the current or last activation.",
				func(s is) int64 { return s.Epoch }),
			level("feedkit.group.ingress.connected", "{connection}", "1 while the ingress has a link to the group's broker, else 0.",
				func(s is) int64 { return flag(s.Connected) }),
			count("feedkit.group.ingress.reconnects", "{connection}", "Links to the group's broker made after the first, this activation.",
				func(s is) int64 { return u64(s.Reconnects) }),
			count("feedkit.group.ingress.published", "{message}", "Messages the ingress published to the group, this activation.",
				func(s is) int64 { return u64(s.Published) }),
			count("feedkit.group.ingress.confirmed", "{message}", "Published messages the broker confirmed, this activation.",
				func(s is) int64 { return u64(s.Confirmed) }),
			level("feedkit.group.ingress.unconfirmed", "{message}", "Published messages awaiting the broker's confirmation.",
				func(s is) int64 { return int64(s.Unconfirmed) }),
			count("feedkit.group.ingress.batches", "{batch}", "AMQP messages that carried several events, this activation.",
				func(s is) int64 { return u64(s.Batches) }),
			count("feedkit.group.ingress.batched_events", "{event}", "Events carried in batches, this activation.",
				func(s is) int64 { return u64(s.Batched) }),
			count("feedkit.group.ingress.republished", "{message}", "Messages written again after a lost link or a nack: each may be queued twice.",
				func(s is) int64 { return u64(s.Republished) }),
			count("feedkit.group.ingress.returned", "{message}", "Messages no queue took: the topology is wrong.",
				func(s is) int64 { return u64(s.Returned) }),
			count("feedkit.group.barriers", "{barrier}", "Ups held until every shard processed their recovery.",
				func(s is) int64 { return u64(s.Barriers.Barriers) }),
			count("feedkit.group.barriers.released", "{barrier}", "Ups sent to the group once every shard acknowledged.",
				func(s is) int64 { return u64(s.Barriers.Released) }),
			count("feedkit.group.barriers.timed_out", "{barrier}", "Ups not acknowledged by every shard in time: the producer was recovered again.",
				func(s is) int64 { return u64(s.Barriers.TimedOut) }),
			count("feedkit.group.barriers.cancelled", "{barrier}", "Held ups made moot by a later status of their producer.",
				func(s is) int64 { return u64(s.Barriers.Cancelled) }),
			count("feedkit.group.global_events.sent", "{event}", "Global events the ingress sent to the workers.",
				func(s is) int64 { return u64(s.Barriers.Globals) }),
		},
		worker: []*groupLevel[ws]{
			level("feedkit.group.worker.connected", "{connection}", "1 while the worker consumes its shard queues, else 0.",
				func(s ws) int64 { return flag(s.Connected) }),
			count("feedkit.group.worker.connects", "{connection}", "Links the worker made to the group's broker.",
				func(s ws) int64 { return u64(s.Connects) }),
			count("feedkit.group.worker.drops", "{connection}", "Links the worker lost.",
				func(s ws) int64 { return u64(s.Drops) }),
			count("feedkit.group.worker.errors", "{error}", "Failures the worker recovered from, reported to its OnError.",
				func(s ws) int64 { return u64(s.Errors) }),
			count("feedkit.group.worker.global_events", "{event}", "Global events passed to the application's listener.",
				func(s ws) int64 { return u64(s.Globals) }),
			count("feedkit.group.worker.global_events.dropped", "{message}", "Messages of the control exchange dropped: not a global event, or it did not decode.",
				func(s ws) int64 { return u64(s.BadGlobals) }),
		},
		shard: []*groupLevel[ss]{
			level("feedkit.group.shard.active", "{consumer}", "1 while the worker is the shard queue's active consumer (from its first delivery), else 0.",
				func(s ss) int64 { return flag(s.Active) }),
			count("feedkit.group.shard.deliveries", "{delivery}", "Deliveries taken from the shard queue, of every kind.",
				func(s ss) int64 { return u64(s.Delivered) }),
			count("feedkit.group.shard.redeliveries", "{delivery}", "Deliveries the broker had delivered before: after a fail-over.",
				func(s ss) int64 { return u64(s.Redelivered) }),
			count("feedkit.group.shard.batches", "{batch}", "Deliveries that were batches of events.",
				func(s ss) int64 { return u64(s.Batches) }),
			count("feedkit.group.shard.events", "{event}", "Events dispatched to the listener.",
				func(s ss) int64 { return u64(s.Events) }),
			count("feedkit.group.shard.processed", "{event}", "Events whose listener call ended, however it ended.",
				func(s ss) int64 { return u64(s.Processed) }),
			count("feedkit.group.shard.abandoned", "{event}", "Events left unprocessed to the broker when a stop ran out of time.",
				func(s ss) int64 { return u64(s.Abandoned) }),
			level("feedkit.group.shard.events_in_flight", "{event}", "Events dispatched whose listener call has not ended.",
				func(s ss) int64 { return u64(s.Events) - u64(s.Processed) - u64(s.Abandoned) }),
			count("feedkit.group.shard.acked", "{delivery}", "Deliveries acknowledged to the broker.",
				func(s ss) int64 { return u64(s.Acked) }),
			count("feedkit.group.shard.invalid", "{delivery}", "Deliveries that were not the group's messages, dropped.",
				func(s ss) int64 { return u64(s.Invalid) }),
			count("feedkit.group.shard.fenced", "{message}", "Messages of an earlier ingress found after a later one's, dropped.",
				func(s ss) int64 { return u64(s.Fenced) }),
			count("feedkit.group.shard.barriers", "{barrier}", "Barriers taken from the shard queue.",
				func(s ss) int64 { return u64(s.Barriers) }),
			count("feedkit.group.shard.barriers.acked", "{barrier}", "Barriers acknowledged to the ingress.",
				func(s ss) int64 { return u64(s.BarriersAcked) }),
			level("feedkit.group.shard.epoch", "{epoch}", "The latest ingress lease generation seen in the shard queue.",
				func(s ss) int64 { return s.Epoch }),
		},
	}
	mk := &maker{meter: meterOf(opts)}
	g.meter = mk.meter
	for _, l := range g.ingress {
		l.make(mk)
	}
	for _, l := range g.worker {
		l.make(mk)
	}
	for _, l := range g.shard {
		l.make(mk)
	}
	if err := mk.err(); err != nil {
		return nil, fmt.Errorf("otelfeedkit: NewGroup: %w", err)
	}
	return g, nil
}

// WatchIngress reports in.Stats() at each collection. A GroupMetrics watches one
// ingress: a second WatchIngress is an error until the first's registration is
// unregistered.
func (g *GroupMetrics) WatchIngress(in *group.Ingress) (metric.Registration, error) {
	if in == nil {
		return nil, errors.New("otelfeedkit: WatchIngress: the Ingress is nil")
	}
	observe := func(_ context.Context, o metric.Observer) error {
		observeGroup(o, g.ingress, in.Stats())
		return nil
	}
	return g.ingressGuard.register(g.meter, "WatchIngress", "an ingress is watched already (unregister it to watch another)",
		observe, observables(g.ingress)...)
}

// WatchWorker reports w.Stats() at each collection, each shard's with feedkit.shard. A
// GroupMetrics watches one worker (which may consume several shards).
func (g *GroupMetrics) WatchWorker(w *group.Worker) (metric.Registration, error) {
	if w == nil {
		return nil, errors.New("otelfeedkit: WatchWorker: the Worker is nil")
	}
	observe := func(_ context.Context, o metric.Observer) error {
		st := w.Stats()
		observeGroup(o, g.worker, st)
		for _, s := range st.Shards {
			observeGroup(o, g.shard, s, metric.WithAttributes(keyShard.Int(s.Shard)))
		}
		return nil
	}
	return g.wkGuard.register(g.meter, "WatchWorker", "a worker is watched already (unregister it to watch another)",
		observe, append(observables(g.worker), observables(g.shard)...)...)
}

func observeGroup[S any](o metric.Observer, levels []*groupLevel[S], s S, opts ...metric.ObserveOption) {
	for _, l := range levels {
		o.ObserveInt64(l.inst, l.value(s), opts...)
	}
}

func observables[S any](levels []*groupLevel[S]) []metric.Observable {
	out := make([]metric.Observable, len(levels))
	for i, l := range levels {
		out[i] = l.inst
	}
	return out
}
