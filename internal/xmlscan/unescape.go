package xmlscan

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// unescape decodes an attribute value that contains entity references or carriage returns,
// following encoding/xml: the five predefined entities and numeric references are
// replaced; "\r\n" and a lone '\r' become '\n'. It returns a description of the first bad
// reference, and its offset in raw, instead of a value when there is one.
func unescape(raw string) (string, int, string) {
	var b strings.Builder
	b.Grow(len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		switch c {
		case '\r':
			b.WriteByte('\n')
			i++
			if i < len(raw) && raw[i] == '\n' {
				i++
			}
			continue
		case '&':
			r, n, bad := entity(raw[i:])
			if bad != "" {
				return "", i, bad
			}
			b.WriteRune(r)
			i += n
			continue
		}
		b.WriteByte(c)
		i++
	}
	return b.String(), 0, ""
}

// entity decodes the reference at the start of s ("&...;") and returns its rune and length.
func entity(s string) (r rune, n int, bad string) {
	semi := strings.IndexByte(s, ';')
	if semi < 0 {
		return 0, 0, "entity reference without a semicolon"
	}
	ref := s[1:semi]
	switch ref {
	case "lt":
		return '<', semi + 1, ""
	case "gt":
		return '>', semi + 1, ""
	case "amp":
		return '&', semi + 1, ""
	case "apos":
		return '\'', semi + 1, ""
	case "quot":
		return '"', semi + 1, ""
	}
	if len(ref) < 2 || ref[0] != '#' {
		return 0, 0, "unknown entity &" + ref + ";"
	}
	digits, base := ref[1:], 10
	if digits[0] == 'x' {
		digits, base = digits[1:], 16
	}
	// ParseUint would accept '_' separators and a sign-free "0x"; XML allows digits only.
	for i := 0; i < len(digits); i++ {
		if !isDigit(digits[i], base) {
			return 0, 0, "invalid character reference &" + ref + ";"
		}
	}
	v, err := strconv.ParseUint(digits, base, 32)
	if err != nil || v > utf8.MaxRune || !isXMLChar(rune(v)) {
		return 0, 0, "invalid character reference &" + ref + ";"
	}
	return rune(v), semi + 1, ""
}

func isDigit(c byte, base int) bool {
	switch {
	case '0' <= c && c <= '9':
		return true
	case base == 16:
		return 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
	}
	return false
}

// isXMLChar reports whether r is in XML's Char production, as encoding/xml checks it.
// Surrogates are let through because encoding/xml turns them into U+FFFD before checking.
func isXMLChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xD800 && r <= 0xDFFF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= 0x10FFFF
}
