package feed

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// MalformedCase is a message body that is not well-formed XML (issue 23's table), with the
// fault Decode must name and the byte offset at which it must name it. Exported for the
// session test in package feed_test.
type MalformedCase struct {
	Name   string
	Type   MessageType
	Body   []byte
	Offset int    // of the fault
	Msg    string // a part of the error message naming the fault
}

// wellFormedBodies are valid messages that the malformed cases spoil, one per shape: a
// root with nested elements that are read (odds_change, bet_settlement, bet_cancel) and
// roots whose content is only skipped.
var wellFormedBodies = []struct {
	typ          MessageType
	attrs, inner string
}{
	{MessageOddsChange, `product="1" event_id="sr:match:1" timestamp="1"`,
		`<odds><market id="1" specifiers="total=2.5"><outcome id="1" odds="1.5"/></market></odds>`},
	{MessageBetSettlement, `product="1" event_id="sr:match:1" timestamp="1" certainty="2"`,
		`<outcomes><market id="1"><outcome id="1" result="1"/></market></outcomes>`},
	{MessageBetCancel, `product="1" event_id="sr:match:1" timestamp="1"`, `<market id="1"/>`},
	{MessageBetStop, `product="1" event_id="sr:match:1" timestamp="1" groups="all"`, ``},
	{MessageAlive, `product="1" timestamp="1" subscribed="1"`, ``},
	{MessageSnapshotComplete, `product="1" timestamp="1" request_id="5"`, ``},
}

// Where a malformed case puts its fragment in a well-formed body.
const (
	inProlog   = iota // before the root element
	inRootTag         // after the root element's attributes
	inContent         // the root element's last child
	inEpilogue        // after the root element
)

// malformedRows are the faults, each a fragment placed in a well-formed body; the fault is
// reported at the first byte of mark in the fragment (a mismatched end tag just after it).
// ROOT in a fragment stands for the root's name.
var malformedRows = []struct {
	name, frag, mark, msg string
	where                 int
}{
	{"mismatched end tag in skipped content", `<extra><mrket id="2"></market></extra>`, `</extra>`, "element mrket closed by </market>", inContent},
	{"mismatched end tag", `<outcome id="1" odds="1.5"></outcomeX><!---->`, `<!---->`, "element outcome closed by </outcomeX>", inContent},
	{"bad character in an attribute name", ` re[quest_id="5"`, `[`, `unexpected '[' after attribute name re`, inRootTag},
	{"unescaped < in an attribute value", ` note="a<b"`, `<b`, "unescaped < in the value of attribute note", inRootTag},
	{"invalid UTF-8 in an attribute value", " note=\"a\xffb\"", "\xff", "invalid UTF-8 byte 0xFF", inRootTag},
	{"U+0001 in an attribute value", " note=\"a\x01b\"", "\x01", "illegal character code U+0001", inRootTag},
	{"U+000C in an attribute value", " note=\"a\x0cb\"", "\x0c", "illegal character code U+000C", inRootTag},
	{"U+0000 in text", "x\x00y", "\x00", "illegal character code U+0000", inContent},
	{"U+FFFE in text", "x\uFFFEy", "\uFFFE", "illegal character code U+FFFE", inContent},
	{"U+FFFF in a comment", "<!-- \uFFFF -->", "\uFFFF", "illegal character code U+FFFF", inContent},
	{"an encoded surrogate in a comment", "<!-- \xed\xa0\x80 -->", "\xed", "invalid UTF-8 byte 0xED", inContent},
	{"U+001F in a processing instruction", "<?pi \x1f?>", "\x1f", "illegal character code U+001F", inEpilogue},
	{"U+000B in an element name", "<a\x0bb/>", "\x0b", "illegal character code U+000B", inContent},
	{"invalid UTF-8 in an element name", "<a\xff/>", "a\xff", "invalid UTF-8 in name", inContent},
	{"an element name starting with a digit", "<1a/>", "1a", `invalid XML name "1a"`, inContent},
	{"two colons in a name", "<a:b:c/>", "a:b:c", "more than one colon", inContent},
	{"Latin-1 declared", "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><!-- caf\xe9 -->", "", `unsupported encoding "ISO-8859-1"`, inProlog},
	{"XML 2.0 declared", `<?xml version="2.0"?>`, "", `unsupported XML version "2.0"`, inProlog},
	{"a second root element", `<ROOT/>`, `<ROOT/>`, "second root element <ROOT>", inEpilogue},
	{"text after the root element", "\ntrailing", "trailing", "text after the root element", inEpilogue},
	{"text before the root element", "junk", "junk", "text before the root element", inProlog},
	{"an end tag after the root element", "</ROOT>", "</ROOT>", "end tag </ROOT> after the root element", inEpilogue},
	{"]]> in text", "a]]>b", "]]>", "unescaped ]]> not in a CDATA section", inContent},
	{"an unknown entity in text", "&nbsp;", "&nbsp;", "unknown entity &nbsp;", inContent},
	{"an attribute twice on the root", ` timestamp="2"`, `timestamp`, "attribute timestamp appears twice in <ROOT>", inRootTag},
	{"an attribute twice on a child", `<extra a="1" b="2" a="3"/>`, `a="3"`, "attribute a appears twice in <extra>", inContent},
}

