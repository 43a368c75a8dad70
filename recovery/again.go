package recovery

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// recoverAgain is a RecoverProducer call on its way to the manager's goroutine.
type recoverAgain struct {
	producer int
	reason   feed.StatusReason
}

// RecoverProducer takes producer down now and recovers it again from its recovery point,
// as a lost connection does for every producer, for one producer and with reason: the
// SDK calls it with feed.ProcessingStalled when a producer's up has been held back past
// its bound (the listeners did not process the recovery's messages in time), a group's
// ingress when a shard has not acknowledged a recovery in time, and an operator may,
// to re-sync a producer whose data is in doubt. What it does depends on where the
// producer stands when the manager takes the call:
//
//   - Healthy (up, or its up held back by the SDK until the recovery's messages are
//     processed): it is disconnected at its recovery point (LastDisconnectedAt), the
//     GlobalEventsListener is told it is down with reason (the SDK's StatusGate then drops
//     the up it holds), and a recovery from that point is requested at once, within the
//     rate limits; its completion brings the next up (ReturnedFromInactivity).
//   - Recovering, or a request being sent: the recovery is requested again, from where the
//     current one goes back to, under a new request id; the current one's
//     snapshot_complete no longer completes it. The producer is down already; no status
//     is told.
//   - Disconnected, with no request being sent: nothing changes. Its recovery is due
//     already, requested at its next alive or when the rate limits allow it.
//
// Stats.RecoveriesForced counts the calls that took a producer down or restarted its
// recovery. reason must say down: an up reason (feed.StatusReason.IsUp), InitialState
// and an unknown value are refused. RecoverProducer returns an error before Open, once
// the manager is closed, and for a producer it does not follow; otherwise it hands the
// call to the manager's goroutine and returns without waiting, so it is safe to call
// from any goroutine, the GlobalEventsListener and OnError included (Flush, from another
// goroutine, waits until the manager has acted on it).
func (m *Manager) RecoverProducer(producer int, reason feed.StatusReason) error {
	if reason.IsUp() || reason == feed.InitialState || reason.String() == "Unknown" {
		return fmt.Errorf("recovery: RecoverProducer: reason %s (%d) does not take a producer down", reason, uint8(reason))
	}
	m.mu.Lock()
	state := m.state
	_, followed := m.producers[producer]
	m.mu.Unlock()
	switch {
	case state == created:
		return errors.New("recovery: RecoverProducer before Open")
	case state == closed:
		return ErrClosed
	case !followed:
		return fmt.Errorf("recovery: RecoverProducer: producer %d is not followed", producer)
	}
	in := input{recoverAgain: &recoverAgain{producer: producer, reason: reason}}
	select {
	case m.inbox <- in:
	case <-m.closing:
	default:
		// The inbox is full: the caller may be the manager's own goroutine (its listener,
		// OnError), which would wait for itself. Queued from a goroutine of its own.
		go m.post(in)
	}
	return nil
}

// onRecoverProducer applies a RecoverProducer call to p; see there.
func (m *Manager) onRecoverProducer(p *producer, reason feed.StatusReason, now time.Time) {
	why := "RecoverProducer (" + reason.String() + ")"
	switch {
	case p.rec.State == Healthy:
		p.rec.LastDisconnectedAt = p.rec.LastSubscribedAt
		p.rec.State = Disconnected
		m.stats.Disconnections++
		m.stats.RecoveriesForced++
		m.logLocked(slog.LevelWarn, "recovery: producer taken down to be recovered again", p,
			slog.String("reason", reason.String()), slog.Time("from", p.rec.LastDisconnectedAt))
		m.update(p, reason, now)
		m.need(p, now, why)
	case p.rec.State == Recovering, p.inFlight != 0:
		if p.needs && p.inFlight == 0 {
			return // requested again already (a retry is pending): nothing to restart
		}
		m.stats.RecoveriesForced++
		m.logLocked(slog.LevelWarn, "recovery: recovery under way requested again", p,
			slog.String("reason", reason.String()), slog.Int64("request_id", max(p.inFlight, p.rec.RecoverySnapshotID)))
		m.need(p, now, why)
	default:
		return // disconnected: its recovery is due already
	}
	m.saveLocked(p, now)
	m.kick(p, now)
}
