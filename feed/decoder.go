package feed

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/feedkit/feedkit/internal/xmlscan"
)

// ErrMalformedMessage matches, with errors.Is, every error that says a message body could
// not be decoded.
var ErrMalformedMessage = errors.New("feed: malformed message")

// DecodeError reports a message body that is not a valid message of the expected type.
type DecodeError struct {
	Type   MessageType // the type the body was decoded as
	Offset int         // byte offset in the body at or just after the fault
	Msg    string      // what is wrong
}

func (e *DecodeError) Error() string {
	if e.Type == MessageUnknown {
		return fmt.Sprintf("feed: decode message at byte %d: %s", e.Offset, e.Msg)
	}
	return fmt.Sprintf("feed: decode %s at byte %d: %s", e.Type, e.Offset, e.Msg)
}

// Is reports whether target is ErrMalformedMessage.
func (e *DecodeError) Is(target error) bool { return target == ErrMalformedMessage }

// decoder reads one message body with an xmlscan.Scanner and converts attribute values.
// The decode functions of each message type drive it; the first error stops everything
// and is kept in err.
type decoder struct {
	s    xmlscan.Scanner
	typ  MessageType
	err  error
	elem string // local name of the element being read, for error messages
	an   string // local name of the current attribute
	av   string // value of the current attribute
	// owned says body will never change again: its bytes can back the message's strings.
	owned bool
	// outcomes counts the odds outcomes read so far: the index in the message's outcome
	// array of the one being read.
	outcomes int
	// extra holds the additional probabilities of odds outcomes, and the index of the
	// outcome each belongs to.
	extra struct {
		probs  []AdditionalProbabilities
		owners []int
	}
}

// begin starts reading body and moves to its root element, which must be named after t.
func (d *decoder) begin(body []byte, t MessageType) bool {
	d.typ = t
	// Every string field of the message is a substring of one string: a copy of the
	// body, or the body itself when nobody can change it any more.
	if d.owned {
		d.s.Reset(unsafe.String(unsafe.SliceData(body), len(body)))
	} else {
		d.s.Reset(string(body))
	}
	if !d.s.Root() {
		d.syntax()
		return false
	}
	if name := xmlscan.Local(d.s.Name()); name != t.String() {
		d.failf("root element is <%s>, want <%s>", name, t)
		return false
	}
	d.elem = t.String()
	return true
}

// attr moves to the next attribute of the current start tag.
func (d *decoder) attr() bool {
	if d.err != nil {
		return false
	}
	name, value, ok := d.s.NextAttr()
	if !ok {
		d.syntax()
		return false
	}
	d.an, d.av = xmlscan.Local(name), value
	return true
}

// open finishes the current start tag and reports whether the element has content.
func (d *decoder) open() bool {
	if d.err != nil {
		return false
	}
	ok := d.s.Open()
	d.syntax()
	return ok
}

// child moves to the next child element of the element opened last.
func (d *decoder) child() bool {
	if d.err != nil {
		return false
	}
	if d.s.Child() {
		d.elem = xmlscan.Local(d.s.Name())
		return true
	}
	d.syntax()
	return false
}

// skip passes over the current element.
func (d *decoder) skip() {
	if d.err == nil {
		d.s.Skip()
		d.syntax()
	}
}

// syntax records the scanner's error, if any.
func (d *decoder) syntax() {
	if err := d.s.Err(); err != nil && d.err == nil {
		var se *xmlscan.SyntaxError
		if errors.As(err, &se) {
			d.err = &DecodeError{Type: d.typ, Offset: se.Offset, Msg: se.Msg}
		} else {
			d.err = &DecodeError{Type: d.typ, Offset: d.s.Offset(), Msg: err.Error()}
		}
	}
}

func (d *decoder) failf(format string, args ...any) {
	if d.err == nil {
		d.err = &DecodeError{Type: d.typ, Offset: d.s.Offset(), Msg: fmt.Sprintf(format, args...)}
	}
}

// need fails unless ok, naming the attribute the current element lacks.
func (d *decoder) need(ok bool, attr string) {
	if !ok {
		d.failf("<%s> lacks attribute %s", d.elem, attr)
	}
}

func (d *decoder) badValue(want string) {
	d.failf("<%s> attribute %s=%q: want %s", d.elem, d.an, d.av, want)
}

func (d *decoder) int() int {
	v, err := parseIntValue(d.av)
	if err != nil {
		d.badValue("an integer")
	}
	return v
}

