package concurrent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/internal/durcheck"
)

// StatusGate passes the SDK's global events on to the customer's
// feed.GlobalEventsListener, holding back the news that a producer is up until the
// customer's odds listener has seen every message of the recovery that made it so.
// Those who know the Java SDK's Concurrent Listener know it as
// ConcurrentSDKGlobalEventsListener.
//
// The rules, per producer:
//
//   - OnRecoveryInitiated for the whole producer (no Event) records its RecoveryContext.
//     A newer one supersedes the older: a status still held back for the older recovery is
//     dropped, since the producer is being recovered again and its up will follow. A
//     recovery without a request id cannot be told from live traffic, so it records none.
//   - OnProducerStatusChange with an up reason (FirstRecoveryCompleted,
//     ProcessingQueueDelayStabilized, ReturnedFromInactivity) is held back while the
//     producer's recorded context has tasks pending, and forwarded the moment the last one
//     completes: no polling. With no recorded context, or none pending, it is forwarded at
//     once. Ups that arrive while one is held back join it, in order.
//   - Any other status change (down, delayed) cancels the ups held back for the producer
//     and is forwarded at once: the customer never sees an up after a later down.
//   - If messages of the recovery were abandoned rather than delivered (a dispatcher closed
//     before it ran them), its up is dropped, not forwarded: the customer has not seen
//     the whole recovery.
//   - OnEventRecoveryCompleted is held back likewise until the tasks of its request are
//     done (it carries its request id, so its context is exact): forwarded at once, it
//     would tell the customer the event was recovered before the replayed messages of
//     the event had all been processed.
//   - Every other call is forwarded at once.
//   - With GateConfig.HoldLimit set, an up held back that long, its recovery's tasks still
//     pending, is reported to GateConfig.OnHoldLimit, once; it stays held, since what
//     to do is the caller's: the SDK takes the producer down (feed.ProcessingStalled) and
//     recovers it again, and the down drops the up. Only producer ups are bounded, not
//     event recoveries.
//
// The customer's listener is called on one goroutine of the StatusGate, in the
// order of these decisions, with a context of its own (the caller's is not passed on); a
// call that panics is reported and the next goes on.
//
// GateConfig.Observer is told of each up or event recovery's end held back and of each
// released, as Stats counts them (Deferred, Released).
//
// A task is counted when it is dispatched. An up must therefore come after every message
// of its recovery has been dispatched, on every session that receives some: the recovery
// manager sends it after snapshot_complete, which the feed sends after the replayed
// messages, on each session.
type StatusGate struct {
	l       feed.GlobalEventsListener
	tracker *TaskLifecycleTracker
	rep     *feed.DeliveryReporter // the customer's panics
	log     *slog.Logger
	box     *mailbox
	obs     Observer
	clock   clock.Clock
	limit   time.Duration            // GateConfig.HoldLimit; 0 for none
	onLimit func(rc RecoveryContext) // GateConfig.OnHoldLimit

	mu         sync.Mutex
	recovering map[int]RecoveryContext // producer → its latest producer recovery
	held       map[int]*heldUps        // producer → the ups held back
	heldEvents map[*heldEvent]struct{}
	closed     bool     // nothing is held any more: every call is dropped
	logs       []func() // log records made under mu, written once it is released
	notes      []gateNote
	// eventKinds keeps the kind of each event recovery initiated and not yet completed,
	// for the Observer (EventRecoveryCompleted does not say it); only with an Observer.
	eventKinds map[RecoveryContext]feed.RecoveryKind

	forwarded, deferred, released, cancelled, superseded, incomplete, dropped, pastLimit atomic.Uint64
}

// heldUps are the up statuses of one producer waiting for the tasks of rc.
type heldUps struct {
	rc       RecoveryContext
	statuses []feed.ProducerStatus
	since    []time.Time // when each status was held back; kept only with an Observer
	stop     func() bool
	limit    clock.Timer // fires at GateConfig.HoldLimit; nil without one
}

