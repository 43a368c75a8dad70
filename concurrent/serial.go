package concurrent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// SerialConfig configures a SerialDispatcher. The zero value of each field means its
// default.
type SerialConfig struct {
	// QueueSize bounds the messages waiting for delivery; 0 means feed.DefaultQueueSize.
	// At the bound Dispatch blocks until the listener takes one: nothing is dropped.
	QueueSize int
	// OnError receives every delivery error: unparsable messages (after the listener's
	// OnUnparsableMessage) and *feed.ListenerError for listener calls that failed or
	// panicked.
	OnError func(error)
	// Logger logs the same errors; nil is silent.
	Logger *slog.Logger
	// Name labels the dispatcher in what Observer is told ("" is allowed).
	Name string
	// Observer is told of every listener call, for metrics; nil tells no one.
	Observer Observer
	// TimingSample is as Config.TimingSample.
	TimingSample int
}

// SerialDispatcher delivers the messages of a session to a customer's feed.OddsFeedListener
// one at a time, in the order they arrived, as feed.SerialDispatcher does (it runs one),
// and tracks each as a task of its RecoveryContext on a Stream of the tracker, as
// Dispatcher does: a StatusGate sharing the tracker holds a producer's up
// back until the recovery's messages are processed, the processed point follows the
// listener, and the tracker's call hooks (OnCallFailed, OnCallReturned) are told of each
// call. It is the serial twin of Dispatcher, for a listener that must see every
// message in arrival order, across matches; SerialConfig.Observer is told of its calls
// as Config.Observer is of a Pool's.
type SerialDispatcher struct {
	inner  *feed.SerialDispatcher
	stream *Stream

	// A SerialDispatcher calls the listener exactly once per event, in dispatch order, so
	// the tickets pair with the calls through a FIFO: Dispatch appends, each call takes
	// the head.
	mu      sync.Mutex
	tickets []numbered
	seq     uint64  // the number of the last ticket queued
	timing  sampler // picks the calls timed for the Observer

	name string
	obs  Observer

	// The call in progress, on the inner dispatcher's goroutine (enter to exit).
	cur      numbered
	curOK    bool  // cur is a ticket: false for a call after Close abandoned them
	curStart int64 // when the call began, if it is timed
	// The call that ended, whose ticket completes when the inner dispatcher hands its
	// event back (settle), once it has counted it: so that a Flush, which waits for the
	// tickets, finds Stats counting every call.
	ended    numbered
	endedOK  bool
	settleFn func(error) // settle, made once: the Handled of an event that had none
}

type numbered struct {
	seq uint64
	k   Ticket
	at  int64 // when it was queued (monotonic), if its call is timed for the Observer; 0 if not
}

var _ feed.Dispatcher = (*SerialDispatcher)(nil)

// NewSerialDispatcher starts a serial dispatcher that delivers to l, tracking every task in
// tracker. A bad SerialConfig is refused with the field named.
func NewSerialDispatcher(l feed.OddsFeedListener, tracker *TaskLifecycleTracker, cfg SerialConfig) (*SerialDispatcher, error) {
	switch {
	case l == nil:
		return nil, errors.New("concurrent: NewSerialDispatcher: listener is nil")
	case tracker == nil:
		return nil, errors.New("concurrent: NewSerialDispatcher: tracker is nil")
	case cfg.QueueSize < 0:
		return nil, fmt.Errorf("concurrent: SerialConfig.QueueSize %d must not be negative (0 means %d)",
			cfg.QueueSize, feed.DefaultQueueSize)
	}
	sample, err := timingSample("SerialConfig.TimingSample", cfg.TimingSample, cfg.Observer)
	if err != nil {
		return nil, err
	}
	s := &SerialDispatcher{stream: tracker.NewStream(), timing: sampler{n: sample}, name: cfg.Name, obs: cfg.Observer}
	s.settleFn = s.settle
	inner, err := feed.NewSerialDispatcher((&hooked{l: l, t: tracker, s: s}).asListener(),
		feed.DispatcherOptions{QueueSize: cfg.QueueSize, OnError: cfg.OnError, Logger: cfg.Logger})
	if err != nil {
		return nil, fmt.Errorf("concurrent: %w", err)
	}
	s.inner = inner
	return s, nil
}

