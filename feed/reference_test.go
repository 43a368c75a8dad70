package feed

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"time"

	"github.com/feedkit/feedkit/internal/xmlscan/xmlref"
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
	refInt8   struct{ refAttr[int8] }
)

func (a *refInt) UnmarshalXMLAttr(x xml.Attr) error    { return a.parse(x.Value, parseIntValue) }
func (a *refInt64) UnmarshalXMLAttr(x xml.Attr) error  { return a.parse(x.Value, parseInt64Value) }
func (a *refFloat) UnmarshalXMLAttr(x xml.Attr) error  { return a.parse(x.Value, parseFloatValue) }
func (a *refBool) UnmarshalXMLAttr(x xml.Attr) error   { return a.parse(x.Value, parseBoolValue) }
func (a *refMillis) UnmarshalXMLAttr(x xml.Attr) error { return a.parse(x.Value, parseMillisValue) }
func (a *refURN) UnmarshalXMLAttr(x xml.Attr) error    { return a.parse(x.Value, parseURNValue) }
func (a *refResult) UnmarshalXMLAttr(x xml.Attr) error { return a.parse(x.Value, parseResultValue) }
func (a *refInt8) UnmarshalXMLAttr(x xml.Attr) error   { return a.parse(x.Value, parseInt8Value) }
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
	Reason     refInt        `xml:"odds_change_reason,attr"`
	Status     *refEventStat `xml:"sport_event_status"`
	Generation *struct {
		ExpectedTotals    refFloat `xml:"expected_totals,attr"`
		ExpectedSupremacy refFloat `xml:"expected_supremacy,attr"`
	} `xml:"odds_generation_properties"`
	Odds *refOdds `xml:"odds"`
}

