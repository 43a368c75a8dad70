package feed

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/feedkit/feedkit/internal/unhandled"
)

// Event is an event message as a session hands it to a Dispatcher: what could be read
// without decoding the body (the routing key, and the producer and request id from the
// root element), and the raw body, which the dispatcher decodes on its own goroutine.
type Event struct {
	RawKey     string     // the routing key as received
	Key        RoutingKey // the parsed key; zero when Err is set
	Body       []byte
	ReceivedAt time.Time
	Producer   int   // from the body's root element; 0 if it could not be read
	RequestID  int64 // from the body's root element; 0 for live traffic
	// Err, when set, says why the message cannot be routed (a malformed routing key, an
	// oversized body); the dispatcher delivers it to OnUnparsableMessage.
	Err error
	// Handled, when set, is called once when the dispatcher is done with the event:
	// after its listener call ended, with what Deliver returned (nil, the decode error
	// of an unparsable message, a *ListenerError), nil too for a message the listener
	// has no method for (a cashout for a listener that is no CashoutListener); or, for
	// an event a Close dropped because its context ended first, with an error that
	// matches both ErrDispatcherClosed and that context's error. A host that feeds a
	// dispatcher itself learns so when each event is done: a consumer acknowledges the
	// event's delivery to its broker then.
	//
	// Every Dispatcher of the kit calls it exactly once for each event its Dispatch
	// accepted, and never for one its Dispatch refused (returned an error): the caller
	// still has that event. It is called on the dispatcher's goroutine (or Dispatch's,
	// for an event delivered inline), possibly after Close returned for an abandoned
	// event; it must be quick and must not panic. An event stuck behind a listener call
	// that never returns is never handled. A Session leaves it nil.
	Handled func(err error)

	// bodyOwned is set by a Session, whose transport hands over each body for good
	// (Delivery): the decoded message may then point into Body instead of a copy.
	bodyOwned bool
	// from is the Session that read the event, nil for an Event made elsewhere. Deliver,
	// whichever dispatcher calls it, counts in its statistics what the session cannot see
	// from the reading goroutine (schema violations, unhandled messages, bodies that do
	// not decode) and tells its Observer of the last.
	from *Session
}

// ErrBodyTooLarge is the reason given to OnUnparsableMessage for a body larger than the
// session's limit.
var ErrBodyTooLarge = errors.New("feed: message body exceeds the size limit")

// ErrListenerPanic matches, with errors.Is, a *ListenerError for a listener that panicked.
var ErrListenerPanic = errors.New("feed: listener panicked")

// ListenerError reports a listener method that returned an error or panicked.
type ListenerError struct {
	Method string // such as "OnOddsChange"
	Event  URN    // the event the message concerned
	Err    error  // what the method returned; nil if it panicked
	Panic  any    // the panic value; nil if it returned an error
	Stack  []byte // the stack of the panic
}

func (e *ListenerError) Error() string {
	what := e.Method
	if !e.Event.IsZero() {
		what += " for " + e.Event.String()
	}
	if e.Panic != nil {
		return fmt.Sprintf("feed: %s panicked: %v", what, e.Panic)
	}
	return fmt.Sprintf("feed: %s: %v", what, e.Err)
}

// Unwrap returns the listener's error.
func (e *ListenerError) Unwrap() error { return e.Err }

// Is reports whether target is ErrListenerPanic and the listener panicked.
func (e *ListenerError) Is(target error) bool { return target == ErrListenerPanic && e.Panic != nil }

// Decode decodes the event's body according to its routing key.
func (ev *Event) Decode() (Message, error) {
	if ev.Err != nil {
		return nil, ev.Err
	}
	m, err := decode(ev.Key.Type, ev.Body, ev.bodyOwned)
	if err != nil {
		return nil, err
	}
	m.MessageHeader().ReceivedAt = ev.ReceivedAt
	return m, nil
}

