package feed

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// schemaFields maps each element and attribute of the messages, keyed as walkXSD keys
// UnifiedFeed.xsd's, to the fields that carry it: Type.Field, or Type.Field.Field through
// a pointer or a slice; several when types share it. Every key the schema declares must
// have a row, and every row must name fields that exist.
var schemaFields = map[string]string{
	"messageAttributes@product":    "Header.Producer",
	"messageAttributes@event_id":   "Header.Event",
	"messageAttributes@timestamp":  "Header.Timestamp",
	"messageAttributes@request_id": "Header.RequestID",

	"odds_change":                                 "OddsChange",
	"odds_change@odds_change_reason":              "OddsChange.ChangeReason",
	"odds_change/sport_event_status":              "OddsChange.EventStatus Cashout.EventStatus",
	"odds_change/odds_generation_properties":      "OddsChange.OddsGeneration",
	"odds_change/odds":                            "OddsChange.Markets Cashout.Markets",
	"odds_change/odds@betting_status":             "OddsChange.BettingStatus Cashout.BettingStatus",
	"odds_change/odds@betstop_reason":             "OddsChange.BetstopReason Cashout.BetstopReason",
	"odds_change/odds/market":                     "OddsChange.Markets Cashout.Markets",
	"oddsGenerationProperties@expected_totals":    "OddsGeneration.ExpectedTotals",
	"oddsGenerationProperties@expected_supremacy": "OddsGeneration.ExpectedSupremacy",

	"sportEventStatus@status":               "SportEventStatus.Status",
	"sportEventStatus@reporting":            "SportEventStatus.Reporting",
	"sportEventStatus@match_status":         "SportEventStatus.MatchStatus",
	"sportEventStatus@home_score":           "SportEventStatus.HomeScore",
	"sportEventStatus@away_score":           "SportEventStatus.AwayScore",
	"sportEventStatus@home_penalty_score":   "SportEventStatus.HomePenaltyScore",
	"sportEventStatus@away_penalty_score":   "SportEventStatus.AwayPenaltyScore",
	"sportEventStatus@home_gamescore":       "SportEventStatus.HomeGameScore",
	"sportEventStatus@away_gamescore":       "SportEventStatus.AwayGameScore",
	"sportEventStatus@home_legscore":        "SportEventStatus.HomeLegScore",
	"sportEventStatus@away_legscore":        "SportEventStatus.AwayLegScore",
	"sportEventStatus@current_server":       "SportEventStatus.CurrentServer",
	"sportEventStatus@expedite_mode":        "SportEventStatus.ExpediteMode",
	"sportEventStatus@tiebreak":             "SportEventStatus.Tiebreak",
	"sportEventStatus@home_suspend":         "SportEventStatus.HomeSuspend",
	"sportEventStatus@away_suspend":         "SportEventStatus.AwaySuspend",
	"sportEventStatus@balls":                "SportEventStatus.Balls",
	"sportEventStatus@strikes":              "SportEventStatus.Strikes",
	"sportEventStatus@outs":                 "SportEventStatus.Outs",
	"sportEventStatus@bases":                "SportEventStatus.Bases",
	"sportEventStatus@home_batter":          "SportEventStatus.HomeBatter",
	"sportEventStatus@away_batter":          "SportEventStatus.AwayBatter",
	"sportEventStatus@pitcher":              "SportEventStatus.Pitcher",
	"sportEventStatus@batter":               "SportEventStatus.Batter",
	"sportEventStatus@pitch_count":          "SportEventStatus.PitchCount",
	"sportEventStatus@pitches_seen":         "SportEventStatus.PitchesSeen",
	"sportEventStatus@total_hits":           "SportEventStatus.TotalHits",
	"sportEventStatus@total_pitches":        "SportEventStatus.TotalPitches",
	"sportEventStatus@possession":           "SportEventStatus.Possession",
	"sportEventStatus@position":             "SportEventStatus.Position",
	"sportEventStatus@try":                  "SportEventStatus.Try",
	"sportEventStatus@yards":                "SportEventStatus.Yards",
	"sportEventStatus@home_drive_count":     "SportEventStatus.HomeDriveCount",
	"sportEventStatus@away_drive_count":     "SportEventStatus.AwayDriveCount",
	"sportEventStatus@home_play_count":      "SportEventStatus.HomePlayCount",
	"sportEventStatus@away_play_count":      "SportEventStatus.AwayPlayCount",
	"sportEventStatus@throw":                "SportEventStatus.Throw",
	"sportEventStatus@visit":                "SportEventStatus.Visit",
	"sportEventStatus@remaining_reds":       "SportEventStatus.RemainingReds",
	"sportEventStatus@delivery":             "SportEventStatus.Delivery",
	"sportEventStatus@home_remaining_bowls": "SportEventStatus.HomeRemainingBowls",
	"sportEventStatus@away_remaining_bowls": "SportEventStatus.AwayRemainingBowls",
	"sportEventStatus@current_end":          "SportEventStatus.CurrentEnd",
	"sportEventStatus@innings":              "SportEventStatus.Innings",
	"sportEventStatus@over":                 "SportEventStatus.Over",
	"sportEventStatus@home_penalty_runs":    "SportEventStatus.HomePenaltyRuns",
	"sportEventStatus@away_penalty_runs":    "SportEventStatus.AwayPenaltyRuns",
	"sportEventStatus@home_dismissals":      "SportEventStatus.HomeDismissals",
	"sportEventStatus@away_dismissals":      "SportEventStatus.AwayDismissals",
	"sportEventStatus@batting_team":         "SportEventStatus.BattingTeam",
	"sportEventStatus@current_ct_team":      "SportEventStatus.CurrentCTTeam",
	"sportEventStatus@period_of_leader":     "SportEventStatus.PeriodOfLeader",

	"sportEventStatus/clock":                           "SportEventStatus.Clock",
	"clockType@match_time":                             "EventClock.MatchTime",
	"clockType@stoppage_time":                          "EventClock.StoppageTime",
	"clockType@stoppage_time_announced":                "EventClock.StoppageTimeAnnounced",
	"clockType@remaining_time":                         "EventClock.RemainingTime",
	"clockType@remaining_time_in_period":               "EventClock.RemainingTimeInPeriod",
	"clockType@stopped":                                "EventClock.Stopped",
	"sportEventStatus/period_scores":                   "SportEventStatus.PeriodScores",
	"periodscoresType/period_score":                    "SportEventStatus.PeriodScores",
	"periodScoreType@number":                           "PeriodScore.Number",
	"periodScoreType@match_status_code":                "PeriodScore.MatchStatusCode",
	"periodScoreType@home_score":                       "PeriodScore.HomeScore",
	"periodScoreType@away_score":                       "PeriodScore.AwayScore",
	"sportEventStatus/results":                         "SportEventStatus.Results",
	"resultsType/result":                               "SportEventStatus.Results",
	"resultType@match_status_code":                     "EventResult.MatchStatusCode",
	"resultType@home_score":                            "EventResult.HomeScore",
	"resultType@away_score":                            "EventResult.AwayScore",
	"sportEventStatus/statistics":                      "SportEventStatus.Statistics",
	"statisticsType/yellow_cards":                      "EventStatistics.YellowCards",
	"statisticsType/red_cards":                         "EventStatistics.RedCards",
	"statisticsType/yellow_red_cards":                  "EventStatistics.YellowRedCards",
	"statisticsType/corners":                           "EventStatistics.Corners",
	"statisticsType/green_cards":                       "EventStatistics.GreenCards",
	"statisticsType/tries":                             "EventStatistics.Tries",
	"statisticsScoreType@home":                         "TeamCounts.Home",
	"statisticsScoreType@away":                         "TeamCounts.Away",
	"marketAttributes@id":                              "OddsMarket.ID SettledMarket.ID MarketRef.ID",
	"marketAttributes@specifiers":                      "OddsMarket.Specifiers SettledMarket.Specifiers MarketRef.Specifiers",
	"marketAttributes@extended_specifiers":             "OddsMarket.ExtendedSpecifiers SettledMarket.ExtendedSpecifiers MarketRef.ExtendedSpecifiers",
	"oddsChangeMarket@status":                          "OddsMarket.Status",
	"oddsChangeMarket@favourite":                       "OddsMarket.Favourite",
	"oddsChangeMarket@cashout_status":                  "OddsMarket.CashoutStatus",
	"oddsChangeMarket/market_metadata":                 "OddsMarket.Metadata",
	"marketMetadata@next_betstop":                      "MarketMetadata.NextBetstop",
	"marketMetadata@start_time":                        "MarketMetadata.StartTime",
	"marketMetadata@end_time":                          "MarketMetadata.EndTime",
	"marketMetadata@aams_id":                           "MarketMetadata.AAMSID",
	"oddsChangeMarket/outcome":                         "OddsMarket.Outcomes",
	"oddsChangeMarket/outcome@id":                      "OddsOutcome.ID",
	"oddsChangeMarket/outcome@odds":                    "OddsOutcome.Odds",
	"oddsChangeMarket/outcome@probabilities":           "OddsOutcome.Probability",
	"oddsChangeMarket/outcome@win_probabilities":       "OddsOutcome.Additional.Win",
	"oddsChangeMarket/outcome@lose_probabilities":      "OddsOutcome.Additional.Lose",
	"oddsChangeMarket/outcome@half_win_probabilities":  "OddsOutcome.Additional.HalfWin",
	"oddsChangeMarket/outcome@half_lose_probabilities": "OddsOutcome.Additional.HalfLose",
	"oddsChangeMarket/outcome@refund_probabilities":    "OddsOutcome.Additional.Refund",
	"oddsChangeMarket/outcome@active":                  "OddsOutcome.Inactive",
	"oddsChangeMarket/outcome@team":                    "OddsOutcome.Team",

	"bet_stop":               "BetStop",
	"bet_stop@groups":        "BetStop.Groups",
	"bet_stop@market_status": "BetStop.MarketStatus",

	"bet_settlement":                                     "BetSettlement",
	"bet_settlement@certainty":                           "BetSettlement.Certainty",
	"bet_settlement/outcomes":                            "BetSettlement.Markets",
	"bet_settlement/outcomes/market":                     "BetSettlement.Markets",
	"betSettlementMarket@name":                           "SettledMarket.Name",
	"betSettlementMarket@void_reason":                    "SettledMarket.VoidReason",
	"betSettlementMarket@result":                         "SettledMarket.Result",
	"betSettlementMarket/outcome":                        "SettledMarket.Outcomes",
	"betSettlementMarket/outcome@id":                     "SettledOutcome.ID",
	"betSettlementMarket/outcome@result":                 "SettledOutcome.Result",
	"betSettlementMarket/outcome@void_factor":            "SettledOutcome.VoidFactor",
	"betSettlementMarket/outcome@dead_heat_factor":       "SettledOutcome.DeadHeatFactor",
	"betSettlementMarket/outcome@dead_heat_factor_place": "SettledOutcome.DeadHeatFactorPlace",
	"betSettlementMarket/outcome@each_way_factor":        "SettledOutcome.EachWayFactor",
	"betSettlementMarket/outcome@each_way_result":        "SettledOutcome.EachWayResult",

	"rollback_bet_settlement":        "RollbackBetSettlement",
	"rollback_bet_settlement/market": "RollbackBetSettlement.Markets",
	"bet_cancel":                     "BetCancel",
	"bet_cancel@start_time":          "BetCancel.StartTime",
	"bet_cancel@end_time":            "BetCancel.EndTime",
	"bet_cancel@superceded_by":       "BetCancel.SupercededBy",
	"bet_cancel/market":              "BetCancel.Markets",
	"rollback_bet_cancel":            "RollbackBetCancel",
	"rollback_bet_cancel@start_time": "RollbackBetCancel.StartTime",
	"rollback_bet_cancel@end_time":   "RollbackBetCancel.EndTime",
	"rollback_bet_cancel/market":     "RollbackBetCancel.Markets",
	"market@name":                    "MarketRef.Name",
	"market@void_reason":             "MarketRef.VoidReason",
	"market/outcome":                 "MarketRef.Outcomes",
	"market/outcome@id":              "OutcomeRef.ID",

	"fixture_change":                "FixtureChange",
	"fixture_change@change_type":    "FixtureChange.ChangeType",
	"fixture_change@start_time":     "FixtureChange.StartTime",
	"fixture_change@next_live_time": "FixtureChange.NextLiveTime",

	"cashout": "Cashout",

	"alive":                        "Alive",
	"alive@product":                "Alive.Producer",
	"alive@timestamp":              "Alive.Timestamp",
	"alive@subscribed":             "Alive.Subscribed",
	"snapshot_complete":            "SnapshotComplete",
	"snapshot_complete@product":    "SnapshotComplete.Producer",
	"snapshot_complete@timestamp":  "SnapshotComplete.Timestamp",
	"snapshot_complete@request_id": "SnapshotComplete.RequestID",
}