type refEventStat struct {
	Status             refInt    `xml:"status,attr"`
	Reporting          refInt    `xml:"reporting,attr"`
	MatchStatus        refInt    `xml:"match_status,attr"`
	HomeScore          refFloat  `xml:"home_score,attr"`
	AwayScore          refFloat  `xml:"away_score,attr"`
	HomePenaltyScore   refInt    `xml:"home_penalty_score,attr"`
	AwayPenaltyScore   refInt    `xml:"away_penalty_score,attr"`
	HomeGameScore      refInt    `xml:"home_gamescore,attr"`
	AwayGameScore      refInt    `xml:"away_gamescore,attr"`
	HomeLegScore       refInt    `xml:"home_legscore,attr"`
	AwayLegScore       refInt    `xml:"away_legscore,attr"`
	CurrentServer      refInt    `xml:"current_server,attr"`
	ExpediteMode       refBool   `xml:"expedite_mode,attr"`
	Tiebreak           refBool   `xml:"tiebreak,attr"`
	HomeSuspend        refInt    `xml:"home_suspend,attr"`
	AwaySuspend        refInt    `xml:"away_suspend,attr"`
	Balls              refInt    `xml:"balls,attr"`
	Strikes            refInt    `xml:"strikes,attr"`
	Outs               refInt    `xml:"outs,attr"`
	Bases              refString `xml:"bases,attr"`
	HomeBatter         refInt    `xml:"home_batter,attr"`
	AwayBatter         refInt    `xml:"away_batter,attr"`
	Possession         refInt    `xml:"possession,attr"`
	Position           refInt    `xml:"position,attr"`
	Try                refInt    `xml:"try,attr"`
	Yards              refInt    `xml:"yards,attr"`
	Throw              refInt    `xml:"throw,attr"`
	Visit              refInt    `xml:"visit,attr"`
	RemainingReds      refInt    `xml:"remaining_reds,attr"`
	Delivery           refInt    `xml:"delivery,attr"`
	HomeRemainingBowls refInt    `xml:"home_remaining_bowls,attr"`
	AwayRemainingBowls refInt    `xml:"away_remaining_bowls,attr"`
	CurrentEnd         refInt    `xml:"current_end,attr"`
	Innings            refInt    `xml:"innings,attr"`
	Over               refInt    `xml:"over,attr"`
	HomePenaltyRuns    refInt    `xml:"home_penalty_runs,attr"`
	AwayPenaltyRuns    refInt    `xml:"away_penalty_runs,attr"`
	HomeDismissals     refInt    `xml:"home_dismissals,attr"`
	AwayDismissals     refInt    `xml:"away_dismissals,attr"`
	CurrentCTTeam      refInt    `xml:"current_ct_team,attr"`
	Pitcher            refString `xml:"pitcher,attr"`
	Batter             refString `xml:"batter,attr"`
	PitchCount         refInt    `xml:"pitch_count,attr"`
	PitchesSeen        refInt    `xml:"pitches_seen,attr"`
	TotalHits          refInt    `xml:"total_hits,attr"`
	TotalPitches       refInt    `xml:"total_pitches,attr"`
	HomeDriveCount     refInt    `xml:"home_drive_count,attr"`
	AwayDriveCount     refInt    `xml:"away_drive_count,attr"`
	HomePlayCount      refInt    `xml:"home_play_count,attr"`
	AwayPlayCount      refInt    `xml:"away_play_count,attr"`
	BattingTeam        refInt    `xml:"batting_team,attr"`
	PeriodOfLeader     refInt    `xml:"period_of_leader,attr"`
	Clock              struct {
		MatchTime             refString `xml:"match_time,attr"`
		StoppageTime          refString `xml:"stoppage_time,attr"`
		StoppageTimeAnnounced refString `xml:"stoppage_time_announced,attr"`
		RemainingTime         refString `xml:"remaining_time,attr"`
		RemainingTimeInPeriod refString `xml:"remaining_time_in_period,attr"`
		Stopped               refBool   `xml:"stopped,attr"`
	} `xml:"clock"`
	PeriodScores []struct {
		Scores []struct {
			Number          refInt   `xml:"number,attr"`
			MatchStatusCode refInt   `xml:"match_status_code,attr"`
			HomeScore       refFloat `xml:"home_score,attr"`
			AwayScore       refFloat `xml:"away_score,attr"`
		} `xml:"period_score"`
	} `xml:"period_scores"`
	Results []struct {
		Results []struct {
			MatchStatusCode refInt   `xml:"match_status_code,attr"`
			HomeScore       refFloat `xml:"home_score,attr"`
			AwayScore       refFloat `xml:"away_score,attr"`
		} `xml:"result"`
	} `xml:"results"`
	Statistics struct {
		YellowCards    *refTeamCounts `xml:"yellow_cards"`
		RedCards       *refTeamCounts `xml:"red_cards"`
		YellowRedCards *refTeamCounts `xml:"yellow_red_cards"`
		Corners        *refTeamCounts `xml:"corners"`
		GreenCards     *refTeamCounts `xml:"green_cards"`
		Tries          *refTeamCounts `xml:"tries"`
	} `xml:"statistics"`
}

type refTeamCounts struct {
	Home refInt `xml:"home,attr"`
	Away refInt `xml:"away,attr"`
}

type refOdds struct {
	BettingStatus refInt `xml:"betting_status,attr"`
	BetstopReason refInt `xml:"betstop_reason,attr"`
	Markets       []struct {
		refMarketRef
		Status        refStatus `xml:"status,attr"`
		Favourite     refBool   `xml:"favourite,attr"`
		CashoutStatus refInt8   `xml:"cashout_status,attr"`
		Metadata      struct {
			NextBetstop refMillis `xml:"next_betstop,attr"`
			StartTime   refMillis `xml:"start_time,attr"`
			EndTime     refMillis `xml:"end_time,attr"`
			AAMSID      refInt64  `xml:"aams_id,attr"`
		} `xml:"market_metadata"`
		Outcomes []struct {
			ID                    refString `xml:"id,attr"`
			Odds                  refFloat  `xml:"odds,attr"`
			Probabilities         refFloat  `xml:"probabilities,attr"`
			Active                refBool   `xml:"active,attr"`
			Team                  refInt8   `xml:"team,attr"`
			WinProbabilities      refFloat  `xml:"win_probabilities,attr"`
			LoseProbabilities     refFloat  `xml:"lose_probabilities,attr"`
			HalfWinProbabilities  refFloat  `xml:"half_win_probabilities,attr"`
			HalfLoseProbabilities refFloat  `xml:"half_lose_probabilities,attr"`
			RefundProbabilities   refFloat  `xml:"refund_probabilities,attr"`
		} `xml:"outcome"`
	} `xml:"market"`
}

