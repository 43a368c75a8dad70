package feedtest

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// hangGuard bounds every wait of the transport suite in real time: a guard against a
// hang that fails only on a real one, however slow and busy the machine.
const hangGuard = time.Minute

// probe is the feed.Receiver of the suite: a ReceiverRecorder, named in the failures,
// that also catches what a test cannot see by reading: calls that overlap, and calls after
// the subscription's Close returned.
type probe struct {
	*ReceiverRecorder
	name string

	inCall     atomic.Int32
	overlapped atomic.Bool
	closed     atomic.Bool  // the subscription's Close has returned
	late       atomic.Int32 // calls after that
}

var _ feed.Receiver = (*probe)(nil)

// newProbe returns a probe whose breaches fail t when t ends.
func newProbe(t *testing.T, name string) *probe {
	t.Helper()
	p := &probe{ReceiverRecorder: NewReceiverRecorder(), name: name}
	t.Cleanup(func() {
		p.Release()
		if p.overlapped.Load() {
			t.Errorf("%s: the transport called the receiver from two goroutines at once", p.name)
		}
		if n := p.late.Load(); n > 0 {
			t.Errorf("%s: the transport called the receiver %d times after the subscription's Close returned", p.name, n)
		}
	})
	return p
}

func (p *probe) enter() {
	if p.inCall.Add(1) != 1 {
		p.overlapped.Store(true)
	}
	if p.closed.Load() {
		p.late.Add(1)
	}
}

func (p *probe) exit() { p.inCall.Add(-1) }

// Receive records d and, while the probe is held, waits to be released.
func (p *probe) Receive(d feed.Delivery) {
	p.enter()
	defer p.exit()
	p.ReceiverRecorder.Receive(d)
}

// ConnectionDown records the loss.
func (p *probe) ConnectionDown(err error) {
	p.enter()
	defer p.exit()
	p.ReceiverRecorder.ConnectionDown(err)
}

// ConnectionUp records the connection.
func (p *probe) ConnectionUp() {
	p.enter()
	defer p.exit()
	p.ReceiverRecorder.ConnectionUp()
}

// Error records the error.
func (p *probe) Error(err error) {
	p.enter()
	defer p.exit()
	p.ReceiverRecorder.Error(err)
}

// closedNow records that the subscription's Close has returned: from here on, any call
// is a breach.
func (p *probe) closedNow() { p.closed.Store(true) }

// next returns the next call, waiting for it.
func (p *probe) next(t *testing.T) ReceiverCall {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	defer cancel()
	c, err := p.Next(ctx)
	if err != nil {
		t.Fatalf("%s: %v", p.name, err)
	}
	return c
}

// expect fails t unless the next call is of kind k.
func (p *probe) expect(t *testing.T, k ReceiverCallKind) ReceiverCall {
	t.Helper()
	c := p.next(t)
	if c.Kind != k {
		t.Fatalf("%s: got %v, want a call of %v", p.name, c, k)
	}
	return c
}

// expectUp fails t unless the next call is ConnectionUp.
func (p *probe) expectUp(t *testing.T) { t.Helper(); p.expect(t, CallReceiverUp) }

// expectDown fails t unless the next call is ConnectionDown with a cause.
func (p *probe) expectDown(t *testing.T) {
	t.Helper()
	if c := p.expect(t, CallReceiverDown); c.Err == nil {
		t.Fatalf("%s: ConnectionDown without a cause", p.name)
	}
}

// expectMessage fails t unless the next call is the Receive of body with key.
func (p *probe) expectMessage(t *testing.T, key, body string) feed.Delivery {
	t.Helper()
	c := p.expect(t, CallReceive)
	if c.Delivery.RoutingKey != key || string(c.Delivery.Body) != body {
		t.Fatalf("%s: got %v, want Receive(%s, %q)", p.name, c, key, body)
	}
	return c.Delivery
}

// noCallsYet fails t if a call is waiting to be read. It proves something only where
// no call can be on its way: after a later message was read (each subscription keeps
// publishing order), or after Close returned.
func (p *probe) noCallsYet(t *testing.T) {
	t.Helper()
	if u := p.Unread(); len(u) > 0 {
		t.Fatalf("%s: unexpected %v", p.name, u[0])
	}
}
