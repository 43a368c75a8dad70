package feed

import (
	"strconv"
	"unsafe"

	"github.com/feedkit/feedkit/internal/xmlscan"
)

// Peeked is what Peek reads from a message's root element.
type Peeked struct {
	Type      MessageType // from the root element's name; MessageUnknown for another name
	Producer  int         // the product attribute; 0 when absent
	RequestID int64       // the request_id attribute; 0 when absent
}

// Peek reads the message type, producer and request id from the root element of body
// without decoding the rest. It reads only up to the end of the root's start tag, which
// makes it cheap enough for a transport's reading goroutine (a few percent of a decode).
func Peek(body []byte) (Peeked, error) {
	var s xmlscan.Scanner
	// A read-only view of body: Peek returns no string that could outlive the call.
	s.Reset(unsafe.String(unsafe.SliceData(body), len(body)))
	var p Peeked
	if !s.Root() {
		return p, peekError(&s)
	}
	p.Type = ParseMessageType(xmlscan.Local(s.Name()))
	for {
		name, value, ok := s.NextAttr()
		if !ok {
			break
		}
		var err error
		switch xmlscan.Local(name) {
		case "product":
			p.Producer, err = parseIntValue(value)
		case "request_id":
			p.RequestID, err = parseInt64Value(value)
		}
		if err != nil {
			return Peeked{}, &DecodeError{Type: p.Type, Offset: s.Offset(),
				Msg: "attribute " + xmlscan.Local(name) + "=" + strconv.Quote(value) + ": want an integer"}
		}
	}
	if err := s.Err(); err != nil {
		return Peeked{}, peekError(&s)
	}
	return p, nil
}

func peekError(s *xmlscan.Scanner) error {
	if se, ok := s.Err().(*xmlscan.SyntaxError); ok {
		return &DecodeError{Offset: se.Offset, Msg: se.Msg}
	}
	return &DecodeError{Offset: s.Offset(), Msg: s.Err().Error()}
}
