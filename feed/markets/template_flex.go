package markets

import (
	"errors"
	"fmt"
	"strings"
)

// FlexScore returns the name of an outcome of a flex-score market (one whose description
// carries the attribute "is_flex_score"): the outcome's name, a score "home:away" such as
// "1:0", shifted by the market line's score specifier, such as "1:1", so "1:0" renders
// "2:1". Both SDKs do this (FlexMarketHelper.getName / GetName with Score.parse / Parse).
//
// Each side is an unsigned number, digits[.digits]; the sum keeps the longer run of digits
// after the point, as .NET's decimal does ("0.5:0" and "1:1" give "1.5:1"; Java, adding
// doubles, writes integral sums without a point and others as doubles). A side with a sign,
// an exponent or no digits is an error, as are a name or score without exactly one ':'.
func FlexScore(outcome, score string) (string, error) {
	o, err := parseScore(outcome)
	if err != nil {
		return "", fmt.Errorf("markets: flex score: outcome name %q: %w", outcome, err)
	}
	s, err := parseScore(score)
	if err != nil {
		return "", fmt.Errorf("markets: flex score: specifier score=%q: %w: %w", score, ErrSpecifierValue, err)
	}
	home, ok1 := o[0].add(s[0])
	away, ok2 := o[1].add(s[1])
	if !ok1 || !ok2 {
		return "", fmt.Errorf("markets: flex score: %q plus %q: %w", outcome, score, errOverflow)
	}
	var buf [64]byte
	b := home.appendAbs(buf[:0])
	b = append(b, ':')
	b = away.appendAbs(b)
	return string(b), nil
}

var errScore = errors.New("want home:away, each digits[.digits]")

func parseScore(s string) ([2]fixed, error) {
	var sc [2]fixed
	home, away, ok := strings.Cut(s, ":")
	if !ok {
		return sc, errScore
	}
	for i, side := range [2]string{home, away} {
		if side == "" || side[0] < '0' || side[0] > '9' {
			return sc, errScore
		}
		d, err := parseDecimal(side)
		if err != nil {
			return sc, errScore
		}
		if sc[i], err = d.fixed(); err != nil {
			return sc, err
		}
	}
	return sc, nil
}
