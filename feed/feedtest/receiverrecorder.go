package feedtest

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/feedkit/feedkit/feed"
)

// ReceiverRecorder is a feed.Receiver that records every call a transport makes to it, in
// order, for the tests of a transport (TestTransport's receivers are built on it) or of
// anything that drives a Receiver: a test reads the calls one at a time as they come
// (Next, RequireNext), or checks that none came that it has not read (RequireNone). The
// record is unbounded, so the transport never waits on the test. Hold keeps the transport
// inside Receive, as a busy session would: Receive records the delivery, so the test knows
// the transport is there, then waits until Release. Waiting never polls. Make one with
// NewReceiverRecorder; it is safe for concurrent use.
type ReceiverRecorder struct {
	calls journal[ReceiverCall]
	gate  chan struct{} // non-nil while held; guarded by calls.mu, read as a Receive is recorded

	errMu sync.Mutex
	errs  []error // Error's, apart from the calls: how often a transport reports is its own
}

var _ feed.Receiver = (*ReceiverRecorder)(nil)

// NewReceiverRecorder returns an empty ReceiverRecorder, not held.
func NewReceiverRecorder() *ReceiverRecorder {
	return &ReceiverRecorder{calls: newJournal[ReceiverCall]()}
}

// ReceiverCallKind says which Receiver method was called.
type ReceiverCallKind uint8

// The Receiver methods.
const (
	CallReceive ReceiverCallKind = iota + 1
	CallReceiverUp
	CallReceiverDown
)

func (k ReceiverCallKind) String() string {
	switch k {
	case CallReceive:
		return "Receive"
	case CallReceiverUp:
		return "ConnectionUp"
	case CallReceiverDown:
		return "ConnectionDown"
	}
	return fmt.Sprintf("ReceiverCallKind(%d)", uint8(k))
}

// ReceiverCall is one call a ReceiverRecorder received: its kind, and the argument of that
// kind.
type ReceiverCall struct {
	Kind     ReceiverCallKind
	Delivery feed.Delivery // Receive's
	Err      error         // ConnectionDown's
}

// String describes the call in one line, e.g. `Receive(hi.-.live.alive.-.-.-.-, "<alive/>")`
// (a body of more than 40 bytes cut short), "ConnectionUp()" or "ConnectionDown(broker gone)".
func (c ReceiverCall) String() string {
	switch c.Kind {
	case CallReceive:
		return fmt.Sprintf("Receive(%s, %q)", c.Delivery.RoutingKey, abbreviate(c.Delivery.Body))
	case CallReceiverDown:
		return fmt.Sprintf("ConnectionDown(%v)", c.Err)
	}
	return c.Kind.String() + "()"
}

func abbreviate(b []byte) []byte {
	if len(b) > 40 {
		return append(bytes.Clone(b[:40]), "..."...)
	}
	return b
}

// Receive records d and, while the recorder is held, waits to be released. Whether it
// waits is decided as d is recorded, so a Hold or Release ordered against the record
// (by reading it) is one this call obeys.
func (r *ReceiverRecorder) Receive(d feed.Delivery) {
	var gate chan struct{}
	r.calls.add(ReceiverCall{Kind: CallReceive, Delivery: d}, func(*ReceiverCall) { gate = r.gate })
	if gate != nil {
		<-gate
	}
}

// ConnectionDown records the loss.
func (r *ReceiverRecorder) ConnectionDown(err error) {
	r.calls.add(ReceiverCall{Kind: CallReceiverDown, Err: err}, nil)
}

// ConnectionUp records the connection.
func (r *ReceiverRecorder) ConnectionUp() { r.calls.add(ReceiverCall{Kind: CallReceiverUp}, nil) }

// Error records err apart from the other calls (see Errors): how many errors a
// transport reports around a drop is its own business, the order of the other calls is
// the contract.
func (r *ReceiverRecorder) Error(err error) {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	r.errs = append(r.errs, err)
}

// Errors returns the errors reported so far, in order.
func (r *ReceiverRecorder) Errors() []error {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	return append([]error(nil), r.errs...)
}

// Hold makes the next calls of Receive wait until Release.
func (r *ReceiverRecorder) Hold() {
	r.calls.mu.Lock()
	defer r.calls.mu.Unlock()
	if r.gate == nil {
		r.gate = make(chan struct{})
	}
}

// Release lets every waiting and later Receive return; releasing a recorder not held does
// nothing.
func (r *ReceiverRecorder) Release() {
	r.calls.mu.Lock()
	defer r.calls.mu.Unlock()
	if r.gate != nil {
		close(r.gate)
		r.gate = nil
	}
}

// Calls returns every call recorded, in order.
func (r *ReceiverRecorder) Calls() []ReceiverCall { return r.calls.all() }

// Next returns the oldest call Next has not returned yet, waiting for one until ctx ends.
func (r *ReceiverRecorder) Next(ctx context.Context) (ReceiverCall, error) {
	return r.calls.next(ctx, "receiver call")
}

// Unread returns the calls recorded that Next has not returned yet, in order.
func (r *ReceiverRecorder) Unread() []ReceiverCall { return r.calls.unread() }

// RequireNext is Next bounded by t's context and a guard against a hang; it fails t if no
// call comes.
func (r *ReceiverRecorder) RequireNext(t testing.TB) ReceiverCall {
	t.Helper()
	return guarded(t, r.Next)
}

// RequireNone fails t if a call was recorded that Next has not returned. It does not
// wait, so it proves something only where no call can be on its way: after a later
// message was read (a subscription keeps publishing order), or after the subscription's
// Close returned.
func (r *ReceiverRecorder) RequireNone(t testing.TB) {
	t.Helper()
	if u := r.Unread(); len(u) > 0 {
		t.Fatalf("feedtest: unexpected receiver call %v (%d unread)", u[0], len(u))
	}
}
