// Package feed is the protocol layer of an odds-feed consumer in the style of the Unified
// Odds Feed: routing keys, the message model and its decoder, the listener interfaces,
// sessions, and the recovery API client.
//
// # Data path
//
// A Transport (the embedded feedtest.Broker, or RabbitMQ) reads deliveries on one
// goroutine and hands each to a Session. The session parses the routing key (which carries
// the event id), peeks at the root element for the producer and request id, and routes:
// alive and snapshot_complete to a SystemHandler (the recovery manager), event messages to
// a Dispatcher. The dispatcher decodes the body on its own goroutine and calls the
// OddsFeedListener. The reading goroutine never decodes a body and never runs listener
// code, so a slow listener cannot delay reading; when the dispatcher's bounded queue is
// full the transport stops reading and the broker holds the messages (back-pressure).
//
//	transport reader ──► Session ──┬─► SystemHandler (alive, snapshot_complete)
//	                               └─► Dispatcher ──► Decode ──► OddsFeedListener
//
// # Bad input
//
// A malformed routing key, an oversized body or a body that does not decode reaches
// OnUnparsableMessage with its raw bytes and the reason, and the stream goes on. (An alive
// or snapshot_complete is checked on the reading goroutine as far as its root element, and
// turned away there if that is bad or does not match its key; the SystemHandler decodes
// the rest.) A listener, system handler or error callback that fails or panics is reported
// (SessionConfig.OnError and the logger) and the next message is delivered as usual.
//
// # Decoding
//
// Decode is a schema-specific decoder over the raw bytes (see internal/xmlscan): no
// reflection, values sliced from one copy of the body, a handful of allocations per
// message, more than ten times faster than encoding/xml (BENCHMARKS.md). The tests keep an
// encoding/xml reference decoder and fuzz both against each other: wherever encoding/xml
// accepts a document, Decode returns the same message.
//
// # Absent values
//
// The message types carry every element and attribute of the feed's schema, and a value
// the feed left out never reads as a value with another meaning. Where the type's zero
// means the same as "absent" (no favourite flag, an empty name, a zero time.Time, a
// cashout status or team of 0, which the feed does not use) the zero stands for it. Where
// it does not, the field says so: a Has flag beside odds, probabilities, void reasons and
// the AAMS id; SportEventStatus.Fields for a status's scores, counts and statistics (zero
// outs or zero cards are values); and a documented neutral value where one exists
// (SettledOutcome.DeadHeatFactor is 1 when absent: no dead heat). Each field's doc says
// which. Rare sub-elements (sport_event_status, odds_generation_properties) are pointers,
// nil when absent.
package feed
