package otelfeedkit_test

import (
	"errors"
	"maps"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/otelfeedkit"
	"github.com/feedkit/feedkit/recovery"
)

var _ feedkit.Observer = (*otelfeedkit.Metrics)(nil)

// Each observer method moves its metrics and no other, by exactly what it was told,
// with the attribute values the doc gives.
func TestEachCallMovesExactlyItsMetric(t *testing.T) {
	live := feed.SessionRef{Index: 0, Interest: feed.LiveMessagesOnly}
	events := feed.SessionRef{Index: 3, Interest: feed.SpecifiedMatchesOnly(feed.URN{Prefix: "sr", Type: "match", ID: 1})}
	errLost := errors.New("lost")
	summary := "/v1/{lang}/sport_events/{urn}/summary.xml"
	cases := []struct {
		name  string
		calls func(m *otelfeedkit.Metrics)
		want  map[string][]point
	}{{
		name: "FeedMessageReceived",
		calls: func(m *otelfeedkit.Metrics) {
			m.FeedMessageReceived(live, 1, feed.MessageOddsChange, 100)
			m.FeedMessageReceived(live, 1, feed.MessageOddsChange, 200)
			m.FeedMessageReceived(events, 3, feed.MessageBetSettlement, 100)
			m.FeedMessageReceived(live, 0, feed.MessageUnknown, 10)
		},
		want: map[string][]point{"messaging.client.consumed.messages": {
			{attrs: []string{"feedkit.message.type=bet_settlement", "feedkit.producer=3", "feedkit.session=3:matches", "messaging.system=rabbitmq"}, value: 1},
			{attrs: []string{"feedkit.message.type=odds_change", "feedkit.producer=1", "feedkit.session=0:live", "messaging.system=rabbitmq"}, value: 2},
			{attrs: []string{"feedkit.message.type=unknown", "feedkit.producer=0", "feedkit.session=0:live", "messaging.system=rabbitmq"}, value: 1},
		}},
	}, {
		name: "FeedMessageUnparsable",
		calls: func(m *otelfeedkit.Metrics) {
			m.FeedMessageUnparsable(live, 1, feed.MessageBetStop)
			m.FeedMessageUnparsable(live, 1, feed.MessageBetStop)
		},
		want: map[string][]point{"feedkit.messages.unparsable": {
			{attrs: []string{"feedkit.message.type=bet_stop", "feedkit.producer=1", "feedkit.session=0:live"}, value: 2},
		}},
	}, {
		name: "ListenerCalled untimed",
		calls: func(m *otelfeedkit.Metrics) {
			m.ListenerCalled(concurrent.Call{Pool: "feed", Producer: 1, Type: feed.MessageOddsChange, Result: concurrent.CallReturned})
			m.ListenerCalled(concurrent.Call{Pool: "feed", Producer: 1, Type: feed.MessageOddsChange, Result: concurrent.CallPanicked})
			m.ListenerCalled(concurrent.Call{Pool: "session 1", Producer: 0, Type: feed.MessageUnknown, Result: concurrent.CallUnparsable})
		},
		want: map[string][]point{"feedkit.listener.calls": {
			{attrs: []string{"feedkit.message.type=odds_change", "feedkit.pool=feed", "feedkit.producer=1", "feedkit.result=panicked"}, value: 1},
			{attrs: []string{"feedkit.message.type=odds_change", "feedkit.pool=feed", "feedkit.producer=1", "feedkit.result=returned"}, value: 1},
			{attrs: []string{"feedkit.message.type=unknown", "feedkit.pool=session 1", "feedkit.producer=0", "feedkit.result=unparsable"}, value: 1},
		}},
	}, {
		name: "ListenerCalled timed",
		calls: func(m *otelfeedkit.Metrics) {
			c := concurrent.Call{Pool: "feed", Producer: 1, Type: feed.MessageOddsChange, Result: concurrent.CallFailed,
				Timed: true, Wait: 250 * time.Millisecond, Duration: 500 * time.Millisecond}
			m.ListenerCalled(c)
			c.Producer, c.Result = 3, concurrent.CallReturned
			m.ListenerCalled(c)
		},
		want: map[string][]point{
			"feedkit.listener.calls": {
				{attrs: []string{"feedkit.message.type=odds_change", "feedkit.pool=feed", "feedkit.producer=1", "feedkit.result=failed"}, value: 1},
				{attrs: []string{"feedkit.message.type=odds_change", "feedkit.pool=feed", "feedkit.producer=3", "feedkit.result=returned"}, value: 1},
			},
			"messaging.process.duration":  {{attrs: []string{"feedkit.message.type=odds_change", "feedkit.pool=feed"}, count: 2, value: 1}},
			"feedkit.queue.wait.duration": {{attrs: []string{"feedkit.pool=feed"}, count: 2, value: 0.5}},
		},
	}, {
		name:  "ProducerUpHeld",
		calls: func(m *otelfeedkit.Metrics) { m.ProducerUpHeld(1, feed.EventStatefulRecovery) },
		want: map[string][]point{"feedkit.producer.ups.held": {
			{attrs: []string{"feedkit.producer=1", "feedkit.recovery.kind=event_stateful"}, value: 1},
		}},
	}, {
		name:  "ProducerUpReleased",
		calls: func(m *otelfeedkit.Metrics) { m.ProducerUpReleased(3, feed.ProducerRecovery, 1500*time.Millisecond) },
		want: map[string][]point{"feedkit.producer.up.held.duration": {
			{attrs: []string{"feedkit.producer=3", "feedkit.recovery.kind=producer"}, count: 1, value: 1.5},
		}},
	}, {
		name: "ProducerStatusChanged",
		calls: func(m *otelfeedkit.Metrics) {
			m.ProducerStatusChanged(feed.ProducerStatus{Producer: 1, Down: true, Reason: feed.InitialState})
			m.ProducerStatusChanged(feed.ProducerStatus{Producer: 3, Down: true, Reason: feed.InitialState})
			m.ProducerStatusChanged(feed.ProducerStatus{Producer: 1, Reason: feed.FirstRecoveryCompleted})
			m.ProducerStatusChanged(feed.ProducerStatus{Producer: 1, Down: true, Reason: feed.AliveIntervalViolation})
			m.ProducerStatusChanged(feed.ProducerStatus{Producer: 1, Reason: feed.ReturnedFromInactivity})
		},
		want: map[string][]point{
			"feedkit.producer.downs": {
				{attrs: []string{"feedkit.producer=1", "feedkit.reason=AliveIntervalViolation"}, value: 1},
				{attrs: []string{"feedkit.producer=1", "feedkit.reason=InitialState"}, value: 1},
				{attrs: []string{"feedkit.producer=3", "feedkit.reason=InitialState"}, value: 1},
			},
			// The last down's reason alone, kept while the producer is up again.
			"feedkit.producer.last_down": {
				{attrs: []string{"feedkit.producer=1", "feedkit.reason=AliveIntervalViolation"}, value: 1},
				{attrs: []string{"feedkit.producer=3", "feedkit.reason=InitialState"}, value: 1},
			},
		},
	}, {
		name: "ProducerAlive",
		calls: func(m *otelfeedkit.Metrics) {
			m.ProducerAlive(1, 2*time.Second)
			m.ProducerAlive(1, 250*time.Millisecond) // the last one counts
			m.ProducerAlive(3, -time.Second)         // the feed's clock ahead of ours
		},
		want: map[string][]point{"feedkit.producer.lag": {
			{attrs: []string{"feedkit.producer=1"}, value: 0.25},
			{attrs: []string{"feedkit.producer=3"}, value: -1},
		}},
	}, {
		name: "RecoveryRequested",
		calls: func(m *otelfeedkit.Metrics) {
			m.RecoveryRequested(1, feed.ProducerRecovery, recovery.RequestAccepted)
			m.RecoveryRequested(1, feed.ProducerRecovery, recovery.RequestRateLimited)
			m.RecoveryRequested(1, feed.ProducerRecovery, recovery.RequestRateLimited)
			m.RecoveryRequested(1, feed.EventRecovery, recovery.RequestFailed)
		},
		want: map[string][]point{"feedkit.recovery.requests": {
			{attrs: []string{"feedkit.producer=1", "feedkit.recovery.kind=event", "feedkit.result=failed"}, value: 1},
			{attrs: []string{"feedkit.producer=1", "feedkit.recovery.kind=producer", "feedkit.result=accepted"}, value: 1},
			{attrs: []string{"feedkit.producer=1", "feedkit.recovery.kind=producer", "feedkit.result=rate_limited"}, value: 2},
		}},
	}, {
		name: "RecoveryEnded",
		calls: func(m *otelfeedkit.Metrics) {
			m.RecoveryEnded(1, feed.ProducerRecovery, recovery.RecoveryCompleted, 90*time.Second)
			m.RecoveryEnded(1, feed.ProducerRecovery, recovery.RecoveryTimedOut, 30*time.Minute)
		},
		want: map[string][]point{"feedkit.recovery.duration": {
			{attrs: []string{"feedkit.producer=1", "feedkit.recovery.kind=producer", "feedkit.result=completed"}, count: 1, value: 90},
			{attrs: []string{"feedkit.producer=1", "feedkit.recovery.kind=producer", "feedkit.result=timed_out"}, count: 1, value: 1800},
		}},
	}, {
		name: "APIRequest",
		calls: func(m *otelfeedkit.Metrics) {
			m.APIRequest("GET", summary, 200, 100*time.Millisecond)
			m.APIRequest("GET", summary, 200, 300*time.Millisecond)
			m.APIRequest("GET", summary, 0, 30*time.Second) // no answer: no status
			m.APIRequest("PROPFIND", summary, 405, time.Second)
		},
		want: map[string][]point{"http.client.request.duration": {
			{attrs: []string{"http.request.method=GET", "http.response.status_code=200", "url.template=" + summary}, count: 2, value: 0.4},
			{attrs: []string{"http.request.method=GET", "url.template=" + summary}, count: 1, value: 30},
			{attrs: []string{"http.request.method=_OTHER", "http.response.status_code=405", "url.template=" + summary}, count: 1, value: 1},
		}},
	}, {
		name:  "APIRequestHeld",
		calls: func(m *otelfeedkit.Metrics) { m.APIRequestHeld("POST", "/v1/{product}/recovery/initiate_request") },
		want: map[string][]point{"feedkit.api.requests.held": {
			{attrs: []string{"http.request.method=POST", "url.template=/v1/{product}/recovery/initiate_request"}, value: 1},
		}},
	}, {
		name: "CacheRead",
		calls: func(m *otelfeedkit.Metrics) {
			m.CacheRead("markets", true)
			m.CacheRead("markets", true)
			m.CacheRead("markets", false)
			m.CacheRead("profiles", false)
		},
		want: map[string][]point{"feedkit.cache.reads": {
			{attrs: []string{"feedkit.cache=markets", "feedkit.result=hit"}, value: 2},
			{attrs: []string{"feedkit.cache=markets", "feedkit.result=miss"}, value: 1},
			{attrs: []string{"feedkit.cache=profiles", "feedkit.result=miss"}, value: 1},
		}},
	}, {
		name:  "CacheEvicted",
		calls: func(m *otelfeedkit.Metrics) { m.CacheEvicted("summaries"); m.CacheEvicted("summaries") },
		want:  map[string][]point{"feedkit.cache.evictions": {{attrs: []string{"feedkit.cache=summaries"}, value: 2}}},
	}, {
		name:  "TransportLinkUp",
		calls: func(m *otelfeedkit.Metrics) { m.TransportLinkUp(); m.TransportLinkUp() },
		want:  map[string][]point{"feedkit.transport.connects": {{attrs: []string{}, value: 2}}},
	}, {
		name:  "TransportLinkDown",
		calls: func(m *otelfeedkit.Metrics) { m.TransportLinkDown(errLost) },
		want:  map[string][]point{"feedkit.transport.drops": {{attrs: []string{}, value: 1}}},
	}, {
		name:  "TransportAttemptFailed",
		calls: func(m *otelfeedkit.Metrics) { m.TransportAttemptFailed(errLost); m.TransportAttemptFailed(errLost) },
		want:  map[string][]point{"feedkit.transport.failed_attempts": {{attrs: []string{}, value: 2}}},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, reader := newMetrics(t)
			c.calls(m)
			got := collect(t, reader)
			assert.ElementsMatch(t, slices.Collect(maps.Keys(c.want)), slices.Collect(maps.Keys(got)), "the metrics moved")
			for name, want := range c.want {
				pts := points(got[name])
				for i := range pts {
					pts[i].value = round(pts[i].value)
				}
				assert.Equal(t, want, pts, name)
			}
		})
	}
}

