package promfeedkit_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/promfeedkit"
)

// BenchmarkObserverCalls times the observer calls made once per message, over 4
// producers and 3 message types, as a session and a pool make them: one goroutine, and
// every CPU at once. ListenerCalled's timed variant times one call in
// concurrent.DefaultTimingSample, as the pool does. WithLabelValues is the vector's own
// lookup, which the methods avoid, for comparison.
//
//	go test -run '^$' -bench ObserverCalls -benchmem ./promfeedkit
func BenchmarkObserverCalls(b *testing.B) {
	types := []feed.MessageType{feed.MessageOddsChange, feed.MessageBetStop, feed.MessageBetSettlement}
	const producers = 4
	session := feed.SessionRef{Index: 0, Interest: feed.LiveMessagesOnly}
	received := func(m *promfeedkit.Metrics, i int) {
		m.FeedMessageReceived(session, i%producers+1, types[i%len(types)], 512)
	}
	called := func(timed bool) func(m *promfeedkit.Metrics, i int) {
		return func(m *promfeedkit.Metrics, i int) {
			c := concurrent.Call{Pool: "feed", Producer: i%producers + 1, Type: types[i%len(types)]}
			if timed && i%concurrent.DefaultTimingSample == 0 {
				c.Timed, c.Wait, c.Duration = true, 20*time.Microsecond, 150*time.Microsecond
			}
			m.ListenerCalled(c)
		}
	}
	vec := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "baseline_total", Help: "h"},
		[]string{"feedkit_session", "feedkit_producer", "feedkit_message_type"})
	withLabelValues := func(_ *promfeedkit.Metrics, i int) {
		vec.WithLabelValues("0:live", strconv.Itoa(i%producers+1), types[i%len(types)].String()).Inc()
	}
	for _, c := range []struct {
		name string
		call func(m *promfeedkit.Metrics, i int)
	}{
		{"FeedMessageReceived", received},
		{"ListenerCalled", called(false)},
		{"ListenerCalled/timed", called(true)},
		{"WithLabelValues", withLabelValues},
	} {
		m, err := promfeedkit.New(prometheus.NewRegistry())
		if err != nil {
			b.Fatal(err)
		}
		for i := range producers * len(types) * concurrent.DefaultTimingSample {
			c.call(m, i) // every key seen: the steady state of a running feed
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				c.call(m, i)
				i++
			}
		})
		b.Run(c.name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					c.call(m, i)
					i++
				}
			})
		})
	}
}
