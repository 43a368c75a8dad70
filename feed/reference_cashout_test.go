package feed

import (
	"bytes"
	"encoding/xml"
)

// The encoding/xml reference for cashout, and for the required attributes a message may
// lack (Header.SchemaViolations), beside referenceDecode: a cashout is an odds change's
// status and odds under another root.

type refCashout struct {
	XMLName xml.Name `xml:"cashout"`
	refHeader
	Status *refEventStat `xml:"sport_event_status"`
	Odds   *refOdds      `xml:"odds"`
}

// referenceCashout decodes body as a cashout with encoding/xml, as referenceDecode does
// the other types: the whole document, with the well-formedness rules encoding/xml lacks.
func referenceCashout(body []byte) (*Cashout, error) {
	if err := referenceWellFormed(body, false); err != nil {
		return nil, err
	}
	var r refCashout
	if err := xml.NewDecoder(bytes.NewReader(body)).Decode(&r); err != nil {
		return nil, err
	}
	var c refChecker
	m := &Cashout{Header: c.header(r.refHeader, true)}
	if s := r.Status; s != nil {
		m.EventStatus = c.eventStatus(s)
		m.SchemaViolations = refStatusViolations(s)
	}
	if o := r.Odds; o != nil {
		m.BettingStatus, m.BetstopReason = o.BettingStatus.v, o.BetstopReason.v
		m.Markets = c.oddsMarkets(o)
	}
	if c.err != nil {
		return nil, c.err
	}
	return m, nil
}

// oddsMarkets converts the market lines of an odds element, as referenceDecode does for
// an odds change.
func (c *refChecker) oddsMarkets(o *refOdds) []OddsMarket {
	var markets []OddsMarket
	for _, rm := range o.Markets {
		ref := c.marketRef(rm.refMarketRef)
		md := rm.Metadata
		mk := OddsMarket{ID: ref.ID, Specifiers: ref.Specifiers, ExtendedSpecifiers: ref.ExtendedSpecifiers,
			Status: MarketActive, Favourite: rm.Favourite.v, CashoutStatus: CashoutStatus(rm.CashoutStatus.v),
			Metadata: MarketMetadata{NextBetstop: md.NextBetstop.v, StartTime: md.StartTime.v, EndTime: md.EndTime.v,
				AAMSID: md.AAMSID.v, HasAAMSID: md.AAMSID.set}}
		if rm.Status.set {
			mk.Status = rm.Status.v
		}
		for _, ro := range rm.Outcomes {
			c.require(ro.ID.set, "outcome id")
			out := OddsOutcome{ID: ro.ID.v, Odds: ro.Odds.v, HasOdds: ro.Odds.set,
				Probability: ro.Probabilities.v, HasProbability: ro.Probabilities.set, Team: ro.Team.v}
			a := AdditionalProbabilities{
				Win: ro.WinProbabilities.v, HasWin: ro.WinProbabilities.set,
				Lose: ro.LoseProbabilities.v, HasLose: ro.LoseProbabilities.set,
				HalfWin: ro.HalfWinProbabilities.v, HasHalfWin: ro.HalfWinProbabilities.set,
				HalfLose: ro.HalfLoseProbabilities.v, HasHalfLose: ro.HalfLoseProbabilities.set,
				Refund: ro.RefundProbabilities.v, HasRefund: ro.RefundProbabilities.set}
			if a.HasWin || a.HasLose || a.HasHalfWin || a.HasHalfLose || a.HasRefund {
				out.Additional = &a
			}
			if ro.Active.set {
				out.Inactive = !ro.Active.v
			}
			mk.Outcomes = append(mk.Outcomes, out)
		}
		markets = append(markets, mk)
	}
	return markets
}

// refStatusViolations returns the required attributes s lacks.
func refStatusViolations(s *refEventStat) SchemaViolation {
	var v SchemaViolation
	v |= lacking(s.Status.set, MissingStatus) | lacking(s.MatchStatus.set, MissingMatchStatus)
	for _, group := range s.PeriodScores {
		for _, p := range group.Scores {
			v |= lacking(p.Number.set, MissingPeriodNumber) | lacking(p.MatchStatusCode.set, MissingPeriodMatchStatusCode) |
				lacking(p.HomeScore.set && p.AwayScore.set, MissingPeriodScore)
		}
	}
	for _, group := range s.Results {
		for _, r := range group.Results {
			v |= lacking(r.MatchStatusCode.set, MissingResultMatchStatusCode) |
				lacking(r.HomeScore.set && r.AwayScore.set, MissingResultScore)
		}
	}
	stats := s.Statistics
	for _, tc := range []*refTeamCounts{stats.YellowCards, stats.RedCards, stats.YellowRedCards, stats.Corners, stats.GreenCards, stats.Tries} {
		if tc != nil {
			v |= lacking(tc.Home.set && tc.Away.set, MissingStatisticsCount)
		}
	}
	return v
}

// referenceSchemaViolations reads with encoding/xml the required attributes that a
// message of type t, which referenceDecode accepts, lacks: what Decode puts in
// Header.SchemaViolations. (referenceDecode leaves the field zero.)
func referenceSchemaViolations(t MessageType, body []byte) (SchemaViolation, error) {
	if err := referenceWellFormed(body, false); err != nil {
		return 0, err
	}
	unmarshal := func(v any) error { return xml.NewDecoder(bytes.NewReader(body)).Decode(v) }
	switch t {
	case MessageOddsChange:
		var r refOddsChange
		if err := unmarshal(&r); err != nil || r.Status == nil {
			return 0, err
		}
		return refStatusViolations(r.Status), nil
	case MessageCashout:
		var r refCashout
		if err := unmarshal(&r); err != nil || r.Status == nil {
			return 0, err
		}
		return refStatusViolations(r.Status), nil
	case MessageBetStop:
		var r refBetStop
		err := unmarshal(&r)
		return lacking(r.Groups.set, MissingGroups), err
	case MessageBetSettlement:
		var r refBetSettlement
		err := unmarshal(&r)
		return lacking(r.Certainty.set, MissingCertainty), err
	case MessageFixtureChange:
		var r refFixtureChange
		err := unmarshal(&r)
		return lacking(r.StartTime.set, MissingStartTime), err
	}
	return 0, nil
}
