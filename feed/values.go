package feed

import (
	"math"
	"strconv"
	"time"
)

// The value parsers define what an attribute value means. The encoding/xml reference
// decoder in the tests uses them too, so that the two decoders are compared on XML alone.

// trimSpace removes the whitespace encoding/xml trims from numbers and booleans.
func trimSpace(s string) string {
	for len(s) > 0 && isXMLSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isXMLSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

func isXMLSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func parseIntValue(s string) (int, error) {
	s = trimSpace(s)
	if v, ok := smallInt(s); ok {
		return int(v), nil
	}
	v, err := strconv.ParseInt(s, 10, 32)
	return int(v), err
}

func parseInt8Value(s string) (int8, error) {
	v, err := parseIntValue(s)
	if err == nil && (v < math.MinInt8 || v > math.MaxInt8) {
		return 0, errBadNumber
	}
	return int8(v), err
}

func parseMarketStatusValue(s string) (MarketStatus, error) {
	v, err := parseIntValue(s)
	if err == nil && (v < math.MinInt8 || v > math.MaxInt8) {
		return MarketActive, errBadNumber
	}
	return MarketStatusOfCode(int8(v)), err
}

func parseInt64Value(s string) (int64, error) {
	s = trimSpace(s)
	if v, ok := smallInt(s); ok {
		return v, nil
	}
	return strconv.ParseInt(s, 10, 64)
}

// smallInt parses the common case, an optionally negative integer of up to 9 digits,
// without strconv's generality; anything else is left to strconv.
func smallInt(s string) (int64, bool) {
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		s = s[1:]
	}
	v, ok := digits(s, 9)
	if neg {
		v = -v
	}
	return v, ok
}

// digits parses 1 to max decimal digits and nothing else.
func digits(s string, max int) (int64, bool) {
	if s == "" || len(s) > max {
		return 0, false
	}
	var v int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}

// parseFloatValue parses an xs:double, the type of every fractional attribute of the feed
// (odds, probabilities, void and dead-heat factors, expected totals, ...), and accepts
// exactly its lexical space (XSD 1.1, section 3.3.5), after the whitespace the schema's
// collapse facet removes:
//
//	decimal   (+|-)? ([0-9]+ (. [0-9]*)? | . [0-9]+) ((e|E) (+|-)? [0-9]+)?   1.85, .5, 5., -1E3
//	special   INF, +INF, -INF, NaN                                               exactly so cased
//
// INF and -INF give math.Inf(1) and math.Inf(-1), NaN gives a NaN (test with math.IsNaN:
// a NaN equals nothing, itself included), and a decimal too large for a float64 gives the
// infinity of its sign, as XSD 1.1 maps it. strconv.ParseFloat accepts more than this ("Inf",
// "infinity", "nan", "0x1p-2", "1_000"), none of which a schema-valid document contains,
// so those are refused here before strconv sees them.
func parseFloatValue(s string) (float64, error) {
	s = trimSpace(s)
	if v, ok := shortDecimal(s); ok {
		return v, nil
	}
	switch s {
	case "INF", "+INF":
		return math.Inf(1), nil
	case "-INF":
		return math.Inf(-1), nil
	case "NaN":
		return math.NaN(), nil
	}
	if !isXSDDecimal(s) {
		return 0, errBadNumber
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil && !math.IsInf(v, 0) { // ErrRange with ±Inf is XSD's overflow to INF
		return 0, err
	}
	return v, nil
}

// isXSDDecimal reports whether s is in the decimal part of xs:double's lexical space, in
// which strconv.ParseFloat then reads the same value.
func isXSDDecimal(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	mant := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		mant++
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			mant++
		}
	}
	if mant == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(s)
}

// pow10 holds the powers of ten that a float64 represents exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// shortDecimal parses the feed's usual numbers, such as "1.85" or "0.1954": digits with at
// most one point and at most 15 digits in all. Both the digits (< 2^53) and the power of
// ten are exact in a float64, so one division gives the correctly rounded result, the same
// as strconv.ParseFloat's. Anything else is left to strconv.
func shortDecimal(s string) (float64, bool) {
	if s == "" || len(s) > 16 {
		return 0, false
	}
	var mant uint64
	digits, frac := 0, -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			mant = mant*10 + uint64(c-'0')
			digits++
			if frac >= 0 {
				frac++
			}
		case c == '.' && frac < 0:
			frac = 0
		default:
			return 0, false
		}
	}
	if digits == 0 || digits > 15 || frac == 0 {
		return 0, false // "." alone, or "5." (left to strconv, which agrees on its meaning)
	}
	if frac < 0 {
		return float64(mant), true
	}
	return float64(mant) / pow10[frac], true
}

func parseBoolValue(s string) (bool, error) {
	switch trimSpace(s) {
	case "1", "true":
		return true, nil
	case "0", "false":
		return false, nil
	}
	return false, errBadNumber
}

func parseMillisValue(s string) (time.Time, error) {
	ms, err := strconv.ParseInt(trimSpace(s), 10, 64)
	if err != nil {
		return time.Time{}, err
	}
	return time.UnixMilli(ms).UTC(), nil
}

func parseURNValue(s string) (URN, error) {
	return ParseURN(trimSpace(s))
}
