package feed

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fullFixture is a fixture and exactly the message it decodes to.
type fullFixture struct {
	file string
	want Message
}

// fullFixtures are the *_full.xml fixtures and one odds change per sport: together they
// carry every optional element and attribute of the schema (TestSchemaFieldsAreInTheFixtures).
func fullFixtures() []fullFixture {
	ev := URN{"sr", "match", 16470657}
	return []fullFixture{
		{"odds_change_full.xml", &OddsChange{
			Header:        Header{Producer: 1, Event: ev, Timestamp: ms(1764155820417), RequestID: 4711},
			ChangeReason:  1,
			BettingStatus: 1,
			BetstopReason: 2,
			EventStatus: &SportEventStatus{
				Status: 1, MatchStatus: 7,
				Fields: StatusReporting | StatusHomeScore | StatusAwayScore | StatusHomePenaltyScore | StatusAwayPenaltyScore |
					StatusHomeSuspend | StatusAwaySuspend | StatusClockStopped | StatusPeriodOfLeader |
					StatusYellowCards | StatusRedCards | StatusYellowRedCards | StatusCorners | StatusGreenCards | StatusTries,
				Reporting: 1, HomeScore: 2, AwayScore: 1, AwaySuspend: 1, PeriodOfLeader: 2,
				Clock: EventClock{MatchTime: "78:41", StoppageTime: "2:00", StoppageTimeAnnounced: "4:00",
					RemainingTime: "11:19", RemainingTimeInPeriod: "11:19"},
				PeriodScores: []PeriodScore{
					{Number: 1, MatchStatusCode: 6, HomeScore: 1, AwayScore: 1},
					{Number: 2, MatchStatusCode: 7, HomeScore: 1, AwayScore: 0},
				},
				Results: []EventResult{{MatchStatusCode: 6, HomeScore: 1, AwayScore: 1}},
				Statistics: EventStatistics{
					YellowCards: TeamCounts{Home: 2, Away: 3},
					RedCards:    TeamCounts{Home: 0, Away: 1},
					Corners:     TeamCounts{Home: 7, Away: 2},
					GreenCards:  TeamCounts{Home: 1, Away: 0},
					Tries:       TeamCounts{Home: 4, Away: 3},
				},
			},
			OddsGeneration: &OddsGeneration{ExpectedTotals: 2.74495, HasExpectedTotals: true,
				ExpectedSupremacy: -0.118261, HasExpectedSupremacy: true},
			Markets: []OddsMarket{
				{ID: 1, Status: MarketActive, Favourite: true, CashoutStatus: CashoutAvailable, Outcomes: []OddsOutcome{
					{ID: "1", Odds: 1.22, HasOdds: true, Probability: 0.8020, HasProbability: true},
					{ID: "2", Odds: 5.75, HasOdds: true, Probability: 0.1541, HasProbability: true},
					{ID: "3", Odds: 21, HasOdds: true, Probability: 0.0439, HasProbability: true},
				}},
				{ID: 16, Specifiers: "hcp=-0.25", Status: MarketActive, CashoutStatus: CashoutUnavailable, Outcomes: []OddsOutcome{
					{ID: "1714", Odds: 1.67, HasOdds: true, Probability: 0.5765, HasProbability: true,
						Additional: &AdditionalProbabilities{Win: 0.5512, HasWin: true, Lose: 0.3976, HasLose: true,
							HalfWin: 0, HasHalfWin: true, HalfLose: 0.0512, HasHalfLose: true, Refund: 0, HasRefund: true}},
					{ID: "1715", Odds: 2.18, HasOdds: true, Probability: 0.4235, HasProbability: true,
						Additional: &AdditionalProbabilities{Win: 0.3976, HasWin: true, Lose: 0.5512, HasLose: true,
							HalfWin: 0.0512, HasHalfWin: true, HalfLose: 0, HasHalfLose: true, Refund: 0, HasRefund: true}},
				}},
				{ID: 38, Specifiers: "goalnr=4", ExtendedSpecifiers: "period=2", Status: MarketSuspended, CashoutStatus: CashoutClosed,
					Metadata: MarketMetadata{NextBetstop: ms(1764156000000), StartTime: ms(1764151200000),
						EndTime: ms(1764158400000), AAMSID: 2234567, HasAAMSID: true},
					Outcomes: []OddsOutcome{
						{ID: "sr:player:1234", Odds: 5.5, HasOdds: true, Probability: 0.15, HasProbability: true, Team: 1},
						{ID: "sr:player:98765", Team: 2, Inactive: true},
					}},
			},
		}},
		{"odds_change_tennis.xml", oddsChangeWithStatus(50124421, 1764160021331, &SportEventStatus{
			Status: 1, MatchStatus: 9,
			Fields: StatusReporting | StatusHomeScore | StatusAwayScore | StatusHomeGameScore | StatusAwayGameScore |
				StatusCurrentServer | StatusTiebreak | StatusExpediteMode,
			Reporting: 1, HomeScore: 1, HomeGameScore: 6, AwayGameScore: 6, CurrentServer: 2, Tiebreak: true,
			PeriodScores: []PeriodScore{
				{Number: 1, MatchStatusCode: 8, HomeScore: 6, AwayScore: 4},
				{Number: 2, MatchStatusCode: 9, HomeScore: 6, AwayScore: 6},
			},
		}, []OddsMarket{{ID: 186, Outcomes: []OddsOutcome{
			{ID: "4", Odds: 1.4, HasOdds: true, Probability: 0.69, HasProbability: true},
			{ID: "5", Odds: 2.85, HasOdds: true, Probability: 0.31, HasProbability: true},
		}}})},
		{"odds_change_baseball.xml", oddsChangeWithStatus(51018817, 1764163410870, &SportEventStatus{
			Status: 1, MatchStatus: 405,
			Fields: StatusReporting | StatusHomeScore | StatusAwayScore | StatusBalls | StatusStrikes | StatusOuts |
				StatusBases | StatusHomeBatter | StatusAwayBatter | StatusPossession |
				StatusPitcher | StatusBatter | StatusPitchCount | StatusPitchesSeen | StatusTotalHits | StatusTotalPitches,
			Reporting: 1, HomeScore: 3, AwayScore: 4, Balls: 2, Strikes: 1, Outs: 0, Bases: "110",
			HomeBatter: 7, AwayBatter: 2, Possession: 1,
			Pitcher: "sr:player:871253", Batter: "sr:player:1009881", PitchCount: 17, PitchesSeen: 4, TotalHits: 9, TotalPitches: 88,
			PeriodScores: []PeriodScore{{Number: 1, MatchStatusCode: 401, HomeScore: 0, AwayScore: 2}},
		}, []OddsMarket{{ID: 251, Favourite: true, Outcomes: []OddsOutcome{
			{ID: "4", Odds: 1.91, HasOdds: true, Probability: 0.5025, HasProbability: true},
			{ID: "5", Odds: 1.87, HasOdds: true, Probability: 0.4975, HasProbability: true},
		}}})},
		{"odds_change_cricket.xml", oddsChangeWithStatus(49120031, 1764170002114, &SportEventStatus{
			Status: 1, MatchStatus: 529,
			Fields: StatusReporting | StatusHomeScore | StatusAwayScore | StatusInnings | StatusOver | StatusDelivery |
				StatusHomePenaltyRuns | StatusAwayPenaltyRuns | StatusHomeDismissals | StatusAwayDismissals | StatusBattingTeam,
			Reporting: 1, HomeScore: 187, AwayScore: 94, Innings: 2, Over: 13, Delivery: 4,
			HomePenaltyRuns: 5, AwayPenaltyRuns: 0, HomeDismissals: 8, AwayDismissals: 3, BattingTeam: 2,
		}, []OddsMarket{{ID: 340, Outcomes: []OddsOutcome{
			{ID: "4", Odds: 2.4, HasOdds: true, Probability: 0.41, HasProbability: true},
			{ID: "5", Odds: 1.55, HasOdds: true, Probability: 0.59, HasProbability: true},
		}}})},
		{"odds_change_darts.xml", oddsChangeWithStatus(52201114, 1764175560009, &SportEventStatus{
			Status: 1, MatchStatus: 441,
			Fields: StatusReporting | StatusHomeScore | StatusAwayScore | StatusHomeLegScore | StatusAwayLegScore |
				StatusThrow | StatusVisit | StatusCurrentServer,
			Reporting: 1, HomeScore: 2, AwayScore: 1, HomeLegScore: 2, AwayLegScore: 1, Throw: 2, Visit: 7, CurrentServer: 1,
		}, nil)},
		{"odds_change_americanfootball.xml", oddsChangeWithStatus(48002212, 1764180123456, &SportEventStatus{
			Status: 1, MatchStatus: 14,
			Fields: StatusReporting | StatusHomeScore | StatusAwayScore | StatusPossession | StatusPosition |
				StatusTry | StatusYards | StatusHomeDriveCount | StatusAwayDriveCount | StatusHomePlayCount | StatusAwayPlayCount,
			Reporting: 1, HomeScore: 17, AwayScore: 10, Possession: 2, Position: 35, Try: 3, Yards: 7,
			HomeDriveCount: 6, AwayDriveCount: 5, HomePlayCount: 41, AwayPlayCount: 38,
		}, nil)},
		{"odds_change_snooker.xml", oddsChangeWithStatus(52310077, 1764181200042, &SportEventStatus{
			Status: 1, MatchStatus: 20,
			Fields:    StatusReporting | StatusHomeScore | StatusAwayScore | StatusRemainingReds | StatusCurrentServer,
			Reporting: -1, HomeScore: 4, AwayScore: 3, RemainingReds: 9, CurrentServer: 2,
		}, nil)},
		{"odds_change_bowls.xml", oddsChangeWithStatus(52400001, 1764182000001, &SportEventStatus{
			Status: 1, MatchStatus: 8,
			Fields: StatusReporting | StatusHomeScore | StatusAwayScore | StatusCurrentEnd |
				StatusHomeRemainingBowls | StatusAwayRemainingBowls | StatusDelivery,
			Reporting: 1, HomeScore: 0, AwayScore: 1, CurrentEnd: 7, HomeRemainingBowls: 2, AwayRemainingBowls: 3, Delivery: 5,
		}, nil)},
		{"odds_change_csgo.xml", oddsChangeWithStatus(52555501, 1764183000777, &SportEventStatus{
			Status: 1, MatchStatus: 51,
			Fields: StatusReporting | StatusHomeScore | StatusAwayScore | StatusCurrentCTTeam |
				StatusHomeGameScore | StatusAwayGameScore,
			Reporting: 1, HomeScore: 1, AwayScore: 0, CurrentCTTeam: 2, HomeGameScore: 11, AwayGameScore: 9,
		}, nil)},
		{"bet_settlement_full.xml", &BetSettlement{
			Header:    Header{Producer: 1, Event: ev, Timestamp: ms(1764159610231), RequestID: 4711},
			Certainty: 1,
			Markets: []SettledMarket{
				{ID: 1, Name: "1x2", Result: "2:1", Outcomes: []SettledOutcome{
					{ID: "1", Result: ResultWon, DeadHeatFactor: 1},
					{ID: "2", Result: ResultLost, DeadHeatFactor: 1},
					{ID: "3", Result: ResultLost, DeadHeatFactor: 1},
				}},
				{ID: 16, Specifiers: "hcp=-0.25", ExtendedSpecifiers: "period=ft", Name: "Handicap -0.25", Outcomes: []SettledOutcome{
					{ID: "1714", Result: ResultWon, VoidFactor: 0.5, DeadHeatFactor: 1},
					{ID: "1715", Result: ResultLost, VoidFactor: 0.5, DeadHeatFactor: 1},
				}},
				{ID: 40, Specifiers: "goalnr=1", Name: "1st goalscorer", Outcomes: []SettledOutcome{
					{ID: "sr:player:1234", Result: ResultWon, DeadHeatFactor: 0.5},
					{ID: "sr:player:5678", Result: ResultWon, DeadHeatFactor: 0.5},
					{ID: "sr:player:98765", Result: ResultLost, DeadHeatFactor: 1},
				}},
				{ID: 1002, Specifiers: "variant=sr:winner:1", Name: "Winner each way", Outcomes: []SettledOutcome{
					{ID: "sr:competitor:101", Result: ResultWon, DeadHeatFactor: 1,
						EachWayResult: "winner|place", EachWayFactor: 0.2, HasEachWayFactor: true},
					{ID: "sr:competitor:102", Result: ResultLost, DeadHeatFactor: 1,
						EachWayResult: "place", EachWayFactor: 0.2, HasEachWayFactor: true,
						DeadHeatFactorPlace: 0.5, HasDeadHeatFactorPlace: true},
					{ID: "sr:competitor:103", Result: ResultLost, DeadHeatFactor: 1},
				}},
				{ID: 37, Specifiers: "total=2.5", VoidReason: 0, HasVoidReason: true, Outcomes: []SettledOutcome{
					{ID: "12", Result: ResultLost, VoidFactor: 1, DeadHeatFactor: 1},
					{ID: "13", Result: ResultLost, VoidFactor: 1, DeadHeatFactor: 1},
				}},
			},
		}},
		{"bet_cancel_full.xml", &BetCancel{
			Header:       Header{Producer: 3, Event: ev, Timestamp: ms(1764152470000), RequestID: 77},
			StartTime:    ms(1764152400000),
			EndTime:      ms(1764152460000),
			SupercededBy: URN{"sr", "match", 16470999},
			Markets: []MarketRef{
				{ID: 18, Specifiers: "total=3.5", ExtendedSpecifiers: "period=ft", Name: "Total", VoidReason: 8, HasVoidReason: true},
				{ID: 1, Name: "1x2", VoidReason: 0, HasVoidReason: true},
				{ID: 60, Specifiers: "hcp=0:1", Outcomes: []OutcomeRef{{ID: "1714"}, {ID: "1715"}}},
			},
		}},
		{"rollback_bet_cancel_full.xml", &RollbackBetCancel{
			Header:    Header{Producer: 3, Event: ev, Timestamp: ms(1764152480000), RequestID: 78},
			StartTime: ms(1764152400000),
			EndTime:   ms(1764152460000),
			Markets: []MarketRef{{ID: 18, Specifiers: "total=3.5", ExtendedSpecifiers: "period=ft", Name: "Total"},
				{ID: 1, Outcomes: []OutcomeRef{{ID: "2"}}}},
		}},
		{"rollback_bet_settlement_full.xml", &RollbackBetSettlement{
			Header: Header{Producer: 1, Event: ev, Timestamp: ms(1764160000000), RequestID: 79},
			Markets: []MarketRef{
				{ID: 16, Specifiers: "hcp=-0.25", ExtendedSpecifiers: "period=ft", Name: "Handicap -0.25"},
				{ID: 40, Specifiers: "goalnr=1", Outcomes: []OutcomeRef{{ID: "sr:player:1234"}, {ID: "sr:player:5678"}}},
			},
		}},
		{"bet_stop_full.xml", &BetStop{
			Header: Header{Producer: 1, Event: ev, Timestamp: ms(1764155830000), RequestID: 4711},
			Groups: "goals|cards", MarketStatus: MarketDeactivated,
		}},
		{"fixture_change_full.xml", &FixtureChange{
			Header:     Header{Producer: 3, Event: ev, Timestamp: ms(1764152400500), RequestID: 80},
			ChangeType: 4, StartTime: ms(1764241200000), NextLiveTime: ms(1764240900000),
		}},
	}
}

