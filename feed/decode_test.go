package feed

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ms(v int64) time.Time { return time.UnixMilli(v).UTC() }

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

var match = URN{Prefix: "sr", Type: "match", ID: 16470657}

func TestDecodeEveryMessageType(t *testing.T) {
	tests := []struct {
		file string
		typ  MessageType
		want Message
	}{
		{"odds_change.xml", MessageOddsChange, &OddsChange{
			Header: Header{Producer: 1, Event: match, Timestamp: ms(1764152400123)},
			EventStatus: &SportEventStatus{
				Status: 1, Reporting: 1, MatchStatus: 7, HomeScore: 1, AwayScore: 2,
				Fields: StatusReporting | StatusHomeScore | StatusAwayScore | StatusYellowCards | StatusCorners,
				Clock:  EventClock{MatchTime: "63:12", StoppageTime: "0:00"},
				PeriodScores: []PeriodScore{
					{Number: 1, MatchStatusCode: 6, HomeScore: 1, AwayScore: 0},
					{Number: 2, MatchStatusCode: 7, HomeScore: 0, AwayScore: 2},
				},
				Statistics: EventStatistics{YellowCards: TeamCounts{Home: 1, Away: 3}, Corners: TeamCounts{Home: 4, Away: 6}},
			},
			Markets: []OddsMarket{
				{ID: 1, Status: MarketActive, Favourite: true, Outcomes: []OddsOutcome{
					{ID: "1", Odds: 4.75, HasOdds: true, Probability: 0.1954, HasProbability: true},
					{ID: "2", Odds: 3.55, HasOdds: true, Probability: 0.2650, HasProbability: true},
					{ID: "3", Odds: 1.80, HasOdds: true, Probability: 0.5396, HasProbability: true},
				}},
				{ID: 18, Specifiers: "total=3.5", Status: MarketActive, Outcomes: []OddsOutcome{
					{ID: "12", Odds: 1.61, HasOdds: true, Probability: 0.6012, HasProbability: true},
					{ID: "13", Odds: 2.25, HasOdds: true, Probability: 0.3988, HasProbability: true},
				}},
				{ID: 16, Specifiers: "hcp=-1.5", Status: MarketSuspended, Outcomes: []OddsOutcome{
					{ID: "1714", Odds: 6.10, HasOdds: true, Probability: 0.1511, HasProbability: true, Inactive: true},
					{ID: "1715", Odds: 1.12, HasOdds: true, Probability: 0.8489, HasProbability: true, Inactive: true},
				}},
				{ID: 38, Specifiers: "goalnr=4", ExtendedSpecifiers: "period=2", Status: MarketActive,
					Metadata: MarketMetadata{NextBetstop: ms(1764156000000)}, Outcomes: []OddsOutcome{
						{ID: "sr:player:1234", Odds: 5.5, HasOdds: true, Probability: 0.15, HasProbability: true},
						{ID: "sr:player:98765", Odds: 7.25, HasOdds: true, Probability: 0.11, HasProbability: true},
					}},
			},
		}},
		{"odds_change_recovery.xml", MessageOddsChange, &OddsChange{
			Header:        Header{Producer: 3, Event: URN{"sr", "match", 20011}, Timestamp: ms(1764152400999), RequestID: 42},
			ChangeReason:  1,
			BettingStatus: 1,
			BetstopReason: 4,
			Markets:       []OddsMarket{{ID: 1, Status: MarketDeactivated}},
		}},
		{"odds_change_edge.xml", MessageOddsChange, &OddsChange{
			Header: Header{Producer: 1, Event: URN{"sr", "match", 1}, Timestamp: ms(1764152400000)},
			Markets: []OddsMarket{{
				ID: 282, Specifiers: "inningnr=1|total=45.5", ExtendedSpecifiers: `note="a&b"<>'`, Status: MarketActive,
				Outcomes: []OddsOutcome{
					{ID: "13", Odds: 1.9, HasOdds: true},
					{ID: "12\nx", Odds: 1.95, HasOdds: true, Probability: 0.5, HasProbability: true},
				},
			}},
		}},
		{"bet_stop.xml", MessageBetStop, &BetStop{
			Header: Header{Producer: 1, Event: match, Timestamp: ms(1764152401000)},
			Groups: "all", MarketStatus: MarketSuspended,
		}},
		{"bet_settlement.xml", MessageBetSettlement, &BetSettlement{
			Header:    Header{Producer: 3, Event: match, Timestamp: ms(1764159600000)},
			Certainty: 2,
			Markets: []SettledMarket{
				{ID: 1, Outcomes: []SettledOutcome{
					{ID: "1", Result: ResultLost, DeadHeatFactor: 1},
					{ID: "2", Result: ResultLost, DeadHeatFactor: 1},
					{ID: "3", Result: ResultWon, DeadHeatFactor: 1},
				}},
				{ID: 18, Specifiers: "total=3.5", Outcomes: []SettledOutcome{
					{ID: "12", Result: ResultLost, VoidFactor: 0.5, DeadHeatFactor: 1},
					{ID: "13", Result: ResultWon, VoidFactor: 0.5, DeadHeatFactor: 1},
				}},
				{ID: 40, Specifiers: "goalnr=1", VoidReason: 12, HasVoidReason: true, Outcomes: []SettledOutcome{
					{ID: "sr:player:1234", Result: ResultWon, DeadHeatFactor: 0.5},
					{ID: "sr:player:98765", Result: ResultUndecided, DeadHeatFactor: 1},
				}},
			},
		}},
		{"rollback_bet_settlement.xml", MessageRollbackBetSettlement, &RollbackBetSettlement{
			Header:  Header{Producer: 3, Event: match, Timestamp: ms(1764160000000)},
			Markets: []MarketRef{{ID: 1}, {ID: 18, Specifiers: "total=3.5"}},
		}},
		{"bet_cancel.xml", MessageBetCancel, &BetCancel{
			Header:       Header{Producer: 1, Event: match, Timestamp: ms(1764152470000), RequestID: 77},
			StartTime:    ms(1764152400000),
			EndTime:      ms(1764152460000),
			SupercededBy: URN{"sr", "match", 16470999},
			Markets:      []MarketRef{{ID: 18, Specifiers: "total=3.5", VoidReason: 8, HasVoidReason: true}, {ID: 1}},
		}},
		{"rollback_bet_cancel.xml", MessageRollbackBetCancel, &RollbackBetCancel{
			Header:    Header{Producer: 1, Event: match, Timestamp: ms(1764152480000)},
			StartTime: ms(1764152400000),
			EndTime:   ms(1764152460000),
			Markets:   []MarketRef{{ID: 18, Specifiers: "total=3.5"}},
		}},
		{"fixture_change.xml", MessageFixtureChange, &FixtureChange{
			Header:       Header{Producer: 3, Event: URN{"sr", "stage", 42}, Timestamp: ms(1764152400500)},
			ChangeType:   2,
			StartTime:    ms(1764241200000),
			NextLiveTime: ms(1764241200000),
		}},
		{"alive.xml", MessageAlive, &Alive{Header: Header{Producer: 1, Timestamp: ms(1764152405000)}, Subscribed: true}},
		{"alive_unsubscribed.xml", MessageAlive, &Alive{Header: Header{Producer: 3, Timestamp: ms(1764152405000)}}},
		{"snapshot_complete.xml", MessageSnapshotComplete, &SnapshotComplete{
			Header: Header{Producer: 1, RequestID: 42, Timestamp: ms(1764152500000)},
		}},
	}
	seen := map[MessageType]bool{}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			body := readFixture(t, tt.file)
			got, err := Decode(tt.typ, body)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.typ, got.Type())

			ref, err := referenceDecode(tt.typ, body)
			require.NoError(t, err, "the encoding/xml reference must accept the fixture")
			assert.Equal(t, ref, got, "fast decoder and encoding/xml reference disagree")
		})
		seen[tt.typ] = true
	}
	seen[MessageCashout] = true // TestDecodeCashout decodes its fixture, against referenceCashout
	for _, typ := range MessageTypes() {
		assert.True(t, seen[typ], "no decode test for %s", typ)
	}
}

