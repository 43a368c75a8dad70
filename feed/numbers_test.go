package feed

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The decoder's fast paths for numbers must give exactly what strconv gives, and accept
// exactly the schema's lexical space. The differential tests cannot see a difference here
// (both decoders share these parsers), so these tests compare them with strconv and with
// the schema's grammar directly.

func TestParseFloatValueAgreesWithStrconv(t *testing.T) {
	for _, s := range []string{"INF", "-INF", "+INF", "NaN", " INF\n", "inf", "Infinity", "+Inf", "-Inf", "nan", "NAN",
		"0x1p-2", "0X10", "1_000", "1e400", "-1e400", "1e-400", "1E3", "1e+3", "1e", "e3", "1.5e-", "+.5", "-.5e1", "+", "-",
		"1.5f", "1.5d", "١", "1 000", "1,5", "1.85", "0.1954", "4.75", "200.0", "1", "0", "0.0", "123456789012345", "1234567890.12345",
		"0.000000000000001", "9.99", " 2.5 ", "\t3\n", "5.", ".5", "1e3", "8.97094E-4", "-1.5", "+1.5", "1234567890123456",
		"0.30000000000000004", "", ".", "1..2", "1_000", "0x10", "NaN", "Inf", "-0", "007.50"} {
		checkFloat(t, s)
	}
}

func TestParseIntValueAgreesWithStrconv(t *testing.T) {
	for _, s := range []string{"0", "1", "-1", "123456789", "1234567890", "-123456789", "2147483647", "2147483648",
		"-2147483648", " 42 ", "+5", "", "-", "1.0", "0042", "9223372036854775807", "9223372036854775808"} {
		checkInt(t, s)
	}
}

func FuzzNumberParsers(f *testing.F) {
	for _, s := range []string{"1.85", "0.1954", "-7", "123456789012345", "1e3", " 2 ", "INF", "-INF", "NaN", "0x1p-2", "1_000", ".5e-3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkFloat(t, s)
		checkInt(t, s)
	})
}

// xsdDouble is xs:double's lexical space (XSD 1.1, 3.3.5: the decimal pattern, INF with
// an optional sign, NaN), written independently of the parser as a regular expression.
var xsdDouble = regexp.MustCompile(`^((\+|-)?([0-9]+(\.[0-9]*)?|\.[0-9]+)([Ee](\+|-)?[0-9]+)?|(\+|-)?INF|NaN)$`)

// checkFloat asserts that parseFloatValue accepts exactly xs:double's lexical space after
// XML whitespace is trimmed, and reads strconv's value, bit for bit; INF and NaN are the
// float64 infinities and a NaN, and a decimal beyond float64 the infinity of its sign.
func checkFloat(t *testing.T, s string) {
	t.Helper()
	got, err := parseFloatValue(s)
	trimmed := trimSpace(s)
	if !xsdDouble.MatchString(trimmed) {
		assert.Error(t, err, "%q is not an xs:double", s)
		return
	}
	require.NoError(t, err, "%q is an xs:double", s)
	switch strings.TrimPrefix(trimmed, "+") {
	case "INF":
		assert.True(t, math.IsInf(got, 1), "%q: %v", s, got)
		return
	case "-INF":
		assert.True(t, math.IsInf(got, -1), "%q: %v", s, got)
		return
	case "NaN":
		assert.True(t, math.IsNaN(got), "%q: %v", s, got)
		return
	}
	want, _ := strconv.ParseFloat(trimmed, 64) // ErrRange comes with ±Inf, XSD's value too
	assert.Equal(t, math.Float64bits(want), math.Float64bits(got), "%q: got %v, strconv %v", s, got, want)
}

func checkInt(t *testing.T, s string) {
	t.Helper()
	got, err := parseIntValue(s)
	want, wantErr := strconv.ParseInt(trimSpace(s), 10, 32)
	if wantErr != nil {
		assert.Error(t, err, "%q", s)
	} else {
		require.NoError(t, err, "%q", s)
		assert.Equal(t, int(want), got, "%q", s)
	}
	got64, err := parseInt64Value(s)
	want64, wantErr := strconv.ParseInt(trimSpace(s), 10, 64)
	if wantErr != nil {
		assert.Error(t, err, "%q", s)
	} else {
		require.NoError(t, err, "%q", s)
		assert.Equal(t, want64, got64, "%q", s)
	}
}
