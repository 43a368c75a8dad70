package main

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// ledger accounts for every event message of the live stream: a publisher in front of the
// broker notes each one before it is published, and the listener strikes it off when it
// arrives, live or replayed. What it holds is what is on its way (or lost), not what has
// arrived, so its memory follows the backlog, not the length of the run.
type ledger struct {
	next feedtest.Publisher
	// idle is how long a match with nothing outstanding is remembered after its last
	// message: past the simulator's history, no replay can bring one of its messages again.
	idle time.Duration

	mu         sync.Mutex
	matches    map[feed.URN]*matchLedger
	pending    int      // messages sent and not yet received, over all matches
	seen       matchSet // every match that sent a message, forgotten or not
	duplicates int      // messages received again (a replay of one already received, or its live copy after the replay)
	reordered  int      // live messages that arrived before a live message sent earlier
	live       int      // messages struck off by their live copy
	recovered  int      // messages struck off by a replay: not delivered live (or not yet)
	progress   chan struct{}
	sentSignal chan struct{} // signalled at every message noted as sent
}

// matchLedger is one match's account: what was sent and has not arrived yet, oldest first,
// and where the live stream has got to.
type matchLedger struct {
	outstanding []entry
	nextSeq     uint64
	lastLive    uint64 // seq of the newest live message received; 0 before the first
	lastActive  time.Time
}

// entry is a message sent and not yet received, known by what the feed put in it.
type entry struct {
	typ  feed.MessageType
	ts   int64 // milliseconds, as the feed stamps
	seq  uint64
	sent time.Time // when the simulator published it, by the wall clock
}

func newLedger(next feedtest.Publisher, idle time.Duration) *ledger {
	return &ledger{next: next, idle: idle, matches: map[feed.URN]*matchLedger{}, progress: make(chan struct{}, 1),
		sentSignal: make(chan struct{}, 1)}
}

// Publish notes an event message of the live stream as sent, then publishes it; a
// publish that fails takes the note back. Replays and system messages pass through: a
// replay is a copy of a message already noted.
func (l *ledger) Publish(ctx context.Context, key string, body []byte) error {
	rk, err := feed.ParseRoutingKey(key)
	if err != nil || rk.Type.IsSystem() {
		return l.next.Publish(ctx, key, body)
	}
	m, err := feed.Decode(rk.Type, body)
	if err != nil || m.MessageHeader().RequestID != 0 {
		return l.next.Publish(ctx, key, body)
	}
	seq := l.sent(rk.Event, rk.Type, m.MessageHeader().Timestamp)
	if err := l.next.Publish(ctx, key, body); err != nil {
		l.unsent(rk.Event, seq)
		return err
	}
	return nil
}

func (l *ledger) sent(event feed.URN, typ feed.MessageType, ts time.Time) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	ml := l.matches[event]
	if ml == nil {
		ml = &matchLedger{}
		l.matches[event] = ml
		l.seen.add(event)
	}
	ml.nextSeq++
	now := time.Now()
	ml.outstanding = append(ml.outstanding, entry{typ, ts.UnixMilli(), ml.nextSeq, now})
	ml.lastActive = now
	l.pending++
	select {
	case l.sentSignal <- struct{}{}:
	default:
	}
	return ml.nextSeq
}

// sentCount returns how many messages have been noted as sent.
func (l *ledger) sentCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.live + l.recovered + l.pending
}

func (l *ledger) unsent(event feed.URN, seq uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ml := l.matches[event]
	if i := slices.IndexFunc(ml.outstanding, func(e entry) bool { return e.seq == seq }); i >= 0 {
		ml.outstanding = slices.Delete(ml.outstanding, i, i+1)
		l.pending--
	}
}

// receive strikes a message off its match's account, as received live or recovered by a
// replay. A live message found there must not have been sent before the last live
// message received; one not found arrived before (live or in a replay) and counts as a
// duplicate.
func (l *ledger) receive(m feed.Message, replay bool) {
	h := m.MessageHeader()
	l.mu.Lock()
	defer l.mu.Unlock()
	ml := l.matches[h.Event]
	i := -1
	if ml != nil {
		i = ml.find(m.Type(), h.Timestamp.UnixMilli(), replay)
	}
	if i < 0 {
		l.duplicates++
		return
	}
	e := ml.outstanding[i]
	ml.outstanding = slices.Delete(ml.outstanding, i, i+1)
	if len(ml.outstanding) == 0 {
		ml.outstanding = nil // a match's backlog may have been long: let it go
	}
	if replay {
		l.recovered++
	} else {
		l.live++
		if e.seq < ml.lastLive {
			l.reordered++
		}
		ml.lastLive = max(ml.lastLive, e.seq)
	}
	ml.lastActive = time.Now()
	l.pending--
	select {
	case l.progress <- struct{}{}:
	default:
	}
}

