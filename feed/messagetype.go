package feed

import "fmt"

// MessageType names a kind of feed message, as the routing key's type segment and the
// message's root element name it.
type MessageType uint8

// The feed's message types. Event messages concern one sport event and go to the
// OddsFeedListener; system messages (alive, snapshot_complete) concern a producer.
const (
	MessageUnknown MessageType = iota
	MessageOddsChange
	MessageBetStop
	MessageBetSettlement
	MessageRollbackBetSettlement
	MessageBetCancel
	MessageRollbackBetCancel
	MessageFixtureChange
	// MessageCashout is the cashout message: the probabilities of an event's markets for
	// a customer's cash-out offers. Listeners receive it through CashoutListener.
	MessageCashout
	MessageAlive
	MessageSnapshotComplete
	numMessageTypes
)

var messageTypeNames = [numMessageTypes]string{
	MessageUnknown:               "unknown",
	MessageOddsChange:            "odds_change",
	MessageBetStop:               "bet_stop",
	MessageBetSettlement:         "bet_settlement",
	MessageRollbackBetSettlement: "rollback_bet_settlement",
	MessageBetCancel:             "bet_cancel",
	MessageRollbackBetCancel:     "rollback_bet_cancel",
	MessageFixtureChange:         "fixture_change",
	MessageCashout:               "cashout",
	MessageAlive:                 "alive",
	MessageSnapshotComplete:      "snapshot_complete",
}

// MessageTypes lists every known message type, event types first.
func MessageTypes() []MessageType {
	out := make([]MessageType, 0, numMessageTypes-1)
	for t := MessageOddsChange; t < numMessageTypes; t++ {
		out = append(out, t)
	}
	return out
}

// String returns the feed's name for t, such as "odds_change".
func (t MessageType) String() string {
	if t >= numMessageTypes {
		return "unknown"
	}
	return messageTypeNames[t]
}

// MarshalText implements encoding.TextMarshaler: the feed's name, as String.
func (t MessageType) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler; an unknown name is an error.
func (t *MessageType) UnmarshalText(b []byte) error {
	v := ParseMessageType(string(b))
	if v == MessageUnknown && string(b) != "unknown" {
		return fmt.Errorf("feed: unknown message type %q", b)
	}
	*t = v
	return nil
}

// IsSystem reports whether t is a producer-level message (alive, snapshot_complete) rather
// than an event message.
func (t MessageType) IsSystem() bool {
	return t == MessageAlive || t == MessageSnapshotComplete
}

// ParseMessageType returns the type named s, or MessageUnknown.
func ParseMessageType(s string) MessageType {
	switch s {
	case "odds_change":
		return MessageOddsChange
	case "bet_stop":
		return MessageBetStop
	case "bet_settlement":
		return MessageBetSettlement
	case "rollback_bet_settlement":
		return MessageRollbackBetSettlement
	case "bet_cancel":
		return MessageBetCancel
	case "rollback_bet_cancel":
		return MessageRollbackBetCancel
	case "fixture_change":
		return MessageFixtureChange
	case "cashout":
		return MessageCashout
	case "alive":
		return MessageAlive
	case "snapshot_complete":
		return MessageSnapshotComplete
	}
	return MessageUnknown
}
