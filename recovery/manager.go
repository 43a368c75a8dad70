package recovery

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/heartbeat"
)

// Manager follows the health of the feed's producers and recovers what was lost: it reads
// the system messages of the SDK's sessions (alive, snapshot_complete), checks for missing
// heartbeats, requests recoveries within the account's rate limits, and reports every
// change to the GlobalEventsListener. See the package documentation for the rules.
//
// All decisions are taken on one goroutine of the manager, so the rules never race with
// each other; the recovery API is called on goroutines of their own, so a slow API delays
// no alive.
type Manager struct {
	s         settings
	mon       *heartbeat.Monitor[int]
	producers map[int]*producer // the set is fixed by Open (setProducers); fields are guarded by mu
	order     []*producer       // in the order of the list followed

	inbox   chan input
	results chan result
	closing chan struct{} // closed by Close: HandleSystem stops waiting on a full inbox

	mu       sync.Mutex
	effects  []func()                 // calls to make once mu is released (store, listener, reports)
	nextID   int64                    // the last request id used
	handlers int                      // the SystemHandlers given
	events   map[int64]*eventRecovery // event recoveries under way, by request id
	stats    Stats
	state    lifecycle
	ctx      context.Context // the loop's, cancelled by Close
	cancel   context.CancelFunc
	done     chan struct{}
	wg       sync.WaitGroup // the loop and the request goroutines
	retry    clock.Timer    // fires at the earliest scheduled retry
	tick     clock.Ticker   // every CheckInterval
}

type lifecycle uint8

const (
	created lifecycle = iota
	open
	closed
)

// producer is the manager's state of one producer.
type producer struct {
	feed   feed.Producer
	limit  time.Duration // heartbeat limit: a silence longer than it, not equal, is too long (pastLimit)
	maxLen time.Duration // longest recovery

	rec       Record
	up        bool      // the customer was last told the producer is up
	delayed   bool      // live messages are processed too late
	recovered bool      // a recovery has completed in this process (FirstRecoveryCompleted)
	needs     bool      // a recovery must be requested
	from      time.Time // where that recovery goes back to, chosen when the need arose
	again     bool      // a new need arose while a request was in flight
	inFlight  int64     // the request id being sent; 0 when none
	attempt   int       // failed attempts of the needed request
	retryAt   time.Time // no attempt before this (rate limit, backoff)
	snapID    int64     // the request whose snapshot_complete copies are being collected
	snapSeen  map[int]bool
	lastAlive time.Time // the feed's timestamp of the last alive, to drop duplicates
	aliveAt   time.Time // when the last alive was received, in our clock: the alive-gap rule
	savedAt   time.Time // when the record was last saved
	saved     Record    // the record last saved

	// floor is the feed's timestamp of the last alive read before the last recovery
	// completed: a processed point must be past it, since the alives before it may have
	// come ahead of the replay on some session.
	floor       time.Time
	coveredFrom time.Time     // where the accepted recovery goes back to
	acceptedAt  time.Time     // when the API's acceptance of that recovery was applied, in our clock (Observer)
	hold        *Hold         // a failed message holding the recovery point; nil when none
	drift       time.Duration // our clock minus the feed's, at the last alive
	drifting    bool          // drift is past driftWarning (logged)

	// maxDelay is the largest processing delay of a live message since the last check,
	// in nanoseconds; noDelay when no message was processed. Written by the dispatchers.
	maxDelay atomic.Int64
}

const noDelay = math.MinInt64

// input is what the sessions hand the manager.
type input struct {
	ev             feed.Event
	session        int
	connDown       bool
	lost           feed.SessionRef // the session whose connection was lost, with connDown
	err            error
	processed      int       // a producer whose processed point moved to through (ProcessedThrough)
	through        time.Time //
	failed         *Hold     // a listener call that failed, of failedProducer (ListenerFailed)
	failedProducer int
	barrier        chan struct{} // closed once everything due before it is handled (Flush)
	event          *eventResult  // the API's answer to an event recovery request
	recoverAgain   *recoverAgain // a producer to take down and recover (RecoverProducer)
}

