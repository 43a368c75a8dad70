package markets

import (
	"errors"
	"math"
	"strconv"
)

const (
	minInt32 = math.MinInt32
	maxInt32 = math.MaxInt32
)

// parseInt32 parses an integer as both SDKs do (Java's Integer.parseInt, .NET's
// int.TryParse): an optional sign and decimal digits, within 32 bits.
func parseInt32(s string) (int64, error) {
	return strconv.ParseInt(s, 10, 32)
}

func appendInt(b []byte, n int64) []byte { return strconv.AppendInt(b, n, 10) }

// ordinals says how {!X} is written: in English, or in French.
type ordinals uint8

const (
	english ordinals = iota
	french
)

// ordinalsOf returns the ordinals of lang: French for "fr" (and "fr-CA", "fr_BE"),
// English for any other.
func ordinalsOf(lang string) ordinals {
	if len(lang) >= 2 && (lang[0] == 'f' || lang[0] == 'F') && (lang[1] == 'r' || lang[1] == 'R') &&
		(len(lang) == 2 || lang[2] == '-' || lang[2] == '_') {
		return french
	}
	return english
}

// append appends n (not negative) as an ordinal.
func (o ordinals) append(b []byte, n int64) []byte {
	b = strconv.AppendInt(b, n, 10)
	if o == french {
		if n == 1 {
			return append(b, "er"...)
		}
		return append(b, 'e')
	}
	if r := n % 100; r >= 11 && r <= 13 {
		return append(b, "th"...)
	}
	switch n % 10 {
	case 1:
		return append(b, "st"...)
	case 2:
		return append(b, "nd"...)
	case 3:
		return append(b, "rd"...)
	}
	return append(b, "th"...)
}

// decimal is a number as a specifier sends it, [+-]digits[.digits], kept as text so that it
// renders with the digits sent, as .NET's decimal does.
type decimal struct {
	neg  bool
	ip   string // the integer part's digits without leading zeros; "" when zero
	frac string // the digits after the point, as sent
}

var (
	errNotDecimal = errors.New("not a decimal number: want [+-]digits[.digits]")
	errTooLong    = errors.New("more than 18 digits for arithmetic")
	errOverflow   = errors.New("arithmetic overflows")
)

func parseDecimal(s string) (decimal, error) {
	var d decimal
	if s != "" && (s[0] == '+' || s[0] == '-') {
		d.neg = s[0] == '-'
		s = s[1:]
	}
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return d, errNotDecimal
	}
	ip := s[:i]
	if i < len(s) {
		if s[i] != '.' || i+1 == len(s) || !isDigits(s[i+1:]) {
			return d, errNotDecimal
		}
		d.frac = s[i+1:]
	}
	for len(ip) > 0 && ip[0] == '0' {
		ip = ip[1:]
	}
	d.ip = ip
	return d, nil
}

func (d decimal) isZero() bool {
	if d.ip != "" {
		return false
	}
	for i := 0; i < len(d.frac); i++ {
		if d.frac[i] != '0' {
			return false
		}
	}
	return true
}

// appendSigned appends d, negated if negate, with its sign: "+1.5", "-0.25", or "0" for
// any zero.
func (d decimal) appendSigned(b []byte, negate bool) []byte {
	if d.isZero() {
		return append(b, '0')
	}
	if d.neg != negate {
		b = append(b, '-')
	} else {
		b = append(b, '+')
	}
	return d.appendAbs(b)
}

func (d decimal) appendAbs(b []byte) []byte {
	if d.ip == "" {
		b = append(b, '0')
	} else {
		b = append(b, d.ip...)
	}
	if d.frac != "" {
		b = append(b, '.')
		b = append(b, d.frac...)
	}
	return b
}

// fixed is the number m / 10^scale.
type fixed struct {
	m     int64
	scale int
}

var pow10 = [...]int64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18}

func (d decimal) fixed() (fixed, error) {
	if len(d.ip)+len(d.frac) > 18 {
		return fixed{}, errTooLong
	}
	var m int64
	for _, s := range [2]string{d.ip, d.frac} {
		for i := 0; i < len(s); i++ {
			m = m*10 + int64(s[i]-'0')
		}
	}
	if d.neg {
		m = -m
	}
	return fixed{m: m, scale: len(d.frac)}, nil
}

// affine returns d, negated if neg, plus the integer c, keeping d's digits after the point.
func (d decimal) affine(neg bool, c int64) (fixed, error) {
	f, err := d.fixed()
	if err != nil {
		return f, err
	}
	if neg {
		f.m = -f.m
	}
	cs, ok := mul64(c, pow10[f.scale])
	if !ok {
		return f, errOverflow
	}
	if f.m, ok = add64(f.m, cs); !ok {
		return f, errOverflow
	}
	return f, nil
}

// add returns a+b at the larger of their scales.
func (a fixed) add(b fixed) (fixed, bool) {
	ok := true
	if a.scale < b.scale {
		a.m, ok = mul64(a.m, pow10[b.scale-a.scale])
	} else if b.scale < a.scale {
		b.m, ok = mul64(b.m, pow10[a.scale-b.scale])
	}
	if !ok {
		return fixed{}, false
	}
	m, ok := add64(a.m, b.m)
	return fixed{m: m, scale: max(a.scale, b.scale)}, ok
}

// appendSigned appends f, negated if negate, with its sign, as decimal.appendSigned does.
func (f fixed) appendSigned(b []byte, negate bool) []byte {
	if f.m == 0 {
		return append(b, '0')
	}
	if (f.m < 0) != negate {
		b = append(b, '-')
	} else {
		b = append(b, '+')
	}
	return f.appendAbs(b)
}

func (f fixed) appendAbs(b []byte) []byte {
	u := uint64(f.m)
	if f.m < 0 {
		u = -u
	}
	var tmp [20]byte
	digits := strconv.AppendUint(tmp[:0], u, 10)
	n := len(digits) - f.scale // digits before the point
	if n <= 0 {
		b = append(b, '0')
	} else {
		b = append(b, digits[:n]...)
	}
	if f.scale > 0 {
		b = append(b, '.')
		for ; n < 0; n++ {
			b = append(b, '0')
		}
		b = append(b, digits[n:]...)
	}
	return b
}

func add64(a, b int64) (int64, bool) {
	s := a + b
	if (a >= 0) == (b >= 0) && (s >= 0) != (a >= 0) {
		return s, false
	}
	return s, true
}

func mul64(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	p := a * b
	return p, p/b == a && !(a == -1 && b == math.MinInt64) && !(b == -1 && a == math.MinInt64)
}