// beyondSchema are the rows for what the message types carry and the committed
// UnifiedFeed.xsd does not declare, each with the reason. When a newer schema declares
// one, the test says to drop it from here.
var beyondSchema = map[string]string{
	"sportEventStatus@batting_team": "named by an external check of the feed's messages (issue 36); " +
		"no published UnifiedFeed.xsd we found (Java SDK, .NET SDK 3.12.0) declares it",
	"statisticsType/tries": "named by an external check of the feed's messages (issue 36); " +
		"no published UnifiedFeed.xsd we found declares it",
	"market@name":              "a cancelled or rolled-back market's name, read when the feed sends it; not in the schema",
	"betSettlementMarket@name": "a settled market's name, read when the feed sends it; not in the schema",
	"cashout": "the cashout message, which the Java SDK's UnifiedFeed.xsd declares " +
		"(sportradar/UnifiedOddsSdkJava, sdk-core/src/main/resources/xsd/messages) and the .NET SDK's does not",
}

// beyondScope names the content of the elements in beyondSchema as the schema would: a
// tries count is a statistics count, a cashout holds an odds change's status and odds.
var beyondScope = map[string]string{
	"statisticsType/tries": "statisticsScoreType",
	"cashout":              "odds_change",
}

// ignoredInFixtures is what the fixtures send, as the feed does, that neither the schema
// declares nor the message types carry.
var ignoredInFixtures = map[string]string{
	"periodScoreType@type": "a period's kind as a word; the decoder keeps its match_status_code, which says the same",
}