type refMarketRef struct {
	ID                 refInt    `xml:"id,attr"`
	Specifiers         refString `xml:"specifiers,attr"`
	ExtendedSpecifiers refString `xml:"extended_specifiers,attr"`
	Name               refString `xml:"name,attr"`
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
			Result   refString `xml:"result,attr"`
			Outcomes []struct {
				ID             refString `xml:"id,attr"`
				Result         refResult `xml:"result,attr"`
				VoidFactor     refFloat  `xml:"void_factor,attr"`
				DeadHeatFactor refFloat  `xml:"dead_heat_factor,attr"`
				DeadHeatPlace  refFloat  `xml:"dead_heat_factor_place,attr"`
				EachWayFactor  refFloat  `xml:"each_way_factor,attr"`
				EachWayResult  refString `xml:"each_way_result,attr"`
			} `xml:"outcome"`
		} `xml:"market"`
	} `xml:"outcomes"`
}

type refMarketRefs struct {
	XMLName xml.Name
	refHeader
	StartTime    refMillis `xml:"start_time,attr"`
	EndTime      refMillis `xml:"end_time,attr"`
	SupercededBy refURN    `xml:"superceded_by,attr"`
	Markets      []struct {
		refMarketRef
		Outcomes []struct {
			ID refString `xml:"id,attr"`
		} `xml:"outcome"`
	} `xml:"market"`
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
		ExtendedSpecifiers: Specifiers(r.ExtendedSpecifiers.v), Name: r.Name.v,
		VoidReason: r.VoidReason.v, HasVoidReason: r.VoidReason.set}
}

