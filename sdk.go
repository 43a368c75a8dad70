package feedkit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/markets"
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
// only after every message of the recovery behind it has been processed.
type SDK struct {
	cfg       Config
	transport feed.Transport
	tracker   *concurrent.TaskLifecycleTracker
	global    *concurrent.StatusGate
	manager   *recovery.Manager
	sessions  []*feed.Session
	pool      *concurrent.Pool               // the workers of every session; nil with serial delivery
	workers   []*concurrent.Dispatcher       // nil entries with serial delivery
	serial    []*concurrent.SerialDispatcher // nil entries with the concurrent listener
	logger    *slog.Logger
	api       *feed.RecoveryClient // the feed's API; nil without Config.RecoveryAPI
	names     *markets.Names       // nil without the API

	mu     sync.Mutex
	state  int  // 0 new, 1 open, 2 closed
	closed bool // closeLocked ran
}

// New checks cfg and assembles an SDK; nothing connects until Open.
func New(cfg Config) (*SDK, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	s := &SDK{cfg: cfg, transport: cfg.Transport, tracker: concurrent.NewTaskLifecycleTracker(), logger: cfg.Logger}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.transport == nil {
		t, err := newAMQPTransport(cfg)
		if err != nil {
			return nil, err
		}
		s.transport = t // its connections belong to the sessions, closed with them
	}
	customer := cfg.Global
	if customer == nil {
		customer = feed.BaseGlobalEventsListener{}
	}
	var err error
	s.global, err = concurrent.NewStatusGate(customer, s.tracker, concurrent.GateConfig{OnError: cfg.OnError, Logger: cfg.Logger})
	if err != nil {
		return nil, fmt.Errorf("feedkit: %w", err)
	}
	rc := cfg.Recovery
	if rc.Disabled, err = recoveriesDisabled(rc.Disabled, osGetenv); err != nil {
		_ = s.global.Close(context.Background())
		return nil, err
	}
	if rc.OnError == nil {
		rc.OnError = cfg.OnError
	}
	if rc.Logger == nil {
		rc.Logger = cfg.Logger
	}
	if rc.Account == "" {
		rc.Account = accountOf(cfg.RecoveryAPI.AccessToken)
	}
	var requester recovery.Requester // nil without the recovery API
	if cfg.RecoveryAPI.BaseURL != "" {
		api := cfg.RecoveryAPI
		api.Node = cfg.Node
		client, err := feed.NewRecoveryClient(api)
		if err != nil {
			_ = s.global.Close(context.Background())
			return nil, fmt.Errorf("feedkit: Config.RecoveryAPI: %w", err)
		}
		requester, s.api = client, client
	}
	if err := s.newNames(); err != nil {
		_ = s.global.Close(context.Background())
		return nil, err
	}
	s.manager, err = recovery.NewManager(requester, s.global, cfg.Node, len(cfg.Sessions), rc)
	if err != nil {
		_ = s.global.Close(context.Background())
	} else {
		// The recovery point follows the listeners: it moves with the processed point, is
		// held before a message whose call failed, and the manager's delay check hears
		// of every call that returned.
		s.tracker.OnProcessed(s.manager.ProcessedThrough)
		s.tracker.OnCallFailed(s.manager.ListenerFailed)
		s.tracker.OnCallReturned(s.manager.ObserveProcessed)
	}
	if errors.Is(err, recovery.ErrNoRequester) {
		return nil, fmt.Errorf("feedkit: Config.RecoveryAPI.BaseURL is empty and recoveries are enabled (set Config.Recovery.Disabled, or %s=false, to run without)", RecoveryEnabledEnv)
	}
	if err != nil {
		return nil, fmt.Errorf("feedkit: %w", err)
	}
	if cfg.Concurrent != nil {
		cc := *cfg.Concurrent
		if cc.OnError == nil {
			cc.OnError = cfg.OnError
		}
		if cc.Logger == nil {
			cc.Logger = cfg.Logger
		}
		// One pool for all sessions: Threads is the SDK's total, and a match's messages
		// keep their order across sessions.
		if s.pool, err = concurrent.NewPool(s.tracker, cc); err != nil {
			s.discard()
			return nil, fmt.Errorf("feedkit: Config.Concurrent: %w", err)
		}
	}
	for i, sc := range cfg.Sessions {
		if err := s.addSession(i, sc); err != nil {
			s.discard()
			return nil, err
		}
	}
	return s, nil
}

func (s *SDK) addSession(i int, sc SessionConfig) error {
	var disp feed.Dispatcher
	var workers *concurrent.Dispatcher
	var serial *concurrent.SerialDispatcher
	var stream *concurrent.Stream
	if s.pool != nil {
		w, err := s.pool.Dispatcher(sc.Listener)
		if err != nil {
			return fmt.Errorf("feedkit: Config.Sessions[%d]: %w", i, err)
		}
		disp, workers, stream = w, w, w.Stream()
	} else {
		sl, err := concurrent.NewSerialDispatcher(sc.Listener, s.tracker, concurrent.SerialConfig{
			QueueSize: s.cfg.QueueSize, OnError: s.cfg.OnError, Logger: s.cfg.Logger})
		if err != nil {
			return fmt.Errorf("feedkit: Config.QueueSize: %w", err)
		}
		disp, serial, stream = sl, sl, sl.Stream()
	}
	session, err := feed.NewSession(s.transport, feed.SessionConfig{
		Interest:    sc.Interest,
		Index:       i,
		Node:        s.cfg.Node,
		Dispatcher:  disp,
		Global:      s.global,
		System:      stream.MarkAlives(s.manager.SystemHandler(i)),
		MaxBodySize: s.cfg.MaxBodySize,
		OnError:     s.cfg.OnError,
		Logger:      s.cfg.Logger,
	})
	if err != nil {
		_ = disp.Close(context.Background())
		return fmt.Errorf("feedkit: Config.Sessions[%d]: %w", i, err)
	}
	s.sessions = append(s.sessions, session)
	s.workers = append(s.workers, workers)
	s.serial = append(s.serial, serial)
	return nil
}

// discard releases what New built before it failed.
func (s *SDK) discard() {
	ctx := context.Background()
	for _, se := range s.sessions {
		_ = se.Close(ctx)
	}
	if s.pool != nil {
		_ = s.pool.Close(ctx)
	}
	_ = s.manager.Close(ctx)
	_ = s.global.Close(ctx)
}

// Open starts the recovery manager, then the sessions. Each producer starts down and is
// recovered as soon as its alives arrive; its up reaches Config.Global once the
// recovery's messages have been processed. If a session fails to open, what was opened
// is closed again and the error returned.
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
	s.warnUnpersisted(ctx)
	if err := s.openManager(ctx); err != nil {
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

// Close stops the recovery manager (so that nothing a session still reads can wait on
// it), then the sessions (their dispatchers deliver what they hold, and their connections
// close), then the concurrent listener's worker pool, then the global listener. If ctx
// ends first, what is still queued is abandoned and Close returns ctx.Err().
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

func (s *SDK) closeAll(ctx context.Context) error {
	errs := []error{s.manager.Close(ctx)}
	for _, se := range s.sessions {
		errs = append(errs, se.Close(ctx))
	}
	if s.pool != nil {
		errs = append(errs, s.pool.Close(ctx))
	}
	errs = append(errs, s.global.Close(ctx))
	return errors.Join(errs...)
}

// Recovery returns the recovery manager, for its producer states and counters.
func (s *SDK) Recovery() *recovery.Manager { return s.manager }

// Producers returns the state of every producer.
func (s *SDK) Producers() []recovery.ProducerState { return s.manager.Producers() }
