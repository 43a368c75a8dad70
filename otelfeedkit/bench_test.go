package otelfeedkit_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/otelfeedkit"
	"github.com/feedkit/feedkit/recovery"
)

// The calls made once per message, on the SDK's MeterProvider read by a ManualReader:
// after a key's first call, none allocates.
func BenchmarkObserverCalls(b *testing.B) {
	session := feed.SessionRef{Index: 0, Interest: feed.LiveMessagesOnly}
	untimed := concurrent.Call{Pool: "feed", Producer: 1, Type: feed.MessageOddsChange, Result: concurrent.CallReturned}
	timed := untimed
	timed.Timed, timed.Wait, timed.Duration = true, 30*time.Microsecond, 120*time.Microsecond
	for _, bc := range []struct {
		name string
		call func(*otelfeedkit.Metrics)
	}{
		{"FeedMessageReceived", func(m *otelfeedkit.Metrics) { m.FeedMessageReceived(session, 1, feed.MessageOddsChange, 2048) }},
		{"ListenerCalled", func(m *otelfeedkit.Metrics) { m.ListenerCalled(untimed) }},
		{"ListenerCalledTimed", func(m *otelfeedkit.Metrics) { m.ListenerCalled(timed) }},
		{"PerMessage", func(m *otelfeedkit.Metrics) {
			// What one message costs with the default TimingSample of 64.
			m.FeedMessageReceived(session, 1, feed.MessageOddsChange, 2048)
			m.ListenerCalled(untimed)
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			m, _ := newMetrics(b)
			bm := m
			bc.call(bm)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				bc.call(bm)
			}
		})
		b.Run(bc.name+"Parallel", func(b *testing.B) {
			m, _ := newMetrics(b)
			bm := m
			bc.call(bm)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					bc.call(bm)
				}
			})
		})
	}
}

// After a key's first call, the calls made once per message allocate nothing, nor do
// the other calls of a key seen before.
func TestCallsAllocateNothingAfterAKeysFirst(t *testing.T) {
	m, _ := newMetrics(t)
	session := feed.SessionRef{Index: 1, Interest: feed.PrematchMessagesOnly}
	call := concurrent.Call{Pool: "feed", Producer: 3, Type: feed.MessageBetSettlement, Result: concurrent.CallFailed,
		Timed: true, Wait: time.Millisecond, Duration: time.Millisecond}
	calls := func() {
		m.FeedMessageReceived(session, 3, feed.MessageBetSettlement, 512)
		m.FeedMessageUnparsable(session, 3, feed.MessageBetSettlement)
		m.ListenerCalled(call)
		m.ProducerAlive(3, time.Second)
		m.ProducerUpHeld(3, feed.EventRecovery)
		m.ProducerUpReleased(3, feed.EventRecovery, time.Second)
		m.APIRequest("GET", "/v1/{lang}/sport_events/{urn}/summary.xml", 200, time.Millisecond)
		m.CacheRead("summaries", false)
		m.CacheEvicted("summaries")
		m.ProducerStatusChanged(feed.ProducerStatus{Producer: 3, Down: true, Reason: feed.AliveIntervalViolation})
		m.RecoveryRequested(3, feed.ProducerRecovery, recovery.RequestAccepted)
		m.RecoveryEnded(3, feed.ProducerRecovery, recovery.RecoveryCompleted, time.Second)
		m.APIRequestHeld("GET", "/v1/{lang}/sport_events/{urn}/summary.xml")
		m.TransportLinkUp()
		m.TransportLinkDown(nil)
		m.TransportAttemptFailed(nil)
	}
	calls()
	assert.Zero(t, testing.AllocsPerRun(100, calls))
}
