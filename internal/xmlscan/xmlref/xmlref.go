// Package xmlref is the reference judgement of whether a document is well-formed XML, for
// the differential tests and fuzz targets of the parsers built on internal/xmlscan (the
// feed's decoder, the market descriptions): encoding/xml in strict mode, read to the end,
// plus the rules of the XML specification that encoding/xml does not enforce. The parsers
// must accept exactly what it accepts.
package xmlref

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// WellFormed reads body to its end (or, with rootOnly, to the end of the root
// element's start tag, as far as Peek reads) with encoding/xml in strict mode, and adds the
// rules of the XML specification that encoding/xml does not enforce: an attribute appears
// once in a start tag (names as written); every character is valid UTF-8 and an XML Char;
// one root element, and outside it only whitespace (a byte order mark first), comments,
// processing instructions, and directives before the root.
func WellFormed(body []byte, rootOnly bool) error {
	d := xml.NewDecoder(bytes.NewReader(body))
	depth, roots := 0, 0
	end := len(body)
	for {
		start := d.InputOffset()
		tok, err := d.Token()
		if err == io.EOF {
			if roots == 0 {
				return errors.New("no root element")
			}
			break
		}
		if err != nil {
			return err
		}
		switch tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				if roots++; roots > 1 {
					return errors.New("second root element")
				}
			}
			depth++
		case xml.EndElement:
			depth--
		case xml.CharData:
			raw := body[start:d.InputOffset()]
			if start == 0 {
				raw = bytes.TrimPrefix(raw, []byte("\uFEFF"))
			}
			if depth == 0 && len(bytes.Trim(raw, " \t\r\n")) > 0 {
				return errors.New("text or CDATA outside the root element")
			}
		case xml.Directive:
			if roots > 0 && depth == 0 {
				return errors.New("directive after the root element")
			}
		}
		if rootOnly && roots == 1 {
			end = int(d.InputOffset())
			break
		}
	}
	for i := 0; i < end; {
		r, n := utf8.DecodeRune(body[i:])
		if r == utf8.RuneError && n == 1 {
			return fmt.Errorf("invalid UTF-8 at byte %d", i)
		}
		if !(r == 0x09 || r == 0x0A || r == 0x0D || r >= 0x20 && r <= 0xD7FF ||
			r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF) {
			return fmt.Errorf("illegal character %U at byte %d", r, i)
		}
		i += n
	}
	// Duplicates, by the names as written: RawToken does not translate prefixes.
	raw := xml.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := raw.RawToken()
		if err != nil {
			return nil // the first pass has judged the syntax
		}
		if s, ok := tok.(xml.StartElement); ok {
			for i, a := range s.Attr {
				for _, b := range s.Attr[:i] {
					if a.Name == b.Name {
						return fmt.Errorf("attribute %s appears twice", a.Name.Local)
					}
				}
			}
			if rootOnly {
				return nil
			}
		}
	}
}
