package feed

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// URN identifies a sport event, as the feed writes it: prefix, type and numeric id, for
// example sr:match:1234, sr:stage:42 or vf:match:7. The zero URN means "none".
//
// URN is comparable and small, so it serves as a map key (the concurrent listener keys
// its per-match queues by it).
type URN struct {
	Prefix string // "sr", "vf", ...
	Type   string // "match", "stage", "season", ...
	// ID is the event's number: nonzero, and negative for some events (Sportradar's SDKs
	// test sr:match:-5555197 and wns:draw:-2143997118), so its sign says nothing about
	// whether it is valid.
	ID int64
}

// ParseURN parses "prefix:type:id" in the grammar that Sportradar's SDKs enforce:
//
//	prefix  one or more ASCII letters                 sr, vf, wns, ccc
//	type    one or more ASCII letters, '_' or '2'     match, simple_team, h2h_tournament
//	id      an optional '-' and decimal digits        1234, -5555197
//
// The id is a nonzero int64: some events have negative ids, and neither SDK accepts 0.
// Leading zeros are accepted, as the SDKs accept them, and String drops them. The error
// says which part is wrong.
func ParseURN(s string) (URN, error) {
	prefix, rest, ok := strings.Cut(s, ":")
	typ, id, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 {
		return URN{}, fmt.Errorf("feed: URN %q: want prefix:type:id", s)
	}
	if !isURNPrefix(prefix) {
		return URN{}, fmt.Errorf("feed: URN %q: prefix %q: want ASCII letters", s, prefix)
	}
	if !isURNType(typ) {
		return URN{}, fmt.Errorf("feed: URN %q: type %q: want ASCII letters, '_' or '2'", s, typ)
	}
	n, err := parseID(id)
	if err != nil {
		return URN{}, fmt.Errorf("feed: URN %q: id %q %w", s, id, err)
	}
	return URN{Prefix: internURNPart(prefix), Type: internURNPart(typ), ID: n}, nil
}

// MustParseURN is ParseURN for constants in tests and examples; it panics on error.
func MustParseURN(s string) URN {
	u, err := ParseURN(s)
	if err != nil {
		panic(err)
	}
	return u
}

// IsZero reports whether u is the zero URN.
func (u URN) IsZero() bool { return u == URN{} }

// String formats u as prefix:type:id, or "" for the zero URN.
func (u URN) String() string {
	if u.IsZero() {
		return ""
	}
	b, _ := u.AppendText(nil)
	return string(b)
}

// AppendText appends the text form of u to b. It implements encoding.TextAppender.
func (u URN) AppendText(b []byte) ([]byte, error) {
	if u.IsZero() {
		return b, nil
	}
	b = append(b, u.Prefix...)
	b = append(b, ':')
	b = append(b, u.Type...)
	b = append(b, ':')
	return strconv.AppendInt(b, u.ID, 10), nil
}

// MarshalText implements encoding.TextMarshaler.
func (u URN) MarshalText() ([]byte, error) { return u.AppendText(nil) }

// UnmarshalText implements encoding.TextUnmarshaler. Empty text gives the zero URN.
func (u *URN) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*u = URN{}
		return nil
	}
	v, err := ParseURN(string(b))
	if err != nil {
		return err
	}
	*u = v
	return nil
}

// isURNPrefix reports whether s is a URN prefix: ASCII letters, as both SDKs require
// ([a-zA-Z]+ in Urn.cs and URN.java).
func isURNPrefix(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return s != ""
}

// isURNType reports whether s is a URN type: ASCII letters and '_' as both SDKs require,
// and '2', which the Java SDK admits ([a-zA-Z_2]+) so that h2h_tournament, a type both
// SDKs list, parses. Other digits are refused: the .NET SDK's tests refuse sr:match1:12333.
func isURNType(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '_' && c != '2' && (c|0x20 < 'a' || c|0x20 > 'z') {
			return false
		}
	}
	return s != ""
}

// Errors of parseID, worded to follow the id in a message: id "x" is not an integer.
var (
	errIDSyntax = errors.New("is not an integer")
	errIDRange  = errors.New("is out of range: an id is a 64-bit integer, from -9223372036854775808 to 9223372036854775807")
	errIDZero   = errors.New("is zero, which no event has")
)

// parseID parses an id, -?[0-9]+, nonzero and within int64, without allocating. Up to 18
// digits cannot overflow, so they are summed directly; longer ids go to strconv, which
// after the digit check can fail only on range.
func parseID(s string) (int64, error) {
	digits := s
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if digits == "" {
		return 0, errIDSyntax
	}
	var v int64
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if c < '0' || c > '9' {
			return 0, errIDSyntax
		}
		v = v*10 + int64(c-'0')
	}
	if len(digits) > 18 {
		var err error
		if v, err = strconv.ParseInt(s, 10, 64); err != nil {
			return 0, errIDRange
		}
	} else if len(s) > len(digits) {
		v = -v
	}
	if v == 0 {
		return 0, errIDZero
	}
	return v, nil
}

// internURNPart returns a constant for the URN parts the feed and the Sports API use all
// the time, so that a URN decoded from a message does not keep the whole message alive
// through a substring, nor costs an allocation.
func internURNPart(s string) string {
	switch s {
	case "sr":
		return "sr"
	case "vf":
		return "vf"
	case "wns":
		return "wns"
	case "match":
		return "match"
	case "stage":
		return "stage"
	case "season":
		return "season"
	case "tournament":
		return "tournament"
	case "simple_tournament":
		return "simple_tournament"
	case "draw":
		return "draw"
	case "lottery":
		return "lottery"
	case "competitor":
		return "competitor"
	case "player":
		return "player"
	case "sport":
		return "sport"
	case "category":
		return "category"
	case "venue":
		return "venue"
	}
	return strings.Clone(s)
}
