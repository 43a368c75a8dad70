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
		{feed.InitialState + 1, "Unknown", false},
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
