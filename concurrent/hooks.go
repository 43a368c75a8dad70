package concurrent

import (
	"context"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/internal/unhandled"
)

// callHooks are what a tracker's dispatchers tell of each listener call for an event
// message (OnCallFailed, OnCallReturned); either may be nil.
type callHooks struct {
	failed   func(*feed.Header, feed.MessageType)
	returned func(*feed.Header)
}

// OnCallFailed sets the function told of each listener call for an event message that
// returned an error or panicked, with the message's header and type: the recovery
// manager's ListenerFailed, which holds the recovery point before the message so that
// the next recovery replays it. It is called on the goroutine of the call, before the
// call's task is completed, so the processed point cannot pass the message first. Every
// dispatcher sharing the tracker (Dispatcher, SerialDispatcher) tells it; set it
// before they are used, so that no call goes untold.
func (t *TaskLifecycleTracker) OnCallFailed(f func(h *feed.Header, typ feed.MessageType)) {
	t.setCallHooks(func(h *callHooks) { h.failed = f })
}

// OnCallReturned sets the function told after each listener call for an event message
// that returned, with an error or without (a call that panicked is told to OnCallFailed
// alone), with the message's header: the recovery manager's ObserveProcessed, which
// measures how late live messages are processed. It is called on the goroutine of the
// call, before the call's task is completed, and must be cheap: it runs once per message.
// Set it before the dispatchers are used.
func (t *TaskLifecycleTracker) OnCallReturned(f func(h *feed.Header)) {
	t.setCallHooks(func(h *callHooks) { h.returned = f })
}

func (t *TaskLifecycleTracker) setCallHooks(set func(*callHooks)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var h callHooks
	if old := t.calls.Load(); old != nil {
		h = *old
	}
	set(&h)
	t.calls.Store(&h)
}

// hooked is a customer's listener as a dispatcher calls it when the tracker has call
// hooks, or when the dispatcher needs a word around each call: a SerialDispatcher (s, nil
// for a Dispatcher) is told before each call, and when it ends, however it ends (a panic
// included), after the hooks.
type hooked struct {
	l feed.OddsFeedListener
	t *TaskLifecycleTracker
	s *SerialDispatcher
}

// call calls f, the customer's method for a message of type typ with header hd (nil for
// OnUnparsableMessage, typ then the type its body was decoded as).
func (h *hooked) call(hd *feed.Header, typ feed.MessageType, f func() error) error {
	if h.s == nil {
		return h.callHooked(hd, typ, f)
	}
	h.s.enter()
	res := CallPanicked // unless it returns
	if hd == nil {
		res = CallUnparsable // however it ends: it is the message's one call
	}
	defer func() { h.s.exit(hd, typ, res) }()
	err := h.callHooked(hd, typ, f)
	switch {
	case hd == nil:
	case err != nil:
		res = CallFailed
	default:
		res = CallReturned
	}
	return err
}

// callHooked calls f, telling the tracker's call hooks.
func (h *hooked) callHooked(hd *feed.Header, typ feed.MessageType, f func() error) (err error) {
	hooks := h.t.calls.Load()
	if hd == nil || hooks == nil {
		return f()
	}
	if hooks.failed != nil {
		returned := false
		defer func() {
			// A panic passes through untouched, to the dispatcher that reports it; the hook
			// is told first, while the task is not yet complete.
			if !returned || err != nil {
				hooks.failed(hd, typ)
			}
		}()
		err = f()
		returned = true
	} else {
		err = f()
	}
	if hooks.returned != nil {
		hooks.returned(hd)
	}
	return err
}

func (h *hooked) OnOddsChange(ctx context.Context, m *feed.OddsChange) error {
	return h.call(&m.Header, feed.MessageOddsChange, func() error { return h.l.OnOddsChange(ctx, m) })
}

func (h *hooked) OnBetStop(ctx context.Context, m *feed.BetStop) error {
	return h.call(&m.Header, feed.MessageBetStop, func() error { return h.l.OnBetStop(ctx, m) })
}

func (h *hooked) OnBetSettlement(ctx context.Context, m *feed.BetSettlement) error {
	return h.call(&m.Header, feed.MessageBetSettlement, func() error { return h.l.OnBetSettlement(ctx, m) })
}

func (h *hooked) OnRollbackBetSettlement(ctx context.Context, m *feed.RollbackBetSettlement) error {
	return h.call(&m.Header, feed.MessageRollbackBetSettlement, func() error { return h.l.OnRollbackBetSettlement(ctx, m) })
}

func (h *hooked) OnBetCancel(ctx context.Context, m *feed.BetCancel) error {
	return h.call(&m.Header, feed.MessageBetCancel, func() error { return h.l.OnBetCancel(ctx, m) })
}

func (h *hooked) OnRollbackBetCancel(ctx context.Context, m *feed.RollbackBetCancel) error {
	return h.call(&m.Header, feed.MessageRollbackBetCancel, func() error { return h.l.OnRollbackBetCancel(ctx, m) })
}

func (h *hooked) OnFixtureChange(ctx context.Context, m *feed.FixtureChange) error {
	return h.call(&m.Header, feed.MessageFixtureChange, func() error { return h.l.OnFixtureChange(ctx, m) })
}

// OnUnparsableMessage passes m on with no hook: it has no header the hooks could use.
func (h *hooked) OnUnparsableMessage(ctx context.Context, m *feed.UnparsableMessage) error {
	typ := feed.MessageUnknown
	if h.s != nil && h.s.obs != nil {
		typ = unparsableType(m.Err)
	}
	return h.call(nil, typ, func() error { return h.l.OnUnparsableMessage(ctx, m) })
}

// asListener returns h as the dispatchers call it: for a Dispatcher, with OnCashout
// exactly when the customer's listener has it, so that feed.Deliver counts a cashout as
// unhandled for a listener without it, as it does for the listener unwrapped. A
// SerialDispatcher's always has OnCashout: each message must make one call, for its
// ticket, and for a customer without it that call passes the message over.
func (h *hooked) asListener() feed.OddsFeedListener {
	cl, ok := h.l.(feed.CashoutListener)
	if ok || h.s != nil {
		return hookedCashout{h, cl}
	}
	return h
}

// hookedCashout is a hooked listener whose customer takes cashout messages, or, for a
// SerialDispatcher, may not (cl nil).
type hookedCashout struct {
	*hooked
	cl feed.CashoutListener
}

func (h hookedCashout) OnCashout(ctx context.Context, m *feed.Cashout) error {
	if h.cl == nil {
		// No call: the ticket is completed in its place, and Deliver counts the message
		// as unhandled. Neither the tracker's hooks nor the Observer hear of it.
		h.s.passOver()
		return unhandled.Err
	}
	return h.call(&m.Header, feed.MessageCashout, func() error { return h.cl.OnCashout(ctx, m) })
}