// Each full fixture decodes to exactly the message written out in fullFixtures, and the
// encoding/xml reference agrees.
func TestDecodeEveryOptionalElement(t *testing.T) {
	var fields StatusField
	for _, tt := range fullFixtures() {
		t.Run(tt.file, func(t *testing.T) {
			body := readFixture(t, tt.file)
			got, err := Decode(tt.want.Type(), body)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			ref, err := referenceDecode(tt.want.Type(), body)
			require.NoError(t, err)
			assert.Equal(t, ref, got, "fast decoder and encoding/xml reference disagree")
			if oc, ok := got.(*OddsChange); ok && oc.EventStatus != nil {
				fields |= oc.EventStatus.Fields
			}
		})
	}
	assert.Equal(t, StatusTries<<1-1, fields, "the fixtures send every optional status attribute and element")
}

func oddsChangeWithStatus(match int64, ts int64, st *SportEventStatus, markets []OddsMarket) *OddsChange {
	return &OddsChange{Header: Header{Producer: 1, Event: URN{"sr", "match", match}, Timestamp: ms(ts)},
		EventStatus: st, Markets: markets}
}

// What the feed leaves out reads as absent, never as a value with another meaning.
func TestAbsentValuesReadAsAbsent(t *testing.T) {
	t.Run("dead heat factor", func(t *testing.T) {
		m, err := DecodeBetSettlement([]byte(`<bet_settlement product="1" event_id="sr:match:1" timestamp="1" certainty="2">` +
			`<outcomes><market id="1"><outcome id="1" result="1"/><outcome id="2" result="1" dead_heat_factor="0.5"/></market></outcomes></bet_settlement>`))
		require.NoError(t, err)
		o := m.Markets[0].Outcomes
		assert.Equal(t, 1.0, o[0].DeadHeatFactor, "no dead heat: the payout is whole, not zero")
		assert.Equal(t, 0.5, o[1].DeadHeatFactor)
		assert.Equal(t, 0.0, o[0].VoidFactor, "nothing refunded")
	})
	t.Run("void reason 0", func(t *testing.T) {
		m, err := DecodeBetCancel([]byte(`<bet_cancel product="1" event_id="sr:match:1" timestamp="1">` +
			`<market id="1" void_reason="0"/><market id="2"/></bet_cancel>`))
		require.NoError(t, err)
		assert.True(t, m.Markets[0].HasVoidReason)
		assert.Equal(t, 0, m.Markets[0].VoidReason)
		assert.False(t, m.Markets[1].HasVoidReason)
	})
	t.Run("odds and probabilities", func(t *testing.T) {
		m, err := DecodeOddsChange([]byte(`<odds_change product="1" event_id="sr:match:1" timestamp="1"><odds><market id="1">` +
			`<outcome id="1" active="0"/><outcome id="2" odds="1.5" probabilities="0"/></market></odds></odds_change>`))
		require.NoError(t, err)
		o := m.Markets[0].Outcomes
		assert.False(t, o[0].HasOdds)
		assert.False(t, o[0].HasProbability)
		assert.True(t, o[1].HasOdds)
		assert.True(t, o[1].HasProbability, "probability 0 was sent")
		assert.Equal(t, OddsMarket{ID: 1, Outcomes: o}, m.Markets[0], "no cashout status, no metadata")
	})
	t.Run("status scores and counts", func(t *testing.T) {
		m, err := DecodeOddsChange([]byte(`<odds_change product="1" event_id="sr:match:1" timestamp="1">` +
			`<sport_event_status status="0" match_status="0" outs="0"><statistics><corners home="0" away="0"/></statistics></sport_event_status></odds_change>`))
		require.NoError(t, err)
		st := m.EventStatus
		assert.False(t, st.Has(StatusHomeScore), "not started: no score yet, not 0:0")
		assert.True(t, st.Has(StatusOuts), "zero outs were sent")
		assert.True(t, st.Has(StatusCorners))
		assert.False(t, st.Has(StatusYellowCards))
		assert.True(t, st.Has(StatusOuts|StatusCorners))
		assert.False(t, st.Has(StatusOuts|StatusYellowCards), "Has wants every field named")
		assert.Nil(t, m.OddsGeneration)
	})
}

