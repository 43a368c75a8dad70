// Package xmlscan is a small, allocation-free XML tokenizer for documents whose data lives
// in attributes, such as the odds feed's messages.
//
// It reads a document held in a string and returns element names and attribute values as
// substrings of it, so that a schema-specific decoder built on it needs no reflection and
// allocates only for values that contain entity references. Text content, comments, CDATA
// sections, processing instructions and directives are skipped.
//
// Its grammar follows encoding/xml in strict mode wherever encoding/xml accepts a document:
// the same whitespace, the same end-tag matching, the same entity and line-ending rules in
// attribute values. It accepts a few documents that encoding/xml rejects (for example names
// made of characters XML does not allow), because checking them would cost time on every
// message and would not change any value read from a valid one.
package xmlscan

import (
	"fmt"
	"strings"
)

// SyntaxError describes malformed input and where it was found.
type SyntaxError struct {
	Offset int    // byte offset in the input
	Msg    string // what was wrong
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("xml syntax error at byte %d: %s", e.Offset, e.Msg)
}

// maxDepth bounds the elements a decoder may open with Open. Skipped content may nest
// deeper: Skip counts depth instead of remembering names.
const maxDepth = 16

// Scanner reads one XML document.
//
// The usual sequence is Root, then NextAttr until it reports false, then Open; inside an
// opened element, Child moves to each child element in turn, and Skip passes over a child
// that is not wanted. Every method does nothing after an error; Err returns it.
type Scanner struct {
	src   string
	pos   int
	err   error
	name  string // name of the element whose start tag was read last
	inTag bool   // the current start tag's attributes are not all consumed
	empty bool   // the current start tag ended with "/>"
	depth int
	open  [maxDepth]string
}

// Reset prepares s to read src.
func (s *Scanner) Reset(src string) {
	*s = Scanner{src: src}
}

// Err returns the first error met, or nil.
func (s *Scanner) Err() error { return s.err }

// Offset returns the current read position in the input.
func (s *Scanner) Offset() int { return s.pos }

// Name returns the raw name (with any namespace prefix) of the current element.
func (s *Scanner) Name() string { return s.name }

// Root moves to the start tag of the document's root element, skipping the XML
// declaration, comments, directives and any text before it. It reports false on error.
func (s *Scanner) Root() bool {
	if s.err != nil {
		return false
	}
	for {
		i := nextMarkup(s.src, s.pos)
		if i < 0 {
			s.fail(len(s.src), "no root element")
			return false
		}
		s.pos = i
		switch s.markup() {
		case tokStart:
			return true
		case tokEnd:
			s.fail(s.pos, "end tag before the root element")
			return false
		case tokError:
			return false
		}
	}
}

// NextAttr returns the next attribute of the current start tag, its value with entity
// references and line endings decoded. It reports false after the last attribute.
func (s *Scanner) NextAttr() (name, value string, ok bool) {
	if !s.inTag || s.err != nil {
		return "", "", false
	}
	// The hot loop of every decoder: kept on locals so that the compiler keeps them in
	// registers instead of reloading s.src and s.pos at every byte.
	src, p := s.src, s.pos
	for p < len(src) && isSpace(src[p]) {
		p++
	}
	if p >= len(src) {
		s.fail(p, "unexpected end of input in a start tag")
		return "", "", false
	}
	switch src[p] {
	case '>':
		s.pos = p + 1
		s.inTag = false
		return "", "", false
	case '/':
		if p+1 >= len(src) || src[p+1] != '>' {
			s.fail(p, "expected /> in a start tag")
			return "", "", false
		}
		s.pos = p + 2
		s.inTag, s.empty = false, true
		return "", "", false
	}
	start := p
	for p < len(src) && !nameEnd[src[p]] {
		p++
	}
	if p == start {
		s.fail(p, fmt.Sprintf("unexpected %q in a start tag", src[p]))
		return "", "", false
	}
	name = src[start:p]
	for p < len(src) && isSpace(src[p]) {
		p++
	}
	if p >= len(src) || src[p] != '=' {
		s.fail(p, fmt.Sprintf("attribute %s without =", name))
		return "", "", false
	}
	p++
	for p < len(src) && isSpace(src[p]) {
		p++
	}
	if p >= len(src) || (src[p] != '"' && src[p] != '\'') {
		s.fail(p, fmt.Sprintf("value of attribute %s is not quoted", name))
		return "", "", false
	}
	quote := src[p]
	p++
	valueAt := p
	// Values are short: one pass byte by byte beats three IndexByte calls.
	special := false
	for p < len(src) && src[p] != quote {
		if c := src[p]; c == '&' || c == '\r' {
			special = true
		}
		p++
	}
	if p == len(src) {
		s.fail(p, fmt.Sprintf("unexpected end of input in the value of attribute %s", name))
		return "", "", false
	}
	raw := src[valueAt:p]
	s.pos = p + 1
	if !special {
		return name, raw, true
	}
	value, err := unescape(raw)
	if err != "" {
		s.fail(valueAt, fmt.Sprintf("attribute %s: %s", name, err))
		return "", "", false
	}
	return name, value, true
}

