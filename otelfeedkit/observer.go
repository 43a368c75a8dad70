package otelfeedkit

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/recovery"
)

// bg is the context of the measurements: the observer's calls carry none, and the
// exemplars, which would want a span's, are not sampled without one.
var bg = context.Background()

// The labels of the observer's calls, as cache keys.
type (
	feedKey struct {
		session  int
		producer int
		typ      feed.MessageType
	}
	callKey struct {
		pool     string
		producer int
		typ      feed.MessageType
		result   concurrent.CallResult
	}
	downKey struct {
		producer int
		reason   feed.StatusReason
	}
	heldKey struct {
		producer int
		kind     feed.RecoveryKind
	}
	recoveryKey struct {
		producer int
		kind     feed.RecoveryKind
		result   string
	}
	apiKey struct {
		method, endpoint string
		status           int // 0: no answer, and no http.response.status_code
	}
	readKey struct {
		cache string
		hit   bool
	}
)

// feedEntry holds the attribute sets of one session, producer and message type.
type feedEntry struct {
	consumed   attrs // messaging.client.consumed.messages
	unparsable attrs // feedkit.messages.unparsable
}

// callEntry holds the attribute sets of one kind of listener call.
type callEntry struct {
	calls   attrs // feedkit.listener.calls
	process attrs // messaging.process.duration
	wait    attrs // feedkit.queue.wait.duration
}

// feed returns the attribute sets of a message of session s.
func (m *Metrics) feed(s feed.SessionRef, producer int, typ feed.MessageType) feedEntry {
	k := feedKey{s.Index, producer, typ}
	if e, ok := m.feedAttrs.lookup(k); ok {
		return e
	}
	return m.feedAttrs.get(k, func() feedEntry {
		session, prod, mt := keySession.String(sessionLabel(s)), producerLabel(producer), keyMessageType.String(typ.String())
		return feedEntry{consumed: newAttrs(rabbitmq, session, prod, mt), unparsable: newAttrs(session, prod, mt)}
	})
}

// FeedMessageReceived counts a message in messaging.client.consumed.messages. It runs
// once per message and allocates nothing once its labels have been seen.
func (m *Metrics) FeedMessageReceived(s feed.SessionRef, producer int, typ feed.MessageType, _ int) {
	m.consumed.Add(bg, 1, m.feed(s, producer, typ).consumed.add...)
}

// FeedMessageUnparsable counts a message in feedkit.messages.unparsable.
func (m *Metrics) FeedMessageUnparsable(s feed.SessionRef, producer int, typ feed.MessageType) {
	m.unparsable.Add(bg, 1, m.feed(s, producer, typ).unparsable.add...)
}

// ListenerCalled counts a call in feedkit.listener.calls and, when the pool timed it,
// records its duration and wait. It runs once per message and allocates nothing once
// its labels have been seen.
func (m *Metrics) ListenerCalled(c concurrent.Call) {
	k := callKey{c.Pool, c.Producer, c.Type, c.Result}
	e, ok := m.callAttrs.lookup(k)
	if !ok {
		e = m.callAttrs.get(k, func() callEntry {
			pool, mt := keyPool.String(c.Pool), keyMessageType.String(c.Type.String())
			return callEntry{
				calls:   newAttrs(pool, producerLabel(c.Producer), mt, keyResult.String(c.Result.String())),
				process: newAttrs(pool, mt),
				wait:    newAttrs(pool),
			}
		})
	}
	m.calls.Add(bg, 1, e.calls.add...)
	if c.Timed {
		m.process.Record(bg, c.Duration.Seconds(), e.process.record...)
		m.queueWait.Record(bg, c.Wait.Seconds(), e.wait.record...)
	}
}

// producer returns the attribute set of a producer alone.
func (m *Metrics) producer(id int) attrs {
	if a, ok := m.producerAttrs.lookup(id); ok {
		return a
	}
	return m.producerAttrs.get(id, func() attrs { return newAttrs(producerLabel(id)) })
}

// held returns the attribute set of a producer and a recovery kind.
func (m *Metrics) held(producer int, kind feed.RecoveryKind) attrs {
	k := heldKey{producer, kind}
	if a, ok := m.heldAttrs.lookup(k); ok {
		return a
	}
	return m.heldAttrs.get(k, func() attrs {
		return newAttrs(producerLabel(producer), keyRecoveryKind.String(kindName(kind)))
	})
}

// recovery returns the attribute set of a producer, a recovery kind and a result.
func (m *Metrics) recovery(producer int, kind feed.RecoveryKind, result string) attrs {
	k := recoveryKey{producer, kind, result}
	if a, ok := m.recoveryAttrs.lookup(k); ok {
		return a
	}
	return m.recoveryAttrs.get(k, func() attrs {
		return newAttrs(producerLabel(producer), keyRecoveryKind.String(kindName(kind)), keyResult.String(result))
	})
}

