package heartbeat

import (
	"math"
	"sync"
)

// entry is one tracked key, kept in its shard's table: the table is at once the index
// (open addressing) and the storage, so that a beat finds the key and its last seen in
// one cache line, and a million keys are a few large arrays rather than a million objects.
type entry[K comparable] struct {
	key K
	// hash is the low 32 bits of the key's hash with the lowest bit set, 0 for an empty
	// slot. It gives the key's home slot and spares most key comparisons. (Next to the key,
	// it fills the padding after a 4-byte key.)
	hash     uint32
	lastSeen int64 // nanoseconds since the monitor's epoch
	timeout  int64 // nanoseconds
	// next and prev chain the entry into a wheel bucket or the overdue list, by table
	// slot. prev also says where the entry is: see the prev* constants.
	next, prev int32
}

// Values of entry.prev that are not the slot of a previous entry. A value in
// [-len(heads), -1] means the entry heads wheel bucket ^prev.
const (
	nilIndex    int32 = -1                // no entry: end of a list, empty bucket
	prevLost    int32 = math.MinInt32     // the key is lost: in no list until it beats
	prevOverdue int32 = math.MinInt32 + 1 // the entry heads the overdue list
)

// Table sizes: a table grows by half when more than maxLoadNum/maxLoadDen of it would be
// used, so it is between about 53% and 80% full (with linear probing, a lookup then looks
// at 1.6 to 3 slots on average, mostly in one or two adjacent cache lines).
const (
	minSlots   = 8
	maxLoadNum = 4
	maxLoadDen = 5
	maxSlots   = 1 << 30 // slots are int32
)

// shard is a part of the monitor's keys with its own lock, table and timing wheel. Every
// field is guarded by mu.
type shard[K comparable] struct {
	mu    sync.Mutex
	slots []entry[K] // linear probing; a key's home slot is hash * len(slots) >> 32

	wheel

	keys, lost                                           int
	beats, stale, expired, restored, revisits, noTimeout uint64

	notifier[K]

	_ [64]byte // keeps two shards' hot fields off one cache line
}

func (s *shard[K]) init(tick int64) {
	s.wheel.init(tick)
}

// at returns the entry in slot i. The pointer stays valid until the table grows (insert)
// or entries move (remove).
func (s *shard[K]) at(i int32) *entry[K] { return &s.slots[i] }

// hashOf is the part of a key's 64-bit hash that an entry keeps: never 0.
func hashOf(h uint64) uint32 { return uint32(h) | 1 }

// home is the slot where the probe for a hash starts: the hash scaled to the table's
// size, so the size need not be a power of two.
func home(hash uint32, n int) int { return int(uint64(hash) * uint64(n) >> 32) }

// find returns the slot of key and true, or, when it is not tracked, the empty slot where
// it would go and false (-1 for an empty table).
func (s *shard[K]) find(key K, hash uint32) (int32, bool) {
	n := len(s.slots)
	if n == 0 {
		return nilIndex, false
	}
	i := home(hash, n)
	for {
		e := &s.slots[i]
		if e.hash == hash && e.key == key {
			return int32(i), true
		}
		if e.hash == 0 {
			return int32(i), false
		}
		if i++; i == n {
			i = 0
		}
	}
}

// insert tracks a new key, alive and scheduled, or lost; free is the slot find gave.
func (s *shard[K]) insert(key K, hash uint32, free int32, lastSeen, timeout int64, lost bool) {
	if (s.keys+1)*maxLoadDen > len(s.slots)*maxLoadNum {
		s.grow()
		free, _ = s.find(key, hash)
	}
	e := s.at(free)
	*e = entry[K]{key: key, hash: hash, lastSeen: lastSeen, timeout: timeout, next: nilIndex}
	s.keys++
	if lost {
		e.prev = prevLost
		s.lost++
		return
	}
	s.place(free, e)
}

// grow moves the entries to a table half as large again, and rebuilds the wheel, since
// every entry changed slot; entries are rescheduled by their real deadlines.
func (s *shard[K]) grow() {
	old := s.slots
	n := max(minSlots, len(old)+len(old)/2)
	if n > maxSlots {
		panic("heartbeat: more than 2^30 keys in one shard")
	}
	s.slots = make([]entry[K], n)
	for i := range old {
		if old[i].hash == 0 {
			continue
		}
		j, _ := s.find(old[i].key, old[i].hash)
		s.slots[j] = old[i]
	}
	s.rebuildWheel()
}

// remove stops tracking the key in slot i, and closes the gap it leaves (backward shift
// deletion: the entries after it in its probe run move back when that keeps them
// findable), so that the table needs no tombstones.
func (s *shard[K]) remove(i int32) {
	e := s.at(i)
	if e.prev == prevLost {
		s.lost--
	} else {
		s.unlink(i, e)
	}
	s.keys--
	n := int32(len(s.slots))
	for j := i; ; {
		if j++; j == n {
			j = 0
		}
		f := &s.slots[j]
		if f.hash == 0 {
			break
		}
		// f may move back to i unless its home lies cyclically in (i, j].
		h := int32(home(f.hash, int(n)))
		if i <= j && i < h && h <= j || i > j && (i < h || h <= j) {
			continue
		}
		s.move(j, i)
		i = j
	}
	s.slots[i] = entry[K]{} // drops the key, so a string's bytes can go
}

// move puts the entry of slot from into the empty slot to, and mends its list links.
func (s *shard[K]) move(from, to int32) {
	e := &s.slots[to]
	*e = s.slots[from]
	switch {
	case e.prev == prevLost:
		return
	case e.prev >= 0:
		s.at(e.prev).next = to
	case e.prev == prevOverdue:
		s.overdue = to
	default:
		s.heads[^e.prev] = to
	}
	if e.next != nilIndex {
		s.at(e.next).prev = to
	}
}

// markLost takes an alive entry, already out of its list, to the lost state.
func (s *shard[K]) markLost(e *entry[K]) {
	e.prev, e.next = prevLost, nilIndex
	s.lost++
}

// forEach calls f with every tracked entry, in table order.
func (s *shard[K]) forEach(f func(e *entry[K])) {
	for i := range s.slots {
		if s.slots[i].hash != 0 {
			f(&s.slots[i])
		}
	}
}