// Open finishes the current start tag, skipping attributes not read. It reports whether
// the element has content to read with Child: false for an empty element (<e/>).
func (s *Scanner) Open() bool {
	for {
		if _, _, ok := s.NextAttr(); !ok {
			break
		}
	}
	if s.err != nil || s.empty {
		return false
	}
	if s.depth == maxDepth {
		s.fail(s.pos, "elements nested too deeply")
		return false
	}
	s.open[s.depth] = s.name
	s.depth++
	return true
}

// Child moves to the next child element of the element opened last. At that element's end
// tag it closes the element and reports false.
func (s *Scanner) Child() bool {
	if s.err != nil || s.depth == 0 {
		return false
	}
	for {
		i := nextMarkup(s.src, s.pos)
		if i < 0 {
			s.fail(len(s.src), fmt.Sprintf("unexpected end of input in element %s", s.open[s.depth-1]))
			return false
		}
		s.pos = i
		switch s.markup() {
		case tokStart:
			return true
		case tokEnd:
			if want := s.open[s.depth-1]; s.name != want {
				s.fail(s.pos, fmt.Sprintf("element %s closed by </%s>", want, s.name))
				return false
			}
			s.depth--
			return false
		case tokError:
			return false
		}
	}
}

// Skip passes over the current element: its remaining attributes, its content and its
// end tag.
func (s *Scanner) Skip() {
	if !s.Open() {
		return
	}
	s.depth-- // Skip tracks nesting by count from here on.
	for depth := 1; depth > 0; {
		i := nextMarkup(s.src, s.pos)
		if i < 0 {
			s.fail(len(s.src), fmt.Sprintf("unexpected end of input in element %s", s.open[s.depth]))
			return
		}
		s.pos = i
		switch s.markup() {
		case tokStart:
			for {
				if _, _, ok := s.NextAttr(); !ok {
					break
				}
			}
			if s.err != nil {
				return
			}
			if !s.empty {
				depth++
			}
		case tokEnd:
			depth--
		case tokError:
			return
		}
	}
}

type token int8

const (
	tokError token = iota
	tokStart
	tokEnd
	tokOther // comment, CDATA, processing instruction or directive: already skipped
)

// markup reads the markup that starts at s.pos (a '<'). For a start tag it stops after the
// name, leaving the attributes to NextAttr; everything else it reads whole.
func (s *Scanner) markup() token {
	at := s.pos
	p := at + 1
	if p >= len(s.src) {
		s.fail(at, "unexpected end of input after <")
		return tokError
	}
	switch s.src[p] {
	case '/':
		p++
		end := scanName(s.src, p)
		if end == p {
			s.fail(p, "expected a name after </")
			return tokError
		}
		s.name = s.src[p:end]
		s.pos = end
		s.skipSpace()
		if s.pos >= len(s.src) || s.src[s.pos] != '>' {
			s.fail(s.pos, fmt.Sprintf("invalid characters between </%s and >", s.name))
			return tokError
		}
		s.pos++
		return tokEnd
	case '?':
		end := strings.Index(s.src[p+1:], "?>")
		if end < 0 {
			s.fail(at, "unterminated processing instruction")
			return tokError
		}
		s.pos = p + 1 + end + 2
		return tokOther
	case '!':
		return s.bang(at)
	}
	end := scanName(s.src, p)
	if end == p {
		s.fail(p, "expected an element name after <")
		return tokError
	}
	s.name = s.src[p:end]
	s.pos = end
	s.inTag, s.empty = true, false
	return tokStart
}