// MalformedCases returns every row of malformedRows in every well-formed body, and the
// rows of issue 23 that need an odds_change's own elements.
func MalformedCases() []MalformedCase {
	var out []MalformedCase
	for _, wf := range wellFormedBodies {
		root := wf.typ.String()
		for _, r := range malformedRows {
			frag := strings.ReplaceAll(r.frag, "ROOT", root)
			mark := strings.ReplaceAll(r.mark, "ROOT", root)
			parts := []string{"", "<" + root + " " + wf.attrs, "", ">" + wf.inner, "", "</" + root + ">", ""}
			at := map[int]int{inProlog: 0, inRootTag: 2, inContent: 4, inEpilogue: 6}[r.where]
			parts[at] = frag
			body := strings.Join(parts, "")
			off := len(strings.Join(parts[:at], "")) + strings.Index(frag, mark)
			out = append(out, MalformedCase{Name: root + ": " + r.name, Type: wf.typ, Body: []byte(body),
				Offset: off, Msg: strings.ReplaceAll(r.msg, "ROOT", root)})
		}
	}
	const head = `<odds_change product="1" event_id="sr:match:1" timestamp="1"><odds>`
	for _, c := range []struct{ name, body, mark, msg string }{
		{"a misspelt market start tag", head + `<market id="1"><outcome id="1" odds="1.5"/></market><mrket id="2"><outcome id="1" odds="2"/></market></odds></odds_change>`,
			`</market></odds>`, "element mrket closed by </market>"},
		{"an outcome closed by </outcomeX>", head + `<market id="1"><outcome id="1" odds="1.5"></outcomeX></market></odds></odds_change>`,
			`</outcomeX>`, "element outcome closed by </outcomeX>"},
		{"unescaped < in specifiers", head + `<market id="1" specifiers="total=<2.5"/></odds></odds_change>`,
			`<2.5`, "unescaped < in the value of attribute specifiers"},
		{"U+0001 in specifiers", head + "<market id=\"1\" specifiers=\"total=\x012.5\"/></odds></odds_change>",
			"\x01", "illegal character code U+0001"},
		{"odds twice", head + `<market id="1"><outcome id="1" odds="1.5" odds="9.9"/></market></odds></odds_change>`,
			`odds="9.9"`, "attribute odds appears twice in <outcome>"},
		{"event_id twice", `<odds_change product="1" event_id="sr:match:1" event_id="sr:match:2" timestamp="1"/>`,
			`event_id="sr:match:2"`, "attribute event_id appears twice in <odds_change>"},
		{"a second odds_change", head + `</odds></odds_change><odds_change product="1" event_id="sr:match:2" timestamp="1"/>`,
			`<odds_change product="1" event_id="sr:match:2"`, "second root element <odds_change>"},
	} {
		off := strings.Index(c.body, c.mark)
		if strings.HasPrefix(c.mark, "</") {
			off += strings.IndexByte(c.mark, '>') + 1 // a mismatched end tag is reported just after it
		}
		out = append(out, MalformedCase{Name: "odds_change: " + c.name, Type: MessageOddsChange,
			Body: []byte(c.body), Offset: off, Msg: c.msg})
	}
	return out
}

