package feed

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecodeCashout(t *testing.T) {
	body := readFixture(t, "cashout.xml")
	m, err := DecodeCashout(body)
	require.NoError(t, err)
	assert.Equal(t, MessageCashout, m.Type())
	assert.Equal(t, Header{Producer: 1, Event: URN{"sr", "match", 16470657}, Timestamp: ms(1764152460123)}, m.Header)
	assert.Equal(t, 1, m.BettingStatus)
	require.NotNil(t, m.EventStatus)
	assert.Equal(t, 1, m.EventStatus.Status)
	assert.Equal(t, "23:41", m.EventStatus.Clock.MatchTime)
	assert.Equal(t, []PeriodScore{{Number: 1, MatchStatusCode: 6, HomeScore: 1}}, m.EventStatus.PeriodScores)
	require.Len(t, m.Markets, 4)
	assert.Equal(t, CashoutAvailable, m.Markets[0].CashoutStatus)
	assert.Equal(t, []OddsOutcome{
		{ID: "1", Probability: 0.6612183, HasProbability: true},
		{ID: "2", Probability: 0.2406124, HasProbability: true},
		{ID: "3", Probability: 0.0981693, HasProbability: true},
	}, m.Markets[0].Outcomes, "probabilities, no odds")
	assert.Equal(t, Specifiers("total=2.5"), m.Markets[1].Specifiers)
	assert.True(t, m.Markets[1].Favourite)
	asian := m.Markets[2]
	assert.Equal(t, MarketSuspended, asian.Status)
	require.NotNil(t, asian.Outcomes[0].Additional)
	assert.Equal(t, AdditionalProbabilities{Win: 0.4, HalfWin: 0.11, Lose: 0.49, HasWin: true, HasHalfWin: true, HasLose: true},
		*asian.Outcomes[0].Additional)
	assert.True(t, asian.Outcomes[1].Inactive)
	assert.Nil(t, m.Markets[3].Outcomes)
	assert.Equal(t, MarketDeactivated, m.Markets[3].Status)

	ref, err := referenceCashout(body)
	require.NoError(t, err)
	assert.Equal(t, ref, m, "fast decoder and encoding/xml reference disagree")

	p, err := Peek(body)
	require.NoError(t, err)
	assert.Equal(t, Peeked{Type: MessageCashout, Producer: 1}, p)
}

// A cashout shares the odds change's rules: required attributes refused or flagged alike.
func TestDecodeCashoutRequiredAttributes(t *testing.T) {
	_, err := DecodeCashout([]byte(`<cashout product="1" timestamp="1"/>`))
	assert.ErrorContains(t, err, "<cashout> lacks attribute event_id")
	_, err = DecodeCashout([]byte(`<cashout product="1" event_id="sr:match:1" timestamp="1"><odds><market id="1"><outcome probabilities="0.5"/></market></odds></cashout>`))
	assert.ErrorContains(t, err, "<outcome> lacks attribute id")
	_, err = DecodeCashout([]byte(`<odds_change product="1" event_id="sr:match:1" timestamp="1"/>`))
	assert.ErrorContains(t, err, "root element is <odds_change>, want <cashout>")
	m, err := DecodeCashout([]byte(`<cashout product="1" event_id="sr:match:1" timestamp="1"><sport_event_status status="1"/></cashout>`))
	require.NoError(t, err)
	assert.Equal(t, MissingMatchStatus, m.SchemaViolations)
	m, err = DecodeCashout([]byte(`<cashout product="1" event_id="sr:match:1" timestamp="1"/>`))
	require.NoError(t, err)
	assert.Equal(t, &Cashout{Header: Header{Producer: 1, Event: URN{"sr", "match", 1}, Timestamp: ms(1)}}, m)
}

// Every prefix of the fixture is refused or, where encoding/xml accepts it, the same message.
func TestDecodeCashoutTruncatedAgreesWithReference(t *testing.T) {
	body := readFixture(t, "cashout.xml")
	for n := range len(body) {
		checkCashout(t, body[:n])
	}
}

func FuzzDecodeCashout(f *testing.F) {
	f.Add(readFixture(f, "cashout.xml"))
	for _, s := range cashoutSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkCashout(t, body) })
}

