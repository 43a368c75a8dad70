package feedtest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// GlobalRecorder is a feed.GlobalEventsListener that records every call it receives, in
// order, for tests: a test reads the calls one at a time as they come (Next, RequireNext),
// checks that none came that it has not read (RequireNone), or waits for a number of them
// (Wait, RequireCalls). Waiting never polls: a waiter sleeps until the next call is
// recorded, bounded by its context, or, for the methods that take a testing.TB, by the
// test's context and a guard against a hang of a minute. Make one with
// NewGlobalRecorder; it is safe for concurrent use.
type GlobalRecorder struct {
	// Hook, when set before the recorder is used, is called with each call before it is
	// recorded, on the caller's goroutine: it may block (to hold the caller up) or panic (a
	// panicking hook leaves the call unrecorded). What it returns is recorded as the call's
	// Note: state seen at the moment of the call, such as what was pending when an up
	// arrived.
	Hook func(ctx context.Context, c GlobalCall) string

	seq   atomic.Int64
	calls journal[GlobalCall]
}

var _ feed.GlobalEventsListener = (*GlobalRecorder)(nil)

// NewGlobalRecorder returns an empty GlobalRecorder.
func NewGlobalRecorder() *GlobalRecorder {
	return &GlobalRecorder{calls: newJournal[GlobalCall]()}
}

// GlobalCallKind says which GlobalEventsListener method was called.
type GlobalCallKind uint8

// The GlobalEventsListener methods.
const (
	CallConnectionDown GlobalCallKind = iota + 1
	CallConnectionUp
	CallProducerStatus
	CallRecoveryInitiated
	CallEventRecoveryCompleted
)

// GlobalCall is one call a GlobalRecorder received: its kind, and the argument of that
// kind (the others are zero).
type GlobalCall struct {
	// Seq numbers the call in the recorder's sequence, taken when it was recorded; Stamp
	// takes numbers from the same sequence.
	Seq           int64
	Kind          GlobalCallKind
	Session       feed.SessionRef             // OnConnectionDown's and OnConnectionUp's
	Err           error                       // OnConnectionDown's
	Status        feed.ProducerStatus         // OnProducerStatusChange's
	Recovery      feed.RecoveryInitiated      // OnRecoveryInitiated's
	EventRecovery feed.EventRecoveryCompleted // OnEventRecoveryCompleted's
	Note          string                      // what the Hook returned
}

// String describes the call in one line that a test can compare whole, e.g.
// "connection down on session 0 (all messages): broker gone",
// "connection up on session 1 (live messages only)",
// "producer 1 down (AliveIntervalViolation)",
// "producer 1 down, delayed (ProcessingQueueDelayViolation)",
// "producer 1 down (ConnectionDown) on session 0 (all messages)" (a status names its
// session when it has one),
// "recovery #7 of producer 1 initiated from 2026-01-02T15:04:05Z",
// "event recovery #9 of producer 1 initiated for sr:match:42",
// "event recovery #9 of producer 1 completed for sr:match:42"; then ": " and the Note, if
// any. A status's Timestamp is left out: it changes from run to run.
func (c GlobalCall) String() string {
	var s string
	switch c.Kind {
	case CallConnectionDown:
		s = "connection down on " + c.Session.String()
		if c.Err != nil {
			s += ": " + c.Err.Error()
		}
	case CallConnectionUp:
		s = "connection up on " + c.Session.String()
	case CallProducerStatus:
		state := "up"
		if c.Status.Down {
			state = "down"
		}
		if c.Status.Delayed {
			state += ", delayed"
		}
		s = fmt.Sprintf("producer %d %s (%s)", c.Status.Producer, state, c.Status.Reason)
		if c.Status.Session != nil {
			s += " on " + c.Status.Session.String()
		}
	case CallRecoveryInitiated:
		r := c.Recovery
		s = fmt.Sprintf("recovery #%d of producer %d initiated", r.RequestID, r.Producer)
		if r.Kind != feed.ProducerRecovery {
			s = r.Kind.String() + " " + s
		}
		if !r.Event.IsZero() {
			s += " for " + r.Event.String()
		}
		if !r.After.IsZero() {
			s += " from " + r.After.UTC().Format(time.RFC3339Nano)
		}
	case CallEventRecoveryCompleted:
		r := c.EventRecovery
		s = fmt.Sprintf("event recovery #%d of producer %d completed for %s", r.RequestID, r.Producer, r.Event)
	default:
		s = fmt.Sprintf("unknown call %d", c.Kind)
	}
	if c.Note != "" {
		s += ": " + c.Note
	}
	return s
}

