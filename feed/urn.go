package feed

import (
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
	ID     int64
}

// ParseURN parses "prefix:type:id". The id must be a non-negative integer.
func ParseURN(s string) (URN, error) {
	prefix, rest, ok := strings.Cut(s, ":")
	if !ok || prefix == "" {
		return URN{}, fmt.Errorf("feed: URN %q: want prefix:type:id", s)
	}
	typ, id, ok := strings.Cut(rest, ":")
	if !ok || typ == "" {
		return URN{}, fmt.Errorf("feed: URN %q: want prefix:type:id", s)
	}
	n, err := parseID(id)
	if err != nil {
		return URN{}, fmt.Errorf("feed: URN %q: id %q is not a non-negative integer", s, id)
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

// parseID parses a non-negative decimal id of up to 18 digits (so it fits an int64)
// without allocating.
func parseID(s string) (int64, error) {
	if v, ok := digits(s, 18); ok {
		return v, nil
	}
	return 0, errBadNumber
}

// internURNPart returns a constant for the URN parts the feed uses all the time, so that
// a URN decoded from a message does not keep the whole message alive through a substring.
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
	}
	return strings.Clone(s)
}