type heldEvent struct {
	r     feed.EventRecoveryCompleted
	kind  feed.RecoveryKind
	since time.Time // kept only with an Observer
	stop  func() bool
}

// gateNote is what the Observer is to be told of an up held back or released, recorded
// under the gate's lock and told once it is released.
type gateNote struct {
	producer int
	kind     feed.RecoveryKind
	released bool
	held     time.Duration
}

// maxEventKinds bounds StatusGate.eventKinds: an event recovery that never completes
// (its snapshot never came) must not keep its entry for ever. Past the bound the map is
// cleared; a kind forgotten is told as feed.EventRecovery.
const maxEventKinds = 1024

var _ feed.GlobalEventsListener = (*StatusGate)(nil)

const onStatus = "OnProducerStatusChange"

// GateConfig configures a StatusGate.
type GateConfig struct {
	// OnError receives a *feed.ListenerError for every customer call that panicked.
	OnError func(error)
	// Logger logs the same, and the statuses held back, released and cancelled; nil is
	// silent.
	Logger *slog.Logger
	// Observer is told of the ups held back and released, for metrics; nil tells no one.
	Observer Observer
	// HoldLimit bounds how long a producer's up is held back: once the first up held for
	// a recovery has waited that long, the recovery's tasks still pending, OnHoldLimit is
	// told, once. 0 means no bound, a negative value is refused; a bound needs
	// OnHoldLimit. The up stays held until the tasks are done or a later status drops it.
	HoldLimit time.Duration
	// OnHoldLimit is called with the recovery context of an up held past HoldLimit, on a
	// goroutine of its own (the Clock's timer), outside the gate's lock: it may call the
	// gate, or the recovery manager (the SDK calls recovery.Manager.RecoverProducer). A
	// call that panics is reported as the customer's are.
	OnHoldLimit func(rc RecoveryContext)
	// Clock times HoldLimit; nil is the wall clock (a clocktest.Fake in tests).
	Clock clock.Clock
}

