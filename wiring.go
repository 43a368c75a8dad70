package feedkit

import (
	"context"
	"sync"

	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
)

// hooked calls the customer's listener between hooks: enter (nil for none) runs before
// each call and returns what to run when the call ends, however it ends (a panic
// included); processed (nil for none) receives the header of each message handled;
// failed (nil for none) the header and type of each message whose call returned an error
// or panicked, before the call's task is completed.
type hooked struct {
	l         feed.OddsFeedListener
	enter     func() (exit func())
	processed func(*feed.Header)
	failed    func(*feed.Header, feed.MessageType)
}

func (h *hooked) call(hd *feed.Header, t feed.MessageType, f func() error) (err error) {
	if h.enter != nil {
		if exit := h.enter(); exit != nil {
			defer exit()
		}
	}
	if hd != nil && h.failed != nil {
		returned := false
		defer func() {
			// A panic passes through untouched, to the dispatcher that reports it; it is
			// told here first, while the task is not yet complete.
			if !returned || err != nil {
				h.failed(hd, t)
			}
		}()
		err = f()
		returned = true
	} else {
		err = f()
	}
	if hd != nil && h.processed != nil {
		h.processed(hd)
	}
	return err
}

// systemMarks reports each alive with subscribed=1 a session reads to the session's
// Stream, so that the processed point can pass it once the messages read before it are
// done, then hands the message to the recovery manager. It runs on the session's reading
// goroutine, where the Stream's dispatches run too.
type systemMarks struct {
	next   feed.SystemHandler
	stream *concurrent.Stream
}

func (s systemMarks) HandleSystem(ev feed.Event) {
	if ev.Key.Type == feed.MessageAlive {
		// An alive is a few bytes; the manager decodes its own copy, and reports one that
		// does not decode.
		if a, err := feed.DecodeAlive(ev.Body); err == nil && a.Subscribed && !a.Timestamp.IsZero() {
			s.stream.Alive(a.Producer, a.Timestamp)
		}
	}
	s.next.HandleSystem(ev)
}

func (s systemMarks) HandleConnectionDown(err error) {
	if c, ok := s.next.(feed.ConnectionLossHandler); ok {
		c.HandleConnectionDown(err)
	}
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

func (h *hooked) OnUnparsableMessage(ctx context.Context, m *feed.UnparsableMessage) error {
	return h.call(nil, feed.MessageUnknown, func() error { return h.l.OnUnparsableMessage(ctx, m) })
}

// trackedSerial is serial delivery that records each event as a task in the
// TaskLifecycleTracker, as the concurrent listener does, so that producer ups are held
// back until the recovery's messages are processed in serial mode too.
//
// A SerialDispatcher calls the listener exactly once per event, in dispatch order, so the
// tickets pair with the calls through a FIFO: Dispatch appends, each call takes the head.
type trackedSerial struct {
	inner   *feed.SerialDispatcher
	stream  *concurrent.Stream
	mu      sync.Mutex
	tickets []numbered
	seq     uint64 // the number of the last ticket queued
}

type numbered struct {
	seq uint64
	k   concurrent.Ticket
}

func newTrackedSerial(h *hooked, tracker *concurrent.TaskLifecycleTracker, opts feed.DispatcherOptions) (*trackedSerial, error) {
	ts := &trackedSerial{stream: tracker.NewStream()}
	h.enter = ts.enter
	inner, err := feed.NewSerialDispatcher(h, opts)
	if err != nil {
		return nil, err
	}
	ts.inner = inner
	return ts, nil
}

// Dispatch records ev as a task of its recovery, on the session's Stream, and queues it.
func (ts *trackedSerial) Dispatch(ctx context.Context, ev feed.Event) error {
	k := ts.stream.Allocate(concurrent.RecoveryContext{Producer: ev.Producer, RequestID: ev.RequestID})
	ts.mu.Lock()
	ts.seq++
	seq := ts.seq
	ts.tickets = append(ts.tickets, numbered{seq, k})
	ts.mu.Unlock()
	if err := ts.inner.Dispatch(ctx, ev); err != nil {
		// Not queued, so not delivered: the ticket is the last one, unless a Close that
		// gave up waiting has abandoned every ticket already.
		ts.mu.Lock()
		mine := len(ts.tickets) > 0 && ts.tickets[len(ts.tickets)-1].seq == seq
		if mine {
			ts.tickets = ts.tickets[:len(ts.tickets)-1]
		}
		ts.mu.Unlock()
		if mine {
			k.Abandon()
		}
		return err
	}
	return nil
}

// Close closes the dispatcher; the tickets of events it abandoned are abandoned too.
func (ts *trackedSerial) Close(ctx context.Context) error {
	err := ts.inner.Close(ctx)
	ts.mu.Lock()
	rest := ts.tickets
	ts.tickets = nil
	ts.mu.Unlock()
	for _, n := range rest {
		n.k.Abandon()
	}
	return err
}

// enter starts the ticket of the event being delivered and returns its completion.
func (ts *trackedSerial) enter() func() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if len(ts.tickets) == 0 {
		return nil // delivered after Close abandoned it
	}
	k := ts.tickets[0].k
	ts.tickets[0] = numbered{}
	ts.tickets = ts.tickets[1:]
	k.Start()
	return k.Complete
}
