package heartbeat

// The timing wheel of a shard. Time is cut into ticks of Config.Tick counted from the
// monitor's epoch; tick t ends at epoch + t*Tick. An entry whose deadline D (last seen +
// timeout, in nanoseconds since the epoch) falls in tick t = ceil(D/Tick) is due at that
// tick's end, and sits in bucket t mod len(heads). Advancing to tick T visits the buckets
// of the ticks not yet visited, up to T, and for each entry there compares its real
// deadline, which beats since it was placed may have moved later, with T: due entries are
// lost, the others move to the bucket of their real deadline.

const (
	minBuckets = 16
	maxBuckets = 1 << 16
)

// wheel is the timing state of a shard (guarded by the shard's lock).
type wheel struct {
	heads   []int32 // first entry of each bucket, nilIndex when empty
	mask    int64   // len(heads) - 1
	overdue int32   // first entry of the entries already due when placed
	done    int64   // the last tick advanced to; every entry due by then is lost or overdue
	tick    int64   // Config.Tick in nanoseconds
}

func (w *wheel) init(tick int64) {
	w.tick = tick
	w.overdue = nilIndex
	w.setBuckets(minBuckets)
}

func (w *wheel) setBuckets(n int) {
	w.heads = make([]int32, n)
	for b := range w.heads {
		w.heads[b] = nilIndex
	}
	w.mask = int64(n - 1)
}

// dueTick is the tick at whose end an entry with the given deadline is due.
func (w *wheel) dueTick(deadline int64) int64 { return ceilDiv(deadline, w.tick) }

// place links an entry that is in no list where its deadline says, first growing the wheel
// when the deadline lies beyond its span and the shard has keys enough to pay for it.
func (s *shard[K]) place(i int32, e *entry[K]) {
	if dist := s.dueTick(e.lastSeen+e.timeout) - s.done; dist >= int64(len(s.heads)) {
		s.growWheel(dist)
	}
	s.schedule(i, e)
}

// schedule links an entry that is in no list into the bucket of its deadline, or into the
// overdue list when that tick has been advanced past already. A deadline beyond the wheel's
// span lands in the bucket its tick maps to, which comes up before the deadline: the
// entry is then looked at and scheduled again (it goes around).
func (s *shard[K]) schedule(i int32, e *entry[K]) {
	t := s.dueTick(e.lastSeen + e.timeout)
	if t <= s.done {
		s.push(&s.overdue, prevOverdue, i, e)
		return
	}
	b := t & s.mask
	s.push(&s.heads[b], ^int32(b), i, e)
}

// push links entry i at the front of the list whose head is *head; mark is the prev of a
// list's first entry.
func (s *shard[K]) push(head *int32, mark, i int32, e *entry[K]) {
	e.prev, e.next = mark, *head
	if *head != nilIndex {
		s.at(*head).prev = i
	}
	*head = i
}

// unlink takes an entry out of its bucket or the overdue list.
func (s *shard[K]) unlink(i int32, e *entry[K]) {
	if e.next != nilIndex {
		s.at(e.next).prev = e.prev
	}
	switch {
	case e.prev >= 0:
		s.at(e.prev).next = e.next
	case e.prev == prevOverdue:
		s.overdue = e.next
	default:
		s.heads[^e.prev] = e.next
	}
	e.next, e.prev = nilIndex, nilIndex
}

// growWheel doubles the wheel until it spans dist ticks, but never past maxBuckets nor
// past the shard's number of keys (so buckets cost at most about 8 bytes a key: a few
// keys with a long timeout go around instead). Every entry is rescheduled by its real
// deadline.
func (s *shard[K]) growWheel(dist int64) {
	n := len(s.heads)
	for n <= int(min(dist, maxBuckets)) && n < maxBuckets && n < s.keys {
		n *= 2
	}
	if n == len(s.heads) {
		return
	}
	old := s.heads
	s.setBuckets(n)
	for _, h := range old {
		for i := h; i != nilIndex; {
			e := s.at(i)
			next := e.next
			s.schedule(i, e)
			i = next
		}
	}
}

// rebuildWheel schedules every alive entry afresh, after the table moved them all.
func (s *shard[K]) rebuildWheel() {
	for b := range s.heads {
		s.heads[b] = nilIndex
	}
	s.overdue = nilIndex
	for i := range s.slots {
		if e := &s.slots[i]; e.hash != 0 && e.prev != prevLost {
			s.schedule(int32(i), e)
		}
	}
}

// advance moves the shard to tick target (never back): every entry due by then is marked
// lost and queued for OnLost. It visits the overdue list and the buckets of the ticks
// passed, each bucket at most once however far the jump, so its work is the number of
// ticks passed (at most the wheel's size) plus the entries in the visited lists. It
// returns how many keys it found lost.
func (s *shard[K]) advance(target int64, note bool) int {
	from := s.done + 1
	s.done = max(s.done, target)
	found := 0
	if h := s.overdue; h != nilIndex {
		s.overdue = nilIndex
		found += s.sweep(h, note)
	}
	steps := min(s.done-from+1, int64(len(s.heads)))
	for t := from; t < from+steps; t++ {
		b := t & s.mask
		if h := s.heads[b]; h != nilIndex {
			s.heads[b] = nilIndex
			found += s.sweep(h, note)
		}
	}
	return found
}

// sweep goes through a list taken out of the wheel: an entry due by s.done is lost, any
// other is scheduled by its real deadline (a later tick, since the list is detached it is
// not seen again in this sweep).
func (s *shard[K]) sweep(h int32, note bool) int {
	found := 0
	for i := h; i != nilIndex; {
		e := s.at(i)
		next := e.next
		if s.dueTick(e.lastSeen+e.timeout) <= s.done {
			s.markLost(e)
			s.expired++
			found++
			if note {
				s.queue(event[K]{key: e.key, ns: e.lastSeen, lost: true})
			}
		} else {
			s.revisits++
			s.schedule(i, e)
		}
		i = next
	}
	return found
}

// ceilDiv is a/b rounded up, for b > 0.
func ceilDiv(a, b int64) int64 {
	q := a / b // rounds toward zero: up for a negative a
	if a > 0 && a%b != 0 {
		q++
	}
	return q
}

// floorDiv is a/b rounded down, for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a < 0 && a%b != 0 {
		q--
	}
	return q
}
