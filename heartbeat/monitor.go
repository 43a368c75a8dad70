package heartbeat

import (
	"errors"
	"fmt"
	"hash/maphash"
	"math/bits"
	"time"

	"github.com/feedkit/feedkit/internal/broadcast"
)

// ErrUnknownKey is returned by SetTimeout for a key the monitor does not track.
var ErrUnknownKey = errors.New("heartbeat: unknown key")

// Monitor tracks the last beat of each key and reports the keys that fall silent past
// their timeout. It is safe for concurrent use. Create it with New. It starts no goroutine
// (Run is the caller's), so it has nothing to close.
//
// A key must equal itself: a float NaN, or an interface holding one, would be a new key
// at every beat (as in a Go map).
type Monitor[K comparable] struct {
	cfg    settings[K]
	epoch  time.Time // the clock at New; times are kept as nanoseconds since it
	seed   maphash.Seed
	shift  uint // 64 - log2(shards): a key's shard is the top bits of its hash
	shards []shard[K]

	// delivered is notified each time a goroutine stops delivering a shard's callbacks,
	// for Flush.
	delivered broadcast.Signal
}

// State is what a Monitor knows of one key.
type State struct {
	LastSeen time.Time     // the key's latest beat
	Timeout  time.Duration // how long the key may be silent before it is lost
	Lost     bool          // found silent past its timeout, and not heard from since
}

// Stats is a snapshot of a Monitor's gauges and counters.
type Stats struct {
	Keys      int    `json:"keys"`       // keys tracked
	Lost      int    `json:"lost"`       // of which lost
	Beats     uint64 `json:"beats"`      // beats taken (the first beat of a key included)
	Stale     uint64 `json:"stale"`      // beats ignored because they were older than the key's last seen
	Expired   uint64 `json:"expired"`    // keys found lost (OnLost calls owed)
	Restored  uint64 `json:"restored"`   // lost keys that beat again (OnRestored calls owed)
	Revisits  uint64 `json:"revisits"`   // wheel visits of keys that were not due: the price of lazy rescheduling
	NoTimeout uint64 `json:"no_timeout"` // beats of new keys dropped because TimeoutOf answered <= 0 and Config.Timeout is 0
}

// New returns a Monitor, or an error naming the first field of cfg that is wrong. The
// monitor's ticks are counted from the clock's time now.
func New[K comparable](cfg Config[K]) (*Monitor[K], error) {
	s, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	m := &Monitor[K]{cfg: s, epoch: s.clock.Now(), seed: maphash.MakeSeed(),
		shift: uint(64 - bits.TrailingZeros(uint(s.shards))), shards: make([]shard[K], s.shards)}
	for i := range m.shards {
		m.shards[i].init(s.tick)
	}
	return m, nil
}

// Beat records a beat of key now. A key not tracked yet starts being tracked.
func (m *Monitor[K]) Beat(key K) {
	// Since, not Now: with the wall clock it reads only the monotonic clock (about half
	// the price of Now, which reads the wall clock too), and a beat needs nothing else.
	m.beat(key, clampSpan(int64(m.cfg.clock.Since(m.epoch))))
}

// BeatAt records a beat of key observed at time at. A beat before the key's last seen is
// ignored (counted in Stats.Stale), and so is one at its last seen if the key is lost:
// beats may arrive out of order, and an old one must neither move the deadline back nor
// restore a lost key. A key not tracked yet starts being tracked, even if at is so old
// that it is due at once (the next Advance then finds it lost). When the key was lost,
// OnRestored is called before BeatAt returns, on this goroutine, unless another goroutine
// is delivering callbacks of the key's shard (see the package doc).
func (m *Monitor[K]) BeatAt(key K, at time.Time) { m.beat(key, m.sinceEpoch(at)) }

// beat is BeatAt with the time in nanoseconds since the epoch.
func (m *Monitor[K]) beat(key K, ns int64) {
	s, hash := m.shardOf(key)
	s.mu.Lock()
	i, ok := s.find(key, hash)
	if !ok {
		timeout := m.cfg.timeout
		if m.cfg.timeoutOf != nil { // asked outside the lock: it may call the monitor
			s.mu.Unlock()
			timeout = m.timeoutOf(key)
			s.mu.Lock()
			i, ok = s.find(key, hash) // another goroutine may have added the key meanwhile
		}
		if !ok {
			if timeout <= 0 {
				s.noTimeout++
			} else {
				s.beats++
				s.insert(key, hash, i, ns, timeout, false)
			}
			s.mu.Unlock()
			return
		}
	}
	e := s.at(i)
	lost := e.prev == prevLost
	if ns < e.lastSeen || ns == e.lastSeen && lost {
		s.stale++
		s.mu.Unlock()
		return
	}
	s.beats++
	if !lost {
		// The common case: the entry stays where it is in the wheel. When its bucket comes
		// up, the sweep sees the later deadline and moves it then (lazy rescheduling).
		e.lastSeen = ns
		s.mu.Unlock()
		return
	}
	silent := ns - e.lastSeen
	e.lastSeen = ns
	s.lost--
	s.restored++
	s.place(i, e)
	if m.cfg.onRestored != nil {
		s.queue(event[K]{key: key, ns: silent})
	}
	m.unlockAndDeliver(s)
}

