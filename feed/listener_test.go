package feed_test

import (
	"context"
	"errors"
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

func TestBaseOddsFeedListenerDoesNothing(t *testing.T) {
	var byValue feed.OddsFeedListener = feed.BaseOddsFeedListener{}
	var byPointer feed.OddsFeedListener = &feed.BaseOddsFeedListener{}
	ctx := t.Context()
	for _, l := range []feed.OddsFeedListener{byValue, byPointer} {
		assert.NoError(t, l.OnOddsChange(ctx, &feed.OddsChange{}))
		assert.NoError(t, l.OnBetStop(ctx, &feed.BetStop{}))
		assert.NoError(t, l.OnBetSettlement(ctx, &feed.BetSettlement{}))
		assert.NoError(t, l.OnRollbackBetSettlement(ctx, &feed.RollbackBetSettlement{}))
		assert.NoError(t, l.OnBetCancel(ctx, &feed.BetCancel{}))
		assert.NoError(t, l.OnRollbackBetCancel(ctx, &feed.RollbackBetCancel{}))
		assert.NoError(t, l.OnFixtureChange(ctx, &feed.FixtureChange{}))
		assert.NoError(t, l.OnUnparsableMessage(ctx, &feed.UnparsableMessage{}))
		assert.NoError(t, l.OnBetStop(ctx, nil), "the message is not even looked at")
	}
}

func TestBaseGlobalEventsListenerDoesNothing(t *testing.T) {
	var byValue feed.GlobalEventsListener = feed.BaseGlobalEventsListener{}
	var byPointer feed.GlobalEventsListener = &feed.BaseGlobalEventsListener{}
	ctx := t.Context()
	for _, l := range []feed.GlobalEventsListener{byValue, byPointer} {
		assert.NotPanics(t, func() {
			l.OnConnectionDown(ctx, feed.SessionRef{}, errors.New("gone"))
			l.OnConnectionUp(ctx, feed.SessionRef{})
			l.OnProducerStatusChange(ctx, feed.ProducerStatus{Producer: 1, Down: true, Reason: feed.AliveIntervalViolation})
			l.OnRecoveryInitiated(ctx, feed.RecoveryInitiated{Producer: 1, RequestID: 2})
			l.OnEventRecoveryCompleted(ctx, feed.EventRecoveryCompleted{Producer: 1, RequestID: 2})
		})
	}
}

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

func TestEmbeddingBaseOddsFeedListener(t *testing.T) {
	l := &betStopsOnly{}
	stop := &feed.BetStop{Header: feed.Header{Producer: 1, Event: feed.MustParseURN("sr:match:1")}, Groups: "all"}
	change := &feed.OddsChange{Header: feed.Header{Producer: 1, Event: feed.MustParseURN("sr:match:1")}}

	require.NoError(t, feed.Call(t.Context(), l, stop))
	require.NoError(t, feed.Call(t.Context(), l, change), "the embedded method accepts what is not overridden")

	require.Len(t, l.stops, 1)
	assert.Same(t, stop, l.stops[0])
}