func TestWellFormedBodiesDecode(t *testing.T) {
	for _, wf := range wellFormedBodies {
		root := wf.typ.String()
		body := []byte(`<?xml version="1.0" encoding="UTF-8"?>` + "\n<" + root + " " + wf.attrs + ">" + wf.inner +
			"<!-- c --><extra a=\"1\" b=\"2\"><![CDATA[ x ]]>&amp;&#x41;</extra></" + root + ">\n<!-- after -->\n")
		_, err := Decode(wf.typ, body)
		require.NoError(t, err, "%s", body)
		_, err = referenceDecode(wf.typ, body)
		require.NoError(t, err, "%s", body)
	}
}

// Every malformed case is refused by Decode with a *DecodeError naming the fault and its
// offset, and by the reference decoder (encoding/xml with the rules it lacks added).
func TestDecodeRefusesMalformedDocuments(t *testing.T) {
	cases := MalformedCases()
	require.Len(t, cases, len(wellFormedBodies)*len(malformedRows)+7)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			m, err := Decode(c.Type, c.Body)
			require.Error(t, err, "%q", c.Body)
			assert.Nil(t, m)
			var de *DecodeError
			require.ErrorAs(t, err, &de)
			assert.True(t, errors.Is(err, ErrMalformedMessage))
			assert.Equal(t, c.Type, de.Type)
			assert.Contains(t, de.Msg, c.Msg, "%q", c.Body)
			assert.Equal(t, c.Offset, de.Offset, "%q: %v", c.Body, err)

			_, refErr := referenceDecode(c.Type, c.Body)
			assert.Error(t, refErr, "the reference refuses %q too", c.Body)
		})
	}
}

// The well-formedness rules encoding/xml lacks are the only ones the reference adds: each
// of these documents encoding/xml alone accepts, and both decoders refuse.
func TestReferenceAddsOnlyTheMissingRules(t *testing.T) {
	const root = `<alive product="1" timestamp="1" subscribed="1"`
	for _, body := range []string{
		root + ` product="1"/>`,
		root + "/><!-- \x01 -->",
		root + "/><alive/>",
		root + "/>text",
		"text" + root + "/>",
		root + "/><!DOCTYPE alive>",
	} {
		_, rawErr := referenceDecodeUnchecked(MessageAlive, []byte(body))
		assert.NoError(t, rawErr, "encoding/xml alone accepts %q", body)
		_, refErr := referenceDecode(MessageAlive, []byte(body))
		assert.Error(t, refErr, "%q", body)
		_, err := Decode(MessageAlive, []byte(body))
		assert.Error(t, err, "%q", body)
	}
}

// What encoding/xml accepts outside the root element stays accepted.
func TestDecodeAcceptsWhatXMLAllowsAroundTheRoot(t *testing.T) {
	for _, body := range []string{
		"\uFEFF<?xml version='1.0' encoding='utf-8'?>\n<!DOCTYPE alive>\n<!-- c -->\n<?pi x?>\n<alive product=\"1\" timestamp=\"1\" subscribed=\"1\"/>\n<!-- c -->\n<?pi?>\n",
		`<?xml version="1.0" encoding="Utf-8" standalone="yes"?><alive product="1" timestamp="1" subscribed="1"></alive>`,
		`<?xml version="1.0"?><alive product="1" timestamp="1" subscribed="1"><a x="]]>"/>é&#xE9;</alive>`,
	} {
		_, err := Decode(MessageAlive, []byte(body))
		require.NoError(t, err, "%q", body)
		checkAcceptance(t, MessageAlive, []byte(body))
	}
}
