package feed

import "testing"

// BenchmarkParseFloatValue measures the double parser alone, on the feed's usual numbers
// (the shortDecimal fast path) and on forms that take the slow path (sign, exponent, more
// than 15 digits), where the xs:double grammar check runs before strconv.
func BenchmarkParseFloatValue(b *testing.B) {
	for _, bc := range []struct{ name, in string }{
		{"odds", "1.85"},
		{"probability", "0.1954321"},
		{"negative", "-0.25"},
		{"exponent", "8.97094E-4"},
		{"long", "0.30000000000000004"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := parseFloatValue(bc.in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
