package recovery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// accountProducers reads the producers to follow from Config.ProducerSource: nil, to
// follow Config.Producers, when there is none or it cannot be read (reported). Each keeps
// the heartbeat limit Config.Producers gives it, which the API does not describe.
func (m *Manager) accountProducers(ctx context.Context) ([]feed.Producer, error) {
	src := m.s.ProducerSource
	if src == nil {
		return nil, nil
	}
	list, err := src.Producers(ctx)
	switch {
	case errors.Is(err, feed.ErrUnauthorized) || errors.Is(err, feed.ErrForbidden):
		return nil, fmt.Errorf("recovery: the feed's API refused the access token: %w", err)
	case err != nil && ctx.Err() != nil:
		return nil, fmt.Errorf("recovery: reading the account's producers: %w", err)
	case err != nil:
		err = fmt.Errorf("recovery: the account's producers could not be read from the feed's API; following Config.Producers instead: %w", err)
		m.s.Logger.LogAttrs(ctx, slog.LevelWarn, err.Error())
		if m.s.OnError != nil {
			m.s.OnError(err)
		}
		return nil, nil
	}
	out := make([]feed.Producer, 0, len(list))
	ids := make([]int, 0, len(list))
	for _, p := range list {
		if known, ok := feed.LookupProducer(m.s.Producers, p.ID); ok {
			p.HeartbeatLimit = known.HeartbeatLimit
		}
		out = append(out, p)
		ids = append(ids, p.ID)
	}
	m.s.Logger.LogAttrs(ctx, slog.LevelInfo, "recovery: the account's producers, from the feed's API",
		slog.Any("producers", ids), slog.Any("disabled", m.s.DisabledProducers))
	return out, nil
}

// warnInMemory logs a warning when recoveries are on and the producer records go with
// the process: a restarted process would recover each producer from AssumedDowntime ago
// only, and what the feed sent before, settlements and cancels included, would never be
// seen. A warning, not an error: a test or a development run may well accept it.
func (m *Manager) warnInMemory(ctx context.Context) {
	if !m.s.inMemory || !m.s.enabled {
		return
	}
	m.s.Logger.LogAttrs(ctx, slog.LevelWarn,
		"recovery: producer records are kept in memory only (Config.Store): after a restart each producer is recovered from Config.AssumedDowntime ago only, and what the feed sent before is never replayed; set a recovery.FileStore or a pgstore.Store to recover from the last record",
		slog.Duration("assumed_downtime", m.s.AssumedDowntime))
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
		p.saved = p.rec // nothing to save until it changes
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

// tellInitial tells the listener and the observer the initial statuses, each status to
// both in turn, as the manager tells later changes.
func (m *Manager) tellInitial(sts []feed.ProducerStatus) {
	l, o := m.s.listener, m.s.Observer
	for _, st := range sts {
		if l != nil {
			m.callListener("OnProducerStatusChange", func() { l.OnProducerStatusChange(m.ctx, st) })
		}
		if o != nil {
			o.ProducerStatusChanged(st)
		}
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
