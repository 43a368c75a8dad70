package feed_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
)

func TestStatusReasonStringAndIsUp(t *testing.T) {
	tests := []struct {
		reason feed.StatusReason
		name   string
		up     bool
	}{
		{feed.FirstRecoveryCompleted, "FirstRecoveryCompleted", true},
		{feed.ProcessingQueueDelayStabilized, "ProcessingQueueDelayStabilized", true},
		{feed.ReturnedFromInactivity, "ReturnedFromInactivity", true},
		{feed.AliveIntervalViolation, "AliveIntervalViolation", false},
		{feed.ProcessingQueueDelayViolation, "ProcessingQueueDelayViolation", false},
		{feed.ConnectionDown, "ConnectionDown", false},
		{feed.Other, "Other", false},
		{0, "Unknown", false},
		{feed.InitialState, "InitialState", false},
		{feed.ProcessingStalled, "ProcessingStalled", false},
		{feed.ProcessingStalled + 1, "Unknown", false},
		{255, "Unknown", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.name, tt.reason.String(), "reason %d", uint8(tt.reason))
		assert.Equal(t, tt.up, tt.reason.IsUp(), "%s.IsUp()", tt.name)
	}
}

// The base listeners keep up with their interfaces: a method added to an interface and
// not to its base breaks this file's build, as it would every listener that embeds the
// base. What their methods do, nothing, needs no test of its own; what embedding one
// gives a listener is TestEmbeddingBaseOddsFeedListener's.
var (
	_ feed.OddsFeedListener     = feed.BaseOddsFeedListener{}
	_ feed.OddsFeedListener     = (*feed.BaseOddsFeedListener)(nil)
	_ feed.GlobalEventsListener = feed.BaseGlobalEventsListener{}
	_ feed.GlobalEventsListener = (*feed.BaseGlobalEventsListener)(nil)
)

// betStopsOnly embeds BaseOddsFeedListener and implements one method, as the
// documentation suggests.
type betStopsOnly struct {
	feed.BaseOddsFeedListener
	stops []*feed.BetStop
}

func (l *betStopsOnly) OnBetStop(_ context.Context, m *feed.BetStop) error {
	l.stops = append(l.stops, m)
	return nil
}

// A listener that embeds BaseOddsFeedListener and implements one method gets that
// method's messages, and every other event message is accepted without reaching it.
func TestEmbeddingBaseOddsFeedListener(t *testing.T) {
	l := &betStopsOnly{}
	var want *feed.BetStop
	for _, f := range eventMessageFixtures {
		ev := routedEvent(t, f.key, testdataBody(t, f.file))
		require.NoError(t, feed.Deliver(t.Context(), l, &ev), "%s: the embedded method accepts what is not overridden", f.method)
		if f.method == "OnBetStop" {
			m, err := ev.Decode()
			require.NoError(t, err)
			want = m.(*feed.BetStop)
		}
	}
	require.NotNil(t, want, "the fixtures have a bet stop")
	require.Len(t, l.stops, 1, "the bet stop, and nothing else")
	assert.Equal(t, want, l.stops[0])
}

// A session's label is its index and a short name of its interest; those of the first
// sessions cost no allocation, since a metrics adapter may ask for one per message.
func TestSessionRefLabel(t *testing.T) {
	match := feed.URN{Prefix: "sr", Type: "match", ID: 1}
	for _, tt := range []struct {
		ref  feed.SessionRef
		want string
	}{
		{feed.SessionRef{}, "0:all"},
		{feed.SessionRef{Index: 0, Interest: feed.LiveMessagesOnly}, "0:live"},
		{feed.SessionRef{Index: 1, Interest: feed.PrematchMessagesOnly}, "1:prematch"},
		{feed.SessionRef{Index: 2, Interest: feed.HiPriorityMessagesOnly}, "2:hi"},
		{feed.SessionRef{Index: 3, Interest: feed.LoPriorityMessagesOnly}, "3:lo"},
		{feed.SessionRef{Index: 7, Interest: feed.VirtualSportMessagesOnly}, "7:virtual"},
		{feed.SessionRef{Index: 4, Interest: feed.SpecifiedMatchesOnly(match)}, "4:matches"},
		{feed.SessionRef{Index: 8, Interest: feed.LiveMessagesOnly}, "8:live"},
		{feed.SessionRef{Index: 123, Interest: feed.SpecifiedMatchesOnly(match, match)}, "123:matches"},
	} {
		assert.Equal(t, tt.want, tt.ref.Label())
	}
	ref := feed.SessionRef{Index: 1, Interest: feed.LiveMessagesOnly}
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = ref.Label() }))
}

// A SessionRef keys a map (this compiles only if it is comparable): a session's Ref is
// equal to every copy of it, whatever its interest.
func TestSessionRefIsComparable(t *testing.T) {
	matches := feed.SpecifiedMatchesOnly(feed.URN{Prefix: "sr", Type: "match", ID: 1})
	labels := map[feed.SessionRef]string{}
	for i, mi := range []feed.MessageInterest{feed.AllMessages, feed.LiveMessagesOnly, matches} {
		ref := feed.SessionRef{Index: i, Interest: mi}
		labels[ref] = ref.Label()
	}
	assert.Len(t, labels, 3)
	assert.Equal(t, "2:matches", labels[feed.SessionRef{Index: 2, Interest: matches}])
	assert.Equal(t, "1:live", labels[feed.SessionRef{Index: 1, Interest: feed.LiveMessagesOnly}])
	assert.Equal(t, matches.Events(), feed.SpecifiedMatchesOnly(feed.URN{Prefix: "sr", Type: "match", ID: 1}).Events())
}
