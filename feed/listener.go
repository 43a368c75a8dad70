package feed

import (
	"context"
	"strconv"
	"time"
)

// OddsFeedListener receives the event messages of a session, decoded. Its methods are
// called from the session's dispatcher, never from the goroutine that reads the broker;
// for one event they are called in the order the messages arrived.
//
// A method that returns an error or panics is reported (to SessionConfig.OnError and the
// log) and the stream goes on with the next message. Embed BaseOddsFeedListener to
// implement only the methods you need.
type OddsFeedListener interface {
	OnOddsChange(ctx context.Context, m *OddsChange) error
	OnBetStop(ctx context.Context, m *BetStop) error
	OnBetSettlement(ctx context.Context, m *BetSettlement) error
	OnRollbackBetSettlement(ctx context.Context, m *RollbackBetSettlement) error
	OnBetCancel(ctx context.Context, m *BetCancel) error
	OnRollbackBetCancel(ctx context.Context, m *RollbackBetCancel) error
	OnFixtureChange(ctx context.Context, m *FixtureChange) error
	// OnUnparsableMessage receives a message whose routing key or body could not be read,
	// with its raw bytes and the reason.
	OnUnparsableMessage(ctx context.Context, m *UnparsableMessage) error
}

// CashoutListener is implemented by an OddsFeedListener that wants cashout messages. It
// is a separate interface so that adding the message type broke no listener: a dispatcher
// calls OnCashout when its listener implements it, from the same goroutines and in the
// same per-event order as the other methods, with the same reporting of errors and
// panics. A cashout for a listener that does not implement it is decoded (a body that
// does not decode still reaches OnUnparsableMessage) and then counted in
// SessionStats.Unhandled instead of delivered.
type CashoutListener interface {
	OnCashout(ctx context.Context, m *Cashout) error
}

// UnparsableMessage is a message that could not be decoded, kept whole.
type UnparsableMessage struct {
	RoutingKey string    // the routing key as received
	Body       []byte    // the raw body
	ReceivedAt time.Time // when the transport received it
	Event      URN       // from the routing key when the key could be parsed
	Err        error     // why: a *RoutingKeyError, a *DecodeError or ErrBodyTooLarge
}

// GlobalEventsListener receives what concerns the whole feed rather than one event:
// connection state, producer status and recoveries. One is registered per SDK. Embed
// BaseGlobalEventsListener to implement only the methods you need.
type GlobalEventsListener interface {
	// OnConnectionDown reports that session s lost its broker connection; err says why.
	// Each session has a connection of its own.
	OnConnectionDown(ctx context.Context, s SessionRef, err error)
	// OnConnectionUp reports that session s's connection is (re-)established and its
	// queue is bound again.
	OnConnectionUp(ctx context.Context, s SessionRef)
	// OnProducerStatusChange reports a producer going down or coming up, with the reason.
	OnProducerStatusChange(ctx context.Context, s ProducerStatus)
	// OnRecoveryInitiated reports that a recovery request was sent to the feed's API.
	OnRecoveryInitiated(ctx context.Context, r RecoveryInitiated)
	// OnEventRecoveryCompleted reports that the replay of one event's messages is complete.
	OnEventRecoveryCompleted(ctx context.Context, r EventRecoveryCompleted)
}

// SessionRef names a session of an SDK in the global events, so that an operator with
// several sessions (live and prematch, say) knows which one an event concerns.
type SessionRef struct {
	Index    int             // the session's place among the SDK's sessions, from 0
	Interest MessageInterest // the messages the session receives
}

// String names the session, e.g. "session 1 (live messages only)".
func (s SessionRef) String() string {
	return "session " + strconv.Itoa(s.Index) + " (" + s.Interest.String() + ")"
}

// Label names the session in a metric's label: its Index, a colon and a short name of
// its Interest, one of "all", "live", "prematch", "hi", "lo", "virtual" and "matches"
// (SpecifiedMatchesOnly, whatever its events), e.g. "0:live". The label of a session
// whose Index is below 8 is made once, so Label allocates nothing for it; a SessionRef
// is comparable, so that an adapter can also keep the labels it made in a map.
func (s SessionRef) Label() string {
	if s.Index >= 0 && s.Index < len(sessionLabels) {
		return sessionLabels[s.Index][s.Interest.kind]
	}
	return strconv.Itoa(s.Index) + ":" + interestNames[s.Interest.kind]
}

// sessionLabels are the labels of the first sessions, made once: an SDK has a few.
var sessionLabels = func() (labels [8][len(interestNames)]string) {
	for i := range labels {
		for k, name := range interestNames {
			labels[i][k] = strconv.Itoa(i) + ":" + name
		}
	}
	return labels
}()

// ProducerStatus is a producer's state after a change.
type ProducerStatus struct {
	Producer  int
	Down      bool // the producer's messages are not reliable: bets should not be accepted
	Delayed   bool // messages are processed late (see ProcessingQueueDelayViolation)
	Reason    StatusReason
	Timestamp time.Time
	// Session is the session whose news made the change: the one that lost its
	// connection (ConnectionDown). It is nil for a change that no one session makes: a
	// producer's alives and recoveries are followed over every session (an alive counts
	// from whichever session brings it first, a recovery completes once its
	// snapshot_complete has come on each), and its processing delay over all of them.
	Session *SessionRef
}

// StatusReason says why a producer's status changed.
type StatusReason uint8

