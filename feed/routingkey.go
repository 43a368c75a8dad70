package feed

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// RoutingKey is a parsed feed routing key, of the grammar
//
//	priority.pre.live.type.sport.urnPrefix.eventId[.nodeId]
//
// for example hi.-.live.odds_change.1.sr:match.1234.- or -.-.-.alive.-.-.-.-. A "-"
// segment is the field's zero value. Routing keys carry the event id, so that messages
// can be dispatched by match without decoding their bodies.
type RoutingKey struct {
	Priority Priority    // "hi", "lo" or "-"
	Prematch bool        // "pre" in the second segment
	Virtual  bool        // "virt" in the second segment; never set together with Prematch
	Live     bool        // "live" in the third segment
	Type     MessageType // the message type
	SportID  int         // 0 for "-"
	Event    URN         // from the urnPrefix and eventId segments; zero for "-.-"
	Node     NodeID      // the node the message is addressed to; zero for "-" or absent
}

// Priority is a routing key's first segment.
type Priority uint8

// Priorities of feed messages.
const (
	PriorityNone Priority = iota // "-": system messages
	PriorityHigh                 // "hi"
	PriorityLow                  // "lo"
)

// String returns the segment form of p.
func (p Priority) String() string {
	switch p {
	case PriorityHigh:
		return "hi"
	case PriorityLow:
		return "lo"
	}
	return "-"
}

// NodeID identifies one SDK instance, so that the replies to the recoveries it requests
// are routed to it and not to its peers on the same account. The zero value means "no node".
type NodeID struct {
	id  int
	set bool
}

// Node returns the node id n. Node ids may be negative (the feed's convention for
// development instances).
func Node(n int) NodeID { return NodeID{id: n, set: true} }

// Int returns the node id and whether one is set.
func (n NodeID) Int() (int, bool) { return n.id, n.set }

// IsSet reports whether n names a node.
func (n NodeID) IsSet() bool { return n.set }

// String returns the routing-key segment for n: the number, or "-".
func (n NodeID) String() string {
	if !n.set {
		return "-"
	}
	return strconv.Itoa(n.id)
}

