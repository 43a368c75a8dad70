package feed

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"time"
)

// The reference decoder: encoding/xml's Unmarshal, with attribute types that parse their
// values with the same functions as the fast decoder. The differential tests and fuzz
// targets compare the fast decoder against it, so the XML handling (entities, quoting,
// whitespace, comments, namespaces, nesting, repeated attributes) is checked against the
// standard library's, while the meaning of each value is defined once.

// refAttr is an attribute value parsed when encoding/xml meets it, as Unmarshal does for a
// field of a basic type: a bad value stops the decode at that attribute.
type refAttr[T any] struct {
	v   T
	set bool
}

func (a *refAttr[T]) parse(s string, parse func(string) (T, error)) error {
	v, err := parse(s)
	if err != nil {
		return err
	}
	a.v, a.set = v, true
	return nil
}

type (
	refInt    struct{ refAttr[int] }
	refInt64  struct{ refAttr[int64] }
	refFloat  struct{ refAttr[float64] }
	refBool   struct{ refAttr[bool] }
	refMillis struct{ refAttr[time.Time] }
	refURN    struct{ refAttr[URN] }
	refString struct{ refAttr[string] }
	refResult struct{ refAttr[OutcomeResult] }
	refStatus struct{ refAttr[MarketStatus] }
)

func (a *refInt) UnmarshalXMLAttr(x xml.Attr) error    { return a.parse(x.Value, parseIntValue) }
func (a *refInt64) UnmarshalXMLAttr(x xml.Attr) error  { return a.parse(x.Value, parseInt64Value) }
func (a *refFloat) UnmarshalXMLAttr(x xml.Attr) error  { return a.parse(x.Value, parseFloatValue) }
func (a *refBool) UnmarshalXMLAttr(x xml.Attr) error   { return a.parse(x.Value, parseBoolValue) }
func (a *refMillis) UnmarshalXMLAttr(x xml.Attr) error { return a.parse(x.Value, parseMillisValue) }
func (a *refURN) UnmarshalXMLAttr(x xml.Attr) error    { return a.parse(x.Value, parseURNValue) }
func (a *refResult) UnmarshalXMLAttr(x xml.Attr) error { return a.parse(x.Value, parseResultValue) }
func (a *refStatus) UnmarshalXMLAttr(x xml.Attr) error {
	return a.parse(x.Value, parseMarketStatusValue)
}
func (a *refString) UnmarshalXMLAttr(x xml.Attr) error {
	a.v, a.set = x.Value, true
	return nil
}

func parseResultValue(s string) (OutcomeResult, error) {
	switch trimSpace(s) {
	case "1":
		return ResultWon, nil
	case "0":
		return ResultLost, nil
	case "-1":
		return ResultUndecided, nil
	}
	return 0, errBadNumber
}

type refHeader struct {
	Product   refInt    `xml:"product,attr"`
	EventID   refURN    `xml:"event_id,attr"`
	Timestamp refMillis `xml:"timestamp,attr"`
	RequestID refInt64  `xml:"request_id,attr"`
}

type refOddsChange struct {
	XMLName xml.Name `xml:"odds_change"`
	refHeader
	Reason refInt        `xml:"odds_change_reason,attr"`
	Status *refEventStat `xml:"sport_event_status"`
	Odds   *refOdds      `xml:"odds"`
}

type refEventStat struct {
	Status      refInt   `xml:"status,attr"`
	Reporting   refInt   `xml:"reporting,attr"`
	MatchStatus refInt   `xml:"match_status,attr"`
	HomeScore   refFloat `xml:"home_score,attr"`
	AwayScore   refFloat `xml:"away_score,attr"`
	Clock       struct {
		MatchTime     refString `xml:"match_time,attr"`
		StoppageTime  refString `xml:"stoppage_time,attr"`
		RemainingTime refString `xml:"remaining_time,attr"`
		Stopped       refBool   `xml:"stopped,attr"`
	} `xml:"clock"`
	PeriodScores []struct {
		Scores []struct {
			Number          refInt   `xml:"number,attr"`
			MatchStatusCode refInt   `xml:"match_status_code,attr"`
			HomeScore       refFloat `xml:"home_score,attr"`
			AwayScore       refFloat `xml:"away_score,attr"`
		} `xml:"period_score"`
	} `xml:"period_scores"`
}

type refOdds struct {
	BettingStatus refInt `xml:"betting_status,attr"`
	BetstopReason refInt `xml:"betstop_reason,attr"`
	Markets       []struct {
		refMarketRef
		Status    refStatus `xml:"status,attr"`
		Favourite refBool   `xml:"favourite,attr"`
		Outcomes  []struct {
			ID            refString `xml:"id,attr"`
			Odds          refFloat  `xml:"odds,attr"`
			Probabilities refFloat  `xml:"probabilities,attr"`
			Active        refBool   `xml:"active,attr"`
		} `xml:"outcome"`
	} `xml:"market"`
}