// NewManager checks cfg and returns a manager; it starts nothing until Open. Its
// arguments are what the manager is wired to:
//
//   - req sends the recovery requests (a *feedapi.Client); it may be nil only when
//     cfg.Disabled turns recoveries off (ErrNoRequester).
//   - global receives producer status changes and recovery initiations, on the manager's
//     goroutine and in order; it should return promptly (the concurrent package's
//     StatusGate does). nil ignores them.
//   - node is this SDK instance's node id, recorded with each request; the zero NodeID
//     when recovery replies are addressed to no node.
//
// Each session that delivers system messages takes a handler (SystemHandler) before Open.
func NewManager(req Requester, global feed.GlobalEventsListener, node feed.NodeID, cfg Config) (*Manager, error) {
	s, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	if s.enabled && req == nil {
		return nil, ErrNoRequester
	}
	s.requester, s.listener, s.node, s.sessions = req, global, node, 1
	m := &Manager{
		s:       s,
		inbox:   make(chan input, 1024),
		events:  make(map[int64]*eventRecovery),
		results: make(chan result, 64),
		closing: make(chan struct{}),
		done:    make(chan struct{}),
	}
	m.setProducers(s.Producers)
	m.mon, err = heartbeat.New(heartbeat.Config[int]{
		TimeoutOf: func(id int) time.Duration { return monitorTimeout(m.producers[id].limit) },
		Timeout:   monitorTimeout(feed.LiveHeartbeatLimit),
		// The manager advances the monitor at its own checks, which start at Open, not at
		// New; a tick of the monitor's own would round deadlines up to boundaries out of
		// phase with them and find a silence one check late. With a tick of 1ns a check
		// finds exactly the producers past their limit at that moment. The cost is nil for
		// a handful of producers: each check visits the wheel's few buckets once.
		Tick:   time.Nanosecond,
		Shards: 1, // one goroutine, the manager's, beats a handful of keys
		OnLost: m.onLost,
		Clock:  s.Clock,
	})
	if err != nil {
		return nil, fmt.Errorf("recovery: %w", err)
	}
	return m, nil
}

// ErrClosed is returned by Open and Flush on a closed manager.
var ErrClosed = errors.New("recovery: manager closed")

// Open loads the producer records from the Store and starts the manager, following the
// producers of Config.ProducerSource, or Config.Producers without one (less
// Config.DisabledProducers). Producers start down: a producer that was healthy when its record was
// saved has missed what was sent while this process was not running, so each producer is
// recovered when its alives arrive. Before anything else, the GlobalEventsListener is
// told so: one OnProducerStatusChange per producer followed, down with the reason
// feed.InitialState, in the order of the list. Open may be retried after a failure.
func (m *Manager) Open(ctx context.Context) error {
	m.mu.Lock()
	state := m.state
	m.mu.Unlock()
	if state == closed {
		return ErrClosed
	}
	list, err := m.accountProducers(ctx)
	if err != nil {
		return err
	}
	m.warnInMemory(ctx)
	recs, err := m.s.Store.Load(ctx)
	if err != nil {
		return fmt.Errorf("recovery: loading producer records: %w", err)
	}
	m.mu.Lock()
	initial, err := m.openLocked(ctx, recs, list)
	m.mu.Unlock()
	if err != nil {
		return err
	}
	// Told before the loop starts, so that nothing the loop reports comes first; not under
	// mu, as the listener may ask for the producers' states.
	m.tellInitial(initial)
	go m.run()
	return nil
}

