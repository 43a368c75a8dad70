package feedtest_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// ms returns the instant n milliseconds after the epoch, in UTC: the only form of time
// the feed's XML carries, so the only form a round trip can give back.
func ms(n int64) time.Time { return time.UnixMilli(n).UTC() }

// tricky holds every character XML attribute values must escape (& < > "), the one
// attribute-value normalisation would otherwise turn into a newline (\r, alone and before
// \n), and characters that need no escaping but must survive unchanged (' \n \t, non-ASCII).
const tricky = "a&b<c>d\"e'f\rg\r\nh\ti\nj&amp;é"

var (
	match1 = feed.MustParseURN("sr:match:16470657")
	stage  = feed.MustParseURN("sr:stage:42")
)

// decode decodes body as the type m has, failing the test on an error.
func decode(t *testing.T, typ feed.MessageType, body []byte) feed.Message {
	t.Helper()
	got, err := feed.Decode(typ, body)
	require.NoError(t, err, "decode %s", body)
	return got
}

func TestMarshalRoundTripsEveryMessageType(t *testing.T) {
	h := feed.Header{Producer: 1, Event: match1, Timestamp: ms(1764152400123)}
	withRequest := h
	withRequest.RequestID = 9_007_199_254_740_993 // beyond float64's exact integers

	tests := []struct {
		name string
		m    feed.Message
	}{
		{"odds_change/full", &feed.OddsChange{
			Header: withRequest, ChangeReason: 1, BettingStatus: 2, BetstopReason: 3,
			EventStatus: fullStatus(),
			OddsGeneration: &feed.OddsGeneration{ExpectedTotals: 2.74495, HasExpectedTotals: true,
				ExpectedSupremacy: -0.118261, HasExpectedSupremacy: true},
			Markets: []feed.OddsMarket{
				{ID: 1, Status: feed.MarketActive, Favourite: true, CashoutStatus: feed.CashoutAvailable, Outcomes: []feed.OddsOutcome{
					{ID: "1", Odds: 4.75, HasOdds: true, Probability: 0.1954, HasProbability: true},
					{ID: "2", Odds: 1e-7, HasOdds: true, Probability: 1.0 / 3, HasProbability: true}, // odd floats must survive 'g' formatting
					{ID: tricky, Odds: 123456789.125, HasOdds: true},
				}},
				{ID: 18, Specifiers: "total=2.5|hcp=1:0", ExtendedSpecifiers: feed.Specifiers(tricky), Status: feed.MarketCancelled,
					CashoutStatus: feed.CashoutClosed},
				{ID: 16, Specifiers: feed.Specifiers(tricky), Status: feed.MarketSuspended, CashoutStatus: feed.CashoutUnavailable,
					Outcomes: []feed.OddsOutcome{
						{ID: "1714", Odds: 6.1, HasOdds: true, Probability: 0.1511, HasProbability: true,
							Additional: &feed.AdditionalProbabilities{Win: 0.1, HasWin: true, Lose: 0, HasLose: true,
								HalfWin: 0.05, HasHalfWin: true, HalfLose: 0.8, HasHalfLose: true, Refund: 0.05, HasRefund: true}},
						{ID: "1715", Odds: 1.2, HasOdds: true}, // none between two that have some
						{ID: "1716", Additional: &feed.AdditionalProbabilities{Refund: 0.25, HasRefund: true}},
					}},
				{ID: 40, Specifiers: "variant=sr:player:1", Metadata: feed.MarketMetadata{NextBetstop: ms(1764156000000),
					StartTime: ms(1764152400000), EndTime: ms(1764159600000), AAMSID: 0, HasAAMSID: true},
					Outcomes: []feed.OddsOutcome{
						{ID: "sr:player:1234", Team: 1, Odds: 5.5, HasOdds: true},
						{ID: "sr:player:98765", Team: 2, Inactive: true}, // not priced: no odds
					}},
			},
		}},
		// A zero with a flag is a value: probability 0, void reason 0, supremacy 0.
		{"odds_change/zeros that were sent", &feed.OddsChange{Header: h,
			OddsGeneration: &feed.OddsGeneration{HasExpectedSupremacy: true},
			EventStatus: &feed.SportEventStatus{Status: 1, Fields: feed.StatusHomeScore | feed.StatusAwayScore |
				feed.StatusOuts | feed.StatusClockStopped | feed.StatusRedCards},
			Markets: []feed.OddsMarket{{ID: 1, Outcomes: []feed.OddsOutcome{{ID: "1", HasOdds: true, HasProbability: true}}}},
		}},
		// Generation properties with neither value: the element is there, empty.
		{"odds_change/empty generation", &feed.OddsChange{Header: h, OddsGeneration: &feed.OddsGeneration{}}},
		// Everything optional left out: no status, no odds, no reason.
		{"odds_change/empty", &feed.OddsChange{Header: h}},
		// A status that is all zeros still is a status (status="0" is written).
		{"odds_change/zero status", &feed.OddsChange{Header: h, EventStatus: &feed.SportEventStatus{}}},
		// <odds> with attributes but no markets: Markets stays nil.
		{"odds_change/betting status only", &feed.OddsChange{Header: h, BettingStatus: 1}},
		// A deactivated market (status 0) and an outcome with every optional field zero.
		{"odds_change/zero market", &feed.OddsChange{Header: h, Markets: []feed.OddsMarket{
			{ID: 0, Status: feed.MarketDeactivated, Outcomes: []feed.OddsOutcome{{ID: ""}}},
		}}},
		{"bet_stop", &feed.BetStop{Header: withRequest, Groups: tricky, MarketStatus: feed.MarketSuspended}},
		// market_status 0 is written, so it does not come back as the default (suspended).
		{"bet_stop/zero", &feed.BetStop{Header: h}},
		{"bet_stop/negative status", &feed.BetStop{Header: h, Groups: "all", MarketStatus: feed.MarketCancelled}},
		{"bet_settlement", &feed.BetSettlement{Header: withRequest, Certainty: 2, Markets: []feed.SettledMarket{
			{ID: 1, Name: "1x2", Result: "2:1", Outcomes: []feed.SettledOutcome{
				{ID: "1", Result: feed.ResultLost, DeadHeatFactor: 1}, {ID: "2", Result: feed.ResultUndecided, DeadHeatFactor: 1},
				{ID: "3", Result: feed.ResultWon, DeadHeatFactor: 1},
			}},
			{ID: 18, Specifiers: "total=3.5", ExtendedSpecifiers: feed.Specifiers(tricky), Name: tricky,
				VoidReason: 12, HasVoidReason: true, Outcomes: []feed.SettledOutcome{
					{ID: tricky, Result: feed.ResultWon, VoidFactor: 0.5, DeadHeatFactor: 0.25},
					// A factor of 0 is written: only 1 goes without saying.
					{ID: "13", Result: feed.ResultLost, VoidFactor: 1, DeadHeatFactor: 0},
				}},
			// Each-way factors of 0 that were sent are written.
			{ID: 1002, Specifiers: "variant=sr:winner:1", Outcomes: []feed.SettledOutcome{
				{ID: "sr:competitor:1", Result: feed.ResultWon, DeadHeatFactor: 1, EachWayResult: tricky,
					EachWayFactor: 0.25, HasEachWayFactor: true, DeadHeatFactorPlace: 0.5, HasDeadHeatFactorPlace: true},
				{ID: "sr:competitor:2", Result: feed.ResultLost, DeadHeatFactor: 1, EachWayResult: "place",
					HasEachWayFactor: true, HasDeadHeatFactorPlace: true},
			}},
			{ID: 40, HasVoidReason: true}, // a market without outcomes, voided for reason 0
		}}},
		{"bet_settlement/empty", &feed.BetSettlement{Header: h}},
		{"rollback_bet_settlement", &feed.RollbackBetSettlement{Header: withRequest, Markets: []feed.MarketRef{
			{ID: 1, Name: tricky}, {ID: 18, Specifiers: feed.Specifiers(tricky), ExtendedSpecifiers: "period=2",
				Outcomes: []feed.OutcomeRef{{ID: tricky}, {ID: "sr:player:1234"}}},
		}}},
		{"rollback_bet_settlement/empty", &feed.RollbackBetSettlement{Header: h}},
		{"bet_cancel", &feed.BetCancel{Header: withRequest, StartTime: ms(1764152400000), EndTime: ms(1764152460000),
			SupercededBy: feed.MustParseURN("sr:match:16470999"),
			Markets: []feed.MarketRef{{ID: 18, Specifiers: feed.Specifiers(tricky), Name: "Total", VoidReason: 8, HasVoidReason: true},
				{ID: 1, HasVoidReason: true, Outcomes: []feed.OutcomeRef{{ID: "1"}}}, {ID: 2}}}},
		{"bet_cancel/empty", &feed.BetCancel{Header: h}},
		{"rollback_bet_cancel", &feed.RollbackBetCancel{Header: withRequest, StartTime: ms(1764152400000), EndTime: ms(1764152460000),
			Markets: []feed.MarketRef{{ID: 18, Specifiers: "total=3.5", Outcomes: []feed.OutcomeRef{{ID: "12"}, {ID: "13"}}}}}},
		{"rollback_bet_cancel/empty", &feed.RollbackBetCancel{Header: h}},
		{"fixture_change", &feed.FixtureChange{Header: feed.Header{Producer: 3, Event: stage, Timestamp: ms(1764152400500)},
			ChangeType: 2, StartTime: ms(1764241200000), NextLiveTime: ms(1764241200001)}},
		{"fixture_change/empty", &feed.FixtureChange{Header: h}},
		{"cashout", &feed.Cashout{Header: feed.Header{Producer: 1, Event: h.Event, Timestamp: ms(1764152460123), RequestID: 4},
			BettingStatus: 1, BetstopReason: 2, EventStatus: fullStatus(),
			Markets: []feed.OddsMarket{{ID: 1, CashoutStatus: feed.CashoutAvailable, Outcomes: []feed.OddsOutcome{
				{ID: "1", Probability: 0.66, HasProbability: true}, {ID: "2", Probability: 0.34, HasProbability: true, Inactive: true}}},
				{ID: 18, Specifiers: "total=2.5", Status: feed.MarketSuspended}}}},
		{"cashout/empty", &feed.Cashout{Header: h}},
		// Times before the epoch are negative milliseconds.
		{"fixture_change/before epoch", &feed.FixtureChange{Header: h, StartTime: ms(-86_400_000)}},
		{"alive", &feed.Alive{Header: feed.Header{Producer: 1, Timestamp: ms(1764152405000)}, Subscribed: true}},
		{"alive/unsubscribed", &feed.Alive{Header: feed.Header{Producer: 3, Timestamp: ms(1764152405000)}}},
		// The zero time is written as its (large, negative) millisecond count and comes back.
		{"alive/zero timestamp", &feed.Alive{Header: feed.Header{Producer: 1}}},
		{"snapshot_complete", &feed.SnapshotComplete{Header: feed.Header{Producer: 1, RequestID: 42, Timestamp: ms(1764152500000)}}},
		{"snapshot_complete/negative request id", &feed.SnapshotComplete{Header: feed.Header{Producer: 1, RequestID: -7, Timestamp: ms(1)}}},
	}
	covered := map[feed.MessageType]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := feedtest.Marshal(tt.m)
			assert.Equal(t, tt.m, decode(t, tt.m.Type(), body), "body: %s", body)

			// AppendXML appends: what is already in the buffer stays, and the rest is Marshal's.
			prefix := []byte("prefix")
			assert.Equal(t, append(prefix, body...), feedtest.AppendXML([]byte("prefix"), tt.m))
		})
		covered[tt.m.Type()] = true
	}
	assert.Len(t, covered, len(feed.MessageTypes()), "every message type has a case")
}

