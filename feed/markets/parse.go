package markets

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/feedkit/feedkit/internal/xmlscan"
)

// ParseError reports a Sports API document that ParseDescriptions or ParseVariants could
// not read. A document with one fault is refused whole: a market list with a market
// missing would read as "the API does not know this market" and be fetched again and
// again.
type ParseError struct {
	Root   string // the expected root element: market_descriptions or variant_descriptions
	Offset int    // byte offset in the document at or just after the fault
	// Item names the market ("market 18") or variant ("variant sr:exact_goals:4+") being
	// read, empty when the fault is outside one.
	Item string
	Msg  string // what is wrong
}

func (e *ParseError) Error() string {
	if e.Item == "" {
		return fmt.Sprintf("markets: %s at byte %d: %s", e.Root, e.Offset, e.Msg)
	}
	return fmt.Sprintf("markets: %s at byte %d: %s: %s", e.Root, e.Offset, e.Item, e.Msg)
}

// ParseDescriptions reads a <market_descriptions> document: the answer of
// GET /v1/descriptions/{lang}/markets.xml (with or without include_mappings) and of
// GET /v1/descriptions/{lang}/markets/{id}/variants/{variant}, which has the same root
// around one market. Markets come in document order.
//
// Elements and attributes it does not know are skipped. A market without an integer id or
// a name, an outcome without an id or a name, a specifier or attribute without a name, a
// mapping without its product or market, a product id that is not an integer, and XML
// that is not well-formed are errors (a *ParseError), and nothing is returned.
//
// The strings of the result share one copy of b, so they cost no allocation each; that
// copy lives as long as any of them is kept.
func ParseDescriptions(b []byte) ([]Description, error) {
	p := newParser(b, "market_descriptions")
	if !p.begin() {
		return nil, p.err
	}
	out := make([]Description, 0, p.presize(b))
	if p.open() {
		for p.child() {
			if p.elem == "market" {
				out = append(out, p.market())
			} else {
				p.skip()
			}
		}
	}
	if p.err != nil {
		return nil, p.err
	}
	if len(out) == 0 {
		return nil, nil
	}
	p.finish(func(cut *cutter) {
		for i := range out {
			d := &out[i]
			cut.groups(&d.Groups)
			cut.outcomes(&d.Outcomes)
			cut.specifiers(&d.Specifiers)
			cut.mappings(&d.Mappings)
			cut.attributes(&d.Attributes)
		}
	})
	return out, nil
}

// ParseVariants reads a <variant_descriptions> document, the answer of
// GET /v1/descriptions/{lang}/variants.xml: the outcomes of each variant list, such as
// sr:exact_goals:4+, in document order. Errors and memory are as with ParseDescriptions.
func ParseVariants(b []byte) ([]Variant, error) {
	p := newParser(b, "variant_descriptions")
	if !p.begin() {
		return nil, p.err
	}
	out := make([]Variant, 0, p.presize(b))
	if p.open() {
		for p.child() {
			if p.elem == "variant" {
				out = append(out, p.variant())
			} else {
				p.skip()
			}
		}
	}
	if p.err != nil {
		return nil, p.err
	}
	if len(out) == 0 {
		return nil, nil
	}
	p.finish(func(cut *cutter) {
		for i := range out {
			cut.outcomes(&out[i].Outcomes)
			cut.mappings(&out[i].Mappings)
		}
	})
	return out, nil
}

// parser reads one document with an xmlscan.Scanner. All the outcomes (specifiers,
// mappings, ...) of a document go into one backing array each, one allocation instead of
// one per market. While the document is read an array may still move as it grows, so a
// market's slice at first only records how many items are its own; finish then points
// every market into the final arrays, in document order.
type parser struct {
	s    xmlscan.Scanner
	src  string // the document
	root string
	err  error
	// item is the kind of item being read ("market" or "variant"), for errors, and
	// itemID its id once read: a string only made when an error needs it.
	item      string
	itemID    string
	itemMkt   int
	itemMktOK bool
	elem      string // local name of the current element
	an        string // local name of the current attribute
	av        string // value of the current attribute

	groups      []string
	outcomes    []OutcomeDescription
	specifiers  []SpecifierDescription
	mappings    []Mapping
	mapOutcomes []OutcomeMapping
	attributes  []Attribute
	products    []int
}

func newParser(b []byte, root string) *parser {
	p := &parser{root: root, src: string(b)}
	p.s.Reset(p.src)
	return p
}

