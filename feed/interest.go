package feed

import "strconv"

// MessageInterest selects the messages a session receives. Each session of an SDK has
// one; the broker routes each message to the sessions whose interest it matches.
//
// A MessageInterest is comparable, so that a SessionRef can key a map. Two
// SpecifiedMatchesOnly interests are equal only when one is a copy of the other, not
// because they list the same events.
type MessageInterest struct {
	kind   interestKind
	events *[]URN // SpecifiedMatchesOnly's, never changed: a pointer keeps the type comparable
}

type interestKind uint8

const (
	interestAll interestKind = iota
	interestLive
	interestPrematch
	interestHi
	interestLo
	interestVirtual
	interestEvents
)

// The message interests. The zero MessageInterest is AllMessages.
var (
	AllMessages              = MessageInterest{kind: interestAll}
	LiveMessagesOnly         = MessageInterest{kind: interestLive}
	PrematchMessagesOnly     = MessageInterest{kind: interestPrematch}
	HiPriorityMessagesOnly   = MessageInterest{kind: interestHi}
	LoPriorityMessagesOnly   = MessageInterest{kind: interestLo}
	VirtualSportMessagesOnly = MessageInterest{kind: interestVirtual}
)

// SpecifiedMatchesOnly is the interest in the messages of the events listed.
func SpecifiedMatchesOnly(events ...URN) MessageInterest {
	list := append([]URN(nil), events...)
	return MessageInterest{kind: interestEvents, events: &list}
}

// list returns the events of a SpecifiedMatchesOnly interest, for reading only.
func (mi MessageInterest) list() []URN {
	if mi.events == nil {
		return nil
	}
	return *mi.events
}

// interestNames are the interests' short names, in SessionRef.Label.
var interestNames = [...]string{
	interestAll:      "all",
	interestLive:     "live",
	interestPrematch: "prematch",
	interestHi:       "hi",
	interestLo:       "lo",
	interestVirtual:  "virtual",
	interestEvents:   "matches",
}

// String names the interest.
func (mi MessageInterest) String() string {
	switch mi.kind {
	case interestLive:
		return "live messages only"
	case interestPrematch:
		return "prematch messages only"
	case interestHi:
		return "hi priority messages only"
	case interestLo:
		return "lo priority messages only"
	case interestVirtual:
		return "virtual sport messages only"
	case interestEvents:
		return "specified matches only (" + strconv.Itoa(len(mi.list())) + ")"
	}
	return "all messages"
}

// Events returns the events of a SpecifiedMatchesOnly interest.
func (mi MessageInterest) Events() []URN { return append([]URN(nil), mi.list()...) }

// BindingKeys returns the topic patterns that bind a session's queue for this interest.
// Each pattern is bound for messages addressed to no node ("-") and, when node is set, to
// that node; the seven-segment form (no node segment) is bound too. The system messages
// (alive, snapshot_complete) are always included.
func (mi MessageInterest) BindingKeys(node NodeID) []string {
	var bases []string
	switch mi.kind {
	case interestLive:
		bases = []string{"*.*.live.*.*.*.*"}
	case interestPrematch:
		bases = []string{"*.pre.*.*.*.*.*"}
	case interestHi:
		bases = []string{"hi.*.*.*.*.*.*"}
	case interestLo:
		bases = []string{"lo.*.*.*.*.*.*"}
	case interestVirtual:
		bases = []string{"*.virt.*.*.*.*.*"}
	case interestEvents:
		for _, e := range mi.list() {
			bases = append(bases, "*.*.*.*.*."+e.Prefix+":"+e.Type+"."+strconv.FormatInt(e.ID, 10))
		}
	default:
		bases = []string{"*.*.*.*.*.*.*"}
	}
	if mi.kind != interestAll {
		bases = append(bases, "-.-.-.alive.-.-.-", "-.-.-.snapshot_complete.-.-.-")
	}
	keys := make([]string, 0, 3*len(bases))
	for _, b := range bases {
		keys = append(keys, b, b+".-")
		if node.IsSet() {
			keys = append(keys, b+"."+node.String())
		}
	}
	return keys
}

// matches reports whether a message with routing key k is of this interest for node: the
// rules BindingKeys expresses as topic patterns, written out for the tests to compare.
func (mi MessageInterest) matches(k RoutingKey, node NodeID) bool {
	if k.Node.IsSet() && k.Node != node {
		return false
	}
	if k.Type.IsSystem() {
		return true
	}
	switch mi.kind {
	case interestLive:
		return k.Live
	case interestPrematch:
		return k.Prematch
	case interestHi:
		return k.Priority == PriorityHigh
	case interestLo:
		return k.Priority == PriorityLow
	case interestVirtual:
		return k.Virtual
	case interestEvents:
		for _, e := range mi.list() {
			if e == k.Event {
				return true
			}
		}
		return false
	}
	return true
}
