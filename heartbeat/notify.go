package heartbeat

import "slices"

// event is a callback owed: OnLost (ns is the last seen, since the epoch) or OnRestored
// (ns is how long the key was silent).
type event[K comparable] struct {
	key  K
	ns   int64
	lost bool
}

// eventChunk is the size of the chunks a shard queues events in: an Advance that finds a
// great many keys lost at once fills chunk after chunk, without copying them as a growing
// slice would, and a shard keeps a single chunk for the next time.
const eventChunk = 128

// notifier is a shard's queue of callbacks owed, and whether a goroutine is delivering
// them (guarded by the shard's lock).
//
// Events are queued under the lock, in the order of the state changes they report, and
// delivered outside it by one goroutine at a time: the one that queued them, unless
// another is delivering for the shard at that moment, which then delivers them too before
// it returns. So a key's OnLost and OnRestored never overtake each other nor run at once,
// no goroutine waits for another's callbacks, and a callback that calls Beat (which may
// queue an event of its own shard) finds its own goroutine delivering and returns.
type notifier[K comparable] struct {
	pending    [][]event[K] // chunks; only the last one may have room
	spare      []event[K]   // an empty chunk to reuse
	delivering bool
}

func (n *notifier[K]) queue(ev event[K]) {
	if len(n.pending) == 0 || len(n.pending[len(n.pending)-1]) == eventChunk {
		c := n.spare
		n.spare = nil
		if c == nil {
			c = make([]event[K], 0, eventChunk)
		}
		n.pending = append(n.pending, c)
	}
	last := &n.pending[len(n.pending)-1]
	*last = append(*last, ev)
}

// unlockAndDeliver releases s.mu, which the caller holds, and delivers the shard's pending
// events unless another goroutine is delivering them.
func (m *Monitor[K]) unlockAndDeliver(s *shard[K]) {
	if s.delivering || len(s.pending) == 0 {
		s.mu.Unlock()
		return
	}
	s.delivering = true
	for len(s.pending) > 0 {
		batch := s.pending
		s.pending = nil
		s.mu.Unlock()
		m.deliver(s, batch)
		s.mu.Lock()
		if s.spare == nil {
			c := batch[len(batch)-1]
			clear(c) // drops the keys
			s.spare = c[:0]
		}
	}
	s.delivering = false
	s.mu.Unlock()
	m.delivered.Notify() // for a Flush waiting on this shard
}

// deliver calls the callbacks of a batch. If one panics, the rest of the batch goes back
// to the front of the queue, the shard is left for another goroutine to deliver (the next
// Advance does), and the panic goes on up to the caller.
func (m *Monitor[K]) deliver(s *shard[K], batch [][]event[K]) {
	c, i := 0, 0
	defer func() {
		if c < len(batch) { // only when a callback panicked, at batch[c][i]
			rest := append([][]event[K]{slices.Clone(batch[c][i+1:])}, batch[c+1:]...)
			s.mu.Lock()
			s.pending = append(rest, s.pending...)
			s.delivering = false
			s.mu.Unlock()
			m.delivered.Notify()
		}
	}()
	for ; c < len(batch); c++ {
		for i = 0; i < len(batch[c]); i++ {
			ev := &batch[c][i]
			if ev.lost {
				m.cfg.onLost(ev.key, m.timeAt(ev.ns))
			} else {
				m.cfg.onRestored(ev.key, durationOf(ev.ns))
			}
		}
	}
}