// messageTypes are the types whose fields the rows of schemaFields name.
var messageTypes = func() map[string]reflect.Type {
	types := map[string]reflect.Type{}
	for _, v := range []any{Header{}, OddsChange{}, OddsGeneration{}, SportEventStatus{}, EventClock{}, PeriodScore{},
		EventResult{}, EventStatistics{}, TeamCounts{}, OddsMarket{}, MarketMetadata{}, OddsOutcome{},
		AdditionalProbabilities{}, BetStop{}, BetSettlement{}, SettledMarket{}, SettledOutcome{}, MarketRef{},
		OutcomeRef{}, RollbackBetSettlement{}, BetCancel{}, RollbackBetCancel{}, FixtureChange{}, Cashout{},
		Alive{}, SnapshotComplete{}} {
		typ := reflect.TypeOf(v)
		types[typ.Name()] = typ
	}
	return types
}()

// resolveField finds the field that path (Type.Field or Type.Field.Field) names.
func resolveField(path string) bool {
	parts := strings.Split(path, ".")
	typ, ok := messageTypes[parts[0]]
	for _, name := range parts[1:] {
		if !ok {
			return false
		}
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
			typ = typ.Elem()
		}
		var f reflect.StructField
		f, ok = typ.FieldByName(name)
		typ = f.Type
	}
	return ok
}

