package recovery_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/feedkit/feedkit/recovery"
)

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func TestRecoveryFromFollowsTheSeedsOrder(t *testing.T) {
	const maxLen, assumed = 60 * time.Hour, 10 * time.Minute
	ago := func(d time.Duration) time.Time { return t0.Add(-d) }
	cases := []struct {
		name string
		rec  recovery.Record
		want time.Time
		rule recovery.FromRule
	}{
		{"1: recovering re-uses recovery_requested_at, before the subscription",
			recovery.Record{State: recovery.Recovering, RecoveryRequestedAt: ago(time.Minute), LastSubscribedAt: ago(2 * time.Minute)},
			ago(time.Minute), recovery.FromRecoveryRequested},
		{"1: ... or the disconnection it covers, when earlier: its replay may be lost",
			recovery.Record{State: recovery.Recovering, RecoveryRequestedAt: ago(time.Minute), LastDisconnectedAt: ago(time.Hour), LastSubscribedAt: ago(2 * time.Minute)},
			ago(time.Hour), recovery.FromLastDisconnected},
		{"1: a disconnection after the request does not move it",
			recovery.Record{State: recovery.Recovering, RecoveryRequestedAt: ago(time.Hour), LastDisconnectedAt: ago(time.Minute)},
			ago(time.Hour), recovery.FromRecoveryRequested},
		{"1 is skipped for a recovering record without a request time",
			recovery.Record{State: recovery.Recovering, LastSubscribedAt: ago(3 * time.Minute)},
			ago(3 * time.Minute), recovery.FromLastSubscribed},
		{"2a: no disconnection: last_subscribed_at",
			recovery.Record{State: recovery.Disconnected, LastSubscribedAt: ago(42 * time.Second)},
			ago(42 * time.Second), recovery.FromLastSubscribed},
		{"2a: a healthy record too",
			recovery.Record{State: recovery.Healthy, LastSubscribedAt: ago(5 * time.Second), RecoveryRequestedAt: ago(time.Hour)},
			ago(5 * time.Second), recovery.FromLastSubscribed},
		{"2b: nothing known: ten minutes ago",
			recovery.Record{State: recovery.Disconnected},
			ago(assumed), recovery.FromAssumedDowntime},
		{"3: a disconnection older than the maximum length is clamped",
			recovery.Record{State: recovery.Disconnected, LastDisconnectedAt: ago(61 * time.Hour), LastSubscribedAt: ago(time.Second)},
			ago(maxLen), recovery.FromMaxLength},
		{"3: exactly the maximum length is not clamped",
			recovery.Record{State: recovery.Disconnected, LastDisconnectedAt: ago(maxLen)},
			ago(maxLen), recovery.FromLastDisconnected},
		{"3: one nanosecond beyond is",
			recovery.Record{State: recovery.Disconnected, LastDisconnectedAt: ago(maxLen + 1)},
			ago(maxLen), recovery.FromMaxLength},
		{"4: last_disconnected_at",
			recovery.Record{State: recovery.Disconnected, LastDisconnectedAt: ago(2 * time.Hour), LastSubscribedAt: ago(time.Minute)},
			ago(2 * time.Hour), recovery.FromLastDisconnected},
		{"the maximum bounds rule 1 as well",
			recovery.Record{State: recovery.Recovering, RecoveryRequestedAt: ago(70 * time.Hour)},
			ago(maxLen), recovery.FromMaxLength},
		{"the maximum bounds rule 2a as well",
			recovery.Record{LastSubscribedAt: ago(100 * time.Hour)},
			ago(maxLen), recovery.FromMaxLength},
		{"a time ahead of now (another clock) is now",
			recovery.Record{LastSubscribedAt: t0.Add(time.Second)},
			t0, recovery.FromLastSubscribed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, rule := recovery.RecoveryFrom(c.rec, t0, maxLen, assumed)
			assert.Equal(t, c.want, got)
			assert.Equal(t, c.rule, rule, "rule %v", rule)
		})
	}
}

func TestStateText(t *testing.T) {
	for _, s := range []recovery.State{recovery.Disconnected, recovery.Recovering, recovery.Healthy} {
		b, err := s.MarshalText()
		assert.NoError(t, err)
		var back recovery.State
		assert.NoError(t, back.UnmarshalText(b))
		assert.Equal(t, s, back)
		assert.Equal(t, s.String(), string(b))
	}
	var s recovery.State
	assert.ErrorContains(t, s.UnmarshalText([]byte("asleep")), `unknown state "asleep"`)
	_, err := recovery.State(9).MarshalText()
	assert.Error(t, err)
}
