package group

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/feed"
)

// gate is the ingress SDK's global events listener. The SDK tells it of a producer's up
// once the broker has confirmed every message of the recovery behind it; the gate then
// sends a barrier through every shard queue and tells the group of the up only when
// every shard has acknowledged it: when every worker has processed the recovery. A down
// and the other global events go to the group at once.
type gate struct {
	pub    *publisher
	top    Topology
	num    *numbering
	next   feed.GlobalEventsListener // the ingress's own listener, told what the group is told; may be nil
	bound  time.Duration             // how long an up waits for the acknowledgements
	clock  clock.Clock
	report func(error)
	// recover takes a producer whose barrier was not acknowledged in time down and
	// recovers it again: SDK.RecoverProducer.
	recover func(producer int) error

	// statusMu keeps the statuses the group is told in the order they were decided:
	// each is decided and sent under it, so a status sent again (tellStatuses) or an up
	// released (ack) cannot overtake a later one on its way to the publisher.
	statusMu sync.Mutex

	mu      sync.Mutex
	waiting map[int]*barrierWait        // by producer: the up its barrier holds
	told    map[int]feed.ProducerStatus // by producer: the last status the group was told
	n       int                         // barriers sent, for their ids
	stats   BarrierStats
}

// barrierWait is an up held until every shard acknowledged its barrier.
type barrierWait struct {
	id     string
	status feed.ProducerStatus
	acked  map[int]bool // by shard
	timer  clock.Timer
}

// BarrierStats counts what an ingress did with the producers' ups (held for a barrier
// through every shard) and the global events it sent to the group.
type BarrierStats struct {
	Barriers  uint64 `json:"barriers"`  // ups held for a barrier
	Released  uint64 `json:"released"`  // ups sent to the group after every shard acknowledged
	TimedOut  uint64 `json:"timedOut"`  // barriers not acknowledged in time: the producer was recovered again
	Cancelled uint64 `json:"cancelled"` // barriers made moot by a later status of their producer
	Acks      uint64 `json:"acks"`      // acknowledgements counted
	Stale     uint64 `json:"stale"`     // acknowledgements of another epoch, or of no barrier waiting
	Globals   uint64 `json:"globals"`   // global events sent to the group
}

// OnProducerStatusChange holds an up for its barrier and sends anything else at once.
// A new status of a producer makes the barrier it may be waiting on moot.
func (g *gate) OnProducerStatusChange(ctx context.Context, s feed.ProducerStatus) {
	g.statusMu.Lock()
	defer g.statusMu.Unlock()
	g.mu.Lock()
	if w := g.waiting[s.Producer]; w != nil {
		w.timer.Stop()
		delete(g.waiting, s.Producer)
		g.stats.Cancelled++
	}
	if s.Down || !s.Reason.IsUp() {
		g.told[s.Producer] = s
		g.mu.Unlock()
		g.send(ctx, globalEvent{Kind: globalProducerStatus, Status: s})
		if g.next != nil {
			g.next.OnProducerStatusChange(ctx, s)
		}
		return
	}
	g.n++
	w := &barrierWait{id: fmt.Sprintf("%d-%d-%d", g.num.epoch, s.Producer, g.n), status: s, acked: map[int]bool{}}
	g.waiting[s.Producer] = w
	g.stats.Barriers++
	w.timer = g.clock.AfterFunc(g.bound, func() { g.expire(s.Producer, w) })
	g.mu.Unlock()

	for n := range g.top.Shards {
		e := Envelope{Kind: KindBarrier, Barrier: w.id, Producer: s.Producer, Shard: n, ReplyTo: g.top.AcksQueue()}
		e.Epoch, e.Seq = g.num.next()
		if err := g.pub.publish(ctx, target{key: g.top.ShardQueue(n)}, e, nil); err != nil {
			g.report(fmt.Errorf("group: barrier %s to shard %d: %w", w.id, n, err))
			return // the ingress is stopping: the up goes with it
		}
	}
}

