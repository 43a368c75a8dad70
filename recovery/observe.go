package recovery

import (
	"time"

	"github.com/feedkit/feedkit/feed"
)

// The manager tells its Observer through the effects queue, as it tells its listener:
// what to tell is decided under mu, and told once mu is released, in the order it
// happened. A nil Observer costs the nil check and nothing else.

// observeLocked queues a call to the observer, when there is one.
func (m *Manager) observeLocked(tell func(o Observer)) {
	if o := m.s.Observer; o != nil {
		m.effects = append(m.effects, func() { tell(o) })
	}
}

// observeRequestLocked queues the outcome of a recovery request.
func (m *Manager) observeRequestLocked(producer int, kind feed.RecoveryKind, r RequestResult) {
	m.observeLocked(func(o Observer) { o.RecoveryRequested(producer, kind, r) })
}

// observeEndLocked queues the end of an accepted recovery, accepted at acceptedAt.
func (m *Manager) observeEndLocked(producer int, kind feed.RecoveryKind, r RecoveryResult, acceptedAt, now time.Time) {
	took := now.Sub(acceptedAt)
	m.observeLocked(func(o Observer) { o.RecoveryEnded(producer, kind, r, took) })
}

// kind is the RecoveryKind of an event recovery.
func (e *eventRecovery) kind() feed.RecoveryKind {
	if e.stateful {
		return feed.EventStatefulRecovery
	}
	return feed.EventRecovery
}