// SetTimeout changes the timeout of a tracked key; the new deadline counts from the key's
// last seen, and may be due at once (the next Advance then finds the key lost). A lost key
// stays lost until it beats. It returns an error wrapping ErrUnknownKey for a key not
// tracked (beat it first: a key is tracked from its first beat, never from a timeout
// alone), and an error for d outside MinTimeout to MaxTimeout.
func (m *Monitor[K]) SetTimeout(key K, d time.Duration) error {
	if d < MinTimeout || d > MaxTimeout {
		return fmt.Errorf("heartbeat: SetTimeout %v for key %v must be between %v and %v", d, key, MinTimeout, MaxTimeout)
	}
	s, hash := m.shardOf(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.find(key, hash)
	if !ok {
		return fmt.Errorf("%w: SetTimeout for key %v", ErrUnknownKey, key)
	}
	e := s.at(i)
	e.timeout = int64(d)
	if e.prev != prevLost { // a shorter timeout may need an earlier bucket
		s.unlink(i, e)
		s.place(i, e)
	}
	return nil
}

// Forget stops tracking key and frees its memory; it reports whether the key was tracked.
// A callback already owed for the key is still delivered.
func (m *Monitor[K]) Forget(key K) bool {
	s, hash := m.shardOf(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.find(key, hash)
	if ok {
		s.remove(i)
	}
	return ok
}

// Get returns the state of key, and whether it is tracked.
func (m *Monitor[K]) Get(key K) (State, bool) {
	s, hash := m.shardOf(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.find(key, hash)
	if !ok {
		return State{}, false
	}
	e := s.at(i)
	return State{LastSeen: m.timeAt(e.lastSeen), Timeout: durationOf(e.timeout), Lost: e.prev == prevLost}, true
}

// Len returns the number of keys tracked, lost ones included.
func (m *Monitor[K]) Len() int {
	n := 0
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		n += s.keys
		s.mu.Unlock()
	}
	return n
}

// Stats returns the monitor's gauges and counters, summed shard by shard (each shard's
// figures are consistent, the sum is not one instant).
func (m *Monitor[K]) Stats() Stats {
	var st Stats
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		st.Keys += s.keys
		st.Lost += s.lost
		st.Beats += s.beats
		st.Stale += s.stale
		st.Expired += s.expired
		st.Restored += s.restored
		st.Revisits += s.revisits
		st.NoTimeout += s.noTimeout
		s.mu.Unlock()
	}
	return st
}

// shardOf hashes key once: the top bits of the hash choose its shard, the low 32 bits are
// its hash in the shard's table.
func (m *Monitor[K]) shardOf(key K) (*shard[K], uint32) {
	h := maphash.Comparable(m.seed, key)
	return &m.shards[h>>m.shift], hashOf(h)
}

// timeoutOf asks Config.TimeoutOf for a new key's timeout, with the defaults applied; 0
// means the key cannot be tracked.
func (m *Monitor[K]) timeoutOf(key K) int64 {
	d := m.cfg.timeoutOf(key)
	switch {
	case d <= 0:
		return m.cfg.timeout
	case d > MaxTimeout:
		return int64(MaxTimeout)
	}
	return int64(d)
}

// maxSpan bounds a time kept as nanoseconds since the epoch (about 146 years either way),
// so that adding a timeout up to MaxTimeout cannot overflow.
const maxSpan = 1 << 62

// sinceEpoch converts a time to nanoseconds since the epoch, clamped to ±maxSpan.
func (m *Monitor[K]) sinceEpoch(t time.Time) int64 { return clampSpan(int64(t.Sub(m.epoch))) }

func clampSpan(ns int64) int64 { return min(max(ns, -maxSpan), maxSpan) }

// timeAt converts nanoseconds since the epoch back to a time (in the epoch's location,
// with its monotonic reading when it had one).
func (m *Monitor[K]) timeAt(ns int64) time.Time { return m.epoch.Add(time.Duration(ns)) }

func durationOf(ns int64) time.Duration { return time.Duration(ns) }
