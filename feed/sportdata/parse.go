package sportdata

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/internal/xmlscan"
)

// A ParseError is a document of the Sports API that could not be read: malformed XML,
// another root element than the one asked for, or a required value missing or wrong.
// Doc names the document ("fixture of sr:match:1 in en").
type ParseError struct {
	Doc string
	Msg string
}

func (e *ParseError) Error() string { return "sportdata: " + e.Doc + ": " + e.Msg }

// parser reads one document with xmlscan, which allocates nothing of its own. The values
// kept are substrings of the document (a copy of the body the parser makes once): these
// documents are mostly attribute values, so keeping the document costs little more than
// copying each value, and one allocation beats one per value.
type parser struct {
	s    xmlscan.Scanner
	src  string
	lang string
	doc  string
	err  error
	// texts is a slab the Texts of the document take their one language from: one
	// allocation for many names. Each Text's slice is capped, so a merge copies.
	texts []langText
	// bools, ints and floats are slabs of the optional values (see slot).
	bools  []bool
	ints   []int
	floats []float64
}

func newParser(b []byte, lang, doc string) *parser {
	p := &parser{src: string(b), lang: lang, doc: doc}
	p.s.Reset(p.src)
	return p
}

// count guesses how many elements the document has that start with tag ("<event "), to
// size a list once: growing a list copies it over and over. A tag in a comment or with a
// namespace prefix makes the guess wrong, which costs only a grow.
func (p *parser) count(tag string) int {
	return strings.Count(p.src, tag)
}

// root moves to the root element and returns its local name; the API's error answer
// (<response>) is an error naming its code and message.
func (p *parser) root(want ...string) string {
	if !p.s.Root() {
		p.syntax()
		return ""
	}
	name := xmlscan.Local(p.s.Name())
	for _, w := range want {
		if name == w {
			return name
		}
	}
	if name == "response" {
		code := ""
		for n, v, ok := p.s.NextAttr(); ok; n, v, ok = p.s.NextAttr() {
			if xmlscan.Local(n) == "response_code" {
				code = v
			}
		}
		p.failf("the API answered <response response_code=%q>", code)
		return ""
	}
	p.failf("root element is <%s>, want <%s>", name, want[0])
	return ""
}

// attr returns the current start tag's next attribute, by local name.
func (p *parser) attr() (name, value string, ok bool) {
	if p.err != nil {
		return "", "", false
	}
	n, v, ok := p.s.NextAttr()
	if !ok {
		p.syntax()
		return "", "", false
	}
	return xmlscan.Local(n), v, true
}

// children calls each for every child element of the current one, by local name; each
// must read or skip the child.
func (p *parser) children(each func(name string)) {
	if p.err != nil || !p.s.Open() {
		p.syntax()
		return
	}
	for p.err == nil && p.s.Child() {
		each(xmlscan.Local(p.s.Name()))
	}
	p.syntax()
}

// each calls fn for every child element of the current one named elem, with the scanner
// on it; fn must read or skip it. Other children are skipped.
func (p *parser) each(elem string, fn func()) {
	p.children(func(name string) {
		if name != elem {
			p.skip()
			return
		}
		fn()
	})
}

func (p *parser) skip() { p.s.Skip() }

func (p *parser) syntax() {
	if p.err == nil && p.s.Err() != nil {
		p.err = &ParseError{Doc: p.doc, Msg: p.s.Err().Error()}
	}
}

func (p *parser) failf(format string, args ...any) {
	if p.err == nil {
		p.err = &ParseError{Doc: p.doc, Msg: fmt.Sprintf(format, args...)}
	}
}

func (p *parser) text(v string) Text {
	if v == "" {
		return Text{}
	}
	if len(p.texts) == cap(p.texts) {
		// A name every 80 bytes or so: a player's profile has a few, a schedule
		// thousands. A slab that runs out is followed by a larger one.
		p.texts = make([]langText, 0, min(max(len(p.src)/80, 4, 2*cap(p.texts)), 256))
	}
	n := len(p.texts)
	p.texts = append(p.texts, langText{p.lang, v})
	return Text{in: p.texts[n : n+1 : n+1]}
}

func (p *parser) urn(elem, attr, v string) feed.URN {
	u, err := feed.ParseURN(v)
	if err != nil {
		p.failf("<%s %s=%q>: %v", elem, attr, v, err)
	}
	return u
}

func (p *parser) time(elem, attr, v string) time.Time {
	t, err := parseTime(v)
	if err != nil {
		p.failf("<%s %s=%q>: not a time", elem, attr, v)
	}
	return t
}

// parseTime reads the API's times: RFC 3339, or without an offset (UTC), or a date. The
// layout is picked by the value's shape: a failed time.Parse costs an allocation.
func parseTime(v string) (time.Time, error) {
	switch {
	case len(v) == len(time.DateOnly):
		if t, ok := parseDate(v); ok {
			return t, nil
		}
		return time.Parse(time.DateOnly, v)
	case len(v) == len("2006-01-02T15:04:05"):
		return time.Parse("2006-01-02T15:04:05", v)
	}
	t, err := time.Parse(time.RFC3339, v)
	return t.UTC(), err
}

// parseDate reads a YYYY-MM-DD date without time.Parse's generality (birth dates and
// season bounds are many); anything else is left to time.Parse, for its error.
func parseDate(v string) (time.Time, bool) {
	if v[4] != '-' || v[7] != '-' {
		return time.Time{}, false
	}
	y, ok1 := digits(v[0:4])
	m, ok2 := digits(v[5:7])
	d, ok3 := digits(v[8:10])
	if !ok1 || !ok2 || !ok3 || m < 1 || m > 12 || d < 1 || d > 31 {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if t.Day() != d {
		return time.Time{}, false // the 31st of a shorter month
	}
	return t, true
}

func digits(s string) (int, bool) {
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func (p *parser) bool(elem, attr, v string) *bool {
	b, err := strconv.ParseBool(v)
	if err != nil {
		p.failf("<%s %s=%q>: not a boolean", elem, attr, v)
		return nil
	}
	return slot(&p.bools, b)
}

func (p *parser) int(elem, attr, v string) *int {
	n, err := strconv.Atoi(v)
	if err != nil {
		p.failf("<%s %s=%q>: not an integer", elem, attr, v)
		return nil
	}
	return slot(&p.ints, n)
}

func (p *parser) float(elem, attr, v string) *float64 {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		p.failf("<%s %s=%q>: not a number", elem, attr, v)
		return nil
	}
	return slot(&p.floats, f)
}

// slot stores v in the slab and returns its address: the optional values of a document
// share a few allocations instead of one each. A slab is never grown in place, so the
// addresses handed out stay valid.
func slot[T any](slab *[]T, v T) *T {
	if len(*slab) == cap(*slab) {
		*slab = make([]T, 0, min(4+2*cap(*slab), 64))
	}
	*slab = append(*slab, v)
	return &(*slab)[len(*slab)-1]
}

// need fails unless the element had its required id.
func (p *parser) need(elem string, id feed.URN) {
	if id.IsZero() {
		p.failf("<%s> without an id", elem)
	}
}