// fullStatus returns a sport event status with every optional attribute and element set,
// each to a value other than its neighbours', so that a field written under another's name
// shows.
func fullStatus() *feed.SportEventStatus {
	return &feed.SportEventStatus{
		Status: 1, MatchStatus: 7, Fields: feed.StatusTries<<1 - 1, // every StatusField: StatusTries is the last
		Reporting: -1, HomeScore: 1, AwayScore: 2.5,
		HomePenaltyScore: 3, AwayPenaltyScore: 4, HomeGameScore: 5, AwayGameScore: 6, HomeLegScore: 7, AwayLegScore: 8,
		CurrentServer: 2, ExpediteMode: true, Tiebreak: false, HomeSuspend: 9, AwaySuspend: 10,
		Balls: 11, Strikes: 12, Outs: 0, Bases: tricky, HomeBatter: 13, AwayBatter: 14,
		Possession: 15, Position: 16, Try: 17, Yards: 18, Throw: 19, Visit: 20, RemainingReds: 21,
		Delivery: 22, HomeRemainingBowls: 23, AwayRemainingBowls: 24, CurrentEnd: 25,
		Innings: 26, Over: 27, HomePenaltyRuns: 28, AwayPenaltyRuns: 29, HomeDismissals: 30, AwayDismissals: 31,
		CurrentCTTeam: 1, Pitcher: tricky, Batter: "sr:player:2", PitchCount: 32, PitchesSeen: 33, TotalHits: 34, TotalPitches: 35,
		HomeDriveCount: 36, AwayDriveCount: 37, HomePlayCount: 38, AwayPlayCount: 39, BattingTeam: 2, PeriodOfLeader: 40,
		Clock: feed.EventClock{MatchTime: "63:12", StoppageTime: "1:00", StoppageTimeAnnounced: "4:00",
			RemainingTime: tricky, RemainingTimeInPeriod: "12", Stopped: true},
		PeriodScores: []feed.PeriodScore{{Number: 1, MatchStatusCode: 6, HomeScore: 1}, {Number: 2, MatchStatusCode: 7, AwayScore: 2}},
		Results:      []feed.EventResult{{MatchStatusCode: 100, HomeScore: 1, AwayScore: 2.5}, {MatchStatusCode: 120}},
		Statistics: feed.EventStatistics{YellowCards: feed.TeamCounts{Home: 1, Away: 2}, RedCards: feed.TeamCounts{Home: 3, Away: 4},
			YellowRedCards: feed.TeamCounts{Home: 0, Away: 5}, Corners: feed.TeamCounts{Home: 6, Away: 7},
			GreenCards: feed.TeamCounts{Home: 8, Away: 9}, Tries: feed.TeamCounts{Home: 10, Away: 0}},
	}
}

