package heartbeat

import (
	"fmt"
	"time"
)

// Entry is one key's state in a Snapshot, with exported fields so that it encodes as is
// (JSON, gob, a database row).
type Entry[K comparable] struct {
	Key      K
	LastSeen time.Time
	// Timeout is the key's timeout. In an entry given to Restore, 0 means the key's
	// default: TimeoutOf or Config.Timeout of the restoring monitor.
	Timeout time.Duration
	Lost    bool
}

// Snapshot returns the state of every key, in no particular order, so that a restarted
// process can Restore it. Each shard is copied under its lock, one after the other: the
// snapshot is exact per key, not one instant of the whole monitor.
func (m *Monitor[K]) Snapshot() []Entry[K] {
	out := make([]Entry[K], 0, m.Len())
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		s.forEach(func(e *entry[K]) {
			out = append(out, Entry[K]{Key: e.key, LastSeen: m.timeAt(e.lastSeen),
				Timeout: durationOf(e.timeout), Lost: e.prev == prevLost})
		})
		s.mu.Unlock()
	}
	return out
}

// Restore merges entries, typically a Snapshot saved by an earlier process, into the
// monitor, key by key; keys without an entry keep their state. It checks every entry
// first and changes nothing when one is invalid (a zero LastSeen, a negative Timeout or
// one above MaxTimeout, a Timeout of 0 for a key with no default timeout).
//
// An entry gives its key's state unless the monitor has seen the key at or after the
// entry's LastSeen (a beat since the restart is newer news), in which case the monitor's
// LastSeen and Lost stay; a non-zero Timeout is taken either way. Then:
//   - an alive entry whose deadline passed while the process was down is found lost by the
//     next Advance, once;
//   - a Lost entry stays lost without a second OnLost (the earlier process reported it),
//     and its next beat calls OnRestored with silentFor = that beat - LastSeen;
//   - Restore calls OnRestored itself (like a beat would) when it leaves alive a key that
//     someone was told is lost: a Lost entry of a key that has beaten since, or a lost key
//     of this monitor given a newer alive entry.
//
// Restore never calls OnLost.
func (m *Monitor[K]) Restore(entries []Entry[K]) error {
	timeouts := make([]int64, len(entries))
	for n, en := range entries {
		switch {
		case en.LastSeen.IsZero():
			return fmt.Errorf("heartbeat: Restore entry %d (key %v): LastSeen must not be zero", n, en.Key)
		case en.Timeout < 0 || en.Timeout > MaxTimeout:
			return fmt.Errorf("heartbeat: Restore entry %d (key %v): Timeout %v must be between 0 and %v",
				n, en.Key, en.Timeout, MaxTimeout)
		case en.Timeout > 0:
			timeouts[n] = int64(en.Timeout)
		case m.cfg.timeoutOf != nil:
			timeouts[n] = m.timeoutOf(en.Key)
		default:
			timeouts[n] = m.cfg.timeout
		}
		if timeouts[n] <= 0 {
			return fmt.Errorf("heartbeat: Restore entry %d (key %v): Timeout 0 and no default timeout for the key", n, en.Key)
		}
	}
	for n, en := range entries {
		m.restore(en, m.sinceEpoch(en.LastSeen), timeouts[n])
	}
	return nil
}

// restore merges one checked entry.
func (m *Monitor[K]) restore(en Entry[K], lastSeen, timeout int64) {
	s, hash := m.shardOf(en.Key)
	s.mu.Lock()
	i, ok := s.find(en.Key, hash)
	if !ok {
		s.insert(en.Key, hash, i, lastSeen, timeout, en.Lost)
		s.mu.Unlock()
		return
	}
	e := s.at(i)
	wasLost := e.prev == prevLost
	restoredFor := int64(-1) // the silentFor of an OnRestored owed, if >= 0
	if wasLost {
		s.lost--
	} else {
		s.unlink(i, e)
	}
	lost := wasLost
	if e.lastSeen >= lastSeen { // the monitor's news is newer: it keeps LastSeen and Lost
		if en.Lost && !wasLost {
			restoredFor = e.lastSeen - lastSeen
		}
	} else {
		if wasLost && !en.Lost {
			restoredFor = lastSeen - e.lastSeen
		}
		e.lastSeen, lost = lastSeen, en.Lost
	}
	if en.Timeout > 0 {
		e.timeout = timeout
	}
	if lost {
		s.markLost(e)
	} else {
		s.place(i, e)
	}
	if restoredFor >= 0 {
		s.restored++
		if m.cfg.onRestored != nil {
			s.queue(event[K]{key: en.Key, ns: restoredFor})
		}
	}
	m.unlockAndDeliver(s)
}