// eventStatus converts a sport_event_status, with a bit in Fields for each optional
// attribute or element set.
func (c *refChecker) eventStatus(s *refEventStat) *SportEventStatus {
	st := &SportEventStatus{Status: s.Status.v, MatchStatus: s.MatchStatus.v}
	setInt := func(dst *int, a refInt, f StatusField) {
		if a.set {
			*dst = a.v
			st.Fields |= f
		}
	}
	setFloat := func(dst *float64, a refFloat, f StatusField) {
		if a.set {
			*dst = a.v
			st.Fields |= f
		}
	}
	setBool := func(dst *bool, a refBool, f StatusField) {
		if a.set {
			*dst = a.v
			st.Fields |= f
		}
	}
	setInt(&st.Reporting, s.Reporting, StatusReporting)
	setFloat(&st.HomeScore, s.HomeScore, StatusHomeScore)
	setFloat(&st.AwayScore, s.AwayScore, StatusAwayScore)
	setInt(&st.HomePenaltyScore, s.HomePenaltyScore, StatusHomePenaltyScore)
	setInt(&st.AwayPenaltyScore, s.AwayPenaltyScore, StatusAwayPenaltyScore)
	setInt(&st.HomeGameScore, s.HomeGameScore, StatusHomeGameScore)
	setInt(&st.AwayGameScore, s.AwayGameScore, StatusAwayGameScore)
	setInt(&st.HomeLegScore, s.HomeLegScore, StatusHomeLegScore)
	setInt(&st.AwayLegScore, s.AwayLegScore, StatusAwayLegScore)
	setInt(&st.CurrentServer, s.CurrentServer, StatusCurrentServer)
	setBool(&st.ExpediteMode, s.ExpediteMode, StatusExpediteMode)
	setBool(&st.Tiebreak, s.Tiebreak, StatusTiebreak)
	setInt(&st.HomeSuspend, s.HomeSuspend, StatusHomeSuspend)
	setInt(&st.AwaySuspend, s.AwaySuspend, StatusAwaySuspend)
	setInt(&st.Balls, s.Balls, StatusBalls)
	setInt(&st.Strikes, s.Strikes, StatusStrikes)
	setInt(&st.Outs, s.Outs, StatusOuts)
	setString := func(dst *string, a refString, f StatusField) {
		if a.set {
			*dst = a.v
			st.Fields |= f
		}
	}
	setString(&st.Bases, s.Bases, StatusBases)
	setInt(&st.HomeBatter, s.HomeBatter, StatusHomeBatter)
	setInt(&st.AwayBatter, s.AwayBatter, StatusAwayBatter)
	setInt(&st.Possession, s.Possession, StatusPossession)
	setInt(&st.Position, s.Position, StatusPosition)
	setInt(&st.Try, s.Try, StatusTry)
	setInt(&st.Yards, s.Yards, StatusYards)
	setInt(&st.Throw, s.Throw, StatusThrow)
	setInt(&st.Visit, s.Visit, StatusVisit)
	setInt(&st.RemainingReds, s.RemainingReds, StatusRemainingReds)
	setInt(&st.Delivery, s.Delivery, StatusDelivery)
	setInt(&st.HomeRemainingBowls, s.HomeRemainingBowls, StatusHomeRemainingBowls)
	setInt(&st.AwayRemainingBowls, s.AwayRemainingBowls, StatusAwayRemainingBowls)
	setInt(&st.CurrentEnd, s.CurrentEnd, StatusCurrentEnd)
	setInt(&st.Innings, s.Innings, StatusInnings)
	setInt(&st.Over, s.Over, StatusOver)
	setInt(&st.HomePenaltyRuns, s.HomePenaltyRuns, StatusHomePenaltyRuns)
	setInt(&st.AwayPenaltyRuns, s.AwayPenaltyRuns, StatusAwayPenaltyRuns)
	setInt(&st.HomeDismissals, s.HomeDismissals, StatusHomeDismissals)
	setInt(&st.AwayDismissals, s.AwayDismissals, StatusAwayDismissals)
	setInt(&st.CurrentCTTeam, s.CurrentCTTeam, StatusCurrentCTTeam)
	setString(&st.Pitcher, s.Pitcher, StatusPitcher)
	setString(&st.Batter, s.Batter, StatusBatter)
	setInt(&st.PitchCount, s.PitchCount, StatusPitchCount)
	setInt(&st.PitchesSeen, s.PitchesSeen, StatusPitchesSeen)
	setInt(&st.TotalHits, s.TotalHits, StatusTotalHits)
	setInt(&st.TotalPitches, s.TotalPitches, StatusTotalPitches)
	setInt(&st.HomeDriveCount, s.HomeDriveCount, StatusHomeDriveCount)
	setInt(&st.AwayDriveCount, s.AwayDriveCount, StatusAwayDriveCount)
	setInt(&st.HomePlayCount, s.HomePlayCount, StatusHomePlayCount)
	setInt(&st.AwayPlayCount, s.AwayPlayCount, StatusAwayPlayCount)
	setInt(&st.BattingTeam, s.BattingTeam, StatusBattingTeam)
	setInt(&st.PeriodOfLeader, s.PeriodOfLeader, StatusPeriodOfLeader)

	cl := s.Clock
	st.Clock = EventClock{MatchTime: cl.MatchTime.v, StoppageTime: cl.StoppageTime.v,
		StoppageTimeAnnounced: cl.StoppageTimeAnnounced.v, RemainingTime: cl.RemainingTime.v,
		RemainingTimeInPeriod: cl.RemainingTimeInPeriod.v}
	setBool(&st.Clock.Stopped, cl.Stopped, StatusClockStopped)
	for _, group := range s.PeriodScores {
		for _, p := range group.Scores {
			st.PeriodScores = append(st.PeriodScores, PeriodScore{Number: p.Number.v,
				MatchStatusCode: p.MatchStatusCode.v, HomeScore: p.HomeScore.v, AwayScore: p.AwayScore.v})
		}
	}
	for _, group := range s.Results {
		for _, r := range group.Results {
			st.Results = append(st.Results, EventResult{MatchStatusCode: r.MatchStatusCode.v,
				HomeScore: r.HomeScore.v, AwayScore: r.AwayScore.v})
		}
	}
	counts := func(dst *TeamCounts, r *refTeamCounts, f StatusField) {
		if r != nil {
			*dst = TeamCounts{Home: r.Home.v, Away: r.Away.v}
			if r.Home.set && r.Away.set { // a half count gets no bit (MissingStatisticsCount)
				st.Fields |= f
			}
		}
	}
	stats := s.Statistics
	counts(&st.Statistics.YellowCards, stats.YellowCards, StatusYellowCards)
	counts(&st.Statistics.RedCards, stats.RedCards, StatusRedCards)
	counts(&st.Statistics.YellowRedCards, stats.YellowRedCards, StatusYellowRedCards)
	counts(&st.Statistics.Corners, stats.Corners, StatusCorners)
	counts(&st.Statistics.GreenCards, stats.GreenCards, StatusGreenCards)
	counts(&st.Statistics.Tries, stats.Tries, StatusTries)
	return st
}

