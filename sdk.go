package feedkit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
	"github.com/feedkit/feedkit/feed/markets"
	"github.com/feedkit/feedkit/feed/sportdata"
	"github.com/feedkit/feedkit/recovery"
)

// SDK is an assembled odds-feed consumer: sessions on a transport, their listeners
// behind the concurrent listener (or serial delivery), and the recovery manager that
// follows producer health and recovers what an outage lost.
//
//	transport ─► session (one per interest) ─┬─► alive, snapshot_complete ─► recovery.Manager ─┐
//	                                         └─► dispatcher ─► your OddsFeedListener          │
//	                                               │ tasks tracked per recovery               ▼
//	                                               └──────────────► concurrent.StatusGate ─► your GlobalEventsListener
//
// A producer up (FirstRecoveryCompleted, ReturnedFromInactivity) reaches Config.Global
// only after every message of the recovery behind it has been processed, and is held no
// longer than Config.MaxUpHold: past it the producer is reported down
// (ProcessingStalled) and recovered again. A forwarding session (AddForwardingSession)
// hands its messages to a Forwarder in place of the dispatcher and listener, and the
// up and the recovery point follow what the Forwarder has handed on.
type SDK struct {
	cfg       Config
	transport feed.Transport
	tracker   *concurrent.TaskLifecycleTracker
	global    *concurrent.StatusGate
	manager   *recovery.Manager
	pool      *concurrent.Pool // the workers of every session; nil with serial delivery
	logger    *slog.Logger
	api       *feedapi.Client     // nil without the feed's API
	names     *markets.Names      // nil without the API
	sport     *sportdata.Provider // nil without the API

	mu      sync.Mutex
	state   int   // 0 new, 1 open, 2 closed
	closed  bool  // closeAll ran or runs
	broken  error // a session that failed after a part of it was built: Open refuses
	details *feedapi.BookmakerDetails

	// The sessions, which AddSession appends to before Open; Stats reads them under
	// their own lock, so that a listener calling Stats never waits for Open.
	listMu     sync.Mutex
	sessions   []*feed.Session
	workers    []*concurrent.Dispatcher       // nil entries with serial delivery, and for forwarding sessions
	serial     []*concurrent.SerialDispatcher // nil entries with the concurrent listener, and for forwarding sessions
	forwarders []Forwarder                    // nil entries but for forwarding sessions
}

// New checks cfg and assembles an SDK; nothing connects until Open. Add the sessions,
// with their listeners, with AddSession (or their Forwarders, with AddForwardingSession).
func New(cfg Config) (*SDK, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	s := &SDK{cfg: cfg, tracker: concurrent.NewTaskLifecycleTracker(), logger: cfg.Logger}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	disabled, err := recoveriesDisabled(cfg.Recovery.Disabled, osGetenv)
	if err != nil {
		return nil, err
	}
	if cfg.API.BaseURL != "" {
		ac := cfg.API
		ac.Node, ac.Clock = cfg.Node, cfg.Clock
		ac.Observer = cfg.Observer
		if s.api, err = feedapi.NewClient(ac); err != nil {
			return nil, fmt.Errorf("feedkit: Config.API: %w", err)
		}
	} else if !disabled {
		return nil, fmt.Errorf("feedkit: Config.API.BaseURL is empty and recoveries are enabled (set Config.Environment or Config.API; or Config.Recovery.Disabled, or %s=false, to run without)", RecoveryEnabledEnv)
	}
	if s.transport = cfg.Transport; s.transport == nil {
		if s.transport, err = newAMQPTransport(cfg, s.api); err != nil {
			return nil, err // its connections belong to the sessions, closed with them
		}
	}
	if err := s.newNames(); err != nil {
		return nil, err
	}
	if err := s.newSportData(); err != nil {
		return nil, err
	}
	customer := cfg.Global
	if customer == nil {
		customer = feed.BaseGlobalEventsListener{}
	}
	gc := concurrent.GateConfig{OnError: cfg.OnError, Logger: cfg.Logger, Observer: cfg.Observer, Clock: cfg.Clock}
	switch {
	case cfg.MaxUpHold == 0:
		gc.HoldLimit = DefaultMaxUpHold
	case cfg.MaxUpHold > 0:
		gc.HoldLimit = cfg.MaxUpHold
	}
	if gc.HoldLimit > 0 {
		// The listeners are stuck on the recovery's messages: down, and recovered again.
		// The gate has checked that the up is still held, so at worst a status that
		// changed since makes this one recovery more.
		gc.OnHoldLimit = func(rc concurrent.RecoveryContext) {
			if err := s.manager.RecoverProducer(rc.Producer, feed.ProcessingStalled); err != nil {
				s.logger.Info("feedkit: producer up held past Config.MaxUpHold not recovered again", "producer", rc.Producer, "err", err)
			}
		}
	}
	if s.global, err = concurrent.NewStatusGate(customer, s.tracker, gc); err != nil {
		return nil, fmt.Errorf("feedkit: %w", err)
	}
	if s.manager, err = s.newManager(disabled); err != nil {
		_ = s.global.Close(context.Background())
		return nil, err
	}
	if cfg.Concurrent != nil {
		cc := *cfg.Concurrent
		if cc.OnError == nil {
			cc.OnError = cfg.OnError
		}
		if cc.Logger == nil {
			cc.Logger = cfg.Logger
		}
		if cc.Name == "" {
			cc.Name = "feed"
		}
		cc.Observer = cfg.Observer
		// One pool for all sessions: Threads is the SDK's total, and a match's messages
		// keep their order across sessions.
		if s.pool, err = concurrent.NewPool(s.tracker, cc); err != nil {
			s.discard()
			return nil, fmt.Errorf("feedkit: Config.Concurrent: %w", err)
		}
	}
	return s, nil
}