// Dispatch records ev as a task of its recovery, on the listener's Stream, and queues it.
// It blocks while SerialConfig.QueueSize messages wait, and returns ctx.Err() if ctx ends
// first, or feed.ErrDispatcherClosed after Close; ev is then not delivered, and its
// Handled is not called.
//
// ev.Handled, when set, is called once the dispatcher is done with ev (see
// feed.Event.Handled): after its listener call, its task completed; or, for an event a
// Close dropped because its context ended, with an error matching
// feed.ErrDispatcherClosed and that context's error.
func (s *SerialDispatcher) Dispatch(ctx context.Context, ev feed.Event) error {
	k := s.stream.Allocate(RecoveryContext{Producer: ev.Producer, RequestID: ev.RequestID})
	s.mu.Lock()
	s.seq++
	seq := s.seq
	n := numbered{seq: seq, k: k}
	if s.timing.next() {
		n.at = monotonic()
	}
	s.tickets = append(s.tickets, n)
	s.mu.Unlock()
	if handled := ev.Handled; handled != nil {
		ev.Handled = func(err error) {
			s.settle(err)
			handled(err)
		}
	} else {
		ev.Handled = s.settleFn
	}
	if err := s.inner.Dispatch(ctx, ev); err != nil {
		// Not queued, so not delivered: the ticket is the last one, unless a Close that
		// gave up waiting has abandoned every ticket already.
		s.mu.Lock()
		mine := len(s.tickets) > 0 && s.tickets[len(s.tickets)-1].seq == seq
		if mine {
			s.tickets = s.tickets[:len(s.tickets)-1]
		}
		s.mu.Unlock()
		if mine {
			k.Abandon()
		}
		return err
	}
	return nil
}

// Stream returns the stream of the messages given to Dispatch, for the tracker's
// processed point: report each alive the session reads to it (Stream.MarkAlives), on
// the goroutine that calls Dispatch.
func (s *SerialDispatcher) Stream() *Stream { return s.stream }

// Close stops taking messages, delivers those queued and returns once the listener is
// done with them. If ctx ends first, the queued messages are abandoned (and recorded so
// in the tracker), the context passed to the listener is cancelled, and Close returns
// ctx.Err() without waiting for a listener call that ignores its context.
func (s *SerialDispatcher) Close(ctx context.Context) error {
	err := s.inner.Close(ctx)
	s.mu.Lock()
	rest := s.tickets
	s.tickets = nil
	s.mu.Unlock()
	for _, n := range rest {
		n.k.Abandon()
	}
	return err
}

// Stats returns the counters of the serial dispatcher.
func (s *SerialDispatcher) Stats() feed.DispatcherStats { return s.inner.Stats() }

// enter starts the ticket of the event being delivered, before its listener call.
func (s *SerialDispatcher) enter() {
	s.mu.Lock()
	s.cur, s.curOK = numbered{}, len(s.tickets) > 0 // none: delivered after Close abandoned it
	if s.curOK {
		s.cur = s.tickets[0]
		s.tickets[0] = numbered{}
		s.tickets = s.tickets[1:]
	}
	s.mu.Unlock()
	if s.curOK {
		s.cur.k.Start()
	}
	if s.cur.at != 0 {
		s.curStart = monotonic()
	}
}

// passOver ends the call of an event whose listener has no method for it, in the place
// of its call.
func (s *SerialDispatcher) passOver() {
	s.enter()
	s.ended, s.endedOK = s.cur, s.curOK
}

// settle completes the ticket of the call that ended, as the inner dispatcher hands its
// event back; an event it dropped unheard (a Close that ran out of time) has no call,
// and its ticket was abandoned.
func (s *SerialDispatcher) settle(error) {
	if s.endedOK {
		s.ended.k.Complete()
	}
	s.ended, s.endedOK = numbered{}, false
}

// exit ends the call of the event delivered, however it ended (settle completes its
// ticket), and tells the Observer: hd and typ are the message's (hd nil for an
// unparsable one).
func (s *SerialDispatcher) exit(hd *feed.Header, typ feed.MessageType, res CallResult) {
	var end int64
	if s.cur.at != 0 {
		end = monotonic()
	}
	s.ended, s.endedOK = s.cur, s.curOK
	if s.obs == nil {
		return
	}
	call := Call{Pool: s.name, Type: typ, Result: res}
	if hd != nil {
		call.Producer = hd.Producer
	}
	if s.cur.at != 0 {
		call.Timed, call.Wait, call.Duration = true, time.Duration(s.curStart-s.cur.at), time.Duration(end-s.curStart)
	}
	s.obs.ListenerCalled(call)
}