// discard is a Publisher that accepts everything, for tests that read sim.Sent.
type discard struct{}

func (discard) Publish(context.Context, string, []byte) error { return nil }

func TestMarshalRoundTripsSimulatorTraffic(t *testing.T) {
	fc := clocktest.NewFake(ms(1764152400000))
	sim, err := feedtest.NewSimulator(discard{}, feedtest.SimulatorConfig{Matches: 20, Rate: feedtest.Unlimited, Seed: 11, Clock: fc})
	require.NoError(t, err)
	// Advance the clock between messages so that timestamps vary as in a real run.
	for range 40 {
		require.NoError(t, sim.Publish(t.Context(), 50))
		fc.Advance(1234 * time.Millisecond)
	}
	require.NoError(t, sim.SendAlive(t.Context(), 1, false))
	require.NoError(t, sim.SendAlive(t.Context(), 3, true))

	sent := sim.Sent()
	require.Len(t, sent, 2002)
	types := map[feed.MessageType]int{}
	for i, s := range sent {
		require.Equal(t, s.Key.Type, s.Message.Type(), "message %d: routing key and message agree on the type", i)
		require.Equal(t, s.Key.Event, s.Message.MessageHeader().Event, "message %d: routing key and message agree on the event", i)
		require.Equal(t, feedtest.Marshal(s.Message), s.Body, "message %d: the body published is Marshal's", i)
		require.Equal(t, s.Message, decode(t, s.Key.Type, s.Body), "message %d", i)
		types[s.Key.Type]++
	}
	// 2,000 messages over 20 matches cover the common types; settlements need a match to end.
	for _, typ := range []feed.MessageType{feed.MessageOddsChange, feed.MessageBetStop, feed.MessageFixtureChange,
		feed.MessageBetSettlement, feed.MessageAlive} {
		assert.Positive(t, types[typ], "traffic has %s messages: %v", typ, types)
	}
}

func TestMarshalRoundTripsFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "*.xml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			body, err := os.ReadFile(file)
			require.NoError(t, err)
			p, err := feed.Peek(body)
			require.NoError(t, err)
			require.NotEqual(t, feed.MessageUnknown, p.Type)

			first := decode(t, p.Type, body)
			again := feedtest.Marshal(first)
			// The fixtures carry comments, unknown elements, namespaces and entities that
			// Marshal does not reproduce; what matters is that the decoded value survives.
			assert.Equal(t, first, decode(t, p.Type, again), "re-encoded: %s", again)
			assert.Equal(t, again, feedtest.Marshal(decode(t, p.Type, again)), "encoding is stable")
		})
	}
}

func TestAppendXMLPanicsOnUnknownMessage(t *testing.T) {
	// A Message the encoder does not know is a programming error in the test that built it.
	assert.PanicsWithValue(t, "feedtest: cannot encode *feedtest_test.otherMessage", func() {
		feedtest.Marshal(&otherMessage{})
	})
}

type otherMessage struct{ feed.Header }

func (*otherMessage) Type() feed.MessageType { return feed.MessageUnknown }

// The infinities and NaN, which the feed may send as xs:doubles, are written in the
// schema's lexical forms and decode back.
func TestMarshalWritesXSDoubles(t *testing.T) {
	m := &feed.OddsChange{Header: feed.Header{Producer: 1, Event: feed.MustParseURN("sr:match:1"), Timestamp: time.UnixMilli(1).UTC()},
		Markets: []feed.OddsMarket{{ID: 1, Outcomes: []feed.OddsOutcome{
			{ID: "1", Odds: math.Inf(1), HasOdds: true},
			{ID: "2", Odds: math.Inf(-1), HasOdds: true},
			{ID: "3", Odds: math.NaN(), HasOdds: true},
		}}}}
	body := feedtest.Marshal(m)
	for _, want := range []string{`odds="INF"`, `odds="-INF"`, `odds="NaN"`} {
		assert.Contains(t, string(body), want)
	}
	got, err := feed.DecodeOddsChange(body)
	require.NoError(t, err)
	o := got.Markets[0].Outcomes
	assert.True(t, math.IsInf(o[0].Odds, 1))
	assert.True(t, math.IsInf(o[1].Odds, -1))
	assert.True(t, math.IsNaN(o[2].Odds))
}