// NewStatusGate returns a listener that forwards to l, holding ups back on the
// tasks tracker follows. Give the OddsFeedListeners of the SDK the same tracker.
func NewStatusGate(l feed.GlobalEventsListener, tracker *TaskLifecycleTracker, cfg GateConfig) (*StatusGate, error) {
	if l == nil {
		return nil, errors.New("concurrent: NewStatusGate: listener is nil")
	}
	if tracker == nil {
		return nil, errors.New("concurrent: NewStatusGate: tracker is nil")
	}
	switch {
	case cfg.HoldLimit < 0:
		return nil, fmt.Errorf("concurrent: NewStatusGate: GateConfig.HoldLimit %v must not be negative (0 means no bound)", cfg.HoldLimit)
	case cfg.HoldLimit > 0 && cfg.OnHoldLimit == nil:
		return nil, errors.New("concurrent: NewStatusGate: GateConfig.HoldLimit is set and GateConfig.OnHoldLimit is nil: set what to do with an up held past the bound")
	case cfg.HoldLimit > 0:
		if err := durcheck.AtLeast("GateConfig.HoldLimit", cfg.HoldLimit, time.Millisecond); err != nil {
			return nil, fmt.Errorf("concurrent: NewStatusGate: %w", err)
		}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	g := &StatusGate{
		l:          l,
		tracker:    tracker,
		rep:        feed.NewDeliveryReporter(cfg.OnError, log),
		log:        log,
		obs:        cfg.Observer,
		clock:      clock.OrReal(cfg.Clock),
		limit:      cfg.HoldLimit,
		onLimit:    cfg.OnHoldLimit,
		recovering: make(map[int]RecoveryContext),
		held:       make(map[int]*heldUps),
		heldEvents: make(map[*heldEvent]struct{}),
	}
	g.box = newMailbox(func(method string, p any) {
		g.rep.Report(context.Background(), &feed.ListenerError{Method: "StatusGate." + method, Panic: p, Stack: debug.Stack()})
	})
	return g, nil
}

// OnConnectionDown forwards the call.
func (g *StatusGate) OnConnectionDown(_ context.Context, s feed.SessionRef, err error) {
	g.forward("OnConnectionDown", func(ctx context.Context) { g.l.OnConnectionDown(ctx, s, err) })
}

// OnConnectionUp forwards the call.
func (g *StatusGate) OnConnectionUp(_ context.Context, s feed.SessionRef) {
	g.forward("OnConnectionUp", func(ctx context.Context) { g.l.OnConnectionUp(ctx, s) })
}

// OnRecoveryInitiated records the recovery's context (for a producer recovery) and
// forwards the call.
func (g *StatusGate) OnRecoveryInitiated(_ context.Context, r feed.RecoveryInitiated) {
	g.mu.Lock()
	defer g.unlock()
	if !r.Event.IsZero() && g.obs != nil {
		if g.eventKinds == nil || len(g.eventKinds) >= maxEventKinds {
			g.eventKinds = make(map[RecoveryContext]feed.RecoveryKind)
		}
		g.eventKinds[RecoveryContext{Producer: r.Producer, RequestID: r.RequestID}] = r.Kind
	}
	if r.Event.IsZero() {
		rc := RecoveryContext{Producer: r.Producer, RequestID: r.RequestID}
		if h := g.held[r.Producer]; h != nil && h.rc != rc {
			g.dropLocked(r.Producer, h, &g.superseded, "superseded by a newer recovery")
		}
		if rc.RequestID != 0 {
			g.recovering[r.Producer] = rc
		} else {
			delete(g.recovering, r.Producer) // its messages are counted with the live ones
		}
	}
	g.forwardLocked("OnRecoveryInitiated", func(ctx context.Context) { g.l.OnRecoveryInitiated(ctx, r) })
}

// OnProducerStatusChange forwards s, holding an up back until its recovery's tasks are
// done; see the rules on StatusGate.
func (g *StatusGate) OnProducerStatusChange(_ context.Context, s feed.ProducerStatus) {
	g.mu.Lock()
	defer g.unlock()
	if g.closed {
		g.dropped.Add(1)
		return
	}
	h := g.held[s.Producer]
	if !s.Reason.IsUp() {
		if h != nil {
			g.dropLocked(s.Producer, h, &g.cancelled, "cancelled by a later status "+s.Reason.String())
		}
		g.forwardLocked(onStatus, func(ctx context.Context) { g.l.OnProducerStatusChange(ctx, s) })
		return
	}
	if h != nil {
		h.statuses = append(h.statuses, s)
		g.heldLocked(h, s.Producer)
		return
	}
	if rc, ok := g.recovering[s.Producer]; ok {
		h := &heldUps{rc: rc, statuses: []feed.ProducerStatus{s}}
		stop, waiting, complete := g.tracker.whenIdle(rc, func(complete bool) { g.release(s.Producer, h, complete) })
		switch {
		case waiting:
			h.stop = stop
			if g.limit > 0 {
				h.limit = g.clock.AfterFunc(g.limit, func() { g.pastLimitOf(s.Producer, h) })
			}
			g.held[s.Producer] = h
			g.heldLocked(h, s.Producer)
			g.logLocked("concurrent: producer up held back until its recovery's tasks are done",
				slog.Int("producer", s.Producer), slog.Int64("request_id", rc.RequestID),
				slog.String("reason", s.Reason.String()), slog.Int("pending", g.tracker.Pending(rc)))
			return
		case !complete:
			g.incomplete.Add(1)
			g.logLocked("concurrent: producer up dropped: messages of its recovery were abandoned",
				slog.Int("producer", s.Producer), slog.Int64("request_id", rc.RequestID))
			return
		}
	}
	g.forwardLocked(onStatus, func(ctx context.Context) { g.l.OnProducerStatusChange(ctx, s) })
}

// OnEventRecoveryCompleted forwards r once the tasks of its request are done.
func (g *StatusGate) OnEventRecoveryCompleted(_ context.Context, r feed.EventRecoveryCompleted) {
	g.mu.Lock()
	defer g.unlock()
	if g.closed {
		g.dropped.Add(1)
		return
	}
	const method = "OnEventRecoveryCompleted"
	call := func(ctx context.Context) { g.l.OnEventRecoveryCompleted(ctx, r) }
	rc := RecoveryContext{Producer: r.Producer, RequestID: r.RequestID}
	h := &heldEvent{r: r, kind: feed.EventRecovery}
	if g.obs != nil {
		if k, ok := g.eventKinds[rc]; ok {
			h.kind = k
			delete(g.eventKinds, rc)
		}
	}
	stop, waiting, complete := g.tracker.whenIdle(rc, func(complete bool) {
		g.mu.Lock()
		defer g.unlock()
		if _, ok := g.heldEvents[h]; !ok {
			return
		}
		delete(g.heldEvents, h)
		if complete {
			g.released.Add(1)
			if g.obs != nil {
				g.notes = append(g.notes, gateNote{producer: r.Producer, kind: h.kind, released: true, held: time.Since(h.since)})
			}
			g.forwardLocked(method, call)
		} else {
			g.incomplete.Add(1)
		}
	})
	switch {
	case !waiting && complete:
		g.forwardLocked(method, call)
		return
	case !waiting:
		g.incomplete.Add(1)
		return
	}
	h.stop = stop
	g.heldEvents[h] = struct{}{}
	g.deferred.Add(1)
	if g.obs != nil {
		h.since = time.Now()
		g.notes = append(g.notes, gateNote{producer: r.Producer, kind: h.kind})
	}
}

// heldLocked counts the up just added to h's statuses as held back, for the Stats and
// the Observer.
func (g *StatusGate) heldLocked(h *heldUps, producer int) {
	g.deferred.Add(1)
	if g.obs != nil {
		h.since = append(h.since, time.Now())
		g.notes = append(g.notes, gateNote{producer: producer, kind: feed.ProducerRecovery})
	}
}

// release forwards h's statuses once its recovery's tasks are done, unless h was dropped
// meanwhile.
func (g *StatusGate) release(producer int, h *heldUps, complete bool) {
	g.mu.Lock()
	defer g.unlock()
	if g.held[producer] != h {
		return
	}
	if !complete {
		g.dropLocked(producer, h, &g.incomplete, "messages of its recovery were abandoned")
		return
	}
	delete(g.held, producer)
	h.stopLimit()
	g.released.Add(uint64(len(h.statuses)))
	if g.obs != nil {
		for _, since := range h.since {
			g.notes = append(g.notes, gateNote{producer: producer, kind: feed.ProducerRecovery, released: true, held: time.Since(since)})
		}
	}
	for _, s := range h.statuses {
		g.forwardLocked(onStatus, func(ctx context.Context) { g.l.OnProducerStatusChange(ctx, s) })
	}
}

func (g *StatusGate) dropLocked(producer int, h *heldUps, counter *atomic.Uint64, why string) {
	h.stop()
	h.stopLimit()
	delete(g.held, producer)
	counter.Add(uint64(len(h.statuses)))
	g.logLocked("concurrent: held-back producer up dropped",
		slog.Int("producer", producer), slog.Int64("request_id", h.rc.RequestID),
		slog.Int("statuses", len(h.statuses)), slog.String("why", why))
}

// stopLimit stops h's HoldLimit timer, if it has one; a timer that fired already finds
// h no longer held.
func (h *heldUps) stopLimit() {
	if h.limit != nil {
		h.limit.Stop()
	}
}

// pastLimitOf tells OnHoldLimit of h, held back for HoldLimit, unless it was released or
// dropped meanwhile.
func (g *StatusGate) pastLimitOf(producer int, h *heldUps) {
	g.mu.Lock()
	if g.held[producer] != h {
		g.unlock()
		return
	}
	g.pastLimit.Add(1)
	g.logLocked("concurrent: producer up held back past GateConfig.HoldLimit: its recovery's tasks are still pending",
		slog.Int("producer", producer), slog.Int64("request_id", h.rc.RequestID),
		slog.Duration("hold_limit", g.limit), slog.Int("pending", g.tracker.Pending(h.rc)))
	g.unlock()
	defer func() {
		if p := recover(); p != nil {
			g.rep.Report(context.Background(), &feed.ListenerError{Method: "GateConfig.OnHoldLimit", Panic: p, Stack: debug.Stack()})
		}
	}()
	g.onLimit(h.rc)
}

// logLocked records a log line to write once g.mu is released: a slow log handler, or one
// that calls back into g, must not run under the lock that releasing workers take.
func (g *StatusGate) logLocked(msg string, attrs ...slog.Attr) {
	g.logs = append(g.logs, func() { g.log.LogAttrs(context.Background(), slog.LevelInfo, msg, attrs...) })
}

// unlock releases g.mu, writes the log lines recorded under it and tells the Observer
// what was noted: neither runs under the lock that releasing workers take.
func (g *StatusGate) unlock() {
	logs, notes := g.logs, g.notes
	g.logs, g.notes = nil, nil
	g.mu.Unlock()
	for _, write := range logs {
		write()
	}
	for _, n := range notes {
		if n.released {
			g.obs.ProducerUpReleased(n.producer, n.kind, n.held)
		} else {
			g.obs.ProducerUpHeld(n.producer, n.kind)
		}
	}
}

func (g *StatusGate) forward(method string, call func(context.Context)) {
	g.mu.Lock()
	defer g.unlock()
	g.forwardLocked(method, call)
}

// forwardLocked queues call for the customer; under g.mu, so that the customer sees the
// calls in the order they were decided.
func (g *StatusGate) forwardLocked(method string, call func(context.Context)) {
	if g.box.post(method, call) {
		g.forwarded.Add(1)
	} else {
		g.dropped.Add(1)
	}
}

// Close stops forwarding: what is held back is dropped, what was forwarded is delivered,
// and Close returns once the customer's listener has had its last call. If ctx ends
// first, the calls not yet made are dropped too, the context of the call in progress is
// cancelled, and Close returns ctx.Err(). Calls after Close are dropped.
func (g *StatusGate) Close(ctx context.Context) error {
	g.mu.Lock()
	for p, h := range g.held {
		g.dropLocked(p, h, &g.dropped, "listener closed")
	}
	for h := range g.heldEvents {
		h.stop() // if it fired already, its callback finds h gone and forwards nothing
		g.dropped.Add(1)
		delete(g.heldEvents, h)
	}
	g.closed = true
	g.unlock()
	return g.box.close(ctx)
}

// GateStats counts what a StatusGate did.
type GateStats struct {
	Forwarded  uint64 `json:"forwarded"`  // calls queued for the customer
	Held       int    `json:"held"`       // ups and event recoveries held back now
	Deferred   uint64 `json:"deferred"`   // ups and event recoveries that had to wait for tasks
	Released   uint64 `json:"released"`   // of those, forwarded when the tasks were done
	Cancelled  uint64 `json:"cancelled"`  // ups dropped because a later status came first
	Superseded uint64 `json:"superseded"` // ups dropped because a newer recovery of the producer began
	Incomplete uint64 `json:"incomplete"` // ups and event recoveries dropped because messages of their recovery were abandoned
	Dropped    uint64 `json:"dropped"`    // calls dropped because the listener was closed, or not made because Close gave up
	PastLimit  uint64 `json:"past_limit"` // ups held back past GateConfig.HoldLimit (OnHoldLimit told)
}

// Stats returns the listener's counters.
func (g *StatusGate) Stats() GateStats {
	g.mu.Lock()
	held := len(g.heldEvents)
	for _, h := range g.held {
		held += len(h.statuses)
	}
	g.mu.Unlock()
	return GateStats{
		Forwarded:  g.forwarded.Load(),
		Held:       held,
		Deferred:   g.deferred.Load(),
		Released:   g.released.Load(),
		Cancelled:  g.cancelled.Load(),
		Superseded: g.superseded.Load(),
		Incomplete: g.incomplete.Load(),
		Dropped:    g.dropped.Load() + g.box.skipped.Load(),
		PastLimit:  g.pastLimit.Load(),
	}
}