type refMarketRef struct {
	ID                 refInt    `xml:"id,attr"`
	Specifiers         refString `xml:"specifiers,attr"`
	ExtendedSpecifiers refString `xml:"extended_specifiers,attr"`
	VoidReason         refInt    `xml:"void_reason,attr"`
}

type refBetStop struct {
	XMLName xml.Name `xml:"bet_stop"`
	refHeader
	Groups       refString `xml:"groups,attr"`
	MarketStatus refStatus `xml:"market_status,attr"`
}

type refBetSettlement struct {
	XMLName xml.Name `xml:"bet_settlement"`
	refHeader
	Certainty refInt `xml:"certainty,attr"`
	Outcomes  []struct {
		Markets []struct {
			refMarketRef
			Outcomes []struct {
				ID             refString `xml:"id,attr"`
				Result         refResult `xml:"result,attr"`
				VoidFactor     refFloat  `xml:"void_factor,attr"`
				DeadHeatFactor refFloat  `xml:"dead_heat_factor,attr"`
			} `xml:"outcome"`
		} `xml:"market"`
	} `xml:"outcomes"`
}

type refMarketRefs struct {
	XMLName xml.Name
	refHeader
	StartTime    refMillis      `xml:"start_time,attr"`
	EndTime      refMillis      `xml:"end_time,attr"`
	SupercededBy refURN         `xml:"superceded_by,attr"`
	Markets      []refMarketRef `xml:"market"`
}

type refFixtureChange struct {
	XMLName xml.Name `xml:"fixture_change"`
	refHeader
	ChangeType   refInt    `xml:"change_type,attr"`
	StartTime    refMillis `xml:"start_time,attr"`
	NextLiveTime refMillis `xml:"next_live_time,attr"`
}

type refAlive struct {
	XMLName xml.Name `xml:"alive"`
	refHeader
	Subscribed refBool `xml:"subscribed,attr"`
}

type refSnapshotComplete struct {
	XMLName xml.Name `xml:"snapshot_complete"`
	refHeader
}

// refChecker remembers the first required attribute found missing.
type refChecker struct{ err error }

func (c *refChecker) require(set bool, what string) {
	if !set && c.err == nil {
		c.err = errors.New(what + " missing")
	}
}

func (c *refChecker) header(r refHeader, event bool) Header {
	c.require(r.Product.set, "product")
	c.require(r.Timestamp.set, "timestamp")
	if event {
		c.require(r.EventID.set, "event_id")
	}
	return Header{Producer: r.Product.v, Event: r.EventID.v, Timestamp: r.Timestamp.v, RequestID: r.RequestID.v}
}

func (c *refChecker) marketRef(r refMarketRef) MarketRef {
	c.require(r.ID.set, "market id")
	return MarketRef{ID: r.ID.v, Specifiers: Specifiers(r.Specifiers.v),
		ExtendedSpecifiers: Specifiers(r.ExtendedSpecifiers.v), VoidReason: r.VoidReason.v}
}

