package feed

import (
	"math"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// equalDecoded reports whether two decoded messages are equal as reflect.DeepEqual
// compares them, except that a NaN equals a NaN. NaN is a value the schema allows (an
// xs:double), and DeepEqual, following ==, finds a NaN unequal to itself: two decoders
// that both read odds="NaN" would otherwise seem to disagree.
func equalDecoded(a, b any) bool { return deepEqualNaN(reflect.ValueOf(a), reflect.ValueOf(b)) }

func deepEqualNaN(a, b reflect.Value) bool {
	if !a.IsValid() || !b.IsValid() {
		return a.IsValid() == b.IsValid()
	}
	if a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Float32, reflect.Float64:
		x, y := a.Float(), b.Float()
		return x == y || math.IsNaN(x) && math.IsNaN(y)
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return deepEqualNaN(a.Elem(), b.Elem())
	case reflect.Slice:
		if a.IsNil() != b.IsNil() {
			return false
		}
		fallthrough
	case reflect.Array:
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !deepEqualNaN(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Struct:
		for i := range a.NumField() {
			if !deepEqualNaN(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		for _, k := range a.MapKeys() {
			if v := b.MapIndex(k); !v.IsValid() || !deepEqualNaN(a.MapIndex(k), v) {
				return false
			}
		}
		return true
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() == b.Uint()
	case reflect.String:
		return a.String() == b.String()
	case reflect.Complex64, reflect.Complex128:
		return a.Complex() == b.Complex()
	}
	return a.Pointer() == b.Pointer() // func, chan, unsafe pointer: identity, as DeepEqual (nil funcs aside)
}

func TestEqualDecoded(t *testing.T) {
	nan := math.NaN()
	a := &OddsOutcome{ID: "1", Odds: nan, HasOdds: true, Additional: &AdditionalProbabilities{Win: nan}}
	b := &OddsOutcome{ID: "1", Odds: nan, HasOdds: true, Additional: &AdditionalProbabilities{Win: nan}}
	assert.False(t, reflect.DeepEqual(a, b), "the reason for equalDecoded")
	assert.True(t, equalDecoded(a, b))
	b.Additional.Win = 0
	assert.False(t, equalDecoded(a, b))
	b.Additional = nil
	assert.False(t, equalDecoded(a, b))
	assert.False(t, equalDecoded(a, &OddsOutcome{ID: "2", Odds: nan, HasOdds: true, Additional: a.Additional}))
	assert.False(t, equalDecoded([]float64{nan}, []float64{nan, nan}))
	assert.False(t, equalDecoded([]float64(nil), []float64{}))
	assert.True(t, equalDecoded(map[string]float64{"x": nan}, map[string]float64{"x": nan}))
	assert.False(t, equalDecoded(map[string]float64{"x": nan}, map[string]float64{"y": nan}))
	assert.False(t, equalDecoded(1, int64(1)))
	assert.True(t, equalDecoded(nil, nil))
	assert.True(t, equalDecoded(URN{"sr", "match", -1}, URN{"sr", "match", -1}))
}

// The encoding/xml reference decoder reads INF, NaN and negative ids as the decoder does:
// the differential tests and fuzz targets see these values too.
func TestReferenceAgreesOnSchemaSpecialValues(t *testing.T) {
	for typ, body := range map[MessageType]string{
		MessageOddsChange: `<odds_change product="3" event_id="sr:match:-5555197" timestamp="1">` +
			`<odds_generation_properties expected_totals="INF" expected_supremacy="NaN"/>` +
			`<odds><market id="1"><outcome id="1" odds="-INF" probabilities="NaN" win_probabilities="+INF"/></market></odds></odds_change>`,
		MessageBetCancel: `<bet_cancel product="1" event_id="sr:match:-1" timestamp="1" superceded_by="sr:match:-2"><market id="1"/></bet_cancel>`,
		MessageBetSettlement: `<bet_settlement product="1" event_id="sr:match:9223372036854775807" timestamp="1" certainty="2">` +
			`<outcomes><market id="1"><outcome id="1" result="1" void_factor="NaN" dead_heat_factor="INF"/></market></outcomes></bet_settlement>`,
	} {
		got, err := Decode(typ, []byte(body))
		require.NoError(t, err, typ)
		want, err := referenceDecode(typ, []byte(body))
		require.NoError(t, err, typ)
		assert.True(t, equalDecoded(want, got), "%s: reference %+v, decoder %+v", typ, want, got)
	}
}
