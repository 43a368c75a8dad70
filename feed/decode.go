package feed

import "fmt"

// Decode decodes body as a message of type t. It returns a *DecodeError (which matches
// ErrMalformedMessage) when body is not a well-formed message of that type.
//
// Decode is a schema-specific decoder over the raw bytes: it allocates one copy of the body
// and the message's slices, and costs a small fraction of encoding/xml's Unmarshal (see
// BENCHMARKS.md). It accepts every document that encoding/xml accepts for the same
// message, with the same result, and never panics on malformed input.
func Decode(t MessageType, body []byte) (Message, error) {
	switch t {
	case MessageOddsChange:
		return nilIfErr(DecodeOddsChange(body))
	case MessageBetStop:
		return nilIfErr(DecodeBetStop(body))
	case MessageBetSettlement:
		return nilIfErr(DecodeBetSettlement(body))
	case MessageRollbackBetSettlement:
		return nilIfErr(DecodeRollbackBetSettlement(body))
	case MessageBetCancel:
		return nilIfErr(DecodeBetCancel(body))
	case MessageRollbackBetCancel:
		return nilIfErr(DecodeRollbackBetCancel(body))
	case MessageFixtureChange:
		return nilIfErr(DecodeFixtureChange(body))
	case MessageAlive:
		return nilIfErr(DecodeAlive(body))
	case MessageSnapshotComplete:
		return nilIfErr(DecodeSnapshotComplete(body))
	}
	return nil, &DecodeError{Type: t, Msg: fmt.Sprintf("no decoder for message type %d", t)}
}

// nilIfErr keeps a typed nil pointer from becoming a non-nil Message.
func nilIfErr[M Message](m M, err error) (Message, error) {
	if err != nil {
		return nil, err
	}
	return m, nil
}

// DecodeOddsChange decodes an odds_change message.
func DecodeOddsChange(body []byte) (*OddsChange, error) {
	var d decoder
	m := new(OddsChange)
	if d.oddsChange(body, m); d.err != nil {
		return nil, d.err
	}
	return m, nil
}

// DecodeBetStop decodes a bet_stop message.
func DecodeBetStop(body []byte) (*BetStop, error) {
	var d decoder
	m := new(BetStop)
	if d.betStop(body, m); d.err != nil {
		return nil, d.err
	}
	return m, nil
}

// DecodeBetSettlement decodes a bet_settlement message.
func DecodeBetSettlement(body []byte) (*BetSettlement, error) {
	var d decoder
	m := new(BetSettlement)
	if d.betSettlement(body, m); d.err != nil {
		return nil, d.err
	}
	return m, nil
}

// DecodeRollbackBetSettlement decodes a rollback_bet_settlement message.
func DecodeRollbackBetSettlement(body []byte) (*RollbackBetSettlement, error) {
	var d decoder
	m := new(RollbackBetSettlement)
	if d.marketRefs(body, MessageRollbackBetSettlement, &m.Header, &m.Markets, nil); d.err != nil {
		return nil, d.err
	}
	return m, nil
}

// DecodeBetCancel decodes a bet_cancel message.
func DecodeBetCancel(body []byte) (*BetCancel, error) {
	var d decoder
	m := new(BetCancel)
	extra := func() bool {
		switch d.an {
		case "start_time":
			m.StartTime = d.millis()
		case "end_time":
			m.EndTime = d.millis()
		case "superceded_by":
			m.SupercededBy = d.urn()
		default:
			return false
		}
		return true
	}
	if d.marketRefs(body, MessageBetCancel, &m.Header, &m.Markets, extra); d.err != nil {
		return nil, d.err
	}
	return m, nil
}

// DecodeRollbackBetCancel decodes a rollback_bet_cancel message.
func DecodeRollbackBetCancel(body []byte) (*RollbackBetCancel, error) {
	var d decoder
	m := new(RollbackBetCancel)
	extra := func() bool {
		switch d.an {
		case "start_time":
			m.StartTime = d.millis()
		case "end_time":
			m.EndTime = d.millis()
		default:
			return false
		}
		return true
	}
	if d.marketRefs(body, MessageRollbackBetCancel, &m.Header, &m.Markets, extra); d.err != nil {
		return nil, d.err
	}
	return m, nil
}

// DecodeFixtureChange decodes a fixture_change message.
func DecodeFixtureChange(body []byte) (*FixtureChange, error) {
	var d decoder
	m := new(FixtureChange)
	if d.fixtureChange(body, m); d.err != nil {
		return nil, d.err
	}
	return m, nil
}

// DecodeAlive decodes an alive message.
func DecodeAlive(body []byte) (*Alive, error) {
	var d decoder
	m := new(Alive)
	if d.alive(body, m); d.err != nil {
		return nil, d.err
	}
	return m, nil
}

// DecodeSnapshotComplete decodes a snapshot_complete message.
func DecodeSnapshotComplete(body []byte) (*SnapshotComplete, error) {
	var d decoder
	m := new(SnapshotComplete)
	if d.snapshotComplete(body, m); d.err != nil {
		return nil, d.err
	}
	return m, nil
}
