package recovery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// EventRequester sends the recovery requests of one event; *feedapi.Client is one.
// RecoverEvent needs the Requester given to NewManager to implement it.
type EventRequester interface {
	InitiateEventRecovery(ctx context.Context, p feed.Producer, event feed.URN, requestID int64) error
	InitiateEventStatefulRecovery(ctx context.Context, p feed.Producer, event feed.URN, requestID int64) error
}

// ErrNoEventRequester is returned by RecoverEvent when the manager's Requester cannot
// recover events (it is nil, or does not implement EventRequester).
var ErrNoEventRequester = errors.New("recovery: RecoverEvent: the Requester does not implement EventRequester")

// eventRecovery is a recovery of one event, from the request until its snapshot_complete
// has come on every session.
type eventRecovery struct {
	producer   feed.Producer
	event      feed.URN
	stateful   bool
	at         time.Time    // when it was requested
	accepted   bool         // the API accepted it; OnRecoveryInitiated was told
	acceptedAt time.Time    // when the acceptance was applied, in our clock (Observer)
	seen       map[int]bool // the sessions its snapshot_complete came on
}

// eventResult is the API's answer to an event recovery request, for the manager's loop.
type eventResult struct {
	id  int64
	err error
}

// RecoverEvent asks the feed to resend the current odds of one event of producer (its
// latest odds_change for each market) and returns the request's id. The replayed messages
// carry that id in their header's RequestID and reach the sessions' listeners like any
// other; once its snapshot_complete has come on every session, the GlobalEventsListener
// is told OnEventRecoveryCompleted (the SDK's holds it until every replayed message has
// been processed). It is told OnRecoveryInitiated, with the event, first.
//
// The request counts against the account's rate limits in the Ledger, as a recovery of
// length zero (Limits' shortest tier): when they do not allow it yet, RecoverEvent returns
// a *RequestError matching ErrRateLimited, with RetryAt, and sends nothing. An error of
// the API is returned as a *RequestError too, and its place in the limits given back. A
// recovery whose snapshot_complete does not come within Config.RecoveryTimeout is reported
// (a *TimeoutError with the Event) and forgotten. RecoverEvent is safe for concurrent use
// once the manager is open; each request has its own id.
func (m *Manager) RecoverEvent(ctx context.Context, producer int, event feed.URN) (int64, error) {
	return m.recoverEvent(ctx, producer, event, false)
}

// RecoverEventStateful is RecoverEvent for the event's stateful messages: its bet
// settlements, cancellations and their rollbacks.
func (m *Manager) RecoverEventStateful(ctx context.Context, producer int, event feed.URN) (int64, error) {
	return m.recoverEvent(ctx, producer, event, true)
}

func (m *Manager) recoverEvent(ctx context.Context, producer int, event feed.URN, stateful bool) (int64, error) {
	if event.IsZero() {
		return 0, errors.New("recovery: RecoverEvent: the event URN is zero")
	}
	er, ok := m.s.requester.(EventRequester)
	if !ok {
		return 0, ErrNoEventRequester
	}
	m.mu.Lock()
	switch m.state {
	case created:
		m.mu.Unlock()
		return 0, errors.New("recovery: RecoverEvent before Open")
	case closed:
		m.mu.Unlock()
		return 0, ErrClosed
	}
	p, ok := m.producers[producer]
	if !ok {
		m.mu.Unlock()
		return 0, fmt.Errorf("recovery: RecoverEvent: producer %d is not followed", producer)
	}
	m.nextID++
	id, now := m.nextID, m.s.Clock.Now()
	// Registered before the request goes out: its snapshot_complete may come before the
	// API's answer.
	e := &eventRecovery{producer: p.feed, event: event, stateful: stateful, at: now, seen: make(map[int]bool)}
	m.events[id] = e
	m.wg.Add(1) // Close waits for the request
	m.mu.Unlock()
	defer m.wg.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(m.ctx, cancel)() // Close abandons the request

	err := m.sendEvent(ctx, er, e, id, now)
	m.post(input{event: &eventResult{id: id, err: err}})
	if err != nil {
		return 0, err
	}
	return id, nil
}

