package xmlscan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// walk reads a whole document into a flat trace, the way a decoder drives the scanner.
func walk(src string) ([]string, error) {
	var s Scanner
	s.Reset(src)
	var trace []string
	if !s.Root() {
		return nil, s.Err()
	}
	var elem func()
	elem = func() {
		trace = append(trace, "<"+s.Name())
		for {
			n, v, ok := s.NextAttr()
			if !ok {
				break
			}
			trace = append(trace, n+"="+v)
		}
		if s.Open() {
			for s.Child() {
				elem()
			}
		}
		trace = append(trace, ">")
	}
	elem()
	return trace, s.Err()
}

func TestScannerReadsElementsAndAttributes(t *testing.T) {
	trace, err := walk(`<?xml version="1.0"?><!-- c --><a x="1" y = '2'><b/>text<c z="&lt;&amp;&#65;&#x42;"><d></d></c></a>
 <!-- tail --> <?pi?>
`)
	require.NoError(t, err)
	assert.Equal(t, []string{"<a", "x=1", "y=2", "<b", ">", "<c", "z=<&AB", "<d", ">", ">", ">"}, trace)
}

func TestScannerSkipsCommentsCDATAAndDirectives(t *testing.T) {
	trace, err := walk(`<!DOCTYPE a [<!ELEMENT a ANY><!-- > -->]><a><![CDATA[<b>]]><!----><?pi x?><!DOCTYPE in body></a>`)
	require.NoError(t, err)
	assert.Equal(t, []string{"<a", ">"}, trace)
}

func TestSkipPassesOverNestedContent(t *testing.T) {
	var s Scanner
	s.Reset(`<r><skip a=">"><x><y/></x><![CDATA[</skip>]]></skip><keep k="v"/></r>`)
	require.True(t, s.Root())
	require.True(t, s.Open())
	require.True(t, s.Child())
	assert.Equal(t, "skip", s.Name())
	s.Skip()
	require.True(t, s.Child())
	assert.Equal(t, "keep", s.Name())
	n, v, ok := s.NextAttr()
	assert.True(t, ok)
	assert.Equal(t, "k=v", n+"="+v)
	s.Skip()
	assert.False(t, s.Child())
	assert.NoError(t, s.Err())
}

func TestScannerErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{``, "no root element"},
		{`</a>`, "end tag </a> before the root element"},
		{`<a`, "unexpected end of input in a start tag"},
		{`<a x>`, "attribute x without ="},
		{`<a x=1>`, "value of attribute x is not quoted"},
		{`<a x="1>`, "unexpected end of input in the value of attribute x"},
		{`<a x="&nope;"/>`, "unknown entity &nope;"},
		{`<a x="&#0;"/>`, "invalid character reference &#0;"},
		{`<a x="&amp"/>`, "entity reference without a semicolon"},
		{`<a></b>`, "element a closed by </b>"},
		{`<a><b>`, "unexpected end of input in element b"},
		{`<a/ >`, "expected /> in a start tag"},
		{`<a><!-- x -- y --></a>`, "malformed or unterminated comment"},
		{`<a><![CDATA[ x </a>`, "unterminated CDATA section"},
		{`<a><![X[ ]]></a>`, "invalid <![ sequence"},
		{`<a><!-x></a>`, "invalid sequence <!- not part of <!--"},
		{`<!DOCTYPE a`, "unterminated directive"},
		{`<?xml `, "unterminated processing instruction"},
		{`<>`, "expected an element name after <"},
		{`<a></ >`, "expected a name after </"},
	}
	for _, tt := range tests {
		_, err := walk(tt.src)
		require.Error(t, err, tt.src)
		assert.Contains(t, err.Error(), tt.want, tt.src)
		var se *SyntaxError
		assert.ErrorAs(t, err, &se)
	}
}

func TestUnescape(t *testing.T) {
	tests := []struct{ raw, want string }{
		{"a&lt;b&gt;c&amp;d&apos;e&quot;f", `a<b>c&d'e"f`},
		{"&#65;&#x41;&#X41;", ""}, // &#X is not a hex reference in XML
		{"line\r\nbreak\rhere", "line\nbreak\nhere"},
		{"&#13;\n", "\r\n"}, // a referenced CR stays: only literal ones are normalised
		{"&#xD800;", "\uFFFD"},
		{"&#x10FFFF;", "\U0010FFFF"},
		{"&#x110000;", ""},
		{"&#;", ""},
		{"&#x;", ""},
		{"&#1_0;", ""},
	}
	for _, tt := range tests {
		got, _, bad := unescape(tt.raw)
		if tt.want == "" {
			assert.NotEmpty(t, bad, "%q must be refused", tt.raw)
			continue
		}
		assert.Empty(t, bad, tt.raw)
		assert.Equal(t, tt.want, got, tt.raw)
	}
}

func TestLocal(t *testing.T) {
	for name, want := range map[string]string{"odds": "odds", "x:odds": "odds", ":odds": ":odds", "odds:": "odds:", "a:b:c": "b:c"} {
		assert.Equal(t, want, Local(name), name)
	}
}

func TestDeepNestingIsTrackedBeyondTheFixedStack(t *testing.T) {
	open, closeTags := "", ""
	for i := range 3 * maxDepth {
		open += fmt.Sprintf("<e%d>", i)
		closeTags = fmt.Sprintf("</e%d>", i) + closeTags
	}
	_, err := walk(open + closeTags)
	require.NoError(t, err)

	// One end tag deep in the document names the wrong element.
	bad := strings.Replace(closeTags, "</e40>", "</e41>", 1)
	_, err = walk(open + bad)
	var se *SyntaxError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "element e40 closed by </e41>", se.Msg)
	assert.Equal(t, len(open)+strings.Index(closeTags, "</e40>")+len("</e41>"), se.Offset, "just after the end tag")
}

// The checks allocate nothing for a document of the feed's kind: a declaration, comments,
// text, attributes compared for duplicates, skipped content.
func TestCheckingAllocatesNothing(t *testing.T) {
	const src = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- c é -->\n<r a=\"1\" b=\"é\" c='x'>\n  <s d=\"1\" e=\"2\"><t/>text é</s>\n  <u f=\"1\"/>\n</r>\n<!-- end -->\n"
	var s Scanner
	allocs := testing.AllocsPerRun(100, func() {
		s.Reset(src)
		if !s.Root() || !s.Open() {
			t.Fatal(s.Err())
		}
		for s.Child() {
			s.Skip()
		}
		if s.Err() != nil {
			t.Fatal(s.Err())
		}
	})
	assert.Zero(t, allocs)
}

// A start tag with more attributes than the scanner compares in place still has each
// duplicate found.
func TestDuplicateAttributesAmongMany(t *testing.T) {
	attrs := ""
	for i := range 3 * maxAttrs {
		attrs += fmt.Sprintf(` a%d="%d"`, i, i)
	}
	_, err := walk("<r" + attrs + "/>")
	require.NoError(t, err)
	for _, dup := range []int{0, maxAttrs - 1, maxAttrs, 2 * maxAttrs} {
		src := "<r" + attrs + fmt.Sprintf(` a%d="x"`, dup) + "/>"
		_, err := walk(src)
		var se *SyntaxError
		require.ErrorAs(t, err, &se, dup)
		assert.Equal(t, fmt.Sprintf("attribute a%d appears twice in <r>", dup), se.Msg)
		assert.Equal(t, len("<r"+attrs)+1, se.Offset)
	}
}