// newManager builds the recovery manager on the API client and wires the tracker to it.
func (s *SDK) newManager(disabled bool) (*recovery.Manager, error) {
	rc := s.cfg.Recovery
	rc.Disabled = disabled
	rc.Clock = s.cfg.Clock
	rc.Observer = s.cfg.Observer
	if rc.OnError == nil {
		rc.OnError = s.cfg.OnError
	}
	if rc.Logger == nil {
		rc.Logger = s.cfg.Logger
	}
	if rc.Account == "" {
		rc.Account = accountOf(s.cfg.API.AccessToken)
	}
	var requester recovery.Requester // nil without the API: recoveries are disabled then
	if s.api != nil {
		requester, rc.ProducerSource = s.api, s.api
	}
	m, err := recovery.NewManager(requester, s.global, s.cfg.Node, rc)
	if err != nil {
		return nil, fmt.Errorf("feedkit: %w", err)
	}
	// The recovery point follows the listeners: it moves with the processed point, is
	// held before a message whose call failed, and the manager's delay check hears of
	// every call that returned.
	s.tracker.OnProcessed(m.ProcessedThrough)
	s.tracker.OnCallFailed(m.ListenerFailed)
	s.tracker.OnCallReturned(m.ObserveProcessed)
	return m, nil
}

// AddSession adds a session: the feed's messages of one interest (feed.AllMessages,
// feed.LiveOnly, feed.PrematchOnly, ...) delivered to listener. Call it after New, so
// that the listener can hold what New built (SDK.Names, SDK.API), and before Open; an
// SDK needs at least one session, of AddSession or AddForwardingSession.
func (s *SDK) AddSession(interest feed.MessageInterest, listener feed.OddsFeedListener) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != 0 {
		return errors.New("feedkit: AddSession after Open: the sessions are fixed when the SDK opens")
	}
	if listener == nil {
		return fmt.Errorf("feedkit: AddSession(%s): the listener is nil", interest)
	}
	i := len(s.sessions)
	if err := s.checkSession(interest, i); err != nil {
		return fmt.Errorf("feedkit: AddSession(%s): %w", interest, err)
	}
	if s.pool != nil {
		w, err := s.pool.Dispatcher(listener)
		if err != nil {
			return fmt.Errorf("feedkit: AddSession(%s): %w", interest, err)
		}
		return s.addSession(interest, w, w.Stream().MarkAlives(s.manager.SystemHandler()), w, nil, nil)
	}
	sl, err := concurrent.NewSerialDispatcher(listener, s.tracker, concurrent.SerialConfig{
		QueueSize: s.cfg.QueueSize, OnError: s.cfg.OnError, Logger: s.cfg.Logger,
		Name: fmt.Sprintf("session %d", i), Observer: s.cfg.Observer})
	if err != nil {
		return fmt.Errorf("feedkit: Config.QueueSize: %w", err)
	}
	return s.addSession(interest, sl, sl.Stream().MarkAlives(s.manager.SystemHandler()), nil, sl, nil)
}