// Deliver decodes ev and calls the listener method for its type, or OnUnparsableMessage
// when it cannot be decoded. It is the last step of every Dispatcher.
//
// It returns nil when the listener accepted the message; the decode error (matching
// ErrMalformedMessage) when the message was unparsable, after OnUnparsableMessage has seen
// it; and a *ListenerError when the listener returned an error or panicked. A panic does not
// escape Deliver.
//
// A message decoded with schema violations (Header.SchemaViolations) is delivered as any
// other, and counted in the statistics of the session that read it. A message that the
// session routed but whose body does not decode is counted there too
// (SessionStats.Undecodable), and told to the session's Observer as unparsable.
func Deliver(ctx context.Context, l OddsFeedListener, ev *Event) error {
	m, err := ev.Decode()
	if err == nil && ev.from != nil && m.MessageHeader().SchemaViolations != 0 {
		ev.from.nViolations.Add(1)
	}
	if err == nil && !handles(l, m) {
		if ev.from != nil {
			ev.from.nUnhandled.Add(1)
		}
		return nil
	}
	if err != nil {
		if ev.from != nil && ev.Err == nil {
			// The session counted and told of the events it could not route (ev.Err) as it
			// read them; this one it routed, and only decoding could find it bad.
			ev.from.undecodable(ev)
		}
		u := &UnparsableMessage{RoutingKey: ev.RawKey, Body: ev.Body, ReceivedAt: ev.ReceivedAt,
			Event: ev.Key.Event, Err: err}
		if lerr := call(ctx, l, "OnUnparsableMessage", ev.Key.Event, func(ctx context.Context) error {
			return l.OnUnparsableMessage(ctx, u)
		}); lerr != nil {
			return errors.Join(err, lerr)
		}
		return err
	}
	err = Call(ctx, l, m)
	if err != nil && errors.Is(err, unhandled.Err) {
		// A wrapper of the kit whose listener has no method for m: as when l has none.
		if ev.from != nil {
			ev.from.nUnhandled.Add(1)
		}
		return nil
	}
	return err
}

// handles reports whether l has a method for m: false only for a cashout and a listener
// that is no CashoutListener.
func handles(l OddsFeedListener, m Message) bool {
	if _, ok := m.(*Cashout); ok {
		_, ok := l.(CashoutListener)
		return ok
	}
	return true
}

// Call calls the listener method for an already decoded message, turning an error or a
// panic into a *ListenerError. A cashout for a listener that is no CashoutListener is
// passed over: Call returns nil.
func Call(ctx context.Context, l OddsFeedListener, m Message) error {
	event := m.MessageHeader().Event
	switch m := m.(type) {
	case *OddsChange:
		return call(ctx, l, "OnOddsChange", event, func(ctx context.Context) error { return l.OnOddsChange(ctx, m) })
	case *BetStop:
		return call(ctx, l, "OnBetStop", event, func(ctx context.Context) error { return l.OnBetStop(ctx, m) })
	case *BetSettlement:
		return call(ctx, l, "OnBetSettlement", event, func(ctx context.Context) error { return l.OnBetSettlement(ctx, m) })
	case *RollbackBetSettlement:
		return call(ctx, l, "OnRollbackBetSettlement", event, func(ctx context.Context) error {
			return l.OnRollbackBetSettlement(ctx, m)
		})
	case *BetCancel:
		return call(ctx, l, "OnBetCancel", event, func(ctx context.Context) error { return l.OnBetCancel(ctx, m) })
	case *RollbackBetCancel:
		return call(ctx, l, "OnRollbackBetCancel", event, func(ctx context.Context) error {
			return l.OnRollbackBetCancel(ctx, m)
		})
	case *FixtureChange:
		return call(ctx, l, "OnFixtureChange", event, func(ctx context.Context) error { return l.OnFixtureChange(ctx, m) })
	case *Cashout:
		cl, ok := l.(CashoutListener)
		if !ok {
			return nil
		}
		return call(ctx, l, "OnCashout", event, func(ctx context.Context) error { return cl.OnCashout(ctx, m) })
	}
	return fmt.Errorf("feed: %s is not an event message", m.Type())
}

func call(ctx context.Context, l OddsFeedListener, method string, event URN, fn func(context.Context) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &ListenerError{Method: method, Event: event, Panic: p, Stack: debug.Stack()}
		}
	}()
	if err := fn(ctx); err != nil {
		return &ListenerError{Method: method, Event: event, Err: err}
	}
	return nil
}
