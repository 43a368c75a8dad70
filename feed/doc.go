// Package feed is the protocol layer of an odds-feed consumer in the style of the Unified
// Odds Feed: routing keys, the message model and its decoder, the listener interfaces,
// sessions and transports, and APIError, what the feed's API answers other than 2xx
// (package feedapi is its client).
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
// Cashout messages (the schema's cashout element: an event's status and market
// probabilities for cash-out offers) take the same path to a listener that implements
// CashoutListener as well; a listener that does not is left as it was, and the session
// counts the cashouts it could not take (SessionStats.Unhandled).
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
// # Observer
//
// SessionConfig.Observer is told of every message a session reads (its producer, type
// and size) and of every one it could not route or decode, as it happens, for metrics;
// the otelfeedkit and promfeedkit modules implement it. It is given only bounded values:
// the session (SessionRef, whose Label reads "0:live"), a producer id, a message type.
// Without one, the session pays a nil check per message. The SessionStats count the
// same messages, for the levels a metrics library reads when it collects.
//
// # Required attributes
//
// UnifiedFeed.xsd marks some attributes required. What the decoder does when a message
// lacks one depends on whether the message can still be routed and understood:
//
// Refused (the message goes to OnUnparsableMessage with its raw bytes, as a malformed one
// does, and the error names the element and the attribute):
//   - product and timestamp on every message: without them the recovery manager cannot
//     tell whose message it is or where a recovery must start again, and a listener cannot
//     tell a late message from a current one.
//   - event_id on an event message: without it the message concerns no event, and what
//     it settles, stops or prices cannot be applied to any.
//   - request_id on snapshot_complete: it is the whole message, the id of the recovery it
//     ends; subscribed on alive, likewise its whole content.
//   - a market's id (in every message) and an outcome's id (in every message that lists
//     outcomes): a line or an outcome that names nothing cannot be priced, stopped,
//     settled, cancelled or rolled back, and any guess would act on another line's bets.
//   - a settled outcome's result: a settlement is its result; one read as any value
//     (won, lost, undecided) would pay or void bets on a guess that cannot be undone,
//     while the unparsable message lets the host ask a recovery for the event.
//
// Accepted and flagged (the message is delivered; the absent value reads as the zero its
// field's doc gives; Header.SchemaViolations names what was missing; the session counts
// the message in SessionStats.SchemaViolations): bet_stop's groups, bet_settlement's
// certainty, fixture_change's start_time, sport_event_status's status and match_status,
// and the attributes of period scores, results and statistics counts (a count that lacks
// home or away gets no StatusField bit). Each says less than the schema promises, but the
// rest of the message (the odds of every market, a settlement's outcomes) is sound, and
// refusing it would lose what the feed did send. A listener that must not act on an
// incomplete message checks SchemaViolations; the constants' docs say what each absent
// value reads as.
//
// Accepted as absent, with no flag: every attribute the schema leaves optional (see
// "Absent values").
//
// # Decoding
//
// Decode is a schema-specific decoder over the raw bytes (see internal/xmlscan): no
// reflection, values sliced from one copy of the body, a handful of allocations per
// message, more than ten times faster than encoding/xml (BENCHMARKS.md). It accepts exactly
// the documents encoding/xml (strict, reading to the end) accepts, less those that break
// XML rules encoding/xml does not check (an attribute twice in a tag, a character XML
// forbids anywhere, anything but whitespace, comments and processing instructions outside
// the one root element), and whose values parse; where both accept, the messages are
// equal. A body that is not well-formed XML (a mismatched end tag, an unescaped '<' in a
// value, invalid UTF-8, an XML declaration of another version or encoding) is refused with
// the fault and its byte offset. The tests keep an encoding/xml reference decoder and fuzz
// both against each other, comparing acceptance as well as values.
//
// Values are read in the schema's lexical spaces: ids may be negative and span int64;
// URNs follow the grammar Sportradar's SDKs enforce (prefix of letters, type of letters,
// '_' and '2', a nonzero integer id); doubles are xs:doubles, so INF, -INF and NaN decode
// to the infinities and NaN (see OddsOutcome), and forms the schema has not (Infinity,
// 0x1p-2, 1_000) are refused.
//
// # Absent values
//
// The message types carry every element and attribute of the feed's schema (the tests walk
// UnifiedFeed.xsd as the .NET SDK 3.12.0 publishes it, to keep it so) and a few beyond it:
// the cashout message, a market's name, a status's batting_team and tries count. A value
// the feed left out never reads as a value with another meaning. Where the type's zero
// means the same as "absent" (no favourite flag, an empty name, a zero time.Time, a
// cashout status or team of 0, which the feed does not use) the zero stands for it. Where
// it does not, the field says so: a Has flag beside odds, probabilities, void reasons,
// each-way factors and the AAMS id; SportEventStatus.Fields for a status's scores, counts
// and statistics (zero outs or zero cards are values); and a documented neutral value
// where one exists (SettledOutcome.DeadHeatFactor is 1 when absent: no dead heat). Each
// field's doc says which. Rare sub-elements (sport_event_status,
// odds_generation_properties) are pointers, nil when absent.
package feed