// presize sizes the shared arrays from a count of their start tags, which costs less than
// growing them through a large document, and returns the count of markets or variants.
// The count is a guess (a tag may be in a comment, or have a namespace prefix); the arrays
// grow as usual when it is short.
func (p *parser) presize(b []byte) int {
	if len(b) < 4096 {
		return 0
	}
	var outcomes, mapOutcomes, mappings, specifiers, items int
	src := p.src
	for i := 0; ; {
		j := strings.IndexByte(src[i:], '<')
		if j < 0 {
			break
		}
		i += j + 1
		rest := src[i:]
		switch {
		case strings.HasPrefix(rest, "outcome "):
			outcomes++
		case strings.HasPrefix(rest, "mapping_outcome "):
			mapOutcomes++
		case strings.HasPrefix(rest, "mapping "):
			mappings++
		case strings.HasPrefix(rest, "specifier "):
			specifiers++
		case strings.HasPrefix(rest, "market "), strings.HasPrefix(rest, "variant "):
			items++
		}
	}
	p.outcomes = make([]OutcomeDescription, 0, outcomes)
	p.mapOutcomes = make([]OutcomeMapping, 0, mapOutcomes)
	p.mappings = make([]Mapping, 0, mappings)
	p.specifiers = make([]SpecifierDescription, 0, specifiers)
	p.groups = make([]string, 0, 3*items)
	p.products = make([]int, 0, 2*mappings)
	return items
}

// begin moves to the root element, which must be p.root, and reads its attributes.
func (p *parser) begin() bool {
	if !p.s.Root() {
		p.syntax()
		return false
	}
	name := xmlscan.Local(p.s.Name())
	if name == p.root {
		p.elem = name
		return true
	}
	if name == "response" {
		// The API's error answer: <response response_code="NOT_FOUND"><message>...</message>.
		code := ""
		for p.attr() {
			if p.an == "response_code" {
				code = p.av
			}
		}
		p.failf("the API answered <response response_code=%q>, not <%s>", code, p.root)
		return false
	}
	p.failf("root element is <%s>, want <%s>", name, p.root)
	return false
}

// market reads a <market> element's attributes and content, up to its end tag.
func (p *parser) market() Description {
	var d Description
	var sawID, sawName bool
	groups := ""
	p.item, p.itemMktOK = "market", false
	for p.attr() {
		switch p.an {
		case "id":
			d.ID, sawID = p.int(), true
			p.itemMkt, p.itemMktOK = d.ID, p.err == nil
		case "name":
			d.Name, sawName = p.av, true
		case "groups":
			groups = p.av // split once the attributes are read: a repeated one replaces it
		case "description":
			d.Description = p.av
		case "variant":
			d.Variant = p.av
		case "outcome_type":
			d.OutcomeType = p.av
		case "includes_outcomes_of_type":
			d.IncludesOutcomesOfType = p.av
		}
	}
	p.need(sawID, "id")
	p.need(sawName, "name")
	d.Groups = p.splitGroups(groups)
	for open := p.open(); open && p.child(); {
		switch p.elem {
		case "outcomes":
			d.Outcomes = p.outcomeList(d.Outcomes)
		case "specifiers":
			d.Specifiers = p.specifierList(d.Specifiers)
		case "mappings":
			d.Mappings = p.mappingList(d.Mappings)
		case "attributes":
			d.Attributes = p.attributeList(d.Attributes)
		default:
			p.skip()
		}
	}
	return d
}

// variant reads a <variant> element of the variant list, up to its end tag.
func (p *parser) variant() Variant {
	var v Variant
	sawID := false
	p.item, p.itemID = "variant", ""
	for p.attr() {
		if p.an == "id" {
			v.ID, sawID = p.av, true
			p.itemID = v.ID
		}
	}
	p.need(sawID, "id")
	for open := p.open(); open && p.child(); {
		switch p.elem {
		case "outcomes":
			v.Outcomes = p.outcomeList(v.Outcomes)
		case "mappings":
			v.Mappings = p.mappingList(v.Mappings)
		default:
			p.skip()
		}
	}
	return v
}

// The list readers below read one list element (<outcomes>, ...) whose start tag is the
// current one, appending its items to the shared array. The slice they are given and
// return is provisional: only its length, the number of the market's own items so far,
// counts (a market may repeat a list element; its items add up, as with encoding/xml).

func (p *parser) outcomeList(own []OutcomeDescription) []OutcomeDescription {
	n := len(own)
	for open := p.open(); open && p.child(); {
		if p.elem != "outcome" {
			p.skip()
			continue
		}
		var o OutcomeDescription
		var sawID, sawName bool
		for p.attr() {
			switch p.an {
			case "id":
				o.ID, sawID = p.av, true
			case "name":
				o.Name, sawName = p.av, true
			case "description":
				o.Description = p.av
			}
		}
		p.need(sawID, "id")
		p.need(sawName, "name")
		p.outcomes = append(p.outcomes, o)
		n++
		p.skip()
	}
	return p.outcomes[len(p.outcomes)-n:]
}

