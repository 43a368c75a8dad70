package feed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/feedkit/feedkit/internal/queue"
)

// SystemHandler receives the system messages (alive, snapshot_complete) of a session: the
// recovery manager's input. HandleSystem is called on the transport's reading goroutine,
// so it must hand the message off and return at once; it must not decode the body there.
type SystemHandler interface {
	HandleSystem(ev Event)
}

// ConnectionLossHandler is implemented by a SystemHandler that must hear of a lost
// connection in order with the system messages: the session calls HandleConnectionDown on
// the transport's reading goroutine, after every message read on the lost connection and
// before any read on the next, which the GlobalEventsListener, called from a goroutine of
// its own, cannot promise. The recovery manager needs this order: a snapshot_complete read
// after the loss must not complete a recovery whose replay the loss cut short. Like
// HandleSystem, it must hand the news off and return at once.
type ConnectionLossHandler interface {
	HandleConnectionDown(s SessionRef, err error)
}

// DefaultMaxBodySize is the largest message body a session accepts by default.
const DefaultMaxBodySize = 8 << 20

// SessionConfig configures a Session. Listener (or Dispatcher) is required; the rest has
// defaults.
//
// The kit gives a component's required collaborators to its constructor, and keeps its
// Config for tunables and plug-ins with a default (see package recovery). The session's
// one required collaborator, where its event messages go, stays here because it comes in
// two forms: a plain Listener, for which the session makes the SerialDispatcher it owns,
// starting its goroutine only at Open (so a session never opened holds none) and sizing
// it with QueueSize; or a Dispatcher of your own, such as the concurrent package's.
type SessionConfig struct {
	// Interest selects the messages of this session; the zero value is AllMessages.
	Interest MessageInterest
	// Index is the session's place among the SDK's sessions, from 0; with Interest, it
	// names the session in its connection changes (SessionRef). 0 for a session alone.
	Index int
	// Node is this SDK instance's node id, so that recovery replies addressed to it reach
	// it; unset means the session receives only messages addressed to no node.
	Node NodeID
	// Listener receives the event messages through a SerialDispatcher. Set either
	// Listener or Dispatcher.
	Listener OddsFeedListener
	// Dispatcher delivers the event messages instead of a SerialDispatcher, for example the
	// concurrent package's. The session closes it on Close.
	Dispatcher Dispatcher
	// QueueSize bounds the SerialDispatcher's queue; 0 means DefaultQueueSize. It is an
	// error with Dispatcher, which has its own bound.
	QueueSize int
	// Global receives connection changes; nil ignores them.
	Global GlobalEventsListener
	// System receives alive and snapshot_complete messages; nil drops them (the recovery
	// manager plugs in here).
	System SystemHandler
	// MaxBodySize is the largest body accepted; a larger one goes to OnUnparsableMessage
	// with ErrBodyTooLarge. 0 means DefaultMaxBodySize.
	MaxBodySize int
	// OnError receives every error the session and its dispatcher report; nil ignores them.
	// It is called from several goroutines and must be safe for concurrent use; a panic
	// in it is logged and otherwise ignored.
	OnError func(error)
	// Logger logs the same errors; nil is silent.
	Logger *slog.Logger
	// Observer is told of every message read and every one that could not be routed or
	// decoded, for metrics; nil tells no one.
	Observer Observer
	// OnDelivery, when set, sees every message the transport hands the session, as it
	// came (routing key, body, receipt time) and before anything is made of it: a
	// malformed one too. It is called on the transport's reading goroutine, so it must
	// be quick; the body is shared, to read or copy, never to modify. A recording
	// (package recording) sits here.
	OnDelivery func(session SessionRef, d Delivery)
}

// SessionStats counts what a session read.
type SessionStats struct {
	Received        uint64 `json:"received"`         // messages read from the transport
	Events          uint64 `json:"events"`           // event messages handed to the dispatcher
	System          uint64 `json:"system"`           // alive and snapshot_complete messages handed to the system handler
	Unroutable      uint64 `json:"unroutable"`       // messages with a malformed routing key or an oversized body
	ConnectionDowns uint64 `json:"connection_downs"` // connection losses reported by the transport
	// SchemaViolations counts the event messages decoded and delivered although they
	// lacked attributes the schema requires (Header.SchemaViolations). It is counted as
	// the dispatcher decodes, before the listener is called.
	SchemaViolations uint64 `json:"schema_violations"`
	// Unhandled counts the event messages decoded for a listener that has no method for
	// them: cashout messages when the listener is no CashoutListener. They are not
	// delivered; implement CashoutListener to receive them.
	Unhandled uint64 `json:"unhandled"`
	// Undecodable counts the event messages routed whose body did not decode: they went
	// to OnUnparsableMessage. It is counted as the dispatcher decodes. With Unroutable, it
	// is what the Observer is told is unparsable.
	Undecodable uint64 `json:"undecodable"`
}

