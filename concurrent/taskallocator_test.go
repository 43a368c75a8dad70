package concurrent

import (
	"context"
	"hash/maphash"
	"sync"

	"github.com/feedkit/feedkit/feed"
)

// TaskAllocator is the seed's scheduler, kept as the baseline the benchmarks measure
// Dispatcher against: each match is hashed onto one of Threads queues, and each queue
// has one worker. A match's order holds (it always lands on the same queue), but a match
// whose listener call stalls holds up every match that shares its queue.
type TaskAllocator struct {
	l       feed.OddsFeedListener
	tracker *TaskLifecycleTracker
	seed    maphash.Seed
	queues  []chan task
	wg      sync.WaitGroup
}

// NewTaskAllocator starts threads queues of queueSize tasks each, as the seed's config
// sized them.
func NewTaskAllocator(l feed.OddsFeedListener, tracker *TaskLifecycleTracker, threads, queueSize int) *TaskAllocator {
	a := &TaskAllocator{l: l, tracker: tracker, seed: maphash.MakeSeed(), queues: make([]chan task, threads)}
	a.wg.Add(threads)
	for i := range a.queues {
		a.queues[i] = make(chan task, queueSize)
		go a.work(a.queues[i])
	}
	return a
}

func (a *TaskAllocator) work(q chan task) {
	defer a.wg.Done()
	ctx := context.Background()
	for t := range q {
		t.ticket.Start()
		if t.msg != nil {
			_ = feed.Call(ctx, a.l, t.msg)
		} else {
			_ = feed.Deliver(ctx, a.l, &t.ev)
		}
		t.ticket.Complete()
	}
}

func (a *TaskAllocator) put(ctx context.Context, match feed.URN, rc RecoveryContext, t task) error {
	t.ticket = a.tracker.Allocate(rc)
	q := a.queues[maphash.Comparable(a.seed, match)%uint64(len(a.queues))]
	select {
	case q <- t:
		return nil
	case <-ctx.Done():
		t.ticket.Abandon()
		return ctx.Err()
	}
}

// Dispatch queues ev on its match's queue.
func (a *TaskAllocator) Dispatch(ctx context.Context, ev feed.Event) error {
	return a.put(ctx, ev.Key.Event, RecoveryContext{Producer: ev.Producer, RequestID: ev.RequestID}, task{ev: ev})
}

// Submit queues a decoded message on its event's queue.
func (a *TaskAllocator) Submit(ctx context.Context, m feed.Message) error {
	h := m.MessageHeader()
	return a.put(ctx, h.Event, RecoveryContext{Producer: h.Producer, RequestID: h.RequestID}, task{msg: m})
}

// Close delivers what is queued and waits for the workers.
func (a *TaskAllocator) Close() {
	for _, q := range a.queues {
		close(q)
	}
	a.wg.Wait()
}
