package feed

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	schemaHead   = `product="1" event_id="sr:match:1" timestamp="1"`
	schemaStatus = `<odds_change ` + schemaHead + `><sport_event_status status="1" match_status="6">`
	schemaEnd    = `</sport_event_status></odds_change>`
)

// A message that lacks an attribute the schema requires, but can still be routed and
// understood, is decoded, its absent value reads as the documented zero, and its header
// names what it lacked.
func TestDecodeFlagsMissingRequiredAttributes(t *testing.T) {
	tests := []struct {
		name  string
		typ   MessageType
		body  string
		want  SchemaViolation
		check func(t *testing.T, m Message)
	}{
		{"bet_stop without groups", MessageBetStop, `<bet_stop ` + schemaHead + ` market_status="0"/>`, MissingGroups,
			func(t *testing.T, m Message) {
				bs := m.(*BetStop)
				assert.Empty(t, bs.Groups)
				assert.Equal(t, MarketDeactivated, bs.MarketStatus, "the rest is read")
			}},
		{"bet_settlement without certainty", MessageBetSettlement, `<bet_settlement ` + schemaHead +
			`><outcomes><market id="1"><outcome id="1" result="1"/></market></outcomes></bet_settlement>`, MissingCertainty,
			func(t *testing.T, m Message) {
				s := m.(*BetSettlement)
				assert.Equal(t, 0, s.Certainty)
				require.Len(t, s.Markets, 1, "the settlement itself is kept")
				assert.Equal(t, ResultWon, s.Markets[0].Outcomes[0].Result)
			}},
		{"fixture_change without start_time", MessageFixtureChange, `<fixture_change ` + schemaHead + ` change_type="5"/>`, MissingStartTime,
			func(t *testing.T, m Message) {
				fc := m.(*FixtureChange)
				assert.True(t, fc.StartTime.IsZero())
				assert.Equal(t, 5, fc.ChangeType)
			}},
		{"status without status", MessageOddsChange, `<odds_change ` + schemaHead + `><sport_event_status match_status="6"/>` +
			`<odds><market id="1"><outcome id="1" odds="1.5"/></market></odds></odds_change>`, MissingStatus,
			func(t *testing.T, m Message) {
				oc := m.(*OddsChange)
				assert.Equal(t, 0, oc.EventStatus.Status)
				assert.Equal(t, 6, oc.EventStatus.MatchStatus)
				require.Len(t, oc.Markets, 1, "the odds are kept")
			}},
		{"status without match_status", MessageOddsChange, `<odds_change ` + schemaHead + `><sport_event_status status="1"/></odds_change>`,
			MissingMatchStatus, nil},
		{"status without either", MessageOddsChange, `<odds_change ` + schemaHead + `><sport_event_status/></odds_change>`,
			MissingStatus | MissingMatchStatus, nil},
		{"period score without number", MessageOddsChange, schemaStatus +
			`<period_scores><period_score number="1" match_status_code="6" home_score="1" away_score="0"/>` +
			`<period_score match_status_code="7" home_score="0" away_score="2"/></period_scores>` + schemaEnd,
			MissingPeriodNumber, func(t *testing.T, m Message) {
				ps := m.(*OddsChange).EventStatus.PeriodScores
				assert.Equal(t, []PeriodScore{{1, 6, 1, 0}, {0, 7, 0, 2}}, ps)
			}},
		{"period score without match_status_code", MessageOddsChange, schemaStatus +
			`<period_scores><period_score number="1" home_score="1" away_score="0"/></period_scores>` + schemaEnd,
			MissingPeriodMatchStatusCode, nil},
		{"period score without home_score", MessageOddsChange, schemaStatus +
			`<period_scores><period_score number="1" match_status_code="6" away_score="0"/></period_scores>` + schemaEnd,
			MissingPeriodScore, nil},
		{"period score without away_score", MessageOddsChange, schemaStatus +
			`<period_scores><period_score number="1" match_status_code="6" home_score="0"/></period_scores>` + schemaEnd,
			MissingPeriodScore, nil},
		{"result without match_status_code", MessageOddsChange, schemaStatus +
			`<results><result home_score="1" away_score="0"/></results>` + schemaEnd,
			MissingResultMatchStatusCode, nil},
		{"result without score", MessageOddsChange, schemaStatus +
			`<results><result match_status_code="6" home_score="1"/></results>` + schemaEnd,
			MissingResultScore, func(t *testing.T, m Message) {
				assert.Equal(t, []EventResult{{6, 1, 0}}, m.(*OddsChange).EventStatus.Results)
			}},
		{"card count without home", MessageOddsChange, schemaStatus +
			`<statistics><red_cards away="1"/><corners home="3" away="2"/></statistics>` + schemaEnd,
			MissingStatisticsCount, func(t *testing.T, m Message) {
				st := m.(*OddsChange).EventStatus
				assert.False(t, st.Has(StatusRedCards), "half a count is not offered as a value")
				assert.True(t, st.Has(StatusCorners), "the complete count is")
				assert.Equal(t, TeamCounts{3, 2}, st.Statistics.Corners)
			}},
		{"card count without away", MessageOddsChange, schemaStatus +
			`<statistics><yellow_cards home="1"/></statistics>` + schemaEnd,
			MissingStatisticsCount, nil},
		{"green card count without away", MessageOddsChange, schemaStatus +
			`<statistics><green_cards home="1"/><tries home="2" away="0"/></statistics>` + schemaEnd,
			MissingStatisticsCount, func(t *testing.T, m Message) {
				st := m.(*OddsChange).EventStatus
				assert.False(t, st.Has(StatusGreenCards), "half a count is not offered as a value")
				assert.True(t, st.Has(StatusTries), "the complete count is")
				assert.Equal(t, TeamCounts{2, 0}, st.Statistics.Tries)
			}},
		{"several at once", MessageOddsChange, `<odds_change ` + schemaHead + `><sport_event_status>` +
			`<period_scores><period_score/></period_scores><results><result/></results>` +
			`<statistics><corners/></statistics>` + schemaEnd,
			MissingStatus | MissingMatchStatus | MissingPeriodNumber | MissingPeriodMatchStatusCode | MissingPeriodScore |
				MissingResultMatchStatusCode | MissingResultScore | MissingStatisticsCount, nil},
	}
	var all SchemaViolation
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Decode(tt.typ, []byte(tt.body))
			require.NoError(t, err, "a message that lacks %s is read, not lost", tt.want)
			assert.Equal(t, tt.want, m.MessageHeader().SchemaViolations, "%s", m.MessageHeader().SchemaViolations)
			if tt.check != nil {
				tt.check(t, m)
			}
		})
		all |= tt.want
	}
	assert.Equal(t, SchemaViolation(1<<numSchemaViolations-1), all, "every violation has a case")
}