// referenceDecode decodes body as a message of type t with encoding/xml.
func referenceDecode(t MessageType, body []byte) (Message, error) {
	if err := referenceWellFormed(body, false); err != nil {
		return nil, err
	}
	m, err := referenceDecodeUnchecked(t, body)
	if err != nil {
		return nil, err
	}
	v, err := referenceSchemaViolations(t, body)
	if err != nil {
		return nil, err
	}
	m.MessageHeader().SchemaViolations = v
	return m, nil
}

// referenceDecodeUnchecked is referenceDecode with encoding/xml's rules alone.
func referenceDecodeUnchecked(t MessageType, body []byte) (Message, error) {
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
			oc.EventStatus = c.eventStatus(s)
		}
		if g := r.Generation; g != nil {
			oc.OddsGeneration = &OddsGeneration{ExpectedTotals: g.ExpectedTotals.v, HasExpectedTotals: g.ExpectedTotals.set,
				ExpectedSupremacy: g.ExpectedSupremacy.v, HasExpectedSupremacy: g.ExpectedSupremacy.set}
		}
		if o := r.Odds; o != nil {
			oc.BettingStatus, oc.BetstopReason = o.BettingStatus.v, o.BetstopReason.v
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
				mk := SettledMarket{ID: ref.ID, Specifiers: ref.Specifiers, ExtendedSpecifiers: ref.ExtendedSpecifiers,
					Name: ref.Name, VoidReason: ref.VoidReason, HasVoidReason: ref.HasVoidReason, Result: rm.Result.v}
				for _, ro := range rm.Outcomes {
					c.require(ro.ID.set, "outcome id")
					c.require(ro.Result.set, "result")
					o := SettledOutcome{ID: ro.ID.v, Result: ro.Result.v, VoidFactor: ro.VoidFactor.v, DeadHeatFactor: 1,
						EachWayResult: ro.EachWayResult.v, EachWayFactor: ro.EachWayFactor.v, HasEachWayFactor: ro.EachWayFactor.set,
						DeadHeatFactorPlace: ro.DeadHeatPlace.v, HasDeadHeatFactorPlace: ro.DeadHeatPlace.set}
					if ro.DeadHeatFactor.set {
						o.DeadHeatFactor = ro.DeadHeatFactor.v
					}
					mk.Outcomes = append(mk.Outcomes, o)
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
			ref := c.marketRef(rm.refMarketRef)
			for _, ro := range rm.Outcomes {
				c.require(ro.ID.set, "outcome id")
				ref.Outcomes = append(ref.Outcomes, OutcomeRef{ID: ro.ID.v})
			}
			refs = append(refs, ref)
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
	case MessageCashout:
		return referenceCashout(body)
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
	if err := referenceWellFormed(body, true); err != nil {
		return Peeked{}, err
	}
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

// referenceWellFormed is the reference's judgement of well-formedness (xmlref).
func referenceWellFormed(body []byte, rootOnly bool) error { return xmlref.WellFormed(body, rootOnly) }