func TestDecodeRejectsIncompleteNewElements(t *testing.T) {
	const head = `<odds_change product="1" event_id="sr:match:1" timestamp="1">`
	tests := []struct{ name, body, wantErr string }{
		{"bad team", head + `<odds><market id="1"><outcome id="1" team="300"/></market></odds></odds_change>`,
			`<outcome> attribute team="300": want a team, 1 or 2`},
		{"bad cashout status", head + `<odds><market id="1" cashout_status="x"/></odds></odds_change>`,
			`<market> attribute cashout_status="x": want a cashout status, 1, -1 or -2`},
		{"bad next betstop", head + `<odds><market id="1"><market_metadata next_betstop="soon"/></market></odds></odds_change>`,
			`<market_metadata> attribute next_betstop="soon": want milliseconds since the Unix epoch`},
		{"bad expected totals", head + `<odds_generation_properties expected_totals="inf"/></odds_change>`,
			`<odds_generation_properties> attribute expected_totals="inf": want an xs:double such as 1.85, INF or NaN`},
		{"bad outs", head + `<sport_event_status status="1" match_status="6" outs="two"/></odds_change>`,
			`<sport_event_status> attribute outs="two": want an integer`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(MessageOddsChange, []byte(tt.body))
			require.ErrorIs(t, err, ErrMalformedMessage)
			assert.Contains(t, err.Error(), tt.wantErr)
			_, refErr := referenceDecode(MessageOddsChange, []byte(tt.body))
			assert.Error(t, refErr, "encoding/xml reference refuses it too")
		})
	}
}

// The outcomes named under the markets of a cancellation or a rollback are each market's
// own: a market that names none has none, and appending to one market's outcomes leaves
// the next market's alone.
func TestMarketRefOutcomesAreEachMarketsOwn(t *testing.T) {
	m, err := DecodeRollbackBetSettlement([]byte(`<rollback_bet_settlement product="1" event_id="sr:match:1" timestamp="1">` +
		`<market id="1"><outcome id="1"/><outcome id="2"/></market><market id="2"/><market id="3"><outcome id="9"/></market>` +
		`</rollback_bet_settlement>`))
	require.NoError(t, err)
	require.Len(t, m.Markets, 3)
	assert.Equal(t, []OutcomeRef{{ID: "1"}, {ID: "2"}}, m.Markets[0].Outcomes)
	assert.Nil(t, m.Markets[1].Outcomes, "a market that names no outcome concerns the whole line")
	assert.Equal(t, []OutcomeRef{{ID: "9"}}, m.Markets[2].Outcomes)
	grown := append(m.Markets[0].Outcomes, OutcomeRef{ID: "x"})
	assert.Len(t, grown, 3)
	assert.Equal(t, []OutcomeRef{{ID: "9"}}, m.Markets[2].Outcomes, "appending to one market's outcomes")
}