// bang skips a comment, a CDATA section or a directive starting at at ("<!").
func (s *Scanner) bang(at int) token {
	rest := s.src[at+2:]
	switch {
	case strings.HasPrefix(rest, "--"):
		// encoding/xml ends a comment at its first "--", which must be followed by '>'.
		end := strings.Index(rest[2:], "--")
		if end < 0 || at+2+2+end+2 >= len(s.src) || s.src[at+2+2+end+2] != '>' {
			s.fail(at, "malformed or unterminated comment")
			return tokError
		}
		s.pos = at + 2 + 2 + end + 3
		return tokOther
	case strings.HasPrefix(rest, "[CDATA["):
		end := strings.Index(rest[7:], "]]>")
		if end < 0 {
			s.fail(at, "unterminated CDATA section")
			return tokError
		}
		s.pos = at + 2 + 7 + end + 3
		return tokOther
	case strings.HasPrefix(rest, "["):
		s.fail(at, "invalid <![ sequence")
		return tokError
	case strings.HasPrefix(rest, "-"):
		s.fail(at, "invalid sequence <!- not part of <!--")
		return tokError
	}
	return s.directive(at)
}

// directive skips <!DOCTYPE ...> and its kin the way encoding/xml does: quoted text is
// opaque, nested <...> pairs are counted, and comments inside are skipped.
func (s *Scanner) directive(at int) token {
	src := s.src
	var quote byte
	depth := 0
	// Like encoding/xml, take the byte after "<!" as part of the keyword whatever it is.
	for p := at + 3; p < len(src); p++ {
		b := src[p]
		switch {
		case quote != 0:
			if b == quote {
				quote = 0
			}
		case b == '>' && depth == 0:
			s.pos = p + 1
			return tokOther
		case b == '\'' || b == '"':
			quote = b
		case b == '>':
			depth--
		case b == '<':
			if strings.HasPrefix(src[p+1:], "!--") {
				end := strings.Index(src[p+4:], "-->")
				if end < 0 {
					s.fail(p, "unterminated comment in a directive")
					return tokError
				}
				p += 4 + end + 2
				continue
			}
			depth++
		}
	}
	s.fail(at, "unterminated directive")
	return tokError
}

// nextMarkup returns the offset of the next '<' from p, or -1. The text between tags is
// mostly a little indentation, which a plain loop crosses faster than IndexByte starts.
func nextMarkup(src string, p int) int {
	for end := min(p+16, len(src)); p < end; p++ {
		if src[p] == '<' {
			return p
		}
	}
	if i := strings.IndexByte(src[p:], '<'); i >= 0 {
		return p + i
	}
	return -1
}

func (s *Scanner) skipSpace() {
	for s.pos < len(s.src) && isSpace(s.src[s.pos]) {
		s.pos++
	}
}

func (s *Scanner) fail(offset int, msg string) {
	if s.err == nil {
		s.err = &SyntaxError{Offset: offset, Msg: msg}
	}
	s.inTag = false
}

// isSpace reports the four characters encoding/xml treats as whitespace.
func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// scanName returns the end of the name that starts at p: the first byte that cannot be part
// of a name in a tag.
func scanName(src string, p int) int {
	for p < len(src) && !nameEnd[src[p]] {
		p++
	}
	return p
}

// nameEnd marks the bytes that end a name in a tag.
var nameEnd = [256]bool{' ': true, '\t': true, '\n': true, '\r': true, '/': true, '>': true, '=': true, '<': true, '"': true, '\'': true}

// Local returns the local part of a raw name, as encoding/xml splits it: "odds" for
// "ns:odds", the whole name when it has no prefix.
func Local(name string) string {
	for i := 0; i < len(name); i++ {
		if name[i] == ':' {
			if i == 0 || i == len(name)-1 {
				return name
			}
			return name[i+1:]
		}
	}
	return name
}
