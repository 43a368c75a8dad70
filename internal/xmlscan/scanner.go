// Package xmlscan is a small, allocation-free XML tokenizer for documents whose data lives
// in attributes, such as the odds feed's messages.
//
// It reads a document held in a string and returns element names and attribute values as
// substrings of it, so that a schema-specific decoder built on it needs no reflection and
// allocates only for values that contain entity references. Text content, comments, CDATA
// sections, processing instructions and directives are checked and skipped.
//
// It accepts exactly the documents that encoding/xml in strict mode accepts when it reads
// them to the end, with the same whitespace, end-tag matching, name, entity and line-ending
// rules, less the documents that break one of these rules of the XML specification, which
// encoding/xml lets through:
//
//   - an attribute appears once in a start tag (names compared as written);
//   - every character of the document, in comments, processing instructions and
//     directives too, is valid UTF-8 and allowed by XML's Char production;
//   - one root element: outside it only whitespace, comments and processing instructions,
//     and directives before it (a UTF-8 byte order mark may open the document).
//
// Like encoding/xml it refuses an XML declaration of a version other than 1.0 or of an
// encoding other than UTF-8. Every refusal is a *SyntaxError naming the byte offset of the
// fault. The checks ride on the loops that already read each byte, with a fast path for
// ASCII; names with non-ASCII characters, which the feed never sends, are checked by
// encoding/xml itself.
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

// maxDepth is the nesting the scanner tracks without allocating; deeper elements, which
// only a skipped or hostile document has, go to a slice.
const maxDepth = 16

// maxAttrs is the number of attributes of one start tag checked for duplicates without
// allocating; later ones go to a map.
const maxAttrs = 16

