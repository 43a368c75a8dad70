package concurrent_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
)

// TestSerialConfigTimingSampleRefused: a negative SerialConfig.TimingSample is refused
// with the field named, with an observer or without.
func TestSerialConfigTimingSampleRefused(t *testing.T) {
	tracker := concurrent.NewTaskLifecycleTracker()
	l := feed.BaseOddsFeedListener{}
	_, err := concurrent.NewSerialDispatcher(l, tracker, concurrent.SerialConfig{TimingSample: -3, Observer: newRecordingObserver()})
	assert.ErrorContains(t, err, "SerialConfig.TimingSample -3 must not be negative (0 means 64")
	_, err = concurrent.NewSerialDispatcher(l, tracker, concurrent.SerialConfig{TimingSample: -4})
	assert.ErrorContains(t, err, "SerialConfig.TimingSample -4")
}

// TestObserverToldOfEverySerialCall: the SerialDispatcher tells its calls as the Pool's
// workers do, its sums by result equal to its Stats; with TimingSample 1 each is timed,
// with TimingSample 8 one in eight.
func TestObserverToldOfEverySerialCall(t *testing.T) {
	for _, tc := range []struct{ sample int }{{1}, {8}} {
		obs := newRecordingObserver()
		tracker := concurrent.NewTaskLifecycleTracker()
		s := newSerial(t, failingRecorder(), tracker, concurrent.SerialConfig{Name: "serial", Observer: obs, TimingSample: tc.sample})
		ctx := testContext(t)
		want := make(map[callKey]int)
		const n = 100
		for i := range n {
			producer, typ := 1+i%2, eventTypes[i%len(eventTypes)]
			require.NoError(t, s.Dispatch(ctx, rawEvent(t, message(typ, match(i%4), producer, 0, i))))
			want[callKey{"serial", producer, typ, outcomeBySeq(i)}]++
		}
		bad := rawEvent(t, message(feed.MessageFixtureChange, match(1), 2, 0, n))
		bad.Body = []byte("<fixture_change")
		require.NoError(t, s.Dispatch(ctx, bad))
		want[callKey{"serial", 0, feed.MessageFixtureChange, concurrent.CallUnparsable}]++
		tooLarge := rawEvent(t, message(feed.MessageOddsChange, match(2), 2, 0, n+1))
		tooLarge.Err = feed.ErrBodyTooLarge
		require.NoError(t, s.Dispatch(ctx, tooLarge))
		want[callKey{"serial", 0, feed.MessageUnknown, concurrent.CallUnparsable}]++
		require.NoError(t, s.Dispatch(ctx, rawEvent(t, cashout(match(3), 1, 2*n))))
		want[callKey{"serial", 1, feed.MessageCashout, concurrent.CallReturned}]++
		require.NoError(t, s.Close(ctx))

		calls, timed, untimed, badTimes := obs.snapshot()
		assert.Equal(t, want, calls)
		total := n + 3
		assert.Equal(t, (total+tc.sample-1)/tc.sample, timed, "TimingSample %d", tc.sample)
		assert.Equal(t, total-timed, untimed)
		assert.Empty(t, badTimes)
		st, sums := s.Stats(), obs.byResult()
		assert.Equal(t, st.Delivered, sums[concurrent.CallReturned])
		assert.Equal(t, st.Failed, sums[concurrent.CallFailed])
		assert.Equal(t, st.Panicked, sums[concurrent.CallPanicked])
		assert.Equal(t, st.Unparsable, sums[concurrent.CallUnparsable])
		assert.Equal(t, uint64(n/10), st.Failed)
		assert.Equal(t, uint64(n/10), st.Panicked)
		one, two := tracker.Counts(concurrent.RecoveryContext{Producer: 1}), tracker.Counts(concurrent.RecoveryContext{Producer: 2})
		assert.Equal(t, uint64(total), one.Completed+two.Completed, "every ticket completed by its own call")
		assert.Zero(t, one.Pending()+two.Pending())
	}
}