// Reasons for a producer status change. The first three mean the producer is up.
const (
	FirstRecoveryCompleted         StatusReason = iota + 1 // the first recovery after start completed
	ProcessingQueueDelayStabilized                         // processing caught up with the feed again
	ReturnedFromInactivity                                 // a recovery after an outage completed
	AliveIntervalViolation                                 // alives stopped arriving in time
	ProcessingQueueDelayViolation                          // messages are processed too late
	ConnectionDown                                         // the broker connection was lost
	Other
	// InitialState is the state a producer starts in when the SDK opens: down until its
	// first recovery completes. The recovery manager reports it for every producer it
	// follows, before any other change, so that the first change is never the first news
	// of a producer.
	InitialState
	// ProcessingStalled is a producer taken down because the messages of its recovery
	// were not processed within their bound; it is recovered again. The SDK reports it
	// when a producer's up has been held back longer than feedkit.Config.MaxUpHold (a
	// listener stuck on a message of the recovery), and so does
	// recovery.Manager.RecoverProducer given it (a group's ingress, when a shard has not
	// acknowledged the recovery in time).
	ProcessingStalled
)

var statusReasonNames = map[StatusReason]string{
	FirstRecoveryCompleted:         "FirstRecoveryCompleted",
	ProcessingQueueDelayStabilized: "ProcessingQueueDelayStabilized",
	ReturnedFromInactivity:         "ReturnedFromInactivity",
	AliveIntervalViolation:         "AliveIntervalViolation",
	ProcessingQueueDelayViolation:  "ProcessingQueueDelayViolation",
	ConnectionDown:                 "ConnectionDown",
	Other:                          "Other",
	InitialState:                   "InitialState",
	ProcessingStalled:              "ProcessingStalled",
}

// String returns the reason's name.
func (r StatusReason) String() string {
	if s, ok := statusReasonNames[r]; ok {
		return s
	}
	return "Unknown"
}

// IsUp reports whether the reason means the producer is up: its messages are complete and
// current again.
func (r StatusReason) IsUp() bool {
	return r == FirstRecoveryCompleted || r == ProcessingQueueDelayStabilized || r == ReturnedFromInactivity
}

// RecoveryInitiated describes a recovery request the feed's API accepted.
type RecoveryInitiated struct {
	Producer  int
	RequestID int64
	// Kind says what the feed replays: a producer's messages since After, or one
	// event's current odds or stateful messages.
	Kind RecoveryKind
	// After is where a producer recovery goes back to: the feed replays what it sent
	// since. Zero for an event recovery, which resends the event's current state.
	After time.Time
	// Event is the event of an event recovery; zero for a producer recovery.
	Event URN
}

// RecoveryKind says what a recovery request asks the feed to replay.
type RecoveryKind uint8

// The kinds of recovery.
const (
	// ProducerRecovery replays every message of a producer since a moment.
	ProducerRecovery RecoveryKind = iota
	// EventRecovery resends the current odds of one event (SDK.RecoverEvent).
	EventRecovery
	// EventStatefulRecovery resends the stateful messages of one event: its bet
	// settlements, cancellations and their rollbacks (SDK.RecoverEventStateful).
	EventStatefulRecovery
)

// String names the kind: "producer", "event" or "event stateful".
func (k RecoveryKind) String() string {
	switch k {
	case ProducerRecovery:
		return "producer"
	case EventRecovery:
		return "event"
	case EventStatefulRecovery:
		return "event stateful"
	}
	return "RecoveryKind(" + strconv.Itoa(int(k)) + ")"
}

// EventRecoveryCompleted describes the end of a per-event recovery.
type EventRecoveryCompleted struct {
	Producer  int
	Event     URN
	RequestID int64
}

// BaseOddsFeedListener implements OddsFeedListener with methods that do nothing. Embed it
// in a listener to implement only the methods you need.
type BaseOddsFeedListener struct{}

// OnOddsChange does nothing.
func (BaseOddsFeedListener) OnOddsChange(context.Context, *OddsChange) error { return nil }

// OnBetStop does nothing.
func (BaseOddsFeedListener) OnBetStop(context.Context, *BetStop) error { return nil }

// OnBetSettlement does nothing.
func (BaseOddsFeedListener) OnBetSettlement(context.Context, *BetSettlement) error { return nil }

// OnRollbackBetSettlement does nothing.
func (BaseOddsFeedListener) OnRollbackBetSettlement(context.Context, *RollbackBetSettlement) error {
	return nil
}

// OnBetCancel does nothing.
func (BaseOddsFeedListener) OnBetCancel(context.Context, *BetCancel) error { return nil }

// OnRollbackBetCancel does nothing.
func (BaseOddsFeedListener) OnRollbackBetCancel(context.Context, *RollbackBetCancel) error {
	return nil
}

// OnFixtureChange does nothing.
func (BaseOddsFeedListener) OnFixtureChange(context.Context, *FixtureChange) error { return nil }

// OnUnparsableMessage does nothing.
func (BaseOddsFeedListener) OnUnparsableMessage(context.Context, *UnparsableMessage) error {
	return nil
}

// BaseGlobalEventsListener implements GlobalEventsListener with methods that do nothing.
type BaseGlobalEventsListener struct{}

// OnConnectionDown does nothing.
func (BaseGlobalEventsListener) OnConnectionDown(context.Context, SessionRef, error) {}

// OnConnectionUp does nothing.
func (BaseGlobalEventsListener) OnConnectionUp(context.Context, SessionRef) {}

// OnProducerStatusChange does nothing.
func (BaseGlobalEventsListener) OnProducerStatusChange(context.Context, ProducerStatus) {}

// OnRecoveryInitiated does nothing.
func (BaseGlobalEventsListener) OnRecoveryInitiated(context.Context, RecoveryInitiated) {}

// OnEventRecoveryCompleted does nothing.
func (BaseGlobalEventsListener) OnEventRecoveryCompleted(context.Context, EventRecoveryCompleted) {}