func (p *parser) specifierList(own []SpecifierDescription) []SpecifierDescription {
	n := len(own)
	for open := p.open(); open && p.child(); {
		if p.elem != "specifier" {
			p.skip()
			continue
		}
		var s SpecifierDescription
		sawName := false
		for p.attr() {
			switch p.an {
			case "name":
				s.Name, sawName = p.av, true
			case "type":
				s.Type = p.av
			case "description":
				s.Description = p.av
			}
		}
		p.need(sawName, "name")
		p.specifiers = append(p.specifiers, s)
		n++
		p.skip()
	}
	return p.specifiers[len(p.specifiers)-n:]
}

func (p *parser) attributeList(own []Attribute) []Attribute {
	n := len(own)
	for open := p.open(); open && p.child(); {
		if p.elem != "attribute" {
			p.skip()
			continue
		}
		var a Attribute
		sawName := false
		for p.attr() {
			switch p.an {
			case "name":
				a.Name, sawName = p.av, true
			case "description":
				a.Description = p.av
			}
		}
		p.need(sawName, "name")
		p.attributes = append(p.attributes, a)
		n++
		p.skip()
	}
	return p.attributes[len(p.attributes)-n:]
}

func (p *parser) mappingList(own []Mapping) []Mapping {
	n := len(own)
	for open := p.open(); open && p.child(); {
		if p.elem != "mapping" {
			p.skip()
			continue
		}
		p.mappings = append(p.mappings, p.mapping())
		n++
	}
	return p.mappings[len(p.mappings)-n:]
}

// mapping reads a <mapping> element, up to its end tag.
func (p *parser) mapping() Mapping {
	var m Mapping
	var marketID, productMarketID, productIDs string
	var sawMarket, sawProductMarket, sawProductID, sawProductIDs bool
	productID := 0
	for p.attr() {
		switch p.an {
		case "product_id":
			productID, sawProductID = p.int(), true
		case "product_ids":
			productIDs, sawProductIDs = p.av, true
		case "sport_id":
			m.SportID = p.av
		case "market_id":
			marketID, sawMarket = p.av, true
		case "product_market_id":
			productMarketID, sawProductMarket = p.av, true
		case "sov_template":
			m.SovTemplate = p.av
		case "valid_for":
			m.ValidFor = p.av
		}
	}
	p.need(sawMarket, "market_id")
	p.need(sawProductID || sawProductIDs, "product_id")
	if p.err != nil {
		p.skip()
		return m
	}
	if sawProductIDs {
		p.an, p.av = "product_ids", productIDs
		m.ProductIDs = p.productIDs(productIDs)
	} else {
		p.products = append(p.products, productID)
		m.ProductIDs = p.products[len(p.products)-1:]
	}
	m.MarketID = marketID
	if sawProductMarket {
		// The variant list names both markets: market_id is this feed's market and
		// product_market_id the product's.
		m.MarketID = productMarketID
		p.an, p.av = "market_id", marketID
		m.FeedMarketID = p.int()
	}
	n := 0
	for open := p.open(); open && p.child(); {
		if p.elem != "mapping_outcome" {
			p.skip()
			continue
		}
		var o OutcomeMapping
		var sawOutcome, sawProductOutcome bool
		for p.attr() {
			switch p.an {
			case "outcome_id":
				o.OutcomeID, sawOutcome = p.av, true
			case "product_outcome_id":
				o.ProductOutcomeID, sawProductOutcome = p.av, true
			case "product_outcome_name":
				o.ProductOutcomeName = p.av
			}
		}
		p.need(sawOutcome, "outcome_id")
		p.need(sawProductOutcome, "product_outcome_id")
		p.mapOutcomes = append(p.mapOutcomes, o)
		n++
		p.skip()
	}
	m.Outcomes = p.mapOutcomes[len(p.mapOutcomes)-n:]
	return m
}

// productIDs reads a product_ids value such as "1|4" into the shared array.
func (p *parser) productIDs(v string) []int {
	n := 0
	for start := 0; p.err == nil; {
		end := start
		for end < len(v) && v[end] != '|' {
			end++
		}
		id, err := parseInt(v[start:end])
		if err != nil {
			p.badValue("integers separated by |")
			return nil
		}
		p.products = append(p.products, id)
		n++
		if end == len(v) {
			break
		}
		start = end + 1
	}
	return p.products[len(p.products)-n:]
}

// splitGroups splits a groups value such as "all|score|regular_play" into the shared
// array; an empty value has no groups.
func (p *parser) splitGroups(v string) []string {
	if v == "" {
		return nil
	}
	n := 0
	for start := 0; ; {
		end := start
		for end < len(v) && v[end] != '|' {
			end++
		}
		p.groups = append(p.groups, v[start:end])
		n++
		if end == len(v) {
			break
		}
		start = end + 1
	}
	return p.groups[len(p.groups)-n:]
}

