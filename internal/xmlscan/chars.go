package xmlscan

import (
	"encoding/xml"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The character checks. Each byte of a document passes one of the loops here or in
// NextAttr, which look it up in a table: an ASCII byte that needs nothing more costs one
// lookup; only control characters and non-ASCII bytes go to char.

// char checks the character at src[p], which the tables flagged (a control character or
// a non-ASCII byte), and returns its length, or what is wrong with it.
func char(src string, p int) (int, string) {
	c := src[p]
	if c < utf8.RuneSelf {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
			return 0, fmt.Sprintf("illegal character code %U", rune(c))
		}
		return 1, ""
	}
	r, n := utf8.DecodeRuneInString(src[p:])
	if r == utf8.RuneError && n == 1 {
		return 0, fmt.Sprintf("invalid UTF-8 byte 0x%02X", c)
	}
	if !isXMLChar(r) {
		return 0, fmt.Sprintf("illegal character code %U", r)
	}
	return n, ""
}

// chars checks the characters of src[from:to] (a comment, a processing instruction, a
// CDATA section, a directive) and reports whether all are allowed, failing otherwise.
func (s *Scanner) chars(from, to int) bool {
	src := s.src
	for p := from; p < to; {
		if plain[src[p]] {
			p++
			continue
		}
		n, bad := char(src, p)
		if bad != "" {
			s.fail(p, bad)
			return false
		}
		p += n
	}
	return true
}

// content checks the character data from s.pos up to the next '<' and returns the offset
// of that '<': -1 at the end of the input, -2 after an error. It follows encoding/xml's
// text rules: entity references must be known, "]]>" must be in a CDATA section.
func (s *Scanner) content() int {
	src := s.src
	for p := s.pos; p < len(src); {
		if text[src[p]] == 0 {
			p++
			continue
		}
		switch text[src[p]] {
		case tLess:
			return p
		case tAmp:
			_, n, bad := entity(src[p:])
			if bad != "" {
				s.fail(p, bad)
				return -2
			}
			p += n
		case tBracket:
			if strings.HasPrefix(src[p:], "]]>") {
				s.fail(p, "unescaped ]]> not in a CDATA section")
				return -2
			}
			p++
		default:
			n, bad := char(src, p)
			if bad != "" {
				s.fail(p, bad)
				return -2
			}
			p += n
		}
	}
	return -1
}

// scanName returns the end of the element or attribute name that starts at p, as
// encoding/xml reads one: bytes up to the first ASCII byte that cannot be in a name. A
// name that is there but that encoding/xml refuses (a bad first character, two colons,
// characters outside XML's name classes) gives a description instead.
func scanName(src string, p int) (int, string) {
	// The common case, an ASCII name without a colon, in a loop as tight as the one that
	// only looked for the name's end.
	start := p
	for p < len(src) && nameByte[src[p]]&(nStart|nMore) != 0 {
		p++
	}
	if p > start && nameByte[src[start]] == nStart && (p == len(src) || nameByte[src[p]] == 0) {
		return p, ""
	}
	p = start
	end, seen := nameEnd(src, p)
	bad := checkName(src, p, end, seen)
	if bad == "" && seen&nColon != 0 && strings.Count(src[p:end], ":") > 1 {
		bad = fmt.Sprintf("invalid XML name %q: more than one colon", src[p:end])
	}
	return end, bad
}

// plainName is scanName without the namespace rule: the name of a processing
// instruction's target.
func plainName(src string, p int) (int, string) {
	end, seen := nameEnd(src, p)
	return end, checkName(src, p, end, seen)
}

// nameEnd returns the end of the name that starts at p and the classes of its bytes.
func nameEnd(src string, p int) (int, byte) {
	var seen byte
	for p < len(src) {
		c := nameByte[src[p]]
		if c == 0 {
			break
		}
		seen |= c
		p++
	}
	return p, seen
}

// checkName checks the name src[start:p], whose bytes are of the classes seen.
func checkName(src string, start, p int, seen byte) string {
	if p == start {
		return ""
	}
	name := src[start:p]
	if seen&nHigh != 0 {
		if !utf8.ValidString(name) {
			return fmt.Sprintf("invalid UTF-8 in name %q", name)
		}
		if !isXMLName(name) {
			return fmt.Sprintf("invalid XML name %q", name)
		}
		return ""
	}
	if c := src[start]; nameByte[c]&(nStart|nColon) == 0 {
		return fmt.Sprintf("invalid XML name %q: it cannot start with %q", name, c)
	}
	return ""
}

// isXMLName asks encoding/xml whether name, which has non-ASCII characters, is a name:
// its tables of XML 1.0 name characters are not exported. The feed's names are ASCII,
// so the cost of this path does not matter.
func isXMLName(name string) bool {
	d := xml.NewDecoder(strings.NewReader("<?" + name + "?>"))
	tok, err := d.RawToken()
	pi, ok := tok.(xml.ProcInst)
	return err == nil && ok && pi.Target == name
}

// Classes of bytes in a name.
const (
	nStart = 1 << iota // may start a name: ASCII letter or '_'
	nColon             // ':', which may start a name too; at most one in a name
	nMore              // may follow: digit, '.', '-'
	nHigh              // a byte of a non-ASCII character, checked whole
)

// Classes of bytes in an attribute value.
const (
	vQuote   = 1 + iota // the closing quote
	vSpecial            // '&' or '\r': the value needs decoding
	vLess               // '<', refused
	vCheck              // a control character or a non-ASCII byte: see char
)

// Classes of bytes in character data.
const (
	tLess    = 1 + iota // the end of the text
	tAmp                // an entity reference
	tBracket            // maybe "]]>"
	tCheck              // a control character or a non-ASCII byte: see char
)

var (
	nameByte                 [256]byte
	valueDouble, valueSingle [256]byte
	text                     [256]byte
	plain                    [256]bool // an ASCII character XML allows
)

func init() {
	for c := 0; c < 256; c++ {
		b := byte(c)
		switch {
		case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', b == '_':
			nameByte[c] = nStart
		case b == ':':
			nameByte[c] = nColon
		case '0' <= b && b <= '9', b == '.', b == '-':
			nameByte[c] = nMore
		case b >= utf8.RuneSelf:
			nameByte[c] = nHigh
		}
		plain[c] = b < utf8.RuneSelf && (b >= 0x20 || isSpace(b))
		if !plain[c] {
			valueDouble[c], valueSingle[c], text[c] = vCheck, vCheck, tCheck
		}
	}
	for _, t := range []*[256]byte{&valueDouble, &valueSingle} {
		t['&'], t['\r'], t['<'] = vSpecial, vSpecial, vLess
	}
	valueDouble['"'], valueSingle['\''] = vQuote, vQuote
	text['<'], text['&'], text[']'] = tLess, tAmp, tBracket
}
