package feed

import (
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The decoder's fast paths for numbers must give exactly what strconv gives. The
// differential tests cannot see a difference here (both decoders share these parsers), so
// these tests compare them with strconv directly.

func TestParseFloatValueAgreesWithStrconv(t *testing.T) {
	for _, s := range []string{"1.85", "0.1954", "4.75", "200.0", "1", "0", "0.0", "123456789012345", "1234567890.12345",
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
	for _, s := range []string{"1.85", "0.1954", "-7", "123456789012345", "1e3", " 2 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkFloat(t, s)
		checkInt(t, s)
	})
}

func checkFloat(t *testing.T, s string) {
	t.Helper()
	got, err := parseFloatValue(s)
	want, wantErr := strconv.ParseFloat(trimSpace(s), 64)
	if wantErr != nil || math.IsNaN(want) || math.IsInf(want, 0) {
		assert.Error(t, err, "%q", s)
		return
	}
	require.NoError(t, err, "%q", s)
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
