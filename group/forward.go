package group

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
)

// numbering gives the messages an ingress publishes in one epoch their numbers, shared
// by its sessions and its gate: (epoch, seq) names one publication.
type numbering struct {
	epoch int64
	seq   atomic.Int64
}

func (n *numbering) next() (epoch, seq int64) { return n.epoch, n.seq.Add(1) }

// forwarder is the ingress's session: each event is republished to its shard queue,
// and its task on the SDK's tracker completed when the broker has confirmed
// it, so that the SDK's deferred up and its recovery point follow what is safely in
// the shard queues; each system message is republished to every shard queue, in order
// with the events.
type forwarder struct {
	pub      *publisher
	top      Topology
	num      *numbering
	stream   *concurrent.Stream
	inFlight sync.WaitGroup // events published and not yet confirmed
}

// Dispatch publishes ev. Its ticket is abandoned when it cannot be published (the
// ingress is stopping): the SDK then neither releases an up nor moves the recovery
// point past it.
func (f *forwarder) Dispatch(ctx context.Context, ev feed.Event) error {
	k := f.stream.Allocate(concurrent.RecoveryContext{Producer: ev.Producer, RequestID: ev.RequestID})
	k.Start()
	e := Envelope{Kind: KindEvent, RoutingKey: ev.RawKey, Body: ev.Body, ReceivedAt: ev.ReceivedAt, Event: shardKey(ev)}
	e.Epoch, e.Seq = f.num.next()
	f.inFlight.Add(1)
	err := f.pub.publish(ctx, target{key: f.top.ShardQueue(f.top.ShardOf(e.Event))}, e, func() {
		k.Complete()
		f.inFlight.Done()
	})
	if err != nil {
		k.Abandon()
		f.inFlight.Done()
		return err
	}
	return nil
}

// shardKey is what picks ev's shard: its event, or, for a message whose routing key
// names none (one that does not parse), the routing key itself.
func shardKey(ev feed.Event) string {
	if ev.Err == nil && !ev.Key.Event.IsZero() {
		return ev.Key.Event.String()
	}
	return ev.RawKey
}

// HandleSystem publishes an alive or a snapshot_complete to every shard queue. The
// session calls it on its reading goroutine, between the events' Dispatch calls, and
// the publisher keeps that order on its one channel. A failure is the publisher's to
// report: the ingress is stopping.
func (f *forwarder) HandleSystem(ev feed.Event) {
	for n := range f.top.Shards {
		e := Envelope{Kind: KindSystem, RoutingKey: ev.RawKey, Body: ev.Body, ReceivedAt: ev.ReceivedAt}
		e.Epoch, e.Seq = f.num.next()
		_ = f.pub.publish(context.Background(), target{key: f.top.ShardQueue(n)}, e, nil)
	}
}

// Close waits until the broker has confirmed every event Dispatch took, or ctx ends:
// the SDK saves its recovery point once its sessions are closed, and that point should
// cover them. The publisher, shared by the sessions, is closed by the ingress after.
func (f *forwarder) Close(ctx context.Context) error {
	confirmed := make(chan struct{})
	go func() {
		f.inFlight.Wait()
		close(confirmed)
	}()
	select {
	case <-confirmed:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("group: closing a session with events unconfirmed: %w", ctx.Err())
	}
}
