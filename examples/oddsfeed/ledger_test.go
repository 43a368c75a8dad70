package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// The ledger names what never arrived, oldest first, so that a run that lost a message
// says which: the match, the type and the feed's timestamp to look for.
func TestLedgerNamesTheMessagesLost(t *testing.T) {
	l := newLedger(discard{}, time.Minute)
	t0 := time.UnixMilli(1764152400000).UTC()
	msgs := []feed.Message{
		&feed.BetStop{Header: feed.Header{Producer: 1, Event: feed.URN{Prefix: "sr", Type: "match", ID: 1}, Timestamp: t0}},
		&feed.BetStop{Header: feed.Header{Producer: 1, Event: feed.URN{Prefix: "sr", Type: "match", ID: 2}, Timestamp: t0.Add(time.Second)}},
		&feed.FixtureChange{Header: feed.Header{Producer: 1, Event: feed.URN{Prefix: "sr", Type: "match", ID: 1}, Timestamp: t0.Add(2 * time.Second)}},
	}
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	for _, m := range msgs {
		require.NoError(t, l.Publish(t.Context(), feedtest.KeyFor(m, lo, 1).String(), feedtest.Marshal(m)))
	}
	l.receive(msgs[1], false)

	acc := l.accounts()
	assert.Equal(t, 3, acc.sent)
	assert.Equal(t, 1, acc.live)
	assert.Zero(t, acc.recovered)
	assert.Equal(t, 2, acc.lost)
	require.Len(t, acc.firstLost, 2)
	for i, m := range []feed.Message{msgs[0], msgs[2]} {
		got := acc.firstLost[i]
		assert.Equal(t, m.MessageHeader().Event, got.event)
		assert.Equal(t, m.Type(), got.typ)
		assert.Equal(t, m.MessageHeader().Timestamp, got.stamp)
	}
	assert.False(t, acc.firstLost[1].sent.Before(acc.firstLost[0].sent), "oldest first")
}

type discard struct{}

func (discard) Publish(context.Context, string, []byte) error { return nil }

// Each message sent is accounted for once, by how it first arrived: live, or recovered
// by a replay; a second copy, either way, is a duplicate.
func TestLedgerAccountsLiveRecoveredAndDuplicates(t *testing.T) {
	l := newLedger(discard{}, time.Minute)
	msgs := publish(t, l, 1, 1, 2, 2)
	l.receive(msgs[0], false) // live
	l.receive(msgs[0], true)  // its replay: a duplicate
	l.receive(msgs[1], true)  // not delivered live: recovered by the replay
	l.receive(msgs[2], false) // live
	acc := l.accounts()
	assert.Equal(t, accounts{sent: 4, live: 2, recovered: 1, lost: 1, duplicates: 1, matches: 2, firstLost: acc.firstLost}, acc)
	assert.Equal(t, acc.sent, acc.live+acc.recovered+acc.lost)
}

// A match the accounts forgot while it was quiet counts once among the distinct matches
// when it sends again.
func TestLedgerCountsDistinctMatchesAcrossForgetting(t *testing.T) {
	l := newLedger(discard{}, time.Minute)
	msgs := publish(t, l, 1, 2, 64, 65)
	for _, m := range msgs {
		l.receive(m, false)
	}
	l.forgetIdle(time.Now().Add(time.Hour))
	require.Empty(t, l.matches, "every match forgotten")
	for _, m := range publish(t, l, 1, 65, 3) {
		l.receive(m, false)
	}
	assert.Equal(t, 5, l.accounts().matches, "matches 1, 2, 3, 64 and 65")
}

// publish notes a bet stop of each match as sent, each a millisecond after the last.
func publish(t *testing.T, l *ledger, matches ...int64) []feed.Message {
	t.Helper()
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	t0 := time.UnixMilli(1764152400000).UTC()
	var msgs []feed.Message
	for i, id := range matches {
		m := &feed.BetStop{Header: feed.Header{Producer: 1, Event: feed.URN{Prefix: "sr", Type: "match", ID: id}, Timestamp: t0.Add(time.Duration(i) * time.Millisecond)}}
		require.NoError(t, l.Publish(t.Context(), feedtest.KeyFor(m, lo, 1).String(), feedtest.Marshal(m)))
		msgs = append(msgs, m)
	}
	return msgs
}

// A match may send two messages of a type in one millisecond, which the ledger cannot
// tell apart: a burst right after the restart's clock jump, one sent before the new
// process's queue was bound, the other after. The live copy of the second is taken for
// the one the live stream has not passed, not for the first (which only a replay
// brings), so it is not counted out of order.
func TestLedgerTellsApartMessagesOfOneTypeAndMillisecond(t *testing.T) {
	l := newLedger(discard{}, time.Minute)
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	t0 := time.UnixMilli(1764152400000).UTC()
	event := feed.URN{Prefix: "sr", Type: "match", ID: 1}
	before := &feed.OddsChange{Header: feed.Header{Producer: 1, Event: event, Timestamp: t0}} // not delivered live
	other := &feed.BetStop{Header: feed.Header{Producer: 1, Event: event, Timestamp: t0}}
	after := &feed.OddsChange{Header: feed.Header{Producer: 1, Event: event, Timestamp: t0}} // as before, to the ledger
	for _, m := range []feed.Message{before, other, after} {
		require.NoError(t, l.Publish(t.Context(), feedtest.KeyFor(m, lo, 1).String(), feedtest.Marshal(m)))
	}
	l.receive(other, false)
	l.receive(after, false)
	l.receive(before, true)
	acc := l.accounts()
	assert.Zero(t, acc.reordered)
	assert.Equal(t, 2, acc.live)
	assert.Equal(t, 1, acc.recovered)
	assert.Zero(t, acc.duplicates)
	assert.Zero(t, acc.lost)
}