// referenceDecode decodes body as a message of type t with encoding/xml.
func referenceDecode(t MessageType, body []byte) (Message, error) {
	unmarshal := func(v any) error { return xml.NewDecoder(bytes.NewReader(body)).Decode(v) }
	var c refChecker
	var m Message
	switch t {
	case MessageOddsChange:
		var r refOddsChange
		if err := unmarshal(&r); err != nil {
			return nil, err
		}
		oc := &OddsChange{Header: c.header(r.refHeader, true), ChangeReason: r.Reason.v}
		if s := r.Status; s != nil {
			st := &SportEventStatus{Status: s.Status.v, Reporting: s.Reporting.v, MatchStatus: s.MatchStatus.v,
				HomeScore: s.HomeScore.v, AwayScore: s.AwayScore.v,
				Clock: EventClock{MatchTime: s.Clock.MatchTime.v, StoppageTime: s.Clock.StoppageTime.v,
					RemainingTime: s.Clock.RemainingTime.v, Stopped: s.Clock.Stopped.v}}
			for _, group := range s.PeriodScores {
				for _, p := range group.Scores {
					st.PeriodScores = append(st.PeriodScores, PeriodScore{Number: p.Number.v,
						MatchStatusCode: p.MatchStatusCode.v, HomeScore: p.HomeScore.v, AwayScore: p.AwayScore.v})
				}
			}
			oc.EventStatus = st
		}
		if o := r.Odds; o != nil {
			oc.BettingStatus, oc.BetstopReason = o.BettingStatus.v, o.BetstopReason.v
			for _, rm := range o.Markets {
				ref := c.marketRef(rm.refMarketRef)
				mk := OddsMarket{ID: ref.ID, Specifiers: ref.Specifiers, ExtendedSpecifiers: ref.ExtendedSpecifiers,
					Status: MarketActive, Favourite: rm.Favourite.v}
				if rm.Status.set {
					mk.Status = rm.Status.v
				}
				for _, ro := range rm.Outcomes {
					c.require(ro.ID.set, "outcome id")
					out := OddsOutcome{ID: ro.ID.v, Odds: ro.Odds.v, Probability: ro.Probabilities.v}
					if ro.Active.set {
						out.Inactive = !ro.Active.v
					}
					mk.Outcomes = append(mk.Outcomes, out)
				}
				oc.Markets = append(oc.Markets, mk)
			}
		}
		m = oc
	case MessageBetStop:
		var r refBetStop
		if err := unmarshal(&r); err != nil {
			return nil, err
		}
		bs := &BetStop{Header: c.header(r.refHeader, true), Groups: r.Groups.v, MarketStatus: MarketSuspended}
		if r.MarketStatus.set {
			bs.MarketStatus = r.MarketStatus.v
		}
		m = bs
	case MessageBetSettlement:
		var r refBetSettlement
		if err := unmarshal(&r); err != nil {
			return nil, err
		}
		s := &BetSettlement{Header: c.header(r.refHeader, true), Certainty: r.Certainty.v}
		for _, group := range r.Outcomes {
			for _, rm := range group.Markets {
				ref := c.marketRef(rm.refMarketRef)
				mk := SettledMarket{ID: ref.ID, Specifiers: ref.Specifiers,
					ExtendedSpecifiers: ref.ExtendedSpecifiers, VoidReason: ref.VoidReason}
				for _, ro := range rm.Outcomes {
					c.require(ro.ID.set, "outcome id")
					c.require(ro.Result.set, "result")
					mk.Outcomes = append(mk.Outcomes, SettledOutcome{ID: ro.ID.v, Result: ro.Result.v,
						VoidFactor: ro.VoidFactor.v, DeadHeatFactor: ro.DeadHeatFactor.v})
				}
				s.Markets = append(s.Markets, mk)
			}
		}
		m = s
	case MessageRollbackBetSettlement, MessageBetCancel, MessageRollbackBetCancel:
		var r refMarketRefs
		if err := unmarshal(&r); err != nil {
			return nil, err
		}
		if r.XMLName.Local != t.String() {
			return nil, fmt.Errorf("root element %s", r.XMLName.Local)
		}
		h := c.header(r.refHeader, true)
		var refs []MarketRef
		for _, rm := range r.Markets {
			refs = append(refs, c.marketRef(rm))
		}
		switch t {
		case MessageRollbackBetSettlement:
			m = &RollbackBetSettlement{Header: h, Markets: refs}
		case MessageBetCancel:
			m = &BetCancel{Header: h, StartTime: r.StartTime.v, EndTime: r.EndTime.v, Markets: refs,
				SupercededBy: r.SupercededBy.v}
		default:
			m = &RollbackBetCancel{Header: h, StartTime: r.StartTime.v, EndTime: r.EndTime.v, Markets: refs}
		}
	case MessageFixtureChange:
		var r refFixtureChange
		if err := unmarshal(&r); err != nil {
			return nil, err
		}
		m = &FixtureChange{Header: c.header(r.refHeader, true), ChangeType: r.ChangeType.v,
			StartTime: r.StartTime.v, NextLiveTime: r.NextLiveTime.v}
	case MessageAlive:
		var r refAlive
		if err := unmarshal(&r); err != nil {
			return nil, err
		}
		c.require(r.Subscribed.set, "subscribed")
		m = &Alive{Header: c.header(r.refHeader, false), Subscribed: r.Subscribed.v}
	case MessageSnapshotComplete:
		var r refSnapshotComplete
		if err := unmarshal(&r); err != nil {
			return nil, err
		}
		c.require(r.RequestID.set, "request_id")
		m = &SnapshotComplete{Header: c.header(r.refHeader, false)}
	default:
		return nil, fmt.Errorf("no reference decoder for %s", t)
	}
	if c.err != nil {
		return nil, c.err
	}
	return m, nil
}

// referencePeek reads the root element's start tag with encoding/xml.
func referencePeek(body []byte) (Peeked, error) {
	d := xml.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := d.Token()
		if err != nil {
			return Peeked{}, err
		}
		start, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		p := Peeked{Type: ParseMessageType(start.Name.Local)}
		for _, a := range start.Attr {
			switch a.Name.Local {
			case "product":
				if p.Producer, err = parseIntValue(a.Value); err != nil {
					return Peeked{}, err
				}
			case "request_id":
				if p.RequestID, err = parseInt64Value(a.Value); err != nil {
					return Peeked{}, err
				}
			}
		}
		return p, nil
	}
}