// Every element and attribute that UnifiedFeed.xsd declares for the messages has a row
// naming the fields that carry it, so that the package doc's claim (the message types
// carry the whole schema) stays true when the schema grows.
func TestSchemaDeclaresNothingTheMessagesLack(t *testing.T) {
	d := walkXSD(t, xsdPath)
	require.Contains(t, d.keys, "sportEventStatus@pitcher", "the walk reaches the status's attributes")
	require.Contains(t, d.keys, "market/outcome@id", "the walk reaches the outcomes of a cancelled market")

	var lacking []string
	for key := range d.keys {
		if _, ok := schemaFields[key]; !ok {
			lacking = append(lacking, key)
		}
	}
	slices.Sort(lacking)
	assert.Empty(t, lacking, "UnifiedFeed.xsd declares these, and no field carries them: add a field "+
		"(decoder, encoding/xml reference, feedtest encoder, a full fixture) and a row to schemaFields")

	for key, fields := range schemaFields {
		for _, f := range strings.Fields(fields) {
			assert.True(t, resolveField(f), "row %s names %s, which is not a field", key, f)
		}
		if !d.keys[key] {
			assert.Contains(t, beyondSchema, key, "row %s is not in UnifiedFeed.xsd: drop it, or say why in beyondSchema", key)
		}
	}
	for key, why := range beyondSchema {
		assert.Contains(t, schemaFields, key, "beyondSchema lists %s (%s) without a row", key, why)
		assert.False(t, d.keys[key], "UnifiedFeed.xsd now declares %s: drop it from beyondSchema", key)
	}
}

// The full fixtures send every element and attribute that a row names, and nothing the
// rows and ignoredInFixtures do not know: with TestDecodeEveryOptionalElement, which checks
// the value each decodes to, every row is shown decoded.
func TestSchemaFieldsAreInTheFixtures(t *testing.T) {
	d := walkXSD(t, xsdPath)
	sent := map[string]bool{}
	// TestDecodeCashout and TestDecodeEveryMessageType check the values of these.
	files := []string{"cashout.xml", "alive.xml", "snapshot_complete.xml"}
	for _, f := range fullFixtures() {
		files = append(files, f.file)
	}
	for _, file := range files {
		for _, key := range d.instanceKeys(t, readFixture(t, file), beyondScope) {
			sent[key] = true
			_, known := schemaFields[key]
			_, ignored := ignoredInFixtures[key]
			assert.True(t, known || ignored, "%s sends %s, which has no row", file, key)
		}
	}
	for key := range schemaFields {
		assert.True(t, sent[key], "no full fixture sends %s", key)
	}
}
