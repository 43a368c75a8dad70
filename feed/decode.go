package feed

import "fmt"

// Decode decodes body as a message of type t. It returns a *DecodeError (which matches
// ErrMalformedMessage) when body is not a well-formed message of that type.
//
// Decode is a schema-specific decoder over the raw bytes: it allocates one copy of the body
// and the message's slices, and costs a small fraction of encoding/xml's Unmarshal (see
// BENCHMARKS.md). It accepts exactly what encoding/xml (strict, reading the whole body)
// accepts, less what breaks XML rules encoding/xml does not check (an attribute twice in a
// tag, a character XML forbids, content outside the root element), and parses it to the
// same elements and attribute values (the tests fuzz one against the other, acceptance
// included). Values are read strictly: numbers must be numbers (surrounding
// whitespace aside) and booleans 0, 1, true or false, where encoding/xml's own field types
// would let an empty string or "T" through. It never panics on malformed input.
func Decode(t MessageType, body []byte) (Message, error) {
	return decode(t, body, false)
}

// decode is Decode; with owned, body is known never to change again, and the message's
// strings point into it instead of into a copy.
func decode(t MessageType, body []byte, owned bool) (Message, error) {
	d := decoder{owned: owned}
	var m Message
	switch t {
	case MessageOddsChange:
		v := new(OddsChange)
		d.oddsChange(body, v)
		m = v
	case MessageBetStop:
		v := new(BetStop)
		d.betStop(body, v)
		m = v
	case MessageBetSettlement:
		v := new(BetSettlement)
		d.betSettlement(body, v)
		m = v
	case MessageRollbackBetSettlement:
		v := new(RollbackBetSettlement)
		d.rollbackBetSettlement(body, v)
		m = v
	case MessageBetCancel:
		v := new(BetCancel)
		d.betCancel(body, v)
		m = v
	case MessageRollbackBetCancel:
		v := new(RollbackBetCancel)
		d.rollbackBetCancel(body, v)
		m = v
	case MessageFixtureChange:
		v := new(FixtureChange)
		d.fixtureChange(body, v)
		m = v
	case MessageCashout:
		v := new(Cashout)
		d.cashout(body, v)
		m = v
	case MessageAlive:
		v := new(Alive)
		d.alive(body, v)
		m = v
	case MessageSnapshotComplete:
		v := new(SnapshotComplete)
		d.snapshotComplete(body, v)
		m = v
	default:
		return nil, &DecodeError{Type: t, Msg: fmt.Sprintf("no decoder for message type %d", t)}
	}
	if d.err != nil {
		return nil, d.err
	}
	return m, nil
}

// decodeAs is Decode for a type known at compile time.
func decodeAs[M Message](t MessageType, body []byte) (M, error) {
	m, err := Decode(t, body)
	if err != nil {
		var zero M
		return zero, err
	}
	return m.(M), nil
}

// DecodeOddsChange decodes an odds_change message.
func DecodeOddsChange(body []byte) (*OddsChange, error) {
	return decodeAs[*OddsChange](MessageOddsChange, body)
}

// DecodeBetStop decodes a bet_stop message.
func DecodeBetStop(body []byte) (*BetStop, error) { return decodeAs[*BetStop](MessageBetStop, body) }

// DecodeBetSettlement decodes a bet_settlement message.
func DecodeBetSettlement(body []byte) (*BetSettlement, error) {
	return decodeAs[*BetSettlement](MessageBetSettlement, body)
}

// DecodeRollbackBetSettlement decodes a rollback_bet_settlement message.
func DecodeRollbackBetSettlement(body []byte) (*RollbackBetSettlement, error) {
	return decodeAs[*RollbackBetSettlement](MessageRollbackBetSettlement, body)
}

// DecodeBetCancel decodes a bet_cancel message.
func DecodeBetCancel(body []byte) (*BetCancel, error) {
	return decodeAs[*BetCancel](MessageBetCancel, body)
}

// DecodeRollbackBetCancel decodes a rollback_bet_cancel message.
func DecodeRollbackBetCancel(body []byte) (*RollbackBetCancel, error) {
	return decodeAs[*RollbackBetCancel](MessageRollbackBetCancel, body)
}

// DecodeFixtureChange decodes a fixture_change message.
func DecodeFixtureChange(body []byte) (*FixtureChange, error) {
	return decodeAs[*FixtureChange](MessageFixtureChange, body)
}

// DecodeCashout decodes a cashout message.
func DecodeCashout(body []byte) (*Cashout, error) { return decodeAs[*Cashout](MessageCashout, body) }

// DecodeAlive decodes an alive message.
func DecodeAlive(body []byte) (*Alive, error) { return decodeAs[*Alive](MessageAlive, body) }

// DecodeSnapshotComplete decodes a snapshot_complete message.
func DecodeSnapshotComplete(body []byte) (*SnapshotComplete, error) {
	return decodeAs[*SnapshotComplete](MessageSnapshotComplete, body)
}