func (d *decoder) int64() int64 {
	v, err := parseInt64Value(d.av)
	if err != nil {
		d.badValue("an integer")
	}
	return v
}

// int8 reads a code that the feed enumerates (a team, a cashout status): any value from
// -128 to 127 is read, want names the expected ones.
func (d *decoder) int8(want string) int8 {
	v, err := parseInt8Value(d.av)
	if err != nil {
		d.badValue(want)
	}
	return v
}

func (d *decoder) cashoutStatus() CashoutStatus {
	return CashoutStatus(d.int8("a cashout status, 1, -1 or -2"))
}

func (d *decoder) marketStatus() MarketStatus {
	v, err := parseMarketStatusValue(d.av)
	if err != nil {
		d.badValue("a market status from -128 to 127")
	}
	return v
}

func (d *decoder) float() float64 {
	v, err := parseFloatValue(d.av)
	if err != nil {
		d.badValue("an xs:double such as 1.85, INF or NaN")
	}
	return v
}

func (d *decoder) bool() bool {
	v, err := parseBoolValue(d.av)
	if err != nil {
		d.badValue("1, 0, true or false")
	}
	return v
}

func (d *decoder) millis() time.Time {
	v, err := parseMillisValue(d.av)
	if err != nil {
		d.badValue("milliseconds since the Unix epoch")
	}
	return v
}

func (d *decoder) urn() URN {
	v, err := parseURNValue(d.av)
	if err != nil {
		d.badValue("a URN such as sr:match:1234 (" + err.Error() + ")")
	}
	return v
}

// Header attributes seen, for the required-attribute checks.
const (
	sawProduct uint8 = 1 << iota
	sawEvent
	sawTimestamp
	sawRequestID
)

// header reads the current attribute into h if it is a common one.
func (d *decoder) header(h *Header, seen *uint8) bool {
	switch d.an {
	case "product":
		h.Producer = d.int()
		*seen |= sawProduct
	case "event_id":
		h.Event = d.urn()
		*seen |= sawEvent
	case "timestamp":
		h.Timestamp = d.millis()
		*seen |= sawTimestamp
	case "request_id":
		h.RequestID = d.int64()
		*seen |= sawRequestID
	default:
		return false
	}
	return true
}

// root starts reading body as a message of type t: it reads the root element's
// attributes, the common ones into h and any other through extra (which looks at d.an and
// d.av), checks that the required common ones are there, and reports whether the root
// has content for Child to read.
func (d *decoder) root(body []byte, t MessageType, h *Header, extra func()) bool {
	if !d.begin(body, t) {
		return false
	}
	var seen uint8
	for d.attr() {
		if !d.header(h, &seen) && extra != nil {
			extra()
		}
	}
	d.need(seen&sawProduct != 0, "product")
	d.need(seen&sawTimestamp != 0, "timestamp")
	switch {
	case t == MessageSnapshotComplete:
		d.need(seen&sawRequestID != 0, "request_id")
	case !t.IsSystem():
		d.need(seen&sawEvent != 0, "event_id")
	}
	return d.open()
}

// leaf finishes a message whose root has no children to read: its content, if any, is
// skipped up to the root's end tag, which must be there.
func (d *decoder) leaf(open bool) {
	for open && d.child() {
		d.skip()
	}
}

// All the outcomes of a message go into one backing array, one allocation instead of one
// per market. While the message is read the array may still move as it grows, so a
// market's Outcomes slice at first only records how many outcomes are its own;
// shareOutcomes then points every market into the final array.

// readOutcomes reads the <outcome> children of the market whose attributes were just read,
// appending each (as read makes it) to all; other, if not nil, reads the attributes of any
// other child (it looks at d.elem). It returns all, and the market's provisional
// Outcomes: a slice whose length is the number of outcomes that are the market's.
func readOutcomes[T any](d *decoder, all []T, read func() T, other func()) ([]T, []T) {
	start := len(all)
	if d.open() {
		for d.child() {
			if d.elem == "outcome" {
				all = append(all, read())
			} else if other != nil {
				other()
			}
			d.skip()
		}
	}
	return all, all[start:]
}

// shareOutcomes cuts each market's outcomes from all, in order, once all has stopped
// moving. A market without outcomes gets a nil slice, as encoding/xml leaves it.
func shareOutcomes[M, T any](markets []M, all []T, outcomes func(*M) *[]T) {
	off := 0
	for i := range markets {
		o := outcomes(&markets[i])
		n := len(*o)
		if n == 0 {
			*o = nil
			continue
		}
		*o = all[off : off+n : off+n]
		off += n
	}
}