func (r *GlobalRecorder) record(ctx context.Context, c GlobalCall) {
	if r.Hook != nil {
		c.Note = r.Hook(ctx, c)
	}
	r.calls.add(c, func(c *GlobalCall) { c.Seq = r.seq.Add(1) })
}

// OnConnectionDown records the call.
func (r *GlobalRecorder) OnConnectionDown(ctx context.Context, s feed.SessionRef, err error) {
	r.record(ctx, GlobalCall{Kind: CallConnectionDown, Session: s, Err: err})
}

// OnConnectionUp records the call.
func (r *GlobalRecorder) OnConnectionUp(ctx context.Context, s feed.SessionRef) {
	r.record(ctx, GlobalCall{Kind: CallConnectionUp, Session: s})
}

// OnProducerStatusChange records the call.
func (r *GlobalRecorder) OnProducerStatusChange(ctx context.Context, s feed.ProducerStatus) {
	r.record(ctx, GlobalCall{Kind: CallProducerStatus, Status: s})
}

// OnRecoveryInitiated records the call.
func (r *GlobalRecorder) OnRecoveryInitiated(ctx context.Context, ri feed.RecoveryInitiated) {
	r.record(ctx, GlobalCall{Kind: CallRecoveryInitiated, Recovery: ri})
}

// OnEventRecoveryCompleted records the call.
func (r *GlobalRecorder) OnEventRecoveryCompleted(ctx context.Context, e feed.EventRecoveryCompleted) {
	r.record(ctx, GlobalCall{Kind: CallEventRecoveryCompleted, EventRecovery: e})
}

// Stamp returns the next number of the sequence the calls' Seq come from, so that a test
// can order what it does against the calls: a call recorded after Stamp returned has a
// greater Seq.
func (r *GlobalRecorder) Stamp() int64 { return r.seq.Add(1) }

// Calls returns every call recorded, in order.
func (r *GlobalRecorder) Calls() []GlobalCall { return r.calls.all() }

// Next returns the oldest call Next has not returned yet, waiting for one until ctx ends.
func (r *GlobalRecorder) Next(ctx context.Context) (GlobalCall, error) {
	return r.calls.next(ctx, "global call")
}

// Unread returns the calls recorded that Next has not returned yet, in order.
func (r *GlobalRecorder) Unread() []GlobalCall { return r.calls.unread() }

// Wait returns every call recorded once there are at least n, or an error saying how many
// there are when ctx ends first.
func (r *GlobalRecorder) Wait(ctx context.Context, n int) ([]GlobalCall, error) {
	return r.calls.wait(ctx, n, "global calls")
}

// RequireNext is Next bounded by t's context and a guard against a hang; it fails t if no
// call comes.
func (r *GlobalRecorder) RequireNext(t testing.TB) GlobalCall {
	t.Helper()
	return guarded(t, r.Next)
}

// RequireNone fails t if a call was recorded that Next has not returned. It does not
// wait: a test first makes sure that what could call has acted (a flush, a sentinel).
func (r *GlobalRecorder) RequireNone(t testing.TB) {
	t.Helper()
	if u := r.Unread(); len(u) > 0 {
		t.Fatalf("feedtest: unexpected global call %q (%d unread)", u[0], len(u))
	}
}

// RequireCalls is Wait bounded by t's context and a guard against a hang; it fails t if
// fewer than n calls come.
func (r *GlobalRecorder) RequireCalls(t testing.TB, n int) []GlobalCall {
	t.Helper()
	return guarded(t, func(ctx context.Context) ([]GlobalCall, error) { return r.Wait(ctx, n) })
}
