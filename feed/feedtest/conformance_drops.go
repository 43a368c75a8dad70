package feedtest

import (
	"context"
	"strconv"
	"sync"
	"testing"
)

// pacer lets a publishing goroutine publish numbered messages up to a limit the test
// moves, and tells the test how far it got.
type pacer struct {
	mu      sync.Mutex
	cond    sync.Cond
	limit   int64 // messages below it may be published
	last    int64 // the last message whose Publish returned; -1 before the first
	stopped bool  // the publisher must stop, or has stopped
}

func newPacer() *pacer {
	p := &pacer{last: -1}
	p.cond.L = &p.mu
	return p
}

// allow lets the publisher go on up to message n-1.
func (p *pacer) allow(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.limit = max(p.limit, n)
	p.cond.Broadcast()
}

// turn waits until message i may be published; false means stop.
func (p *pacer) turn(i int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i >= p.limit && !p.stopped {
		p.cond.Wait()
	}
	return !p.stopped
}

func (p *pacer) published(i int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = i
	p.cond.Broadcast()
}

func (p *pacer) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	p.cond.Broadcast()
}

// lastPublished returns the last message whose Publish has returned.
func (p *pacer) lastPublished() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last
}

// waitFor waits until message i has been published, and reports false if the
// publisher stopped first.
func (p *pacer) waitFor(i int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.last < i && !p.stopped {
		p.cond.Wait()
	}
	return p.last >= i
}

// segment checks the messages a subscription receives on one connection: they follow
// one another without a gap (nothing is lost but with a connection), the first comes
// after everything published before the connection was restored, and no later than
// the second message published after ConnectionUp was seen, which was routed to the
// new queue.
type segment struct {
	floor int64 // every message up to it was published before Restore
	upTo  int64 // the first message of the connection is at most this one
	prev  int64 // the last message received on it; -1 before the first
}

func (s *segment) receive(t *testing.T, c ReceiverCall) {
	t.Helper()
	i, err := strconv.ParseInt(string(c.Delivery.Body), 10, 64)
	if err != nil {
		t.Fatalf("unexpected %v", c)
	}
	switch {
	case s.prev < 0 && i <= s.floor:
		t.Fatalf("message %d, published before the connection was restored, arrived after the ConnectionDown of the one that lost it", i)
	case s.prev < 0 && i > s.upTo:
		t.Fatalf("message %d is the first of a connection; %d, published after ConnectionUp, was lost", i, s.upTo)
	case s.prev >= 0 && i != s.prev+1:
		t.Fatalf("message %d arrived after %d on the same connection", i, s.prev)
	}
	s.prev = i
}

// testNoOldMessageAfterDown publishes without pause while the test drops and restores
// the connection again and again, so that messages are in flight (routed, queued,
// prefetched, in the receiver's hands) at every drop. Whatever the interleaving, each
// connection delivers a gapless run of messages, and nothing published before the
// connection was restored arrives after the ConnectionDown that announced its loss: a
// session would take it for traffic of the new connection.
func testNoOldMessageAfterDown(t *testing.T, h TransportHarness) {
	const drops, every = 8, 100
	p := newProbe(t, "subscriber")
	subscribeUp(t, h, p, "#")

	pace := newPacer()
	ctx, cancel := context.WithCancel(t.Context())
	var publisher sync.WaitGroup
	t.Cleanup(func() { // a failing test stops its publisher before the subscription closes
		cancel()
		pace.stop()
		publisher.Wait()
	})
	publisher.Go(func() {
		defer pace.stop()
		for i := int64(0); pace.turn(i); i++ {
			if err := h.Publisher.Publish(ctx, suiteLiveKey, []byte(strconv.FormatInt(i, 10))); err != nil {
				if ctx.Err() == nil {
					t.Errorf("Publish of message %d: %v", i, err)
				}
				return
			}
			pace.published(i)
		}
	})
	waitFor := func(i int64) {
		t.Helper()
		if !pace.waitFor(i) {
			t.Fatalf("the publisher stopped before message %d", i)
		}
	}

	seg := segment{floor: -1, upTo: 0, prev: -1}
	for k := range int64(drops) {
		pace.allow((k + 1) * every)
		waitFor(k*every + every/2) // the drop falls mid-stream
		h.Drop()
		for c := p.next(t); c.Kind != CallReceiverDown; c = p.next(t) {
			if c.Kind != CallReceive {
				t.Fatalf("unexpected %v before the ConnectionDown of drop %d", c, k+1)
			}
			seg.receive(t, c)
		}
		// At least one message published while the connection is down: it must be lost.
		down := pace.lastPublished()
		pace.allow(down + 2)
		waitFor(down + 1)
		floor := pace.lastPublished()
		h.Restore()
		p.expectUp(t)
		seg = segment{floor: floor, upTo: pace.lastPublished() + 2, prev: -1}
	}
	n := int64(drops+1) * every
	pace.allow(n)
	waitFor(n - 1)
	pace.stop()
	publisher.Wait()

	publish(t, h, markerKey, "marker")
	for c := p.next(t); c.Delivery.RoutingKey != markerKey; c = p.next(t) {
		if c.Kind != CallReceive {
			t.Fatalf("unexpected %v after the last drop", c)
		}
		seg.receive(t, c)
	}
	if seg.prev != n-1 {
		t.Fatalf("the last connection delivered up to message %d, want all %d", seg.prev, n)
	}
}
