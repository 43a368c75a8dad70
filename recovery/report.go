package recovery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// ErrRateLimited matches, with errors.Is, a *RequestError for a request the account's
// rate limits did not allow yet.
var ErrRateLimited = errors.New("recovery: rate limit reached")

// RequestError reports a recovery request that did not go through: refused by the rate
// limits (Err is ErrRateLimited), failed at the API or the ledger, or whose ledger place
// could not be given back (Release). The producer stays down; the request is tried again
// at RetryAt.
type RequestError struct {
	Producer  int
	RequestID int64
	After     time.Time // the start of the recovery asked for
	RetryAt   time.Time // zero when Release is set
	Release   bool      // the API failed and the ledger could not forget the request
	Event     feed.URN  // the event of a RecoverEvent request; zero for a producer's recovery
	Err       error
}

func (e *RequestError) Error() string {
	if !e.Event.IsZero() {
		msg := fmt.Sprintf("recovery: producer %d event %s request %d: %v", e.Producer, e.Event, e.RequestID, e.Err)
		if !e.RetryAt.IsZero() {
			msg += "; allowed again at " + e.RetryAt.UTC().Format(time.RFC3339Nano)
		}
		return msg
	}
	if e.Release {
		return fmt.Sprintf("recovery: producer %d request %d failed and its ledger place could not be released: %v", e.Producer, e.RequestID, e.Err)
	}
	return fmt.Sprintf("recovery: producer %d request %d from %s: %v; next attempt at %s",
		e.Producer, e.RequestID, e.After.UTC().Format(time.RFC3339), e.Err, e.RetryAt.UTC().Format(time.RFC3339Nano))
}

// Unwrap returns the cause.
func (e *RequestError) Unwrap() error { return e.Err }

// TimeoutError reports a recovery whose snapshot_complete did not come within
// Config.RecoveryTimeout; a producer's recovery is requested again, an event's is not.
type TimeoutError struct {
	Producer    int
	RequestID   int64
	RequestedAt time.Time
	Event       feed.URN // the event of a RecoverEvent request, which is not requested again; zero for a producer's recovery
}

func (e *TimeoutError) Error() string {
	if !e.Event.IsZero() {
		return fmt.Sprintf("recovery: producer %d event %s request %d of %s: no snapshot_complete in time; given up",
			e.Producer, e.Event, e.RequestID, e.RequestedAt.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("recovery: producer %d request %d of %s: no snapshot_complete in time; requesting again",
		e.Producer, e.RequestID, e.RequestedAt.UTC().Format(time.RFC3339))
}

// MalformedError reports a system message that could not be decoded, with its raw bytes;
// the manager goes on with the next message.
type MalformedError struct {
	RoutingKey string
	Body       []byte
	Err        error
}

func (e *MalformedError) Error() string {
	return fmt.Sprintf("recovery: system message %s: %v", e.RoutingKey, e.Err)
}

// Unwrap returns the decode error (it matches feed.ErrMalformedMessage).
func (e *MalformedError) Unwrap() error { return e.Err }

func (m *Manager) malformedLocked(ev feed.Event, err error) {
	m.stats.Malformed++
	m.reportLocked(&MalformedError{RoutingKey: ev.RawKey, Body: ev.Body, Err: err})
}

// reportLocked queues err for OnError and the log.
func (m *Manager) reportLocked(err error) {
	m.effects = append(m.effects, func() {
		m.s.Logger.LogAttrs(m.ctx, slog.LevelWarn, "recovery: error", slog.Any("err", err))
		if m.s.OnError != nil {
			m.callListener("OnError", func() { m.s.OnError(err) })
		}
	})
}

func (m *Manager) logLocked(level slog.Level, msg string, p *producer, attrs ...slog.Attr) {
	attrs = append([]slog.Attr{slog.Int("producer", p.feed.ID), slog.String("state", p.rec.State.String())}, attrs...)
	m.effects = append(m.effects, func() { m.s.Logger.LogAttrs(m.ctx, level, msg, attrs...) })
}

// saveTimeout bounds the save of one record.
const saveTimeout = 30 * time.Second

// saveLocked queues a write of p's record.
func (m *Manager) saveLocked(p *producer, now time.Time) {
	p.savedAt = now
	rec := p.rec
	p.saved = rec
	m.effects = append(m.effects, func() {
		// Not cancelled by Close, which waits for it: a store can commit a cancelled write
		// after giving up on it, and a process started after Close would then find the
		// record changing under it.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(m.ctx), saveTimeout)
		defer cancel()
		if err := m.s.Store.Save(ctx, rec); err != nil {
			m.s.Logger.LogAttrs(m.ctx, slog.LevelError, "recovery: saving a producer record", slog.Int("producer", rec.Producer), slog.Any("err", err))
			if m.s.OnError != nil {
				m.callListener("OnError", func() { m.s.OnError(fmt.Errorf("recovery: saving producer %d: %w", rec.Producer, err)) })
			}
		}
	})
}

// callListener runs a customer callback, keeping a panic from stopping the manager.
func (m *Manager) callListener(method string, f func()) {
	defer func() {
		if p := recover(); p != nil {
			m.s.Logger.LogAttrs(m.ctx, slog.LevelError, "recovery: listener panicked",
				slog.String("method", method), slog.Any("panic", p), slog.String("stack", string(debug.Stack())))
		}
	}()
	f()
}