// checkSession refuses, before anything is built for it, a session that feed.NewSession
// would refuse: once built, its dispatcher's Stream and its handler of the recovery
// manager cannot be taken back, and would hold every producer's processed point, and
// every recovery, for good.
func (s *SDK) checkSession(interest feed.MessageInterest, index int) error {
	_, err := feed.NewSession(s.transport, feed.SessionConfig{Interest: interest, Index: index,
		Dispatcher: nopDispatcher{}, MaxBodySize: s.cfg.MaxBodySize})
	return err
}

// nopDispatcher stands in for a session's dispatcher while checkSession checks it.
type nopDispatcher struct{}

func (nopDispatcher) Dispatch(context.Context, feed.Event) error { return nil }
func (nopDispatcher) Close(context.Context) error                { return nil }

// addSession makes the session of disp, whose system messages go to system, and adds
// it with its dispatcher, one of workers, serial and forwarder. Under s.mu.
func (s *SDK) addSession(interest feed.MessageInterest, disp feed.Dispatcher, system feed.SystemHandler,
	workers *concurrent.Dispatcher, serial *concurrent.SerialDispatcher, forwarder Forwarder) error {
	i := len(s.sessions)
	if s.sport != nil {
		disp = followFixtures{Dispatcher: disp, sport: s.sport}
	}
	session, err := feed.NewSession(s.transport, feed.SessionConfig{
		Interest:    interest,
		Index:       i,
		Node:        s.cfg.Node,
		Dispatcher:  disp,
		Global:      s.global,
		System:      system,
		MaxBodySize: s.cfg.MaxBodySize,
		Observer:    s.cfg.Observer,
		OnError:     s.cfg.OnError,
		Logger:      s.cfg.Logger,
		OnDelivery:  s.cfg.OnDelivery,
	})
	if err != nil {
		// checkSession let it through, so feed.NewSession has a check of its own the
		// SDK does not know: what was built for it cannot be taken back.
		_ = disp.Close(context.Background())
		s.broken = fmt.Errorf("session %d (%s) failed: %w", i, interest, err)
		return fmt.Errorf("feedkit: session %d (%s): %w (the SDK cannot be opened now: make a new one)", i, interest, err)
	}
	s.listMu.Lock()
	defer s.listMu.Unlock()
	s.sessions = append(s.sessions, session)
	s.workers = append(s.workers, workers)
	s.serial = append(s.serial, serial)
	s.forwarders = append(s.forwarders, forwarder)
	return nil
}

// discard releases what New built before it failed.
func (s *SDK) discard() {
	ctx := context.Background()
	_ = s.manager.Close(ctx)
	_ = s.global.Close(ctx)
}