// Scanner reads one XML document.
//
// The usual sequence is Root, then NextAttr until it reports false, then Open; inside an
// opened element, Child moves to each child element in turn, and Skip passes over a child
// that is not wanted. When the root element ends, the scanner checks the rest of the
// document. Every method does nothing after an error; Err returns it.
type Scanner struct {
	src   string
	pos   int
	err   error
	name  string // name of the element whose start tag was read last
	inTag bool   // the current start tag's attributes are not all consumed
	empty bool   // the current start tag ended with "/>"
	depth int
	open  [maxDepth]string
	deep  []string // names of open elements beyond maxDepth
	// The attribute names of the current start tag, for the unique-attribute rule, as
	// offsets in src: storing them costs no write barrier.
	nattr int
	attrs [maxAttrs]struct{ at, n uint32 }
	more  map[string]struct{}
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

// Root moves to the start tag of the document's root element, skipping a byte order mark,
// the XML declaration, comments, processing instructions, directives and whitespace
// before it. It reports false on error.
func (s *Scanner) Root() bool {
	if s.err != nil {
		return false
	}
	if s.pos == 0 && strings.HasPrefix(s.src, "\uFEFF") {
		s.pos = len("\uFEFF")
	}
	switch s.outside(true) {
	case tokStart:
		return true
	case tokEOF:
		s.fail(len(s.src), "no root element")
	}
	return false
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
	// An ASCII name without a colon, checked here in the loop that finds its end;
	// scanName checks any other.
	for p < len(src) && nameByte[src[p]]&(nStart|nMore) != 0 {
		p++
	}
	if p == start || nameByte[src[start]] != nStart || p < len(src) && nameByte[src[p]] != 0 {
		var bad string
		if p, bad = scanName(src, start); bad != "" {
			s.fail(start, bad)
			return "", "", false
		}
	}
	if p == start {
		if _, bad := char(src, p); bad != "" {
			s.fail(p, bad)
		} else {
			s.fail(p, fmt.Sprintf("expected an attribute name in a start tag, found %q", src[p]))
		}
		return "", "", false
	}
	name = src[start:p]
	if !s.unique(name, start) {
		s.fail(start, fmt.Sprintf("attribute %s appears twice in <%s>", name, s.name))
		return "", "", false
	}
	for p < len(src) && isSpace(src[p]) {
		p++
	}
	if p >= len(src) || src[p] != '=' {
		switch _, bad := char(src, min(p, len(src)-1)); {
		case p == len(src) || isSpace(src[p-1]) || src[p] == '/' || src[p] == '>':
			s.fail(p, fmt.Sprintf("attribute %s without =", name))
		case bad != "":
			s.fail(p, bad)
		default:
			s.fail(p, fmt.Sprintf("unexpected %q after attribute name %s", src[p], name))
		}
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
	class := &valueDouble
	if src[p] == '\'' {
		class = &valueSingle
	}
	p++
	valueAt := p
	// Values are short: one pass byte by byte, one table lookup a byte, finds the end
	// quote and every byte that needs a second look.
	special := false
scan:
	for p < len(src) {
		if class[src[p]] == 0 {
			p++
			continue
		}
		switch class[src[p]] {
		case vQuote:
			break scan
		case vSpecial:
			special = true
			p++
		case vLess:
			s.fail(p, fmt.Sprintf("unescaped < in the value of attribute %s", name))
			return "", "", false
		default:
			n, bad := char(src, p)
			if bad != "" {
				s.fail(p, fmt.Sprintf("attribute %s: %s", name, bad))
				return "", "", false
			}
			p += n
		}
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
	value, at, err := unescape(raw)
	if err != "" {
		s.fail(valueAt+at, fmt.Sprintf("attribute %s: %s", name, err))
		return "", "", false
	}
	return name, value, true
}

// unique records name as an attribute of the current start tag and reports whether it is
// the first with that name. The feed's elements have a few attributes each: comparing with
// the earlier ones is cheaper than hashing; a tag with very many uses a map.
func (s *Scanner) unique(name string, at int) bool {
	n := min(s.nattr, maxAttrs)
	for i := 0; i < n; i++ {
		if a := s.attrs[i]; int(a.n) == len(name) && s.src[a.at:a.at+a.n] == name {
			return false
		}
	}
	if s.nattr < maxAttrs {
		s.attrs[s.nattr] = struct{ at, n uint32 }{uint32(at), uint32(len(name))}
	} else {
		if s.more == nil {
			s.more = make(map[string]struct{})
		}
		if _, dup := s.more[name]; dup {
			return false
		}
		s.more[name] = struct{}{}
	}
	s.nattr++
	return true
}

// Open finishes the current start tag, skipping attributes not read. It reports whether
// the element has content to read with Child: false for an empty element (<e/>).
func (s *Scanner) Open() bool {
	for {
		if _, _, ok := s.NextAttr(); !ok {
			break
		}
	}
	if s.err != nil {
		return false
	}
	if s.empty {
		s.closed()
		return false
	}
	s.push(s.name)
	return true
}

// Child moves to the next child element of the element opened last. At that element's end
// tag it closes the element and reports false.
func (s *Scanner) Child() bool {
	if s.err != nil || s.depth == 0 {
		return false
	}
	for {
		at := s.content()
		if at < 0 {
			if at == -1 {
				s.fail(len(s.src), fmt.Sprintf("unexpected end of input in element %s", s.top()))
			}
			return false
		}
		s.pos = at
		switch s.markup() {
		case tokStart:
			return true
		case tokEnd:
			if want := s.top(); s.name != want {
				s.fail(s.pos, fmt.Sprintf("element %s closed by </%s>", want, s.name))
				return false
			}
			s.pop()
			s.closed()
			return false
		case tokError:
			return false
		}
	}
}

// Skip passes over the current element: its remaining attributes, its content and its
// end tag, checking all of it as Child does.
func (s *Scanner) Skip() {
	if !s.Open() {
		return
	}
	base := s.depth - 1
	for s.err == nil && s.depth > base {
		if s.Child() {
			s.Open()
		}
	}
}

// closed runs after an element ends: after the root, only whitespace, comments and
// processing instructions may follow.
func (s *Scanner) closed() {
	if s.depth != 0 || s.err != nil {
		return
	}
	if s.outside(false) == tokStart {
		s.fail(s.pos-len(s.name)-1, fmt.Sprintf("second root element <%s>", s.name))
	}
}

// outside reads the markup outside the root element up to a start tag, the end of the
// input or an error. Text other than whitespace, CDATA sections and end tags have no
// place there, nor directives after the root.
func (s *Scanner) outside(beforeRoot bool) token {
	where := "after the root element"
	if beforeRoot {
		where = "before the root element"
	}
	for {
		p := s.pos
		for p < len(s.src) && isSpace(s.src[p]) {
			p++
		}
		s.pos = p
		if p == len(s.src) {
			return tokEOF
		}
		if s.src[p] != '<' {
			if _, bad := char(s.src, p); bad != "" {
				s.fail(p, bad)
			} else if beforeRoot && strings.IndexByte(s.src[p:], '<') < 0 {
				s.fail(p, "no root element, only text")
			} else {
				s.fail(p, "text "+where)
			}
			return tokError
		}
		switch t := s.markup(); t {
		case tokStart, tokError:
			return t
		case tokEnd:
			s.fail(p, fmt.Sprintf("end tag </%s> %s", s.name, where))
			return tokError
		case tokCDATA:
			s.fail(p, "CDATA section "+where)
			return tokError
		case tokDirective:
			if !beforeRoot {
				s.fail(p, "directive "+where)
				return tokError
			}
		}
	}
}

func (s *Scanner) push(name string) {
	if s.depth < maxDepth {
		s.open[s.depth] = name
	} else {
		s.deep = append(s.deep, name)
	}
	s.depth++
}

func (s *Scanner) top() string {
	if s.depth <= maxDepth {
		return s.open[s.depth-1]
	}
	return s.deep[s.depth-1-maxDepth]
}

func (s *Scanner) pop() {
	s.depth--
	if s.depth >= maxDepth {
		s.deep = s.deep[:s.depth-maxDepth]
	}
}

type token int8

const (
	tokError token = iota
	tokStart
	tokEnd
	tokOther     // comment or processing instruction: already skipped
	tokCDATA     // already skipped
	tokDirective // already skipped
	tokEOF
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
		end, bad := scanName(s.src, p)
		if bad != "" {
			s.fail(p, bad)
			return tokError
		}
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
		return s.procInst(at)
	case '!':
		return s.bang(at)
	}
	src, end := s.src, p
	for end < len(src) && nameByte[src[end]]&(nStart|nMore) != 0 {
		end++
	}
	if end == p || nameByte[src[p]] != nStart || end < len(src) && nameByte[src[end]] != 0 {
		var bad string
		if end, bad = scanName(src, p); bad != "" {
			s.fail(p, bad)
			return tokError
		}
		if end == p {
			s.fail(p, "expected an element name after <")
			return tokError
		}
	}
	s.name = s.src[p:end]
	s.pos = end
	s.inTag, s.empty = true, false
	s.nattr = 0
	if s.more != nil {
		clear(s.more)
	}
	return tokStart
}

// procInst skips a processing instruction starting at at ("<?"). Like encoding/xml it
// refuses an XML declaration, wherever it is, of a version other than 1.0 or of an
// encoding other than UTF-8.
func (s *Scanner) procInst(at int) token {
	p := at + 2
	end, bad := plainName(s.src, p)
	if bad != "" {
		s.fail(p, bad)
		return tokError
	}
	if end == p {
		s.fail(p, "expected a target name after <?")
		return tokError
	}
	target := s.src[p:end]
	s.pos = end
	s.skipSpace()
	close := strings.Index(s.src[s.pos:], "?>")
	if close < 0 {
		s.fail(at, "unterminated processing instruction")
		return tokError
	}
	content := s.src[s.pos : s.pos+close]
	if !s.chars(s.pos, s.pos+close) {
		return tokError
	}
	if target == "xml" {
		if v := pseudoAttr("version=", content); v != "" && v != "1.0" {
			s.fail(at, fmt.Sprintf("unsupported XML version %q: only 1.0 is supported", v))
			return tokError
		}
		if e := pseudoAttr("encoding=", content); e != "" && !strings.EqualFold(e, "utf-8") {
			s.fail(at, fmt.Sprintf("unsupported encoding %q: only UTF-8 is supported", e))
			return tokError
		}
	}
	s.pos += close + 2
	return tokOther
}

// pseudoAttr returns the value of a pseudo-attribute in an XML declaration's content,
// found the way encoding/xml finds it (its procInst): the first param ("version=") followed
// by a quote.
func pseudoAttr(param, s string) string {
	i := 0
	var quote byte
	for i < len(s) {
		sub := s[i:]
		k := strings.Index(sub, param)
		if k < 0 || len(param)+k >= len(sub) {
			return ""
		}
		i += len(param) + k + 1
		if c := sub[len(param)+k]; c == '\'' || c == '"' {
			quote = c
			break
		}
	}
	if quote == 0 {
		return ""
	}
	j := strings.IndexByte(s[i:], quote)
	if j < 0 {
		return ""
	}
	return s[i : i+j]
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
		if !s.chars(at+4, at+4+end) {
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
		if !s.chars(at+9, at+9+end) {
			return tokError
		}
		s.pos = at + 2 + 7 + end + 3
		return tokCDATA
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
			if !s.chars(at+2, p) {
				return tokError
			}
			s.pos = p + 1
			return tokDirective
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
