package feedtest

import (
	"bytes"
	"fmt"
	"time"
	"unsafe"

	"github.com/feedkit/feedkit/feed"
)

// record is what the history keeps of a published message: its encoded body and the few
// header fields a replay selects by. The decoded message is not kept (it would take as
// much memory again); Sent decodes the body when asked.
type record struct {
	key      feed.RoutingKey
	body     []byte
	producer int
	stamp    int64  // the message's own timestamp in Unix milliseconds, the feed's clock and precision
	at       int64  // when the simulator published it in Unix nanoseconds, its own clock: the age bound
	seq      uint64 // identifies the record for unrecord
	replay   bool
	failed   bool // recorded before publishing, then refused by the publisher
}

// recordOverhead is what a record costs beside its body, counted against HistoryBytes.
const recordOverhead = int(unsafe.Sizeof(record{}))

func (r *record) size() int { return len(r.body) + recordOverhead }

// isLiveEvent reports whether r is an event message of the live stream, the kind a
// producer recovery replays.
func (r *record) isLiveEvent() bool { return !r.replay && !r.failed && !r.key.Type.IsSystem() }

// sent decodes r for Sent.
func (r *record) sent() Sent {
	return Sent{Key: r.key, Message: decodeOwn(r.key.Type, r.body), Body: r.body, Replay: r.replay}
}

// decodeOwn decodes a body the simulator encoded itself, which cannot fail but for a bug.
func decodeOwn(t feed.MessageType, body []byte) feed.Message {
	m, err := feed.Decode(t, body)
	if err != nil {
		panic(fmt.Sprintf("feedtest: the simulator's own %s does not decode: %v", t, err))
	}
	return m
}

// history is what the simulator published, oldest first, bounded by the bytes it holds
// and by age. It remembers, per producer, the newest timestamp it forgot of that
// producer's live stream, so that a recovery asking for more than it kept is refused
// rather than answered with a replay that silently misses messages.
type history struct {
	maxBytes int
	maxAge   time.Duration

	recs      []record // recs[head:] is the history
	head      int
	bytes     int
	nextSeq   uint64
	forgotten int
	// forgottenThrough holds, per producer, the newest timestamp of a live event message
	// the history no longer holds.
	forgottenThrough map[int]int64
}

func newHistory(maxBytes int, maxAge time.Duration) *history {
	return &history{maxBytes: maxBytes, maxAge: maxAge, forgottenThrough: make(map[int]int64)}
}

// add records a message published at the time given, forgetting the oldest records
// beyond the bounds, and returns its seq.
func (h *history) add(key feed.RoutingKey, body []byte, hdr *feed.Header, replay bool, at time.Time) uint64 {
	h.nextSeq++
	// A copy of the body, of its own length: an encoder's buffer has room to spare, often
	// a quarter of it, which a history of many messages would keep for nothing.
	r := record{key: key, body: bytes.Clone(body), producer: hdr.Producer, stamp: hdr.Timestamp.UnixMilli(),
		at: at.UnixNano(), seq: h.nextSeq, replay: replay}
	h.recs = append(h.recs, r)
	h.bytes += r.size()
	h.trim(r.at)
	return r.seq
}

// trim forgets the records older than the age bound at now, then the oldest ones while
// the bytes held exceed the byte bound; the newest record always stays.
func (h *history) trim(now int64) {
	for h.len() > 1 && (h.bytes > h.maxBytes || time.Duration(now-h.recs[h.head].at) > h.maxAge) {
		h.forgetOldest()
	}
	// Compact once half the backing array is forgotten: amortized O(1) per record, and
	// the array never holds more than twice what the history does.
	if h.head > 0 && h.head >= len(h.recs)/2 {
		n := copy(h.recs, h.recs[h.head:])
		clear(h.recs[n:])
		h.recs, h.head = h.recs[:n], 0
	}
}

func (h *history) forgetOldest() {
	r := &h.recs[h.head]
	if r.isLiveEvent() && r.stamp > h.forgottenThrough[r.producer] {
		h.forgottenThrough[r.producer] = r.stamp
	}
	if !r.failed {
		h.forgotten++
	}
	h.bytes -= r.size()
	*r = record{} // let the body go
	h.head++
}

func (h *history) len() int { return len(h.recs) - h.head }

// unrecord marks the record seq, which its publisher refused, as never sent. It is
// among the newest, so the search starts there.
func (h *history) unrecord(seq uint64) {
	for i := len(h.recs) - 1; i >= h.head; i-- {
		if h.recs[i].seq == seq {
			h.recs[i].failed = true
			return
		}
	}
}

// each calls f with every record held that was published, oldest first.
func (h *history) each(f func(*record)) {
	for i := h.head; i < len(h.recs); i++ {
		if !h.recs[i].failed {
			f(&h.recs[i])
		}
	}
}

// covers reports whether every live event message of the producer stamped at or after
// after is still held, and if not, the newest timestamp forgotten.
func (h *history) covers(producer int, after time.Time) (bool, time.Time) {
	through, ok := h.forgottenThrough[producer]
	if !ok || through < after.UnixMilli() {
		return true, time.Time{}
	}
	return false, time.UnixMilli(through).UTC()
}