// finish gives each item its final slices, once the shared arrays have stopped moving.
func (p *parser) finish(each func(*cutter)) {
	c := cutter{p: p}
	each(&c)
	// Mappings reach their outcomes and products only now that they have their places.
	for i := range p.mappings {
		m := &p.mappings[i]
		m.Outcomes = cut(p.mapOutcomes, &c.mapOutcome, len(m.Outcomes))
		m.ProductIDs = cut(p.products, &c.product, len(m.ProductIDs))
	}
}

// cutter walks the shared arrays in document order.
type cutter struct {
	p                                                                  *parser
	group, outcome, specifier, mapping, mapOutcome, attribute, product int
}

func (c *cutter) groups(s *[]string) { *s = cut(c.p.groups, &c.group, len(*s)) }
func (c *cutter) outcomes(s *[]OutcomeDescription) {
	*s = cut(c.p.outcomes, &c.outcome, len(*s))
}
func (c *cutter) specifiers(s *[]SpecifierDescription) {
	*s = cut(c.p.specifiers, &c.specifier, len(*s))
}
func (c *cutter) mappings(s *[]Mapping)     { *s = cut(c.p.mappings, &c.mapping, len(*s)) }
func (c *cutter) attributes(s *[]Attribute) { *s = cut(c.p.attributes, &c.attribute, len(*s)) }

// cut returns the next n items of all from *off, nil when n is 0 (as encoding/xml leaves
// an absent list), and moves *off past them. The capacity is cut too, so that appending
// to one market's slice never overwrites the next market's items.
func cut[T any](all []T, off *int, n int) []T {
	if n == 0 {
		return nil
	}
	s := all[*off : *off+n : *off+n]
	*off += n
	return s
}

// attr moves to the next attribute of the current start tag.
func (p *parser) attr() bool {
	if p.err != nil {
		return false
	}
	name, value, ok := p.s.NextAttr()
	if !ok {
		p.syntax()
		return false
	}
	p.an, p.av = xmlscan.Local(name), value
	return true
}

// open finishes the current start tag and reports whether the element has content.
func (p *parser) open() bool {
	if p.err != nil {
		return false
	}
	ok := p.s.Open()
	p.syntax()
	return ok
}

// child moves to the next child element of the element opened last.
func (p *parser) child() bool {
	if p.err != nil {
		return false
	}
	if p.s.Child() {
		p.elem = xmlscan.Local(p.s.Name())
		return true
	}
	p.syntax()
	return false
}

// skip passes over the rest of the current element.
func (p *parser) skip() {
	if p.err == nil {
		p.s.Skip()
		p.syntax()
	}
}

// syntax records the scanner's error, if any.
func (p *parser) syntax() {
	err := p.s.Err()
	if err == nil || p.err != nil {
		return
	}
	var se *xmlscan.SyntaxError
	if errors.As(err, &se) {
		p.err = &ParseError{Root: p.root, Offset: se.Offset, Item: p.itemName(), Msg: se.Msg}
		return
	}
	p.err = &ParseError{Root: p.root, Offset: p.s.Offset(), Item: p.itemName(), Msg: err.Error()}
}

func (p *parser) failf(format string, args ...any) {
	if p.err == nil {
		p.err = &ParseError{Root: p.root, Offset: p.s.Offset(), Item: p.itemName(), Msg: fmt.Sprintf(format, args...)}
	}
}

// itemName names the market or variant being read: "market 18", "variant
// sr:exact_goals:4+", or the bare kind while its id is not known.
func (p *parser) itemName() string {
	switch {
	case p.item == "market" && p.itemMktOK:
		return "market " + strconv.Itoa(p.itemMkt)
	case p.item == "variant" && p.itemID != "":
		return "variant " + p.itemID
	}
	return p.item
}

// need fails unless ok, naming the attribute the current element lacks.
func (p *parser) need(ok bool, attr string) {
	if !ok {
		p.failf("<%s> lacks attribute %s", p.elem, attr)
	}
}

func (p *parser) badValue(want string) {
	p.failf("<%s> attribute %s=%q: want %s", p.elem, p.an, p.av, want)
}

func (p *parser) int() int {
	v, err := parseInt(p.av)
	if err != nil {
		p.badValue("an integer")
	}
	return v
}

// parseInt reads an integer attribute value, with the surrounding whitespace that
// encoding/xml allows in numbers.
func parseInt(s string) (int, error) {
	for len(s) > 0 && isXMLSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isXMLSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	v, err := strconv.ParseInt(s, 10, 32)
	return int(v), err
}

func isXMLSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
