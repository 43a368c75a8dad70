package main

import (
	"context"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// tally is the example's listener: it counts what arrives and keeps, per match, what was
// received, live or replayed, to check it against what the simulator sent.
type tally struct {
	out      io.Writer
	timeline *timeline
	mu       sync.Mutex
	byType   map[feed.MessageType]int
	byMatch  map[feed.URN][]received
	seen     map[identity]bool
	n        int
	replayed int
	unparsed int
	errors   int
}

// identity names a message by what the feed put in it.
type identity struct {
	event feed.URN
	typ   feed.MessageType
	ts    time.Time
}

type received struct {
	id     identity
	replay bool
}

func identityOf(m feed.Message) identity {
	h := m.MessageHeader()
	return identity{h.Event, m.Type(), h.Timestamp}
}

func newTally(out io.Writer, start time.Time) *tally {
	t := &tally{out: out, byType: map[feed.MessageType]int{}, byMatch: map[feed.URN][]received{}, seen: map[identity]bool{}}
	t.timeline = newTimeline(out, start, t)
	return t
}

func (t *tally) add(m feed.Message) error {
	id := identityOf(m)
	replay := m.MessageHeader().RequestID != 0
	t.mu.Lock()
	defer t.mu.Unlock()
	t.byType[m.Type()]++
	t.byMatch[id.event] = append(t.byMatch[id.event], received{id, replay})
	t.seen[id] = true
	t.n++
	if replay {
		t.replayed++
	}
	return nil
}

func (t *tally) onError(error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.errors++
}

func (t *tally) total() int           { t.mu.Lock(); defer t.mu.Unlock(); return t.n }
func (t *tally) replayedCount() int   { t.mu.Lock(); defer t.mu.Unlock(); return t.replayed }
func (t *tally) matchCount() int      { t.mu.Lock(); defer t.mu.Unlock(); return len(t.byMatch) }
func (t *tally) unparsableCount() int { t.mu.Lock(); defer t.mu.Unlock(); return t.unparsed }
func (t *tally) errorCount() int      { t.mu.Lock(); defer t.mu.Unlock(); return t.errors }

type typeCount struct {
	typ feed.MessageType
	n   int
}

func (t *tally) typeCounts() []typeCount {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []typeCount
	for typ, n := range t.byType {
		out = append(out, typeCount{typ, n})
	}
	slices.SortFunc(out, func(a, b typeCount) int { return int(a.typ) - int(b.typ) })
	return out
}

// waitFor waits until every live message the simulator sent has arrived, live or
// replayed, or ctx ends. It checks a few times a second: the example's last moments, not
// a hot path.
func (t *tally) waitFor(ctx context.Context, sim *feedtest.Simulator) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if lost, _ := t.check(sim); lost == 0 {
			return
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
	}
}

// check compares what arrived with what the simulator sent (as far as its history goes):
// lost counts the live messages sent that arrived neither live nor in a replay;
// reordered counts, per match, the live messages that arrived out of the order they were
// sent in.
func (t *tally) check(sim *feedtest.Simulator) (lost, reordered int) {
	sent := sim.EventsByMatch()
	t.mu.Lock()
	defer t.mu.Unlock()
	for event, msgs := range sent {
		next := 0 // where the next live message must be found in what was sent
		for _, r := range t.byMatch[event] {
			if r.replay {
				continue
			}
			i := slices.IndexFunc(msgs[next:], func(s feedtest.Sent) bool { return identityOf(s.Message) == r.id })
			if i < 0 {
				reordered++
				continue
			}
			next += i + 1
		}
		for _, s := range msgs {
			if !t.seen[identityOf(s.Message)] {
				lost++
			}
		}
	}
	return lost, reordered
}

func (t *tally) OnOddsChange(_ context.Context, m *feed.OddsChange) error { return t.add(m) }
func (t *tally) OnBetStop(_ context.Context, m *feed.BetStop) error       { return t.add(m) }
func (t *tally) OnBetSettlement(_ context.Context, m *feed.BetSettlement) error {
	return t.add(m)
}
func (t *tally) OnRollbackBetSettlement(_ context.Context, m *feed.RollbackBetSettlement) error {
	return t.add(m)
}
func (t *tally) OnBetCancel(_ context.Context, m *feed.BetCancel) error { return t.add(m) }
func (t *tally) OnRollbackBetCancel(_ context.Context, m *feed.RollbackBetCancel) error {
	return t.add(m)
}
func (t *tally) OnFixtureChange(_ context.Context, m *feed.FixtureChange) error { return t.add(m) }
func (t *tally) OnUnparsableMessage(context.Context, *feed.UnparsableMessage) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.unparsed++
	return nil
}
