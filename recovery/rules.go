package recovery

import (
	"cmp"
	"log/slog"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// This file holds the manager's rules, as methods called under the manager's lock: what
// an alive does, what missing alives do, what a snapshot_complete does, and the checks of
// the manager's ticker.

// onAlive applies the alive rules: a gap past the heartbeat limit, or subscribed=0, needs
// a recovery; a disconnected producer is recovered at its first alive.
func (m *Manager) onAlive(a *feed.Alive, now time.Time) {
	p, ok := m.producers[a.Producer]
	if !ok {
		m.ignoredLocked(a.Producer)
		return
	}
	// Every session receives the alives; the copies share the feed's timestamp.
	if !a.Timestamp.IsZero() && !a.Timestamp.After(p.lastAlive) {
		m.stats.DuplicateAlives++
		return
	}
	p.lastAlive = a.Timestamp
	m.stats.Alives++
	m.observeDrift(p, a.Timestamp, now)
	if !a.Timestamp.IsZero() { // without one, there is no lag to tell
		id, lag := p.feed.ID, p.drift
		m.observeLocked(func(o Observer) { o.ProducerAlive(id, lag) })
	}
	m.mon.BeatAt(p.feed.ID, now) // the same instant the gap below is measured to
	// Liveness is measured in our clock, between receipts; the recovery point is in the
	// feed's (onProcessed).
	prev := p.aliveAt
	p.aliveAt = now
	changed := false
	if !a.Subscribed {
		// The feed no longer routes to us: recover the period since the last successful
		// subscription.
		m.stats.Unsubscribed++
		if p.rec.State == Healthy {
			p.rec.State = Disconnected
			m.stats.Disconnections++
			m.update(p, feed.Other, now)
		}
		m.need(p, now, "alive with subscribed=0")
		changed = true
	} else {
		switch p.rec.State {
		case Healthy:
			if !prev.IsZero() && pastLimit(now.Sub(prev), p.limit) {
				// Our listener was down, or the feed slow: messages may be missing since
				// the previous alive, which the recovery point is at or before.
				p.rec.LastDisconnectedAt = p.rec.LastSubscribedAt
				p.rec.State = Disconnected
				m.stats.Disconnections++
				m.update(p, feed.AliveIntervalViolation, now)
				m.need(p, now, "alives resumed after "+now.Sub(prev).String())
				changed = true
			}
		case Disconnected:
			if p.inFlight == 0 { // else the request under way is the one this alive calls for
				m.need(p, now, "alives arrive")
				changed = true
			}
		}
	}
	if changed {
		m.saveLocked(p, now)
	}
	m.kick(p, now)
}

// onLost is the missing-heartbeat rule, called by the heartbeat monitor when a
// producer's alives stop for longer than its limit.
func (m *Manager) onLost(id int, lastSeen time.Time) {
	m.do(func(now time.Time) { m.alivesMissing(m.producers[id], lastSeen, now) })
}

// alivesMissing registers the disconnection of a healthy producer whose alives stopped.
// The monitor reports a silence once; a producer that was recovering then is checked
// again at every tick (checkSilent), so that it does not stay up without alives.
func (m *Manager) alivesMissing(p *producer, lastSeen time.Time, now time.Time) {
	if p.rec.State != Healthy {
		return // the disconnection is registered already, or a recovery is under way
	}
	p.rec.LastDisconnectedAt = p.rec.LastSubscribedAt
	if p.rec.LastDisconnectedAt.IsZero() {
		p.rec.LastDisconnectedAt = lastSeen
	}
	p.rec.State = Disconnected
	m.stats.Disconnections++
	m.logLocked(slog.LevelWarn, "recovery: producer alives missing", p, slog.Time("last_alive", lastSeen))
	m.saveLocked(p, now)
	m.update(p, feed.AliveIntervalViolation, now)
}

// checkSilent is the missing-heartbeat check of a healthy producer the monitor already
// reported lost while it was not healthy.
func (m *Manager) checkSilent(p *producer, now time.Time) {
	if p.rec.State != Healthy {
		return
	}
	if st, ok := m.mon.Get(p.feed.ID); ok && st.Lost {
		m.alivesMissing(p, st.LastSeen, now)
	}
}

// onConnectionDown disconnects the healthy producers and invalidates recoveries under
// way: the replies sent while the connection was down are lost.
func (m *Manager) onConnectionDown(lost feed.SessionRef, err error, now time.Time) {
	m.stats.ConnectionDowns++
	for _, p := range m.order {
		switch p.rec.State {
		case Healthy:
			p.rec.LastDisconnectedAt = p.rec.LastSubscribedAt
			p.rec.State = Disconnected
			m.stats.Disconnections++
			m.saveLocked(p, now)
			ref := lost // a status of its own each: the listener may keep it
			m.updateFrom(p, feed.ConnectionDown, &ref, now)
		case Recovering:
			m.need(p, now, "connection lost during the recovery")
			m.saveLocked(p, now)
		default:
			if p.inFlight != 0 { // its replay may come while the connection is down
				m.need(p, now, "connection lost while the request was sent")
			}
		}
	}
	_ = err
}

// onSnapshotComplete ends a recovery: the snapshot_complete of its request, once
// received on every session, makes the producer healthy.
func (m *Manager) onSnapshotComplete(sc *feed.SnapshotComplete, session int, now time.Time) {
	if e, ok := m.events[sc.RequestID]; ok && e.producer.ID == sc.Producer {
		m.onEventSnapshot(sc.RequestID, e, session, now)
		return
	}
	p, ok := m.producers[sc.Producer]
	if !ok {
		m.ignoredLocked(sc.Producer)
		return
	}
	id := sc.RequestID
	current := id != 0 && (id == p.inFlight || (p.rec.State == Recovering && id == p.rec.RecoverySnapshotID))
	if !current {
		m.stats.SnapshotsIgnored++
		m.logLocked(slog.LevelInfo, "recovery: snapshot_complete of another request ignored", p,
			slog.Int64("request_id", id), slog.Int64("last_request_id", p.rec.RecoverySnapshotID))
		return
	}
	if p.snapID != id {
		p.snapID = id
		clear(p.snapSeen)
	}
	p.snapSeen[session] = true
	m.maybeComplete(p, now)
}

// maybeComplete completes the recovery in progress once its snapshot_complete has come on
// every session (a copy may arrive before the API's answer to the request).
func (m *Manager) maybeComplete(p *producer, now time.Time) {
	if p.rec.State != Recovering || p.needs || p.inFlight != 0 ||
		p.snapID != p.rec.RecoverySnapshotID || len(p.snapSeen) < m.s.sessions {
		return
	}
	m.stats.RecoveriesCompleted++
	m.observeEndLocked(p.feed.ID, feed.ProducerRecovery, RecoveryCompleted, p.acceptedAt, now)
	m.logLocked(slog.LevelInfo, "recovery: completed", p, slog.Int64("request_id", p.rec.RecoverySnapshotID))
	m.becomeHealthy(p, now)
}

func (m *Manager) becomeHealthy(p *producer, now time.Time) {
	// The recovery point restarts where the recovery went back to: its replay may still
	// be queued, so only an alive read after it can move the point on (floor).
	if from := cmp.Or(p.coveredFrom, p.from, p.rec.LastDisconnectedAt); !from.IsZero() {
		p.rec.LastSubscribedAt = from
		m.releaseReplayedHold(p, from)
		if p.hold != nil && p.hold.Timestamp.Before(from) {
			p.rec.LastSubscribedAt = p.hold.Timestamp
		}
	}
	p.floor = p.lastAlive
	p.rec.State = Healthy
	p.rec.LastDisconnectedAt = time.Time{}
	p.needs, p.again, p.from, p.coveredFrom = false, false, time.Time{}, time.Time{}
	reason := feed.ReturnedFromInactivity
	if !p.recovered {
		reason = feed.FirstRecoveryCompleted
	}
	p.recovered = true
	m.saveLocked(p, now)
	m.update(p, reason, now)
}

// checkTimeout asks again for a recovery whose snapshot_complete is overdue.
func (m *Manager) checkTimeout(p *producer, now time.Time) {
	if p.rec.State != Recovering || p.needs || p.inFlight != 0 || now.Sub(p.rec.RecoveryRequestedAt) <= m.s.RecoveryTimeout {
		return
	}
	m.stats.RecoveryTimeouts++
	m.observeEndLocked(p.feed.ID, feed.ProducerRecovery, RecoveryTimedOut, p.acceptedAt, now)
	m.reportLocked(&TimeoutError{Producer: p.feed.ID, RequestID: p.rec.RecoverySnapshotID, RequestedAt: p.rec.RecoveryRequestedAt})
	m.need(p, now, "snapshot_complete overdue")
	m.saveLocked(p, now)
	m.kick(p, now)
}

// checkDelay compares the largest processing delay since the last check with the limit.
// A check without any live message processed says nothing and changes nothing.
func (m *Manager) checkDelay(p *producer, now time.Time) {
	d := p.maxDelay.Swap(noDelay)
	if m.s.MaxProcessingDelay < 0 || d == noDelay {
		return
	}
	late := time.Duration(d) > m.s.MaxProcessingDelay
	if late == p.delayed {
		return
	}
	p.delayed = late
	if late {
		m.stats.DelayViolations++
		m.logLocked(slog.LevelWarn, "recovery: messages processed late", p, slog.Duration("delay", time.Duration(d)))
		m.update(p, feed.ProcessingQueueDelayViolation, now)
	} else {
		m.update(p, feed.ProcessingQueueDelayStabilized, now)
	}
}

// need records that p must be recovered, choosing where from by the recovery-from rules
// with the record as it stands now, before the alive that revealed the need updates it.
// The start is registered as the disconnection, so that a restart before the request goes
// out recovers from the same moment.
func (m *Manager) need(p *producer, now time.Time, why string) {
	if p.inFlight != 0 {
		p.again = true
		return
	}
	if p.needs {
		return // keep the earlier start
	}
	from, rule := RecoveryFrom(p.rec, now, p.maxLen, m.s.AssumedDowntime)
	p.needs, p.from, p.attempt, p.retryAt = true, from, 0, time.Time{}
	if p.rec.LastDisconnectedAt.IsZero() {
		p.rec.LastDisconnectedAt = from
	}
	m.logLocked(slog.LevelInfo, "recovery: needed", p, slog.String("why", why),
		slog.Time("from", from), slog.String("rule", rule.String()))
}

// update tells the listener when the producer's status as the customer sees it (up when
// healthy and not delayed) changes.
func (m *Manager) update(p *producer, reason feed.StatusReason, now time.Time) {
	m.updateFrom(p, reason, nil, now)
}

// updateFrom is update for a change that session made (feed.ProducerStatus.Session).
func (m *Manager) updateFrom(p *producer, reason feed.StatusReason, session *feed.SessionRef, now time.Time) {
	up := p.rec.State == Healthy && !p.delayed
	if up == p.up {
		return
	}
	p.up = up
	st := feed.ProducerStatus{Producer: p.feed.ID, Down: !up, Delayed: p.delayed, Reason: reason, Timestamp: now, Session: session}
	m.stats.StatusChanges++
	m.logLocked(slog.LevelInfo, "recovery: producer status", p, slog.Bool("up", up), slog.String("reason", reason.String()))
	if l := m.s.listener; l != nil {
		m.effects = append(m.effects, func() {
			m.callListener("OnProducerStatusChange", func() { l.OnProducerStatusChange(m.ctx, st) })
		})
	}
	m.observeLocked(func(o Observer) { o.ProducerStatusChanged(st) })
}