// MarshalText implements encoding.TextMarshaler with the form of String, so that a node
// id persists as "7", or "-" when unset.
func (n NodeID) MarshalText() ([]byte, error) { return []byte(n.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler: a number, or "-" or "" for no node.
func (n *NodeID) UnmarshalText(b []byte) error {
	if len(b) == 0 || string(b) == "-" {
		*n = NodeID{}
		return nil
	}
	id, err := strconv.Atoi(string(b))
	if err != nil {
		return fmt.Errorf("feed: node id %q is not a number", b)
	}
	*n = Node(id)
	return nil
}

// RoutingKeyError reports a malformed routing key and the segment at fault.
type RoutingKeyError struct {
	Key     string // the key as received
	Segment int    // 1-based segment number; 0 when the number of segments is wrong
	Reason  string
}

func (e *RoutingKeyError) Error() string {
	if e.Segment == 0 {
		return fmt.Sprintf("feed: routing key %q: %s", e.Key, e.Reason)
	}
	parts := strings.Split(e.Key, ".")
	value := ""
	if e.Segment <= len(parts) {
		value = parts[e.Segment-1]
	}
	return fmt.Sprintf("feed: routing key %q: segment %d (%s) %q: %s",
		e.Key, e.Segment, segmentNames[e.Segment-1], value, e.Reason)
}

var segmentNames = [8]string{"priority", "pre", "live", "type", "sport", "urnPrefix", "eventId", "nodeId"}

var errBadNumber = errors.New("not a number")

// ParseRoutingKey parses a routing key. The error, a *RoutingKeyError, names the segment
// that is wrong.
func ParseRoutingKey(key string) (RoutingKey, error) {
	var seg [8]string
	n, rest := 0, key
	for {
		i := strings.IndexByte(rest, '.')
		if n == len(seg) {
			return RoutingKey{}, &RoutingKeyError{Key: key, Reason: "more than 8 segments"}
		}
		if i < 0 {
			seg[n] = rest
			n++
			break
		}
		seg[n] = rest[:i]
		n++
		rest = rest[i+1:]
	}
	if n < 7 {
		return RoutingKey{}, &RoutingKeyError{Key: key, Reason: fmt.Sprintf("%d segments, want 7 or 8", n)}
	}
	bad := func(i int, reason string) (RoutingKey, error) {
		return RoutingKey{}, &RoutingKeyError{Key: key, Segment: i + 1, Reason: reason}
	}

	var k RoutingKey
	switch seg[0] {
	case "hi":
		k.Priority = PriorityHigh
	case "lo":
		k.Priority = PriorityLow
	case "-":
	default:
		return bad(0, `want "hi", "lo" or "-"`)
	}
	switch seg[1] {
	case "pre":
		k.Prematch = true
	case "virt":
		k.Virtual = true
	case "-":
	default:
		return bad(1, `want "pre", "virt" or "-"`)
	}
	switch seg[2] {
	case "live":
		k.Live = true
	case "-":
	default:
		return bad(2, `want "live" or "-"`)
	}
	if k.Type = ParseMessageType(seg[3]); k.Type == MessageUnknown {
		return bad(3, "unknown message type")
	}
	if seg[4] != "-" {
		id, err := parseCanonicalID(seg[4])
		if err != nil || id <= 0 || id > 1<<31-1 {
			return bad(4, `want a positive integer or "-"`)
		}
		k.SportID = int(id)
	}
	switch {
	case seg[5] == "-" && seg[6] == "-":
	case seg[5] == "-":
		return bad(5, "missing for event id "+seg[6])
	case seg[6] == "-":
		return bad(6, "missing for URN prefix "+seg[5])
	default:
		prefix, typ, ok := strings.Cut(seg[5], ":")
		if !ok || !isURNPrefix(prefix) || !isURNType(typ) {
			return bad(5, `want prefix:type of a URN, such as "sr:match", or "-"`)
		}
		id, err := parseCanonicalID(seg[6])
		if err != nil {
			return bad(6, "the event id "+err.Error()+` (want a nonzero integer without leading zeros, or "-")`)
		}
		k.Event = URN{Prefix: internURNPart(prefix), Type: internURNPart(typ), ID: id}
	}
	if n == 8 && seg[7] != "-" {
		id, err := strconv.Atoi(seg[7])
		if err != nil || id < -1<<31 || id > 1<<31-1 || seg[7] != strconv.Itoa(id) {
			return bad(7, `want an integer or "-"`)
		}
		k.Node = Node(id)
	}
	return k, nil
}

// errNotCanonical refuses an id with leading zeros: a routing key formats back to the
// same text, and only the shortest form does.
var errNotCanonical = errors.New("has leading zeros")

// parseCanonicalID parses a URN id as parseID does, in its canonical form only:
// -?[1-9][0-9]*.
func parseCanonicalID(s string) (int64, error) {
	digits := s
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) > 1 && digits[0] == '0' {
		return 0, errNotCanonical
	}
	return parseID(s)
}

// String formats k with all eight segments.
func (k RoutingKey) String() string {
	b, _ := k.AppendText(make([]byte, 0, 64))
	return string(b)
}

// AppendText appends the routing key to b. It implements encoding.TextAppender.
func (k RoutingKey) AppendText(b []byte) ([]byte, error) {
	b = append(b, k.Priority.String()...)
	switch {
	case k.Virtual:
		b = append(b, ".virt"...)
	case k.Prematch:
		b = append(b, ".pre"...)
	default:
		b = append(b, ".-"...)
	}
	if k.Live {
		b = append(b, ".live."...)
	} else {
		b = append(b, ".-."...)
	}
	b = append(b, k.Type.String()...)
	b = append(b, '.')
	if k.SportID > 0 {
		b = strconv.AppendInt(b, int64(k.SportID), 10)
	} else {
		b = append(b, '-')
	}
	if k.Event.IsZero() {
		b = append(b, ".-.-."...)
	} else {
		b = append(b, '.')
		b = append(b, k.Event.Prefix...)
		b = append(b, ':')
		b = append(b, k.Event.Type...)
		b = append(b, '.')
		b = strconv.AppendInt(b, k.Event.ID, 10)
		b = append(b, '.')
	}
	if id, ok := k.Node.Int(); ok {
		return strconv.AppendInt(b, int64(id), 10), nil
	}
	return append(b, '-'), nil
}

// Is reports whether target is ErrMalformedMessage: a message with a bad key is unparsable.
func (e *RoutingKeyError) Is(target error) bool { return target == ErrMalformedMessage }