func (m *Manager) openLocked(ctx context.Context, recs []Record, list []feed.Producer) ([]feed.ProducerStatus, error) {
	switch m.state {
	case open:
		return nil, errors.New("recovery: manager already open")
	case closed:
		return nil, ErrClosed
	}
	if list != nil {
		if err := m.s.checkProducers("Config.ProducerSource", list); err != nil {
			return nil, err
		}
		m.setProducers(list)
	}
	for _, r := range recs {
		p, ok := m.producers[r.Producer]
		if !ok {
			continue
		}
		p.rec, p.saved = r, r
		switch r.State {
		case Healthy:
			// Nothing was received while the process was down: recover from the last
			// subscription (rule 2a) at the first alive.
			p.rec.State = Disconnected
		case Recovering:
			// Its replay went to the queue of the process that asked for it.
			p.needs = true
			p.from, _ = RecoveryFrom(p.rec, m.s.Clock.Now(), p.maxLen, m.s.AssumedDowntime)
		}
		m.nextID = max(m.nextID, r.RecoverySnapshotID)
	}
	// Ids of requests that failed are not saved, and the API may have accepted one of them
	// anyway: start above any id an earlier process may have used, from the clock in
	// seconds (ids are far rarer than seconds, as the rate limits see to), so that a late
	// snapshot_complete of an old request never completes a new one.
	m.nextID = max(m.nextID, m.s.Clock.Now().Unix())
	m.ctx, m.cancel = context.WithCancel(context.WithoutCancel(ctx))
	m.retry = m.s.Clock.NewTimer(time.Hour)
	m.retry.Stop()
	m.tick = m.s.Clock.NewTicker(m.s.CheckInterval)
	m.state = open
	m.wg.Add(1)
	return m.initialLocked(m.s.Clock.Now()), nil
}

