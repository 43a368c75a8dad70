package promfeedkit

import (
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/recovery"
)

// FeedMessageReceived counts a message read by a session, in
// messaging_client_consumed_messages_total. Its size is not counted here: the
// transport's bytes are read from the Stats (feedkit_transport_received_bytes_total).
func (m *Metrics) FeedMessageReceived(s feed.SessionRef, producer int, typ feed.MessageType, _ int) {
	m.sessionCounter(m.feedChildren, m.consumed, s, producer, typ).Inc()
}

// FeedMessageUnparsable counts a message a session could not route or decode, in
// feedkit_messages_unparsable_total.
func (m *Metrics) FeedMessageUnparsable(s feed.SessionRef, producer int, typ feed.MessageType) {
	m.sessionCounter(m.unparsableChildren, m.unparsable, s, producer, typ).Inc()
}

// sessionCounter returns vec's child for a message of session s.
func (m *Metrics) sessionCounter(ch *children[uint64, prometheus.Counter], vec *prometheus.CounterVec,
	s feed.SessionRef, producer int, typ feed.MessageType) prometheus.Counter {
	k, packed := feedKey(s.Index, producer, typ)
	if c, ok := ch.load(k); ok && packed {
		return c
	}
	resolve := func() prometheus.Counter {
		return vec.WithLabelValues(sessionLabel(s), strconv.Itoa(producer), typ.String())
	}
	if !packed {
		return resolve()
	}
	return ch.add(k, resolve)
}

// ListenerCalled counts a listener call in feedkit_listener_calls_total and, when the
// pool timed it, observes its duration (messaging_process_duration_seconds) and its
// message's wait in the queue (feedkit_queue_wait_duration_seconds).
func (m *Metrics) ListenerCalled(c concurrent.Call) {
	p := m.pool(c.Pool)
	k, packed := callKey(c.Producer, c.Type, c.Result)
	n, ok := p.calls.load(k)
	if !ok || !packed {
		resolve := func() prometheus.Counter {
			return m.calls.WithLabelValues(c.Pool, strconv.Itoa(c.Producer), c.Type.String(), c.Result.String())
		}
		if packed {
			n = p.calls.add(k, resolve)
		} else {
			n = resolve()
		}
	}
	n.Inc()
	if !c.Timed {
		return
	}
	// Resolved apart from the count, so that the histograms have no series of calls
	// that none were timed of.
	h, ok := p.timings.load(c.Type)
	if !ok {
		h = p.timings.add(c.Type, func() timingChildren {
			return timingChildren{process: m.process.WithLabelValues(c.Pool, c.Type.String()), wait: m.queueWait.WithLabelValues(c.Pool)}
		})
	}
	h.process.Observe(c.Duration.Seconds())
	h.wait.Observe(c.Wait.Seconds())
}

// pool returns the children of the pool named name.
func (m *Metrics) pool(name string) *poolChildren {
	if p, ok := m.pools.load(name); ok {
		return p
	}
	return m.pools.add(name, func() *poolChildren {
		return &poolChildren{calls: newChildren[uint64, prometheus.Counter](),
			timings: newChildren[feed.MessageType, timingChildren]()}
	})
}

// ProducerUpHeld counts an up held back in feedkit_producer_ups_held_total.
func (m *Metrics) ProducerUpHeld(producer int, kind feed.RecoveryKind) {
	m.upsHeld.WithLabelValues(strconv.Itoa(producer), recoveryKindLabel(kind)).Inc()
}

// ProducerUpReleased observes how long an up was held back, in
// feedkit_producer_up_held_duration_seconds.
func (m *Metrics) ProducerUpReleased(producer int, kind feed.RecoveryKind, held time.Duration) {
	m.upHeldFor.WithLabelValues(strconv.Itoa(producer), recoveryKindLabel(kind)).Observe(held.Seconds())
}