// Session consumes the messages of one MessageInterest from a transport and routes them:
// system messages to the SystemHandler, event messages to the Dispatcher, which decodes
// them on its own goroutine and calls the listener. The goroutine that reads from the
// transport only parses routing keys and peeks at root elements: it never decodes a body
// and never runs listener code, so a slow listener never delays reading (it only fills
// the dispatcher's queue, and then the broker's).
type Session struct {
	transport Transport
	cfg       SessionConfig
	interest  MessageInterest
	bindings  []string
	system    SystemHandler
	maxBody   int
	rep       reporter
	// Set by Open (the caller's Dispatcher is set from the start); read by the transport's
	// goroutine only after Open has subscribed it.
	disp   Dispatcher
	global *notifier // nil without a GlobalEventsListener

	ctx    context.Context // cancelled by Close: unblocks a Receive waiting on the dispatcher
	cancel context.CancelFunc

	mu     sync.Mutex
	state  sessionState
	sub    Subscription
	closed chan struct{}

	obs Observer   // cfg.Observer, nil for none
	ref SessionRef // Ref(), made once: the observer is given it for every message

	nReceived, nEvents, nSystem, nUnroutable, nDowns, nViolations, nUnhandled, nUndecodable atomic.Uint64
}

type sessionState uint8

const (
	sessionNew sessionState = iota
	sessionOpen
	sessionClosed
)

// ErrSessionClosed is returned by Open on a closed session.
var ErrSessionClosed = errors.New("feed: session closed")

