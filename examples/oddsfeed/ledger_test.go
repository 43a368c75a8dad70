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
	assert.Equal(t, 1, acc.received)
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