// ProducerStatusChanged counts a change to down in feedkit_producer_downs_total, by its
// reason, and keeps that reason for feedkit_producer_last_down. A change to up moves
// neither: the last down's reason stays, and feedkit_producer_up says the producer is
// up again.
func (m *Metrics) ProducerStatusChanged(s feed.ProducerStatus) {
	if !s.Down {
		return
	}
	m.downs.WithLabelValues(strconv.Itoa(s.Producer), s.Reason.String()).Inc()
	m.mu.Lock()
	m.lastDown[s.Producer] = s.Reason
	m.mu.Unlock()
}

// ProducerAlive sets feedkit_producer_lag_seconds to the alive's lag.
func (m *Metrics) ProducerAlive(producer int, lag time.Duration) {
	m.lag.WithLabelValues(strconv.Itoa(producer)).Set(lag.Seconds())
}

// RecoveryRequested counts a recovery request in feedkit_recovery_requests_total.
func (m *Metrics) RecoveryRequested(producer int, kind feed.RecoveryKind, result recovery.RequestResult) {
	m.recoveries.WithLabelValues(strconv.Itoa(producer), recoveryKindLabel(kind), result.String()).Inc()
}

// RecoveryEnded observes an accepted recovery's duration in
// feedkit_recovery_duration_seconds.
func (m *Metrics) RecoveryEnded(producer int, kind feed.RecoveryKind, result recovery.RecoveryResult, took time.Duration) {
	m.recoveryIn.WithLabelValues(strconv.Itoa(producer), recoveryKindLabel(kind), result.String()).Observe(took.Seconds())
}

// APIRequest observes an API request's duration in
// http_client_request_duration_seconds. A request that got no answer (status 0) has an
// empty http_response_status_code, as OpenTelemetry leaves the attribute out then.
func (m *Metrics) APIRequest(method, endpoint string, status int, took time.Duration) {
	code := ""
	if status != 0 {
		code = strconv.Itoa(status)
	}
	m.apiDuration.WithLabelValues(method, endpoint, code).Observe(took.Seconds())
}

// APIRequestHeld counts a request the API's 429 held back, in
// feedkit_api_requests_held_total.
func (m *Metrics) APIRequestHeld(method, endpoint string) {
	m.apiHeld.WithLabelValues(method, endpoint).Inc()
}

// CacheRead counts a read of a names cache in feedkit_cache_reads_total, with
// feedkit_result "hit" or "miss".
func (m *Metrics) CacheRead(cache string, hit bool) {
	ch, result := m.misses, "miss"
	if hit {
		ch, result = m.hits, "hit"
	}
	c, ok := ch.load(cache)
	if !ok {
		c = ch.add(cache, func() prometheus.Counter { return m.cacheReads.WithLabelValues(cache, result) })
	}
	c.Inc()
}

// CacheEvicted counts an entry dropped from a names cache, in
// feedkit_cache_evictions_total.
func (m *Metrics) CacheEvicted(cache string) {
	m.cacheEvictions.WithLabelValues(cache).Inc()
}

// TransportLinkUp counts a link made, in feedkit_transport_connects_total.
func (m *Metrics) TransportLinkUp() { m.connects.Inc() }

// TransportLinkDown counts a link lost, in feedkit_transport_drops_total. The error is
// not a label: its text is unbounded.
func (m *Metrics) TransportLinkDown(error) { m.drops.Inc() }

// TransportAttemptFailed counts a failed connection attempt, in
// feedkit_transport_failed_attempts_total.
func (m *Metrics) TransportAttemptFailed(error) { m.failedAttempts.Inc() }

// sessionLabel is the session label of s: feed.SessionRef.Label, e.g. "0:live", the
// same in both adapters so that one dashboard reads either.
func sessionLabel(s feed.SessionRef) string { return s.Label() }

// recoveryKindLabel is the feedkit_recovery_kind label of kind: "producer", "event" or
// "event_stateful" (feed.RecoveryKind's String with an underscore for the space).
func recoveryKindLabel(kind feed.RecoveryKind) string {
	return strings.ReplaceAll(kind.String(), " ", "_")
}