// The fixtures, which send every required attribute, have no violations.
func TestFixturesHaveNoSchemaViolations(t *testing.T) {
	for _, f := range fixtures(t) {
		m, err := Decode(f.typ, f.body)
		require.NoError(t, err, f.name)
		assert.Zero(t, m.MessageHeader().SchemaViolations, f.name)
	}
}

// What cannot be routed or understood without the attribute is refused, naming it.
func TestDecodeRefusesMessagesThatCannotBeUnderstood(t *testing.T) {
	const ts, ev, prod = ` timestamp="1"`, ` event_id="sr:match:1"`, ` product="1"`
	tests := []struct {
		name string
		typ  MessageType
		body string
		want string
	}{
		{"alive without subscribed", MessageAlive, `<alive` + prod + ts + `/>`, "<alive> lacks attribute subscribed"},
		{"alive without product", MessageAlive, `<alive` + ts + ` subscribed="1"/>`, "<alive> lacks attribute product"},
		{"snapshot_complete without request_id", MessageSnapshotComplete, `<snapshot_complete` + prod + ts + `/>`,
			"<snapshot_complete> lacks attribute request_id"},
		{"odds settled outcome without result", MessageBetSettlement, `<bet_settlement` + prod + ev + ts +
			` certainty="2"><outcomes><market id="1"><outcome id="1"/></market></outcomes></bet_settlement>`,
			"<outcome> lacks attribute result"},
		{"settled outcome without id", MessageBetSettlement, `<bet_settlement` + prod + ev + ts +
			` certainty="2"><outcomes><market id="1"><outcome result="1"/></market></outcomes></bet_settlement>`,
			"<outcome> lacks attribute id"},
		{"settled market without id", MessageBetSettlement, `<bet_settlement` + prod + ev + ts +
			` certainty="2"><outcomes><market><outcome id="1" result="1"/></market></outcomes></bet_settlement>`,
			"<market> lacks attribute id"},
		{"odds market without id", MessageOddsChange, `<odds_change` + prod + ev + ts + `><odds><market/></odds></odds_change>`,
			"<market> lacks attribute id"},
		{"odds outcome without id", MessageOddsChange, `<odds_change` + prod + ev + ts +
			`><odds><market id="1"><outcome odds="1.5"/></market></odds></odds_change>`, "<outcome> lacks attribute id"},
		{"cancelled market without id", MessageBetCancel, `<bet_cancel` + prod + ev + ts + `><market/></bet_cancel>`,
			"<market> lacks attribute id"},
	}
	// Every event message without product, timestamp or event_id.
	roots := map[MessageType]string{
		MessageOddsChange: "", MessageBetStop: ` groups="all"`, MessageBetSettlement: ` certainty="1"`,
		MessageRollbackBetSettlement: "", MessageBetCancel: "", MessageRollbackBetCancel: "",
		MessageFixtureChange: ` start_time="1"`,
	}
	for typ, extra := range roots {
		for _, miss := range []struct{ attr, attrs string }{
			{"product", ev + ts}, {"timestamp", prod + ev}, {"event_id", prod + ts},
		} {
			tests = append(tests, struct {
				name string
				typ  MessageType
				body string
				want string
			}{fmt.Sprintf("%s without %s", typ, miss.attr), typ, "<" + typ.String() + miss.attrs + extra + "/>",
				fmt.Sprintf("<%s> lacks attribute %s", typ, miss.attr)})
		}
		m, err := Decode(typ, []byte("<"+typ.String()+prod+ev+ts+extra+"/>"))
		require.NoError(t, err, "%s with every required attribute", typ)
		assert.Zero(t, m.MessageHeader().SchemaViolations, "%s", typ)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Decode(tt.typ, []byte(tt.body))
			assert.Nil(t, m)
			require.ErrorIs(t, err, ErrMalformedMessage)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestSchemaViolationString(t *testing.T) {
	assert.Equal(t, "", SchemaViolation(0).String())
	assert.Equal(t, "bet_stop/@groups", MissingGroups.String())
	assert.Equal(t, "bet_settlement/@certainty, statistics count/@home|@away", (MissingCertainty | MissingStatisticsCount).String())
	assert.Equal(t, "fixture_change/@start_time, unknown violations", (MissingStartTime | 1<<31).String())
	for i := range numSchemaViolations {
		assert.NotEmpty(t, schemaViolationNames[i], "bit %d has a name", i)
	}
	v := MissingStatus | MissingMatchStatus
	assert.True(t, v.Has(MissingStatus))
	assert.True(t, v.Has(MissingStatus|MissingMatchStatus))
	assert.False(t, v.Has(MissingStatus|MissingGroups), "Has wants every violation named")
}

// Reading the violations costs no allocation: a message without any decodes with as many
// allocations as one with all of them in its status.
func TestSchemaViolationsCostNoAllocation(t *testing.T) {
	complete := []byte(schemaStatus + `<period_scores><period_score number="1" match_status_code="6" home_score="1" away_score="0"/></period_scores>` +
		`<results><result match_status_code="6" home_score="1" away_score="0"/></results><statistics><corners home="1" away="2"/></statistics>` + schemaEnd)
	lacking := []byte(`<odds_change ` + schemaHead + `><sport_event_status><period_scores><period_score/></period_scores>` +
		`<results><result/></results><statistics><corners/></statistics>` + schemaEnd)
	count := func(body []byte) float64 {
		return testing.AllocsPerRun(100, func() {
			if _, err := Decode(MessageOddsChange, body); err != nil {
				t.Fatal(err)
			}
		})
	}
	assert.Equal(t, count(complete), count(lacking))
}