// ProducerUpHeld counts a held up in feedkit.producer.ups.held.
func (m *Metrics) ProducerUpHeld(producer int, kind feed.RecoveryKind) {
	m.upsHeld.Add(bg, 1, m.held(producer, kind).add...)
}

// ProducerUpReleased records how long an up was held in
// feedkit.producer.up.held.duration.
func (m *Metrics) ProducerUpReleased(producer int, kind feed.RecoveryKind, held time.Duration) {
	m.upHeldTime.Record(bg, held.Seconds(), m.held(producer, kind).record...)
}

// down returns the attribute set of a producer and a status reason.
func (m *Metrics) down(producer int, reason feed.StatusReason) attrs {
	k := downKey{producer, reason}
	if a, ok := m.downAttrs.lookup(k); ok {
		return a
	}
	return m.downAttrs.get(k, func() attrs {
		return newAttrs(producerLabel(producer), keyReason.String(reason.String()))
	})
}

// ProducerStatusChanged counts a change that leaves the producer down in
// feedkit.producer.downs, by reason (InitialState included: a producer starts down),
// and keeps the reason for feedkit.producer.last_down. A change to up moves neither:
// last_down keeps the reason of the last down.
func (m *Metrics) ProducerStatusChanged(s feed.ProducerStatus) {
	if !s.Down {
		return
	}
	m.downs.Add(bg, 1, m.down(s.Producer, s.Reason).add...)
	m.mu.Lock()
	m.downReasons[s.Producer] = s.Reason
	m.mu.Unlock()
}

// ProducerAlive records the alive's lag in feedkit.producer.lag.
func (m *Metrics) ProducerAlive(producer int, lag time.Duration) {
	m.lag.Record(bg, lag.Seconds(), m.producer(producer).record...)
}

// RecoveryRequested counts a request in feedkit.recovery.requests, by result.
func (m *Metrics) RecoveryRequested(producer int, kind feed.RecoveryKind, result recovery.RequestResult) {
	m.requests.Add(bg, 1, m.recovery(producer, kind, result.String()).add...)
}

// RecoveryEnded records the recovery's duration in feedkit.recovery.duration, by
// result.
func (m *Metrics) RecoveryEnded(producer int, kind feed.RecoveryKind, result recovery.RecoveryResult, took time.Duration) {
	m.recoveryTime.Record(bg, took.Seconds(), m.recovery(producer, kind, result.String()).record...)
}

// api returns the attribute set of a request: http.response.status_code only when an
// answer came, as the semantic conventions say.
func (m *Metrics) api(method, endpoint string, status int) attrs {
	k := apiKey{method, endpoint, status}
	if a, ok := m.apiAttrs.lookup(k); ok {
		return a
	}
	return m.apiAttrs.get(k, func() attrs {
		kv := []attribute.KeyValue{keyHTTPMethod.String(httpMethod(method)), keyURLTemplate.String(endpoint)}
		if status != 0 {
			kv = append(kv, keyHTTPStatus.Int(status))
		}
		return newAttrs(kv...)
	})
}

// APIRequest records the attempt's duration in http.client.request.duration.
func (m *Metrics) APIRequest(method, endpoint string, status int, took time.Duration) {
	m.apiTime.Record(bg, took.Seconds(), m.api(method, endpoint, status).record...)
}

// APIRequestHeld counts a request held back in feedkit.api.requests.held.
func (m *Metrics) APIRequestHeld(method, endpoint string) {
	m.apiHeld.Add(bg, 1, m.api(method, endpoint, 0).add...)
}

// CacheRead counts a read in feedkit.cache.reads, with feedkit.result "hit" or
// "miss".
func (m *Metrics) CacheRead(cache string, hit bool) {
	k := readKey{cache, hit}
	a, ok := m.readAttrs.lookup(k)
	if !ok {
		a = m.readAttrs.get(k, func() attrs {
			result := "miss"
			if hit {
				result = "hit"
			}
			return newAttrs(keyCache.String(cache), keyResult.String(result))
		})
	}
	m.cacheReads.Add(bg, 1, a.add...)
}

// cache returns the attribute set of a names' cache alone.
func (m *Metrics) cache(name string) attrs {
	if a, ok := m.cacheAttrs.lookup(name); ok {
		return a
	}
	return m.cacheAttrs.get(name, func() attrs { return newAttrs(keyCache.String(name)) })
}

// CacheEvicted counts an eviction in feedkit.cache.evictions.
func (m *Metrics) CacheEvicted(cache string) {
	m.evictions.Add(bg, 1, m.cache(cache).add...)
}

// TransportLinkUp counts a link in feedkit.transport.connects.
func (m *Metrics) TransportLinkUp() { m.connects.Add(bg, 1) }

// TransportLinkDown counts a lost link in feedkit.transport.drops. The error is not a
// label: it is unbounded.
func (m *Metrics) TransportLinkDown(error) { m.drops.Add(bg, 1) }

// TransportAttemptFailed counts a failed attempt in feedkit.transport.failed_attempts.
func (m *Metrics) TransportAttemptFailed(error) { m.failedAttempt.Add(bg, 1) }