// Close stops the manager and waits for its goroutines. First it saves each producer's
// latest recovery point: the processed points reported before Close are taken, and
// every record that changed since its last save is saved (while it runs, the manager
// saves a moving recovery point at most once per CheckInterval), so that a process
// started after a graceful stop recovers from exactly where this one got to. A request
// being sent is abandoned; a record being saved is saved first (its store's write is
// never cancelled halfway, so the records do not change after Close). If ctx ends first
// Close returns ctx.Err(). Every Close, the first and any other, returns once the
// goroutines are gone (or its ctx ends).
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	was := m.state
	m.state = closed
	if was != closed {
		close(m.closing) // the loop saves what it must and returns
		if was == open {
			m.cancel()
			go func() { m.wg.Wait(); close(m.done) }()
		} else {
			close(m.done) // never opened: nothing to wait for
		}
	}
	m.mu.Unlock()
	select {
	case <-m.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// HandleSystem takes a system message of the first session; see SystemHandler.
func (m *Manager) HandleSystem(ev feed.Event) { m.post(input{ev: ev}) }

// SystemHandler returns the handler for the system messages and connection losses of one
// more session. Call it once for each session that delivers them, before Open: a
// recovery is complete when its snapshot_complete has come through every handler, since
// each session follows the replay on its own queue. A manager that gave no handler has
// one session, whose news it takes through its own HandleSystem and
// HandleConnectionDown (the first handler's, when there are handlers).
//
// The handler's methods only queue the news for the manager's goroutine; they wait while
// the manager's queue is full, which slows the session's reading down rather than lose
// an alive. SystemHandler panics once the manager is open: its sessions are fixed then.
func (m *Manager) SystemHandler() feed.SystemHandler {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.state != created {
		panic("recovery: SystemHandler after Open: every session takes its handler before")
	}
	i := m.handlers
	m.handlers++
	m.s.sessions = m.handlers
	return sessionHandler{m, i}
}

type sessionHandler struct {
	m *Manager
	i int
}

func (h sessionHandler) HandleSystem(ev feed.Event) { h.m.post(input{ev: ev, session: h.i}) }

// HandleConnectionDown tells the manager that session s's connection was lost, s named
// in the statuses of the producers it takes down; see SystemHandler. It implements
// feed.ConnectionLossHandler.
func (m *Manager) HandleConnectionDown(s feed.SessionRef, err error) {
	m.post(input{connDown: true, lost: s, err: err})
}

// HandleConnectionDown tells the manager that the session's connection was lost: what the
// feed sends meanwhile is lost, so every healthy producer is disconnected
// (ConnectionDown) and a recovery under way is requested again. The session calls it in
// order with the system messages, which is what makes a snapshot_complete read after the
// loss unable to complete a recovery the loss cut short.
func (h sessionHandler) HandleConnectionDown(s feed.SessionRef, err error) {
	h.m.post(input{connDown: true, lost: s, err: err})
}

// Flush returns once the manager has acted on everything it was given before the call:
// the system messages and connection losses its handlers took, the processed points and
// failed calls reported to it, and the check and retry that were due on its clock (after a
// fake clock's Advance, the check of that moment). What it acted on has reached the
// GlobalEventsListener, the Store and OnError by then. It is for tests, the kit's and its users', to
// wait for the manager instead of polling: hand it an alive, advance the clock, Flush,
// then look at the producer's state.
//
// Flush returns an error before Open and ErrClosed once the manager is closed (what was
// given to it is then dropped), and ctx.Err() if ctx ends first. It must not be called
// from the GlobalEventsListener or OnError, which run on the manager's goroutine: that goroutine
// would wait for itself.
func (m *Manager) Flush(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	state := m.state
	m.mu.Unlock()
	switch state {
	case created:
		return errors.New("recovery: Flush before Open")
	case closed:
		return ErrClosed
	}
	b := make(chan struct{})
	select {
	case m.inbox <- input{barrier: b}:
	case <-m.closing:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-b:
		return nil
	case <-m.closing:
		select {
		case <-b:
			return nil // acted on all of it before it closed
		default:
			return ErrClosed
		}
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (m *Manager) post(in input) {
	select {
	case m.inbox <- in:
	case <-m.closing:
	}
}

// ObserveProcessed records that the listener call for the message with header h has
// just returned, at the manager's Clock, for the processing-delay check: the SDK's
// dispatchers report each call. It is cheap and safe for
// concurrent use. Replayed messages (a request id) are old by design and do not count.
func (m *Manager) ObserveProcessed(h *feed.Header) {
	if h.RequestID != 0 || h.Timestamp.IsZero() {
		return
	}
	p, ok := m.producers[h.Producer]
	if !ok {
		return
	}
	d := int64(m.s.Clock.Now().Sub(h.Timestamp))
	for {
		old := p.maxDelay.Load()
		if d <= old || p.maxDelay.CompareAndSwap(old, d) {
			return
		}
	}
}

func (m *Manager) run() {
	defer m.wg.Done()
	tick := m.tick
	defer tick.Stop()
	defer m.retry.Stop()
	for {
		select {
		case <-m.closing:
			m.finish()
			return
		case in := <-m.inbox:
			if in.barrier != nil {
				m.drainDue(tick)
				close(in.barrier)
				continue
			}
			m.handleInput(in)
		case r := <-m.results:
			m.do(func(now time.Time) { m.onResult(r, now) })
		case now := <-tick.C():
			m.check(now)
		case <-m.retry.C():
			m.do(m.kickAll)
		}
	}
}

// finish runs once Close is called: it takes the processed points and failed calls
// still queued, and saves every record that changed since it was last saved. Other news
// is dropped: a closing manager requests nothing more.
func (m *Manager) finish() {
	for {
		select {
		case in := <-m.inbox:
			switch {
			case in.processed != 0, in.failed != nil:
				m.handleInput(in)
			case in.barrier != nil:
				close(in.barrier)
			}
			continue
		default:
		}
		break
	}
	m.do(func(now time.Time) {
		for _, p := range m.order {
			if !p.rec.same(p.saved) {
				m.saveLocked(p, now)
			}
		}
	})
}

// drainDue handles a tick or a retry that is due but not yet taken, so that a barrier
// comes after them. A retry due by the clock's time is sent even when its timer has not
// fired: a timer is set for a duration from the moment it is set, and a fake clock moved
// past the retry while the manager was setting it leaves it due later than the retry.
func (m *Manager) drainDue(tick clock.Ticker) {
	select {
	case now := <-tick.C():
		m.check(now)
	default:
	}
	select {
	case <-m.retry.C():
	default:
		m.mu.Lock()
		next := m.nextRetryLocked()
		m.mu.Unlock()
		if next.IsZero() || next.After(m.s.Clock.Now()) {
			return
		}
	}
	m.do(m.kickAll)
}

// kickAll sends the requests of every producer whose retry is due at now.
func (m *Manager) kickAll(now time.Time) {
	for _, p := range m.order {
		m.kick(p, now)
	}
}

// do runs f under the lock, then the effects f queued (store writes, listener calls,
// reports) without it, in order, then re-arms the retry timer.
func (m *Manager) do(f func(now time.Time)) {
	m.mu.Lock()
	now := m.s.Clock.Now()
	f(now)
	effects := m.effects
	m.effects = nil
	next := m.nextRetryLocked()
	m.mu.Unlock()
	for _, e := range effects {
		e()
	}
	if !next.IsZero() {
		m.retry.Reset(max(next.Sub(m.s.Clock.Now()), 0))
	}
}

// nextRetryLocked returns the earliest scheduled retry, zero when none.
func (m *Manager) nextRetryLocked() time.Time {
	var next time.Time
	for _, p := range m.order {
		if p.needs && p.inFlight == 0 && !p.retryAt.IsZero() && (next.IsZero() || p.retryAt.Before(next)) {
			next = p.retryAt
		}
	}
	return next
}

func (m *Manager) handleInput(in input) {
	switch {
	case in.connDown:
		m.do(func(now time.Time) { m.onConnectionDown(in.lost, in.err, now) })
		return
	case in.processed != 0:
		if p, ok := m.producers[in.processed]; ok {
			m.do(func(now time.Time) { m.onProcessed(p, in.through, now) })
		}
		return
	case in.event != nil:
		m.do(func(now time.Time) { m.onEventResult(in.event, now) })
		return
	case in.failed != nil:
		if p, ok := m.producers[in.failedProducer]; ok {
			m.do(func(now time.Time) { m.onFailed(p, in.failed, now) })
		}
		return
	case in.recoverAgain != nil:
		if p, ok := m.producers[in.recoverAgain.producer]; ok {
			m.do(func(now time.Time) { m.onRecoverProducer(p, in.recoverAgain.reason, now) })
		}
		return
	}
	ev := in.ev
	switch ev.Key.Type {
	case feed.MessageAlive:
		a, err := feed.DecodeAlive(ev.Body)
		if err != nil {
			m.do(func(time.Time) { m.malformedLocked(ev, err) })
			return
		}
		m.do(func(now time.Time) { m.onAlive(a, now) })
	case feed.MessageSnapshotComplete:
		sc, err := feed.DecodeSnapshotComplete(ev.Body)
		if err != nil {
			m.do(func(time.Time) { m.malformedLocked(ev, err) })
			return
		}
		m.do(func(now time.Time) { m.onSnapshotComplete(sc, in.session, now) })
	}
}

// check runs every CheckInterval: missing heartbeats (through the monitor, whose OnLost
// takes the lock itself), recovery timeouts and processing delays.
func (m *Manager) check(now time.Time) {
	m.mon.Advance(now)
	m.do(func(now time.Time) {
		for _, p := range m.order {
			m.checkSilent(p, now)
			m.checkTimeout(p, now)
			m.checkDelay(p, now)
			m.checkHold(p, now)
		}
		m.checkEvents(now)
	})
}
