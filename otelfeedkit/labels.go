package otelfeedkit

import (
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"

	"github.com/feedkit/feedkit/feed"
)

// The attribute keys. Those of messaging and HTTP are OpenTelemetry's semantic
// conventions; the rest are the kit's own, under feedkit.
const (
	keyMessagingSystem = attribute.Key("messaging.system")
	keySession         = attribute.Key("feedkit.session")
	keyProducer        = attribute.Key("feedkit.producer")
	keyMessageType     = attribute.Key("feedkit.message.type")
	keyPool            = attribute.Key("feedkit.pool")
	keyResult          = attribute.Key("feedkit.result")
	keyReason          = attribute.Key("feedkit.reason")
	keyRecoveryKind    = attribute.Key("feedkit.recovery.kind")
	keyCache           = attribute.Key("feedkit.cache")
	keyHTTPMethod      = attribute.Key("http.request.method")
	keyURLTemplate     = attribute.Key("url.template")
	keyHTTPStatus      = attribute.Key("http.response.status_code")
)

// rabbitmq is messaging.system's value: the feed is read from RabbitMQ. The embedded
// broker of feedtest stands in for it in tests, and its messages are RabbitMQ's all the
// same.
var rabbitmq = keyMessagingSystem.String("rabbitmq")

// sessionLabel is the session label of s: feed.SessionRef.Label, e.g. "0:live", the
// same in both adapters so that one dashboard reads either.
func sessionLabel(s feed.SessionRef) string { return s.Label() }

// producerLabel is a producer's id in decimal, as feedkit.producer takes it.
func producerLabel(id int) attribute.KeyValue {
	return keyProducer.String(strconv.Itoa(id))
}

// kindName is the lower-case form of a recovery kind in feedkit.recovery.kind:
// "producer", "event" or "event_stateful".
func kindName(k feed.RecoveryKind) string {
	return strings.ReplaceAll(k.String(), " ", "_")
}

// httpMethod is http.request.method's value as the semantic conventions want it: a
// method of RFC 9110 (and PATCH) as is, any other as "_OTHER", so that the attribute
// stays bounded.
func httpMethod(m string) string {
	switch m {
	case "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH":
		return m
	}
	return "_OTHER"
}
