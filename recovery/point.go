package recovery

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// This file holds the recovery point: LastSubscribedAt, the feed timestamp a recovery of
// a healthy producer starts from. It moves only when the listeners have processed every
// message received before an alive (ProcessedThrough), never past a message whose
// listener call failed (ListenerFailed), and the drift between the feed's clock and ours.

// driftWarning is the gap between the feed's clock and ours, read off alives, past which
// the drift is logged: the maximum recovery length and the assumed downtime still read
// our clock.
const driftWarning = 5 * time.Second

// Hold is a listener call that failed or panicked and holds a producer's recovery point
// at its message's timestamp, so that the next recovery replays it.
type Hold struct {
	Event     feed.URN         `json:"event"`
	Type      feed.MessageType `json:"type"`
	Timestamp time.Time        `json:"timestamp"` // the message's, in the feed's clock: the recovery point stays at or before it
	Since     time.Time        `json:"since"`     // when the call failed, in our clock
}

// HoldGivenUpError reports a hold released because its message is older than the
// producer's recovery window: no recovery can bring the message back any more, so the
// message is given up and the recovery point goes on.
type HoldGivenUpError struct {
	Producer int
	Hold     Hold
	Window   time.Duration
}

func (e *HoldGivenUpError) Error() string {
	return fmt.Sprintf("recovery: producer %d: GIVING UP the %s of %s at %s, whose listener call failed: it is older than the recovery window of %v, so no recovery can replay it; the recovery point moves on without it",
		e.Producer, e.Hold.Type, e.Hold.Event, e.Hold.Timestamp.UTC().Format(time.RFC3339Nano), e.Window)
}

// ProcessedThrough tells the manager that every message of the producer received before
// its alive stamped through, on every session, has finished its listener call: the
// concurrent package's TaskLifecycleTracker.OnProcessed reports it. Calls may come out of
// order; the latest through counts. Safe for concurrent use.
func (m *Manager) ProcessedThrough(producer int, through time.Time) {
	m.post(input{processed: producer, through: through})
}

// ListenerFailed tells the manager that the listener call for the message with header h
// returned an error or panicked. Unless Config.AdvancePastFailures is set, the
// producer's recovery point then stays at or before the message's timestamp, so that the
// next recovery replays it. It must be called before the call's task is completed, so
// that the point cannot pass the message first. Safe for concurrent use.
func (m *Manager) ListenerFailed(h *feed.Header, t feed.MessageType) {
	m.post(input{failed: &Hold{Event: h.Event, Type: t, Timestamp: h.Timestamp}, failedProducer: h.Producer})
}

// onProcessed moves a healthy producer's recovery point to through, unless a hold keeps
// it before, or through is an alive read before the last recovery's replay was (floor).
func (m *Manager) onProcessed(p *producer, through time.Time, now time.Time) {
	if p.rec.State != Healthy || !through.After(p.floor) {
		return
	}
	if p.hold != nil && p.hold.Timestamp.Before(through) {
		through = p.hold.Timestamp
	}
	if !through.After(p.rec.LastSubscribedAt) {
		return
	}
	p.rec.LastSubscribedAt = through
	if now.Sub(p.savedAt) >= m.s.CheckInterval {
		// Saved at most once per check interval: a restart recovers a little more, never
		// less.
		m.saveLocked(p, now)
	}
}

// onFailed holds p's recovery point at a failed message.
func (m *Manager) onFailed(p *producer, h *Hold, now time.Time) {
	m.stats.ListenerFailures++
	if m.s.AdvancePastFailures || h.Timestamp.IsZero() {
		return
	}
	if p.hold != nil && !h.Timestamp.Before(p.hold.Timestamp) {
		return // held before it already
	}
	first := p.hold == nil
	h.Since = now
	p.hold = h
	if first {
		m.stats.Holds++
		m.logLocked(slog.LevelWarn, "recovery: a listener call failed; the recovery point is held before its message until a recovery replays it", p,
			slog.String("event", h.Event.String()), slog.String("type", h.Type.String()), slog.Time("timestamp", h.Timestamp))
	}
	// A replayed message is older than the point may be already: take the point back.
	moved := false
	if h.Timestamp.Before(p.rec.LastSubscribedAt) {
		p.rec.LastSubscribedAt, moved = h.Timestamp, true
	}
	if !p.rec.LastDisconnectedAt.IsZero() && h.Timestamp.Before(p.rec.LastDisconnectedAt) {
		p.rec.LastDisconnectedAt, moved = h.Timestamp, true
	}
	if moved {
		m.saveLocked(p, now)
	}
}

// releaseReplayedHold lets go of p's hold once a recovery from from has completed: it
// replayed the message, whose new call holds the point again if it fails again.
func (m *Manager) releaseReplayedHold(p *producer, from time.Time) {
	if p.hold == nil || p.hold.Timestamp.Before(from) {
		return
	}
	m.stats.HoldsReplayed++
	m.logLocked(slog.LevelInfo, "recovery: the failed message was replayed; the recovery point is free again", p,
		slog.String("event", p.hold.Event.String()), slog.Time("timestamp", p.hold.Timestamp))
	p.hold = nil
}

// checkHold gives a hold up once its message is older than the producer's recovery
// window, loudly: it can never be replayed.
func (m *Manager) checkHold(p *producer, now time.Time) {
	if p.hold == nil || now.Sub(p.hold.Timestamp) <= p.maxLen {
		return
	}
	m.stats.HoldsGivenUp++
	err := &HoldGivenUpError{Producer: p.feed.ID, Hold: *p.hold, Window: p.maxLen}
	p.hold = nil
	m.effects = append(m.effects, func() { m.s.Logger.LogAttrs(m.ctx, slog.LevelError, "recovery: hold given up", slog.Any("err", err)) })
	if m.s.OnError != nil {
		m.effects = append(m.effects, func() { m.callListener("OnError", func() { m.s.OnError(err) }) })
	}
}

// observeDrift measures how far the feed's clock is behind ours (negative: ahead) at an
// alive, and logs when it passes driftWarning and when it comes back.
func (m *Manager) observeDrift(p *producer, stamp, now time.Time) {
	if stamp.IsZero() {
		return
	}
	p.drift = now.Sub(stamp)
	far := p.drift > driftWarning || p.drift < -driftWarning
	if far == p.drifting {
		return
	}
	p.drifting = far
	if far {
		m.stats.DriftWarnings++
		m.logLocked(slog.LevelWarn, "recovery: the feed's clock and ours differ by more than "+driftWarning.String()+
			"; recovery points are in the feed's clock, the maximum recovery length in ours", p, slog.Duration("drift", p.drift))
	} else {
		m.logLocked(slog.LevelInfo, "recovery: the feed's clock is within "+driftWarning.String()+" of ours again", p, slog.Duration("drift", p.drift))
	}
}
