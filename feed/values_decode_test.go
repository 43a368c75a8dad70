package feed

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The values the schema allows decode, whole messages with them: xs:double's INF and NaN
// (NaN occurs in the SDKs' own cashout test files) and negative ids in every URN-typed
// attribute. Before, one such value made the whole message unparsable and lost every other
// market in it.

func TestDecodeXSDDoubleSpecialValues(t *testing.T) {
	body := []byte(`<odds_change product="3" event_id="sr:match:-5555197" timestamp="1">` +
		`<odds_generation_properties expected_totals="INF" expected_supremacy="-INF"/>` +
		`<odds><market id="1"><outcome id="1" odds="INF" probabilities="NaN"/><outcome id="2" odds=" +INF " probabilities="-0"/></market>` +
		`<market id="2"><outcome id="3" odds="1.85" probabilities="0.5" win_probabilities="NaN" refund_probabilities="1e400"/></market></odds>` +
		`</odds_change>`)
	m, err := Decode(MessageOddsChange, body)
	require.NoError(t, err)
	oc := m.(*OddsChange)
	assert.Equal(t, URN{"sr", "match", -5555197}, oc.Event)
	require.NotNil(t, oc.OddsGeneration)
	assert.True(t, math.IsInf(oc.OddsGeneration.ExpectedTotals, 1))
	assert.True(t, math.IsInf(oc.OddsGeneration.ExpectedSupremacy, -1))
	require.Len(t, oc.Markets, 2, "no market is lost")
	first := oc.Markets[0].Outcomes
	require.Len(t, first, 2)
	assert.True(t, first[0].HasOdds)
	assert.True(t, math.IsInf(first[0].Odds, 1))
	assert.True(t, first[0].HasProbability)
	assert.True(t, math.IsNaN(first[0].Probability))
	assert.True(t, math.IsInf(first[1].Odds, 1))
	assert.True(t, math.Signbit(first[1].Probability), "-0 keeps its sign")
	second := oc.Markets[1].Outcomes
	require.Len(t, second, 1)
	assert.Equal(t, 1.85, second[0].Odds)
	require.NotNil(t, second[0].Additional)
	assert.True(t, math.IsNaN(second[0].Additional.Win))
	assert.True(t, math.IsInf(second[0].Additional.Refund, 1), "a decimal beyond float64 is INF, as XSD 1.1 maps it")
}

// Forms strconv.ParseFloat reads but xs:double does not have are refused, naming the
// attribute: a document with them is not schema-valid, and what they mean is a guess.
func TestDecodeRefusesNonXSDDoubles(t *testing.T) {
	for _, v := range []string{"Inf", "inf", "+Inf", "-Inf", "Infinity", "infinity", "nan", "NAN", "0x1p-2", "0X10", "1_000", "1.5f", "1e", "e3", ".", "+", "1,5", "1 5"} {
		t.Run(v, func(t *testing.T) {
			body := []byte(`<odds_change product="3" event_id="sr:match:1" timestamp="1"><odds><market id="1">` +
				`<outcome id="1" odds="` + v + `"/></market></odds></odds_change>`)
			m, err := Decode(MessageOddsChange, body)
			require.Error(t, err)
			assert.Nil(t, m)
			assert.ErrorIs(t, err, ErrMalformedMessage)
			assert.Contains(t, err.Error(), `<outcome> attribute odds="`+v+`"`)
		})
	}
}

func TestDecodeNegativeAndLongIDs(t *testing.T) {
	body := []byte(`<bet_cancel product="1" event_id="sr:match:-5555197" timestamp="1" superceded_by="sr:match:-2">` +
		`<market id="1"/></bet_cancel>`)
	m, err := Decode(MessageBetCancel, body)
	require.NoError(t, err)
	bc := m.(*BetCancel)
	assert.Equal(t, URN{"sr", "match", -5555197}, bc.Event)
	assert.Equal(t, URN{"sr", "match", -2}, bc.SupercededBy)

	for _, id := range []string{"sr:match:9223372036854775807", "sr:match:-9223372036854775808", "wns:draw:-2143997118", "sr:h2h_tournament:5"} {
		m, err := Decode(MessageBetStop, []byte(`<bet_stop product="1" event_id="`+id+`" timestamp="1"/>`))
		require.NoError(t, err, id)
		assert.Equal(t, MustParseURN(id), m.(*BetStop).Event)
		assert.Equal(t, id, m.(*BetStop).Event.String())
	}
	for _, id := range []string{"sr:match:9223372036854775808", "sr:match1:123", "sr:match:0", "sr:match:+1"} {
		_, err := Decode(MessageBetStop, []byte(`<bet_stop product="1" event_id="`+id+`" timestamp="1"/>`))
		require.Error(t, err, id)
		assert.ErrorIs(t, err, ErrMalformedMessage)
		assert.Contains(t, err.Error(), `attribute event_id="`+id+`"`)
	}
}
