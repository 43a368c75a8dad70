package feedtest

import (
	"bytes"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// hangGuard bounds every wait of the transport suite in real time: a guard against a
// hang that fails only on a real one, however slow and busy the machine.
const hangGuard = time.Minute

// callKind says which Receiver method a transport called.
type callKind int

const (
	callReceive callKind = iota
	callUp
	callDown
)

func (k callKind) String() string {
	return [...]string{"Receive", "ConnectionUp", "ConnectionDown"}[k]
}

// call is one call a transport made to a Receiver.
type call struct {
	kind callKind
	d    feed.Delivery // for Receive
	err  error         // for ConnectionDown
}

func (c call) String() string {
	switch c.kind {
	case callReceive:
		return fmt.Sprintf("Receive(%s, %q)", c.d.RoutingKey, abbreviate(c.d.Body))
	case callDown:
		return fmt.Sprintf("ConnectionDown(%v)", c.err)
	}
	return c.kind.String() + "()"
}

func abbreviate(b []byte) []byte {
	if len(b) > 40 {
		return append(bytes.Clone(b[:40]), "..."...)
	}
	return b
}

// probe is the feed.Receiver of the suite: it logs every call in order, for the test to
// read at its own pace (the log is unbounded, so the transport never waits on the test),
// and it catches what a test cannot see by reading: calls that overlap, and calls after
// the subscription's Close returned. While held, Receive logs the delivery and then waits
// until released: the test knows the transport is inside Receive and keeps it there, as
// a busy session would.
type probe struct {
	t    *testing.T
	name string

	mu      sync.Mutex
	calls   []call
	read    int           // calls already taken by next
	changed chan struct{} // closed and replaced at every call
	gate    chan struct{} // non-nil while held: Receive waits for it to close

	inCall     atomic.Int32
	overlapped atomic.Bool
	closed     atomic.Bool  // the subscription's Close has returned
	late       atomic.Int32 // calls after that
}

var _ feed.Receiver = (*probe)(nil)

// newProbe returns a probe whose breaches fail t when t ends.
func newProbe(t *testing.T, name string) *probe {
	t.Helper()
	p := &probe{t: t, name: name, changed: make(chan struct{})}
	t.Cleanup(func() {
		p.release()
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

func (p *probe) log(c call) (gate chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, c)
	close(p.changed)
	p.changed = make(chan struct{})
	return p.gate
}

// Receive logs d and, while the probe is held, waits to be released.
func (p *probe) Receive(d feed.Delivery) {
	p.enter()
	defer p.exit()
	if gate := p.log(call{kind: callReceive, d: d}); gate != nil {
		<-gate
	}
}

// ConnectionDown logs the loss.
func (p *probe) ConnectionDown(err error) {
	p.enter()
	defer p.exit()
	p.log(call{kind: callDown, err: err})
}

// ConnectionUp logs the connection.
func (p *probe) ConnectionUp() {
	p.enter()
	defer p.exit()
	p.log(call{kind: callUp})
}

// hold makes the next calls of Receive wait until release.
func (p *probe) hold() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gate == nil {
		p.gate = make(chan struct{})
	}
}

// release lets every waiting and later Receive return.
func (p *probe) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gate != nil {
		close(p.gate)
		p.gate = nil
	}
}

// closedNow records that the subscription's Close has returned: from here on, any call
// is a breach.
func (p *probe) closedNow() { p.closed.Store(true) }

// next returns the next call, waiting for it.
func (p *probe) next(t *testing.T) call {
	t.Helper()
	deadline := time.NewTimer(hangGuard)
	defer deadline.Stop()
	for {
		p.mu.Lock()
		if p.read < len(p.calls) {
			c := p.calls[p.read]
			p.read++
			p.mu.Unlock()
			return c
		}
		changed := p.changed
		p.mu.Unlock()
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("%s: no call to the receiver within %v", p.name, hangGuard)
		}
	}
}

// expect fails t unless the next call is of kind k.
func (p *probe) expect(t *testing.T, k callKind) call {
	t.Helper()
	c := p.next(t)
	if c.kind != k {
		t.Fatalf("%s: got %v, want a call of %v", p.name, c, k)
	}
	return c
}

// expectUp fails t unless the next call is ConnectionUp.
func (p *probe) expectUp(t *testing.T) { t.Helper(); p.expect(t, callUp) }

// expectDown fails t unless the next call is ConnectionDown with a cause.
func (p *probe) expectDown(t *testing.T) {
	t.Helper()
	if c := p.expect(t, callDown); c.err == nil {
		t.Fatalf("%s: ConnectionDown without a cause", p.name)
	}
}

// expectMessage fails t unless the next call is the Receive of body with key.
func (p *probe) expectMessage(t *testing.T, key, body string) feed.Delivery {
	t.Helper()
	c := p.expect(t, callReceive)
	if c.d.RoutingKey != key || string(c.d.Body) != body {
		t.Fatalf("%s: got %v, want Receive(%s, %q)", p.name, c, key, body)
	}
	return c.d
}

// noCallsYet fails t if a call is waiting to be read. It proves something only where
// no call can be on its way: after a later message was read (each subscription keeps
// publishing order), or after Close returned.
func (p *probe) noCallsYet(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.read < len(p.calls) {
		t.Fatalf("%s: unexpected %v", p.name, p.calls[p.read])
	}
}