func TestDecodeRejectsBadInputWithClearErrors(t *testing.T) {
	tests := []struct {
		name, body, wantErr string
		typ                 MessageType
	}{
		{"empty", ``, "no root element", MessageAlive},
		{"wrong root", `<alive product="1" timestamp="1" subscribed="1"/>`, "root element is <alive>, want <odds_change>", MessageOddsChange},
		{"missing attribute", `<alive product="1" subscribed="1"/>`, "<alive> lacks attribute timestamp", MessageAlive},
		{"missing event id", `<bet_stop product="1" timestamp="1"/>`, "<bet_stop> lacks attribute event_id", MessageBetStop},
		{"missing request id", `<snapshot_complete product="1" timestamp="1"/>`, "lacks attribute request_id", MessageSnapshotComplete},
		{"bad number", `<alive product="x" timestamp="1" subscribed="1"/>`, `<alive> attribute product="x": want an integer`, MessageAlive},
		{"bad bool", `<alive product="1" timestamp="1" subscribed="yes"/>`, `attribute subscribed="yes": want 1, 0, true or false`, MessageAlive},
		{"bad odds", `<odds_change product="1" event_id="sr:match:1" timestamp="1"><odds><market id="1"><outcome id="1" odds="Infinity"/></market></odds></odds_change>`, `<outcome> attribute odds="Infinity": want an xs:double such as 1.85, INF or NaN`, MessageOddsChange},
		{"bad urn", `<bet_stop product="1" event_id="match:1" timestamp="1"/>`, `attribute event_id="match:1"`, MessageBetStop},
		{"market without id", `<rollback_bet_settlement product="1" event_id="sr:match:1" timestamp="1"><market/></rollback_bet_settlement>`, "<market> lacks attribute id", MessageRollbackBetSettlement},
		{"cancelled outcome without id", `<bet_cancel product="1" event_id="sr:match:1" timestamp="1"><market id="1"><outcome/></market></bet_cancel>`, "<outcome> lacks attribute id", MessageBetCancel},
		{"market status out of range", `<bet_stop product="1" event_id="sr:match:1" timestamp="1" market_status="257"/>`, `attribute market_status="257": want a market status from -128 to 127`, MessageBetStop},
		{"bad result", `<bet_settlement product="1" event_id="sr:match:1" timestamp="1"><outcomes><market id="1"><outcome id="1" result="2"/></market></outcomes></bet_settlement>`, `attribute result="2": want 1, 0 or -1`, MessageBetSettlement},
		{"truncated", `<odds_change product="1" event_id="sr:match:1" timestamp="1"><odds>`, "unexpected end of input in element odds", MessageOddsChange},
		{"mismatched end tag", `<odds_change product="1" event_id="sr:match:1" timestamp="1"><odds></market></odds_change>`, "element odds closed by </market>", MessageOddsChange},
		{"unknown entity", `<alive product="1&bad;" timestamp="1" subscribed="1"/>`, "unknown entity &bad;", MessageAlive},
		{"unquoted value", `<alive product=1 timestamp="1" subscribed="1"/>`, "value of attribute product is not quoted", MessageAlive},
		{"unterminated comment", `<!-- never ends <alive/>`, "unterminated comment", MessageAlive},
		{"not xml", `{"json": true}`, "no root element", MessageAlive},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Decode(tt.typ, []byte(tt.body))
			require.Error(t, err)
			assert.Nil(t, m)
			assert.Contains(t, err.Error(), tt.wantErr)
			assert.True(t, errors.Is(err, ErrMalformedMessage))
			var de *DecodeError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, tt.typ, de.Type)
		})
	}
}

