package otelfeedkit_test

import (
	"testing"
	"time"

	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/otelfeedkit"
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