// find returns the index of the outstanding entry that a message received is, or -1.
// The ledger knows a message by its type and timestamp, and a match may send two of a
// type in one millisecond (a burst after a pause): then a live message is taken for the
// oldest of them that the live stream has not passed yet, as the stream delivers in
// order, and a replayed one for the oldest that the live stream has passed, which only
// a replay can bring; failing that, for the oldest.
func (ml *matchLedger) find(typ feed.MessageType, ts int64, replay bool) int {
	first := -1
	for i, e := range ml.outstanding { // oldest first
		if e.typ != typ || e.ts != ts {
			continue
		}
		if first < 0 {
			first = i
		}
		if passed := e.seq < ml.lastLive; passed == replay {
			return i
		}
	}
	return first
}

// forgetIdle drops the matches with nothing outstanding that have been quiet for longer
// than idle, so that matches that ended do not accumulate.
func (l *ledger) forgetIdle(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for event, ml := range l.matches {
		if len(ml.outstanding) == 0 && now.Sub(ml.lastActive) > l.idle {
			delete(l.matches, event)
		}
	}
}

// wait returns once nothing is outstanding, or nothing has arrived for stall, or ctx ends.
func (l *ledger) wait(ctx context.Context, stall time.Duration) {
	t := time.NewTimer(stall)
	defer t.Stop()
	for l.outstanding() > 0 {
		select {
		case <-l.progress:
			t.Reset(stall)
		case <-t.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// accounts is the ledger's verdict. Every message sent was received live, or recovered
// by a replay (not delivered live: the connection was down, or the process stopped), or
// is lost (never received): sent = live + recovered + lost.
type accounts struct {
	sent, live, recovered, lost int
	duplicates                  int           // copies of messages already received
	reordered                   int           // live messages that arrived after a later live message of their match
	matches                     int           // distinct matches
	firstLost                   []lostMessage // the first few lost, oldest first
}

// lostMessage names a message that never arrived, for the summary: what the operator
// looks for in the feed's history and in the SDK's log.
type lostMessage struct {
	event feed.URN
	typ   feed.MessageType
	stamp time.Time // the feed's timestamp
	sent  time.Time // when it was published, by the wall clock
}

// maxLostShown bounds the lost messages a summary names.
const maxLostShown = 5

func (l *ledger) outstanding() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.pending
}

func (l *ledger) accounts() accounts {
	l.mu.Lock()
	defer l.mu.Unlock()
	return accounts{sent: l.live + l.recovered + l.pending, live: l.live, recovered: l.recovered, lost: l.pending,
		duplicates: l.duplicates, reordered: l.reordered, matches: l.seen.n, firstLost: l.firstLostLocked()}
}

func (l *ledger) firstLostLocked() []lostMessage {
	var lost []lostMessage
	for event, ml := range l.matches {
		for _, e := range ml.outstanding {
			lost = append(lost, lostMessage{event: event, typ: e.typ, stamp: time.UnixMilli(e.ts).UTC(), sent: e.sent})
		}
	}
	slices.SortFunc(lost, func(a, b lostMessage) int { return a.sent.Compare(b.sent) })
	return lost[:min(len(lost), maxLostShown)]
}

// matchSet is the set of matches that sent a message, for the count of distinct
// matches: the accounts forget a match that has been quiet for a while, and a match
// quiet for longer than that (many matches at a low rate) would count again. It keeps
// a bit per match number in blocks of 64, so that its memory stays small over a long
// run: the simulator numbers its matches one after the other.
type matchSet struct {
	blocks map[matchBlock]uint64
	n      int // matches in the set
}

type matchBlock struct {
	prefix, typ string
	hi          int64 // the match's number without its last 6 bits
}

func (s *matchSet) add(u feed.URN) {
	if s.blocks == nil {
		s.blocks = map[matchBlock]uint64{}
	}
	k, bit := matchBlock{u.Prefix, u.Type, u.ID >> 6}, uint64(1)<<(uint64(u.ID)&63)
	if s.blocks[k]&bit == 0 {
		s.blocks[k] |= bit
		s.n++
	}
}