// Every prefix of every fixture is either an error or, where encoding/xml accepts it too
// (a cut in the trailing text), the same message: never a panic, never a half message.
func TestDecodeTruncatedInputAgreesWithReference(t *testing.T) {
	for _, f := range fixtures(t) {
		step := 1
		if len(f.body) > 2048 {
			step = 61 // the large benchmark bodies repeat the same few shapes
		}
		for n := 0; n < len(f.body); n += step {
			checkAgainstReference(t, f.typ, f.body[:n])
		}
	}
}

func TestDecodeUnknownType(t *testing.T) {
	_, err := Decode(MessageUnknown, []byte(`<x/>`))
	assert.ErrorIs(t, err, ErrMalformedMessage)
}

func TestSpecifiers(t *testing.T) {
	s := Specifiers("total=2.5|hcp=1:0|variant=sr:exact_goals:6+|flag")
	v, ok := s.Get("hcp")
	assert.True(t, ok)
	assert.Equal(t, "1:0", v)
	v, ok = s.Get("variant")
	assert.True(t, ok)
	assert.Equal(t, "sr:exact_goals:6+", v)
	_, ok = s.Get("missing")
	assert.False(t, ok)
	v, ok = s.Get("flag")
	assert.True(t, ok)
	assert.Empty(t, v)

	var keys []string
	for k := range s.All() {
		keys = append(keys, k)
		if k == "hcp" {
			break
		}
	}
	assert.Equal(t, []string{"total", "hcp"}, keys)
	_, ok = Specifiers("").Get("")
	assert.False(t, ok)
}

type fixture struct {
	name string
	typ  MessageType
	body []byte
}

// fixtures returns every XML file in testdata with its message type, taken from its name.
func fixtures(t testing.TB) []fixture {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*.xml"))
	require.NoError(t, err)
	var out []fixture
	for _, p := range paths {
		name := filepath.Base(p)
		typ := MessageUnknown
		for _, candidate := range MessageTypes() {
			if strings.HasPrefix(name, candidate.String()) && (typ == MessageUnknown || len(candidate.String()) > len(typ.String())) {
				typ = candidate
			}
		}
		require.NotEqual(t, MessageUnknown, typ, "fixture %s is not named after a message type", name)
		out = append(out, fixture{name, typ, readFixture(t, name)})
	}
	return out
}

// checkAgainstReference decodes body with both decoders: when the reference accepts it the
// fast decoder must accept it with the same result.
func checkAgainstReference(t *testing.T, typ MessageType, body []byte) {
	t.Helper()
	got, err := Decode(typ, body)
	if err != nil {
		require.Nil(t, got)
		require.ErrorIs(t, err, ErrMalformedMessage)
	} else {
		require.NotNil(t, got)
		require.Equal(t, typ, got.Type())
	}
	want, refErr := referenceDecode(typ, body)
	if refErr != nil {
		return
	}
	require.NoError(t, err, "encoding/xml accepts %q", body)
	require.True(t, equalDecoded(want, got), "decoders disagree on %q:\nwant %#v\ngot  %#v", body, want, got)
}