// round drops the float error of a sum of seconds.
func round(v float64) float64 { return math.Round(v*1e9) / 1e9 }

// The calls are safe concurrently, the first of each key included: every call counts
// once, under the right labels.
func TestConcurrentCallsCountExactly(t *testing.T) {
	m, reader := newMetrics(t)
	const goroutines, perKey = 8, 200
	types := feed.MessageTypes()
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range perKey {
				for p := 1; p <= 3; p++ {
					typ := types[(i+g)%len(types)]
					m.FeedMessageReceived(feed.SessionRef{Index: 0, Interest: feed.AllMessages}, p, typ, 10)
					m.ListenerCalled(concurrent.Call{Pool: "feed", Producer: p, Type: typ, Result: concurrent.CallReturned,
						Timed: i%4 == 0, Duration: time.Millisecond})
				}
			}
		})
	}
	wg.Wait()
	got := collect(t, reader)
	total := func(name string, series int) float64 {
		pts := points(got[name])
		assert.Len(t, pts, series, name)
		var sum float64
		for _, p := range pts {
			sum += p.value + float64(p.count)
		}
		return sum
	}
	calls := float64(goroutines * perKey * 3)
	assert.Equal(t, calls, total("messaging.client.consumed.messages", 3*len(types)))
	assert.Equal(t, calls, total("feedkit.listener.calls", 3*len(types)))
	timed := float64(goroutines * perKey / 4 * 3)
	procs := points(got["messaging.process.duration"])
	var n uint64
	for _, p := range procs {
		n += p.count
	}
	assert.Equal(t, uint64(timed), n)
	assert.Len(t, procs, len(types))
	require.Len(t, points(got["feedkit.queue.wait.duration"]), 1)
	assert.Equal(t, uint64(timed), points(got["feedkit.queue.wait.duration"])[0].count)
}
