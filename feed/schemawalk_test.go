package feed

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The walk of UnifiedFeed.xsd (testdata/xsd): what it declares for the messages, named by
// keys that follow the schema's own structure, so that a type the schema reuses (a sport
// event status, a market) is named once however many messages hold it:
//
//	odds_change                        a message (a top-level element)
//	odds_change/sport_event_status     an element, under the message or type that holds it
//	sportEventStatus@pitcher           an attribute, under its named type
//	odds_change/odds@betting_status    an attribute of an element of anonymous type
//	messageAttributes@product          an attribute of an attribute group

// xsdPath is the schema the walk reads.
var xsdPath = filepath.Join("testdata", "xsd", "UnifiedFeed.xsd")

// xsdNode is any element of the schema document.
type xsdNode struct {
	XMLName xml.Name
	Attrs   []xml.Attr `xml:",any,attr"`
	Nodes   []xsdNode  `xml:",any"`
}

func (n xsdNode) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// xsdDecl is what the walk found: every key the schema declares, the scope under which
// the content of each element is named (its named type, or itself), and the key of each
// attribute by scope and name (an attribute group's attributes keep the group's key).
type xsdDecl struct {
	keys    map[string]bool
	scopeOf map[string]string
	attrKey map[string]map[string]string
}

// walkXSD reads the schema at path and walks it from its top-level elements, the
// messages. Types the messages do not reach (eventReference) are not declared for them.
func walkXSD(t testing.TB, path string) xsdDecl {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var schema xsdNode
	require.NoError(t, xml.NewDecoder(f).Decode(&schema))
	require.Equal(t, "schema", schema.XMLName.Local)

	named := map[string]map[string]xsdNode{"element": {}, "complexType": {}, "attributeGroup": {}, "simpleType": {}}
	for _, n := range schema.Nodes {
		kind := n.XMLName.Local
		require.Contains(t, named, kind, "the walk does not know top-level %s: extend it", kind)
		named[kind][n.attr("name")] = n
	}
	d := xsdDecl{keys: map[string]bool{}, scopeOf: map[string]string{}, attrKey: map[string]map[string]string{}}
	walked := map[string]bool{}
	var walk func(scope string, n xsdNode)
	addAttr := func(scope, owner, name string) {
		if d.attrKey[scope] == nil {
			d.attrKey[scope] = map[string]string{}
		}
		key := owner + "@" + name
		d.attrKey[scope][name] = key
		d.keys[key] = true
	}
	// walkOnce walks a named type or group the first time a message reaches it.
	walkOnce := func(name string, n xsdNode) {
		if !walked[name] {
			walked[name] = true
			walk(name, n)
		}
	}
	// group adds the attributes of attribute group ref to scope, keyed by the group.
	var group func(scope, ref string)
	group = func(scope, ref string) {
		g, ok := named["attributeGroup"][ref]
		require.True(t, ok, "attribute group %s is not declared", ref)
		for _, c := range g.Nodes {
			switch c.XMLName.Local {
			case "attribute":
				addAttr(scope, ref, c.attr("name"))
			case "attributeGroup":
				group(scope, c.attr("ref"))
			}
		}
	}
	walk = func(scope string, n xsdNode) {
		for _, c := range n.Nodes {
			switch c.XMLName.Local {
			case "attribute":
				addAttr(scope, scope, c.attr("name"))
			case "attributeGroup":
				group(scope, c.attr("ref"))
			case "element":
				key := scope + "/" + c.attr("name")
				d.keys[key] = true
				typ := c.attr("type")
				if ct, ok := named["complexType"][typ]; ok {
					d.scopeOf[key] = typ
					walkOnce(typ, ct)
					continue
				}
				require.True(t, typ == "" || strings.HasPrefix(typ, "xs:") || named["simpleType"][typ].XMLName.Local != "",
					"element %s has type %s, which is not declared", key, typ)
				d.scopeOf[key] = key
				walk(key, c)
			case "complexType", "sequence", "choice", "all":
				walk(scope, c)
			case "annotation", "simpleType":
			default:
				t.Fatalf("the walk does not know xs:%s (in %s): extend it", c.XMLName.Local, scope)
			}
		}
	}
	for name, el := range named["element"] {
		d.keys[name] = true
		d.scopeOf[name] = name
		walk(name, el)
	}
	return d
}

// instanceKeyer names the elements and attributes of a document as walkXSD names the
// schema's. An element the schema does not declare is named under the element that holds
// it, and its content under scopes[key] if given, else under its own key.
type instanceKeyer struct {
	decl   xsdDecl
	scopes map[string]string
	stack  []string // the scope of each open element
}

// start names an element that opens and its attributes, in their order.
func (k *instanceKeyer) start(el xml.StartElement) (key string, attrs []string) {
	key = el.Name.Local
	if len(k.stack) > 0 {
		key = k.stack[len(k.stack)-1] + "/" + key
	}
	scope, ok := k.decl.scopeOf[key]
	if !ok {
		if scope, ok = k.scopes[key]; !ok {
			scope = key
		}
	}
	for _, a := range el.Attr {
		ak, ok := k.decl.attrKey[scope][a.Name.Local]
		if !ok {
			ak = scope + "@" + a.Name.Local
		}
		attrs = append(attrs, ak)
	}
	k.stack = append(k.stack, scope)
	return key, attrs
}

// end closes the element opened last.
func (k *instanceKeyer) end() { k.stack = k.stack[:len(k.stack)-1] }

// instanceKeys returns the key of every element and attribute of the document body.
func (d xsdDecl) instanceKeys(t testing.TB, body []byte, scopes map[string]string) []string {
	t.Helper()
	k := instanceKeyer{decl: d, scopes: scopes}
	var keys []string
	dec := xml.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return keys
		}
		require.NoError(t, err)
		switch tok := tok.(type) {
		case xml.StartElement:
			key, attrs := k.start(tok)
			keys = append(append(keys, key), attrs...)
		case xml.EndElement:
			k.end()
		}
	}
}
