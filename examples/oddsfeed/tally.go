package main

import (
	"context"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// tally is the example's listener: it counts what arrives by type and strikes each
// message off the ledger of what the simulator sent.
type tally struct {
	timeline *timeline
	ledger   *ledger
	namer    *namer // names the settlements (-names)
	mu       sync.Mutex
	byType   map[feed.MessageType]int
	n        int
	last     time.Time // when the last message was received
	replayed int
	unparsed int
	errors   int
}

func newTally(out io.Writer, start time.Time, l *ledger, lang string) *tally {
	t := &tally{ledger: l, byType: map[feed.MessageType]int{}}
	t.timeline = newTimeline(out, start, t)
	t.namer = &namer{lang: lang, tl: t.timeline}
	return t
}

func (t *tally) add(m feed.Message) error {
	replay := m.MessageHeader().RequestID != 0
	t.ledger.receive(m, replay)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.byType[m.Type()]++
	t.n++
	t.last = time.Now()
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

func (t *tally) total() int { t.mu.Lock(); defer t.mu.Unlock(); return t.n }

// lastReceived returns how many messages were received, and when the last one was.
func (t *tally) lastReceived() (int, time.Time) { t.mu.Lock(); defer t.mu.Unlock(); return t.n, t.last }
func (t *tally) replayedCount() int             { t.mu.Lock(); defer t.mu.Unlock(); return t.replayed }
func (t *tally) unparsableCount() int           { t.mu.Lock(); defer t.mu.Unlock(); return t.unparsed }
func (t *tally) errorCount() int                { t.mu.Lock(); defer t.mu.Unlock(); return t.errors }

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

func (t *tally) OnOddsChange(_ context.Context, m *feed.OddsChange) error { return t.add(m) }
func (t *tally) OnBetStop(_ context.Context, m *feed.BetStop) error       { return t.add(m) }
func (t *tally) OnBetSettlement(ctx context.Context, m *feed.BetSettlement) error {
	t.namer.settle(ctx, m)
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