// ack counts a shard's acknowledgement of a barrier, and sends the up it held once
// every shard has acknowledged it.
func (g *gate) ack(ctx context.Context, e Envelope) {
	g.statusMu.Lock()
	defer g.statusMu.Unlock()
	g.mu.Lock()
	w := g.waiting[e.Producer]
	if e.Epoch != g.num.epoch || w == nil || w.id != e.Barrier || e.Shard < 0 || e.Shard >= g.top.Shards {
		g.stats.Stale++
		g.mu.Unlock()
		return
	}
	g.stats.Acks++
	w.acked[e.Shard] = true
	if len(w.acked) < g.top.Shards {
		g.mu.Unlock()
		return
	}
	w.timer.Stop()
	delete(g.waiting, e.Producer)
	g.stats.Released++
	g.told[e.Producer] = w.status
	g.mu.Unlock()
	g.send(ctx, globalEvent{Kind: globalProducerStatus, Status: w.status})
	if g.next != nil {
		g.next.OnProducerStatusChange(ctx, w.status)
	}
}

// expire gives up on w: a worker did not process the recovery in time. The producer is
// taken down and recovered again, as one process does when its listener falls behind;
// the down comes back through OnProducerStatusChange.
func (g *gate) expire(producer int, w *barrierWait) {
	g.mu.Lock()
	if g.waiting[producer] != w {
		g.mu.Unlock()
		return
	}
	delete(g.waiting, producer)
	g.stats.TimedOut++
	g.mu.Unlock()
	if err := g.recover(producer); err != nil {
		g.report(fmt.Errorf("group: barrier %s not acknowledged by every shard within %v; recovering producer %d again: %w",
			w.id, g.bound, producer, err))
	}
}

// OnRecoveryInitiated tells the group.
func (g *gate) OnRecoveryInitiated(ctx context.Context, r feed.RecoveryInitiated) {
	g.send(ctx, globalEvent{Kind: globalRecoveryInitiated, Recovery: r})
	if g.next != nil {
		g.next.OnRecoveryInitiated(ctx, r)
	}
}

// OnEventRecoveryCompleted tells the group. Unlike a producer's up, it is not held
// for a barrier: an event's replay is at most a few messages, in one shard.
func (g *gate) OnEventRecoveryCompleted(ctx context.Context, r feed.EventRecoveryCompleted) {
	g.send(ctx, globalEvent{Kind: globalEventRecoveryCompleted, Completed: r})
	if g.next != nil {
		g.next.OnEventRecoveryCompleted(ctx, r)
	}
}

// OnConnectionDown tells the group that the ingress lost its feed connection.
func (g *gate) OnConnectionDown(ctx context.Context, s feed.SessionRef, err error) {
	g.send(ctx, globalEvent{Kind: globalConnectionDown, Session: s, Err: err})
	if g.next != nil {
		g.next.OnConnectionDown(ctx, s, err)
	}
}

// OnConnectionUp tells the group that the ingress has its feed connection again.
func (g *gate) OnConnectionUp(ctx context.Context, s feed.SessionRef) {
	g.send(ctx, globalEvent{Kind: globalConnectionUp, Session: s})
	if g.next != nil {
		g.next.OnConnectionUp(ctx, s)
	}
}

// send publishes ev to the control exchange, which every worker reads.
func (g *gate) send(ctx context.Context, ev globalEvent) {
	body, err := encodeGlobal(ev)
	if err != nil {
		g.report(fmt.Errorf("group: encoding a %s event: %w", ev.Kind, err))
		return
	}
	e := Envelope{Kind: KindGlobal, Body: body}
	e.Epoch, e.Seq = g.num.next()
	// Only the workers connected now hear it: one that connects later starts from
	// the statuses the next changes tell.
	if err := g.pub.publish(ctx, target{exchange: g.top.ControlExchange(), mayReachNone: true}, e, nil); err != nil {
		g.report(fmt.Errorf("group: sending a %s event: %w", ev.Kind, err))
		return
	}
	g.mu.Lock()
	g.stats.Globals++
	g.mu.Unlock()
}

// tellStatuses sends every producer's last status to the group every interval until
// ctx ends, so that a worker that connected after a change learns it (each worker
// passes on only what is news to it).
func (g *gate) tellStatuses(ctx context.Context, interval time.Duration) {
	t := g.clock.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		g.statusMu.Lock()
		g.mu.Lock()
		statuses := make([]feed.ProducerStatus, 0, len(g.told))
		for _, s := range g.told {
			statuses = append(statuses, s)
		}
		g.mu.Unlock()
		if len(statuses) > 0 {
			slices.SortFunc(statuses, func(a, b feed.ProducerStatus) int { return a.Producer - b.Producer })
			g.send(ctx, globalEvent{Kind: globalStatuses, Statuses: statuses})
		}
		g.statusMu.Unlock()
	}
}

// snapshot returns the gate's counters.
func (g *gate) snapshot() BarrierStats {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stats
}