// NewSession configures a session on transport t. It starts no goroutine until Open.
func NewSession(t Transport, cfg SessionConfig) (*Session, error) {
	if t == nil {
		return nil, errors.New("feed: NewSession: transport is nil")
	}
	switch {
	case cfg.Listener == nil && cfg.Dispatcher == nil:
		return nil, errors.New("feed: SessionConfig: set Listener or Dispatcher")
	case cfg.Listener != nil && cfg.Dispatcher != nil:
		return nil, errors.New("feed: SessionConfig: set Listener or Dispatcher, not both")
	case cfg.MaxBodySize < 0:
		return nil, fmt.Errorf("feed: SessionConfig.MaxBodySize %d must not be negative", cfg.MaxBodySize)
	case cfg.QueueSize < 0:
		return nil, fmt.Errorf("feed: SessionConfig.QueueSize %d must not be negative", cfg.QueueSize)
	case cfg.QueueSize != 0 && cfg.Dispatcher != nil:
		return nil, errors.New("feed: SessionConfig.QueueSize configures the serial dispatcher; bound your Dispatcher instead")
	case cfg.Index < 0:
		return nil, fmt.Errorf("feed: SessionConfig.Index %d must not be negative", cfg.Index)
	case cfg.Interest.kind == interestEvents && len(cfg.Interest.list()) == 0:
		return nil, errors.New("feed: SessionConfig.Interest: SpecifiedMatchesOnly needs at least one event")
	}
	s := &Session{
		transport: t,
		cfg:       cfg,
		interest:  cfg.Interest,
		bindings:  cfg.Interest.BindingKeys(cfg.Node),
		disp:      cfg.Dispatcher,
		system:    cfg.System,
		maxBody:   cfg.MaxBodySize,
		rep:       newReporter(cfg.OnError, cfg.Logger),
		closed:    make(chan struct{}),
		obs:       cfg.Observer,
		ref:       SessionRef{Index: cfg.Index, Interest: cfg.Interest},
	}
	if s.maxBody == 0 {
		s.maxBody = DefaultMaxBodySize
	}
	if s.system == nil {
		s.system = nopSystem{}
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

// Interest returns the session's message interest.
func (s *Session) Interest() MessageInterest { return s.interest }

// BindingKeys returns the topic patterns the session's queue is bound with.
func (s *Session) BindingKeys() []string { return append([]string(nil), s.bindings...) }

// Open starts the session's goroutines, subscribes to the transport and starts consuming.
// If the subscription fails, the goroutines are stopped again and Open may be retried.
func (s *Session) Open(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.state {
	case sessionOpen:
		return errors.New("feed: session already open")
	case sessionClosed:
		return ErrSessionClosed
	}
	var serial *SerialDispatcher
	if s.cfg.Dispatcher == nil {
		d, err := NewSerialDispatcher(s.cfg.Listener, DispatcherOptions{
			QueueSize: s.cfg.QueueSize, OnError: s.cfg.OnError, Logger: s.cfg.Logger})
		if err != nil {
			return err
		}
		serial, s.disp = d, d
	}
	if s.cfg.Global != nil {
		s.global = newNotifier(s.cfg.Global, s.rep)
	}
	sub, err := s.transport.Subscribe(ctx, s.bindings, receiver{s})
	if err != nil {
		if serial != nil {
			_ = serial.Close(ctx)
			s.disp = nil
		}
		if s.global != nil {
			_ = s.global.close(ctx)
			s.global = nil
		}
		return fmt.Errorf("feed: open session (%s): %w", s.interest, err)
	}
	s.sub, s.state = sub, sessionOpen
	return nil
}

// Ref names the session in the global events: its Index and Interest.
func (s *Session) Ref() SessionRef { return s.ref }

// Close stops consuming, lets the dispatcher deliver what it holds and returns once the
// session's goroutines are done. If ctx ends first, what is still queued is abandoned and
// Close returns ctx.Err().
//
// Close waits for the listener call in progress, so a listener must not call Close itself
// (it would wait for its own return); to stop the session from a listener, call Close on
// a new goroutine.
func (s *Session) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.state == sessionClosed {
		s.mu.Unlock()
		<-s.closed
		return nil
	}
	s.state = sessionClosed
	sub := s.sub
	s.mu.Unlock()
	defer close(s.closed)

	// If ctx ends, stop waiting on the dispatcher: a Receive blocked in Dispatch returns.
	stop := context.AfterFunc(ctx, s.cancel)
	defer stop()
	var errs []error
	if sub != nil {
		errs = append(errs, sub.Close(ctx))
	}
	s.cancel()
	if s.disp != nil {
		errs = append(errs, s.disp.Close(ctx))
	}
	if s.global != nil {
		errs = append(errs, s.global.close(ctx))
	}
	return errors.Join(errs...)
}

// Stats returns the session's counters.
func (s *Session) Stats() SessionStats {
	return SessionStats{
		Received:         s.nReceived.Load(),
		Events:           s.nEvents.Load(),
		System:           s.nSystem.Load(),
		Unroutable:       s.nUnroutable.Load(),
		ConnectionDowns:  s.nDowns.Load(),
		SchemaViolations: s.nViolations.Load(),
		Unhandled:        s.nUnhandled.Load(),
		Undecodable:      s.nUndecodable.Load(),
	}
}

// receiver is the session's face towards the transport, kept out of Session's method set.
type receiver struct{ s *Session }

// Receive routes one delivery. It runs on the transport's reading goroutine.
func (r receiver) Receive(d Delivery) {
	s := r.s
	s.nReceived.Add(1)
	if h := s.cfg.OnDelivery; h != nil {
		h(s.ref, d)
	}
	ev := Event{RawKey: d.RoutingKey, Body: d.Body, ReceivedAt: d.ReceivedAt, bodyOwned: true, from: s}
	key, err := ParseRoutingKey(d.RoutingKey)
	peeked := false
	switch {
	case err != nil:
		ev.Err = err
	case len(d.Body) > s.maxBody:
		ev.Key = key
		ev.Err = fmt.Errorf("%w: %d bytes, limit %d", ErrBodyTooLarge, len(d.Body), s.maxBody)
	default:
		ev.Key = key
		peeked = true
		p, err := Peek(d.Body)
		switch {
		case err == nil:
			ev.Producer, ev.RequestID = p.Producer, p.RequestID
			if p.Type != key.Type && key.Type.IsSystem() {
				ev.Err = &DecodeError{Type: key.Type, Msg: fmt.Sprintf("routing key says %s, body is <%s>", key.Type, p.Type)}
			}
		case key.Type.IsSystem():
			// An event body that does not peek will fail to decode on the dispatcher's side;
			// a system message must be turned away here, before the system handler sees it.
			ev.Err = err
		}
		if key.Type.IsSystem() && ev.Err == nil {
			s.nSystem.Add(1)
			if s.obs != nil {
				s.observe(&ev, len(d.Body), true)
			}
			s.handleSystem(ev)
			return
		}
	}
	if ev.Err != nil {
		s.nUnroutable.Add(1)
	} else {
		s.nEvents.Add(1)
	}
	if s.obs != nil {
		s.observe(&ev, len(d.Body), peeked)
	}
	if err := s.disp.Dispatch(s.ctx, ev); err != nil {
		// Only a closing session gets here: the message was read after Close began.
		s.rep.report(s.ctx, fmt.Errorf("feed: message %s dropped by a closing session: %w", d.RoutingKey, err))
	}
}

// observe tells the observer of a message read, before it is routed, and of its refusal
// when the session cannot route it (ev.Err): the dispatcher gives such a message to
// OnUnparsableMessage without decoding it, so Deliver does not tell of it again.
func (s *Session) observe(ev *Event, bytes int, peeked bool) {
	producer := ev.Producer
	if !peeked {
		// The key or the size refused the message before Peek; its root may still say
		// whose it is, and the observer is told that.
		if p, err := Peek(ev.Body); err == nil {
			producer = p.Producer
		}
	}
	s.obs.FeedMessageReceived(s.ref, producer, ev.Key.Type, bytes)
	if ev.Err != nil {
		s.obs.FeedMessageUnparsable(s.ref, producer, ev.Key.Type)
	}
}

// undecodable counts an event message that the session routed and Deliver could not
// decode, and tells the observer, on the dispatcher's goroutine.
func (s *Session) undecodable(ev *Event) {
	s.nUndecodable.Add(1)
	if s.obs != nil {
		s.obs.FeedMessageUnparsable(s.ref, ev.Producer, ev.Key.Type)
	}
}

// handleSystem passes a system message on, keeping a panicking handler from stopping the
// transport's reading goroutine.
func (s *Session) handleSystem(ev Event) {
	defer func() {
		if p := recover(); p != nil {
			s.rep.report(s.ctx, &ListenerError{Method: "SystemHandler.HandleSystem", Panic: p, Stack: debug.Stack()})
		}
	}()
	s.system.HandleSystem(ev)
}

// ConnectionDown forwards the loss of the connection to the GlobalEventsListener.
func (r receiver) ConnectionDown(err error) {
	r.s.nDowns.Add(1)
	r.s.rep.log.LogAttrs(r.s.ctx, slog.LevelWarn, "feed: connection down", slog.Any("err", err))
	if h, ok := r.s.system.(ConnectionLossHandler); ok {
		r.s.handleConnectionDown(h, err)
	}
	if g := r.s.global; g != nil {
		ref := r.s.Ref()
		g.post(r.s.ctx, func(ctx context.Context, l GlobalEventsListener) { l.OnConnectionDown(ctx, ref, err) })
	}
}

// ConnectionUp forwards the (re-)established connection to the GlobalEventsListener.
func (r receiver) ConnectionUp() {
	r.s.rep.log.LogAttrs(r.s.ctx, slog.LevelInfo, "feed: connection up")
	if g := r.s.global; g != nil {
		ref := r.s.Ref()
		g.post(r.s.ctx, func(ctx context.Context, l GlobalEventsListener) { l.OnConnectionUp(ctx, ref) })
	}
}

// Error passes a transport's error to the session's OnError. The transport has logged it
// with its own logger.
func (r receiver) Error(err error) {
	if r.s.rep.onError != nil {
		r.s.rep.callOnError(r.s.ctx, err)
	}
}

// handleConnectionDown passes the loss on, keeping a panicking handler from stopping the
// transport's reading goroutine.
func (s *Session) handleConnectionDown(h ConnectionLossHandler, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.rep.report(s.ctx, &ListenerError{Method: "ConnectionLossHandler.HandleConnectionDown", Panic: p, Stack: debug.Stack()})
		}
	}()
	h.HandleConnectionDown(s.Ref(), err)
}