// Open reads the account from the feed's API, starts the recovery manager, then the
// sessions. Each producer starts down and is recovered as soon as its alives arrive; its
// up reaches Config.Global once the recovery's messages have been processed. If a
// session fails to open, what was opened is closed again and the error returned.
//
// The account's details (whoami; SDK.BookmakerDetails) are read first: a token the API
// refuses fails Open, one about to expire is warned of (Config.TokenExpiryWarning), and
// so is a clock far from the API's (Config.ClockOffsetWarning). Then the recovery manager
// follows the account's active producers, which the API lists.
//
// ctx bounds the opening only: loading the producer records and each session's first
// connection attempt. Once Open has returned, the sessions run until Close whatever
// becomes of ctx. A broker that refuses the configuration (credentials, virtual host,
// certificate, a missing exchange) fails Open. A broker that cannot be reached (a wrong
// host, a network down) does not: Open returns nil, the failed attempt reaches
// Config.OnError and the log and is counted in Stats().Transport, and the transport keeps
// trying with backoff, reporting each failure the same way; Config.Global hears
// OnConnectionUp once the session consumes.
func (s *SDK) Open(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.state {
	case 1:
		return errors.New("feedkit: SDK already open")
	case 2:
		return errors.New("feedkit: SDK closed")
	}
	if len(s.sessions) == 0 {
		return errors.New("feedkit: Open: the SDK has no session: call AddSession or AddForwardingSession first")
	}
	if s.broken != nil {
		return fmt.Errorf("feedkit: Open: %v, leaving a part of it in the SDK: make a new SDK", s.broken)
	}
	if s.api != nil {
		if err := s.checkAccount(ctx); err != nil {
			return fmt.Errorf("feedkit: %w", err)
		}
	}
	if err := s.manager.Open(ctx); err != nil {
		return fmt.Errorf("feedkit: %w", err)
	}
	for i, se := range s.sessions {
		if err := se.Open(ctx); err != nil {
			s.state, s.closed = 2, true
			_ = s.closeAll(context.WithoutCancel(ctx))
			return fmt.Errorf("feedkit: session %d (%s): %w", i, se.Interest(), err)
		}
	}
	s.state = 1
	return nil
}

// Close stops the sessions (their dispatchers deliver what they hold, a forwarding
// session's Forwarder is closed, and their connections close), then the concurrent listener's workers, then the recovery manager,
// which saves each producer's latest recovery point to Config.Recovery.Store before it
// returns, then the global listener. If ctx ends first, what is still queued is
// abandoned and Close returns ctx.Err().
//
// After a graceful Close, a restart recovers from the point the last processed message
// left. A process killed without Close (SIGKILL, a crash) loses nothing either, but its
// store holds the point of the manager's last check: the restart's recovery replays up to
// one Config.Recovery.CheckInterval more (recovery.DefaultCheckInterval by default), which
// the listeners receive again.
func (s *SDK) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.state = 2
	s.closed = true
	s.mu.Unlock()
	// Not under s.mu: the listeners called while the dispatchers drain may call Stats.
	return s.closeAll(ctx)
}

// closeAll closes in the order of the flow: what the sessions hold reaches the
// listeners, what the listeners processed reaches the manager, and the manager saves it.
func (s *SDK) closeAll(ctx context.Context) error {
	var errs []error
	for _, se := range s.sessions {
		errs = append(errs, se.Close(ctx))
	}
	if s.pool != nil {
		errs = append(errs, s.pool.Close(ctx))
	}
	errs = append(errs, s.manager.Close(ctx), s.global.Close(ctx))
	return errors.Join(errs...)
}

// RecoverProducer takes producer down now, reported to Config.Global with reason, and
// recovers it again from its recovery point: for an operator who doubts what the SDK
// holds of a producer ("re-sync it now"; feed.Other), or a host that knows the messages
// of its last recovery were not processed in time (feed.ProcessingStalled, the reason the
// SDK gives when Config.MaxUpHold runs out). A producer recovering is recovered again
// under a new request; one disconnected already is left to the recovery its next alive
// brings. It returns once the request is handed to the recovery manager, and is safe
// from any goroutine, listeners included; see recovery.Manager.RecoverProducer, which
// says what it does in each state and which reasons it takes. It needs an open SDK.
func (s *SDK) RecoverProducer(producer int, reason feed.StatusReason) error {
	if err := s.manager.RecoverProducer(producer, reason); err != nil {
		return fmt.Errorf("feedkit: %w", err)
	}
	return nil
}

// Producer returns the state of one producer, and false when the SDK does not follow it.
func (s *SDK) Producer(id int) (recovery.ProducerState, bool) { return s.manager.Producer(id) }

// Producers returns the state of every producer the SDK follows.
func (s *SDK) Producers() []recovery.ProducerState { return s.manager.Producers() }

// API returns the client of the feed's API that the SDK sends its requests through, for
// a host that reads more of the API with the same token, timeouts and OnResponse hook;
// nil without the API.
func (s *SDK) API() *feedapi.Client { return s.api }