// The required attributes a message lacks are the same by both decoders, for every type
// that can lack some.
func FuzzSchemaViolations(f *testing.F) {
	for _, s := range schemaSeeds {
		f.Add(uint8(s.typ), []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, typ uint8, body []byte) {
		mt := []MessageType{MessageOddsChange, MessageCashout, MessageBetStop, MessageBetSettlement, MessageFixtureChange}[int(typ)%5]
		checkSchemaViolations(t, mt, body)
	})
}

func TestSchemaViolationsAgreeWithReference(t *testing.T) {
	for _, s := range schemaSeeds {
		checkSchemaViolations(t, s.typ, []byte(s.body))
	}
	for _, f := range fixtures(t) {
		checkSchemaViolations(t, f.typ, f.body)
	}
}

var cashoutSeeds = []string{
	`<cashout product="1" event_id="sr:match:1" timestamp="1"/>`,
	`<cashout product="3" event_id="sr:match:2" timestamp="5" request_id="9"><odds><market id="1"><outcome id="1" probabilities="0.5" odds="2"/></market></odds></cashout>`,
	`<cashout product="1" event_id="sr:match:1" timestamp="1"><sport_event_status status="1" match_status="6"><results><result match_status_code="6" home_score="1" away_score="0"/></results></sport_event_status></cashout>`,
	`<cashout event_id="sr:match:9" product="1" timestamp="1764152460123"><sport_event_status status="1" match_status="7" home_score="0" away_score="1"/>` +
		`<odds><market id="534" specifiers="variant=pre:markettext:1" status="1"><outcome id="pre:outcometext:1" active="1" probabilities="NaN"/>` +
		`<outcome id="pre:outcometext:2" active="1" probabilities="0.25"/></market>` +
		`<market id="1" status="1"><outcome id="1" active="1" probabilities="0.75" win_probabilities="INF"/></market></odds></cashout>`,
}

var schemaSeeds = []struct {
	typ  MessageType
	body string
}{
	{MessageBetStop, `<bet_stop ` + schemaHead + `/>`},
	{MessageBetStop, `<bet_stop ` + schemaHead + ` groups="all"/>`},
	{MessageBetSettlement, `<bet_settlement ` + schemaHead + `><outcomes><market id="1"><outcome id="1" result="0"/></market></outcomes></bet_settlement>`},
	{MessageFixtureChange, `<fixture_change ` + schemaHead + `/>`},
	{MessageOddsChange, `<odds_change ` + schemaHead + `><sport_event_status><period_scores><period_score/></period_scores></sport_event_status></odds_change>`},
	{MessageCashout, `<cashout ` + schemaHead + `><sport_event_status status="1"/></cashout>`},
}

// checkCashout decodes body with both decoders: where the reference accepts it the fast
// decoder accepts it with the same result.
func checkCashout(t *testing.T, body []byte) {
	t.Helper()
	got, err := DecodeCashout(body)
	if err != nil {
		require.Nil(t, got)
		require.ErrorIs(t, err, ErrMalformedMessage)
	}
	want, refErr := referenceCashout(body)
	if refErr != nil {
		return
	}
	require.NoError(t, err, "encoding/xml accepts %q", body)
	// xs:double's NaN equals nothing, itself included: equalDecoded takes NaN for NaN.
	require.True(t, equalDecoded(want, got), "decoders disagree on %q:\n%#v\n%#v", body, want, got)
}

// The SDKs' cashout files send probabilities="NaN" for outcomes without a probability;
// such a cashout decodes, every other market kept.
func TestDecodeCashoutWithNaN(t *testing.T) {
	body := []byte(cashoutSeeds[3])
	m, err := DecodeCashout(body)
	require.NoError(t, err)
	require.Len(t, m.Markets, 2)
	o := m.Markets[0].Outcomes
	assert.True(t, o[0].HasProbability)
	assert.True(t, math.IsNaN(o[0].Probability), "NaN reads as NaN: test with math.IsNaN")
	assert.Equal(t, 0.25, o[1].Probability)
	assert.Equal(t, 0.75, m.Markets[1].Outcomes[0].Probability)
	checkCashout(t, body)
}

func checkSchemaViolations(t *testing.T, typ MessageType, body []byte) {
	t.Helper()
	m, err := Decode(typ, body)
	if err != nil {
		return
	}
	want, refErr := referenceSchemaViolations(typ, body)
	if refErr != nil {
		return
	}
	require.Equal(t, want, m.MessageHeader().SchemaViolations, "%s %q", typ, body)
}