type nopSystem struct{}

func (nopSystem) HandleSystem(Event) {}

// notifier calls a GlobalEventsListener on a goroutine of its own, in order, so that the
// transport's reading goroutine never runs customer code.
type notifier struct {
	l      GlobalEventsListener
	rep    reporter
	q      *queue.Queue[func(context.Context, GlobalEventsListener)]
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
}

func newNotifier(l GlobalEventsListener, rep reporter) *notifier {
	ctx, cancel := context.WithCancel(context.Background())
	n := &notifier{l: l, rep: rep, q: queue.New[func(context.Context, GlobalEventsListener)](64),
		ctx: ctx, cancel: cancel, done: make(chan struct{})}
	go n.run()
	return n
}

func (n *notifier) post(ctx context.Context, call func(context.Context, GlobalEventsListener)) {
	_ = n.q.Put(ctx, call) // fails only while closing, when the news no longer matters
}

func (n *notifier) run() {
	defer close(n.done)
	for {
		call, ok := n.q.Get()
		if !ok {
			return
		}
		if n.ctx.Err() == nil {
			n.safeCall(call)
		}
	}
}

// safeCall keeps a panicking listener from stopping the notices that follow.
func (n *notifier) safeCall(call func(context.Context, GlobalEventsListener)) {
	defer func() {
		if p := recover(); p != nil {
			n.rep.report(n.ctx, &ListenerError{Method: "GlobalEventsListener", Panic: p, Stack: debug.Stack()})
		}
	}()
	call(n.ctx, n.l)
}

func (n *notifier) close(ctx context.Context) error {
	n.q.Close()
	select {
	case <-n.done:
		return nil
	case <-ctx.Done():
		n.cancel()
		return ctx.Err()
	}
}