// sendEvent reserves the request's place in the account's limits and calls the API,
// giving the place back when the API did not accept it.
func (m *Manager) sendEvent(ctx context.Context, er EventRequester, e *eventRecovery, id int64, now time.Time) error {
	reqErr := func(err error, retryAt time.Time) error {
		return &RequestError{Producer: e.producer.ID, RequestID: id, Event: e.event, RetryAt: retryAt, Err: err}
	}
	res, err := m.s.Ledger.Reserve(ctx, LedgerRequest{Account: m.s.Account, Node: m.s.node,
		Producer: e.producer.ID, At: now, Length: 0, Limits: m.s.Limits})
	switch {
	case err != nil:
		return reqErr(err, time.Time{})
	case !res.Allowed:
		return reqErr(ErrRateLimited, res.RetryAt)
	}
	if e.stateful {
		err = er.InitiateEventStatefulRecovery(ctx, e.producer, e.event, id)
	} else {
		err = er.InitiateEventRecovery(ctx, e.producer, e.event, id)
	}
	if err != nil {
		if rerr := m.s.Ledger.Release(context.WithoutCancel(ctx), res.ID); rerr != nil {
			err = errors.Join(err, fmt.Errorf("and its ledger place could not be released: %w", rerr))
		}
		return reqErr(err, time.Time{})
	}
	return nil
}

// onEventResult applies the API's answer to an event recovery request.
func (m *Manager) onEventResult(r *eventResult, now time.Time) {
	e, ok := m.events[r.id]
	if !ok {
		return
	}
	if r.err != nil {
		delete(m.events, r.id)
		if errors.Is(r.err, ErrRateLimited) {
			m.stats.RequestsRateLimited++
			m.observeRequestLocked(e.producer.ID, e.kind(), RequestRateLimited)
		} else {
			m.stats.RequestsFailed++
			m.observeRequestLocked(e.producer.ID, e.kind(), RequestFailed)
		}
		return
	}
	e.accepted, e.acceptedAt = true, now
	m.stats.EventRecoveriesRequested++
	m.observeRequestLocked(e.producer.ID, e.kind(), RequestAccepted)
	m.effects = append(m.effects, func() {
		m.s.Logger.LogAttrs(m.ctx, slog.LevelInfo, "recovery: event recovery requested", slog.Int("producer", e.producer.ID),
			slog.String("event", e.event.String()), slog.Bool("stateful", e.stateful), slog.Int64("request_id", r.id))
	})
	if l := m.s.listener; l != nil {
		ri := feed.RecoveryInitiated{Producer: e.producer.ID, RequestID: r.id, Kind: e.kind(), Event: e.event}
		m.effects = append(m.effects, func() {
			m.callListener("OnRecoveryInitiated", func() { l.OnRecoveryInitiated(m.ctx, ri) })
		})
	}
	m.maybeCompleteEvent(r.id, e, now)
}

// onEventSnapshot takes the snapshot_complete of an event recovery on one session.
func (m *Manager) onEventSnapshot(id int64, e *eventRecovery, session int, now time.Time) {
	e.seen[session] = true
	m.maybeCompleteEvent(id, e, now)
}

// maybeCompleteEvent ends an accepted event recovery once its snapshot_complete has come
// on every session.
func (m *Manager) maybeCompleteEvent(id int64, e *eventRecovery, now time.Time) {
	if !e.accepted || len(e.seen) < m.s.sessions {
		return
	}
	delete(m.events, id)
	m.stats.EventRecoveriesCompleted++
	m.observeEndLocked(e.producer.ID, e.kind(), RecoveryCompleted, e.acceptedAt, now)
	if l := m.s.listener; l != nil {
		done := feed.EventRecoveryCompleted{Producer: e.producer.ID, Event: e.event, RequestID: id}
		m.effects = append(m.effects, func() {
			m.callListener("OnEventRecoveryCompleted", func() { l.OnEventRecoveryCompleted(m.ctx, done) })
		})
	}
	// Logged once the listener has been told, so that a log says it was.
	m.effects = append(m.effects, func() {
		m.s.Logger.LogAttrs(m.ctx, slog.LevelInfo, "recovery: event recovery completed", slog.Int("producer", e.producer.ID),
			slog.String("event", e.event.String()), slog.Int64("request_id", id))
	})
}

// checkEvents forgets the accepted event recoveries whose snapshot_complete is overdue,
// reporting each.
func (m *Manager) checkEvents(now time.Time) {
	for id, e := range m.events {
		if !e.accepted || now.Sub(e.at) <= m.s.RecoveryTimeout {
			continue
		}
		delete(m.events, id)
		m.stats.EventRecoveryTimeouts++
		m.observeEndLocked(e.producer.ID, e.kind(), RecoveryTimedOut, e.acceptedAt, now)
		m.reportLocked(&TimeoutError{Producer: e.producer.ID, RequestID: id, RequestedAt: e.at, Event: e.event})
	}
}
