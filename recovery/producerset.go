package recovery

import (
	"context"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// OpenWithProducers is Open following list instead of Config.Producers: the producers
// the feed's API describes for the account, read by the caller at Open (the SDK does,
// from /v1/descriptions/producers.xml). The producers of Config.DisabledProducers are
// left out still, and Config.HeartbeatLimits apply to those of list they name. list is
// checked as Config.Producers is, and an error names OpenWithProducers[i]; an empty list
// follows no producer.
func (m *Manager) OpenWithProducers(ctx context.Context, list []feed.Producer) error {
	if list == nil {
		list = []feed.Producer{}
	}
	return m.open(ctx, list)
}

// setProducers makes list, less the disabled producers, the producers followed. It runs
// before the manager's goroutine and the sessions start, which is what lets the other
// goroutines read m.producers without the lock.
func (m *Manager) setProducers(list []feed.Producer) {
	m.producers = make(map[int]*producer, len(list))
	m.order = m.order[:0]
	for _, fp := range list {
		if m.s.disabled[fp.ID] {
			continue
		}
		p := &producer{feed: fp, limit: m.s.heartbeatLimit(fp), maxLen: m.s.maxLength(fp),
			rec: Record{Producer: fp.ID, State: Disconnected}, snapSeen: make(map[int]bool)}
		p.maxDelay.Store(noDelay)
		m.producers[fp.ID] = p
		m.order = append(m.order, p)
	}
}

// initialLocked returns the initial status of every producer followed: down, since each
// is recovered first. The customer learns of every producer at Open, not at its first
// change, and knows which are followed.
func (m *Manager) initialLocked(now time.Time) []feed.ProducerStatus {
	out := make([]feed.ProducerStatus, 0, len(m.order))
	for _, p := range m.order {
		out = append(out, feed.ProducerStatus{Producer: p.feed.ID, Down: true, Reason: feed.InitialState, Timestamp: now})
	}
	m.stats.StatusChanges += uint64(len(out))
	return out
}

// tellInitial tells the listener the initial statuses.
func (m *Manager) tellInitial(sts []feed.ProducerStatus) {
	l := m.s.listener
	if l == nil {
		return
	}
	for _, st := range sts {
		m.callListener("OnProducerStatusChange", func() { l.OnProducerStatusChange(m.ctx, st) })
	}
}

// ignoredLocked counts a system message of a producer not followed.
func (m *Manager) ignoredLocked(id int) {
	if m.s.disabled[id] {
		m.stats.DisabledProducer++
	} else {
		m.stats.UnknownProducer++
	}
}
