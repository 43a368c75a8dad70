package markets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

func TestParseDescriptionsRealMarkets(t *testing.T) {
	ds, err := ParseDescriptions(readTestdata(t, "markets_en.xml"))
	require.NoError(t, err)
	ids := make([]int, len(ds))
	for i, d := range ds {
		ids[i] = d.ID
	}
	require.Equal(t, []int{1, 18, 8, 37, 40, 21, 41, 1102}, ids)

	require.Equal(t, Description{
		ID: 1, Name: "1x2", Groups: []string{"all", "score", "regular_play"},
		Outcomes: []OutcomeDescription{{ID: "1", Name: "{$competitor1}"}, {ID: "2", Name: "draw"}, {ID: "3", Name: "{$competitor2}"}},
		Mappings: []Mapping{
			{ProductIDs: []int{1, 4}, SportID: "sr:sport:1", MarketID: "10", Outcomes: []OutcomeMapping{
				{OutcomeID: "1", ProductOutcomeID: "1", ProductOutcomeName: "1"},
				{OutcomeID: "2", ProductOutcomeID: "2", ProductOutcomeName: "X"},
				{OutcomeID: "3", ProductOutcomeID: "3", ProductOutcomeName: "2"},
			}},
			{ProductIDs: []int{3}, SportID: "sr:sport:1", MarketID: "1", Outcomes: []OutcomeMapping{
				{OutcomeID: "1", ProductOutcomeID: "1", ProductOutcomeName: "1"},
				{OutcomeID: "2", ProductOutcomeID: "2", ProductOutcomeName: "X"},
				{OutcomeID: "3", ProductOutcomeID: "3", ProductOutcomeName: "2"},
			}},
		},
	}, ds[0])

	total := ds[1]
	require.Equal(t, "Total", total.Name)
	require.Equal(t, []SpecifierDescription{{Name: "total", Type: "decimal"}}, total.Specifiers)
	require.Equal(t, []Mapping{{ProductIDs: []int{1, 4}, SportID: "sr:sport:1", MarketID: "8:232", SovTemplate: "{total}", ValidFor: "total~*.5",
		Outcomes: []OutcomeMapping{{OutcomeID: "13", ProductOutcomeID: "2528", ProductOutcomeName: "under"}, {OutcomeID: "12", ProductOutcomeID: "2530", ProductOutcomeName: "over"}}}}, total.Mappings)
	o, ok := total.Outcome("13")
	require.True(t, ok)
	require.Equal(t, "under {total}", o.Name)

	require.Equal(t, "{!goalnr} goal", ds[2].Name)
	require.Equal(t, "1x2 & total", ds[3].Name, "entities are decoded")
	require.Equal(t, "{$competitor1} & under {total}", ds[3].Outcomes[0].Name)

	scorer := ds[4]
	require.Equal(t, "sr:player", scorer.IncludesOutcomesOfType)
	require.Equal(t, "player", scorer.OutcomeType)
	require.Equal(t, []OutcomeDescription{{ID: "1716", Name: "no goal"}}, scorer.Outcomes)

	exact := ds[5]
	require.Nil(t, exact.Outcomes, "a variant market's outcomes come from the variant list")
	require.Equal(t, []SpecifierDescription{{Name: "variant", Type: "variable_text"}}, exact.Specifiers)

	flex := ds[6]
	require.True(t, flex.HasAttribute("is_flex_score"))
	require.Equal(t, []Attribute{{Name: "is_flex_score", Description: "Outcomes should be adjusted according to score specifier"}}, flex.Attributes)
	require.Equal(t, []SpecifierDescription{{Name: "score", Type: "string", Description: "current score in match"}}, flex.Specifiers)
	require.Len(t, flex.Outcomes, 3)

	teams := ds[7]
	require.Equal(t, "competitor", teams.OutcomeType)
	require.Nil(t, teams.Outcomes, "an <outcome> outside <outcomes> is not the market's")
	require.Equal(t, []string{"all"}, teams.Groups)
}

func TestParseDescriptionsSingleVariant(t *testing.T) {
	ds, err := ParseDescriptions(readTestdata(t, "market_534_variant.xml"))
	require.NoError(t, err)
	require.Equal(t, []Description{{
		ID: 534, Name: "Championship free text market", Variant: "pre:markettext:168883", Groups: []string{"all"},
		Outcomes: []OutcomeDescription{{ID: "pre:outcometext:9919", Name: "Max Verstappen"}, {ID: "pre:outcometext:9920", Name: "Lando Norris"}},
	}}, ds)
}

func TestParseVariants(t *testing.T) {
	vs, err := ParseVariants(readTestdata(t, "variants_en.xml"))
	require.NoError(t, err)
	require.Len(t, vs, 2)
	require.Equal(t, "sr:exact_goals:4+", vs[0].ID)
	require.Equal(t, []OutcomeDescription{
		{ID: "sr:exact_goals:4+:1326", Name: "0"}, {ID: "sr:exact_goals:4+:1327", Name: "1"}, {ID: "sr:exact_goals:4+:1328", Name: "2"},
		{ID: "sr:exact_goals:4+:1329", Name: "3"}, {ID: "sr:exact_goals:4+:1330", Name: "4+"},
	}, vs[0].Outcomes)
	require.Equal(t, []Mapping{{ProductIDs: []int{1, 4}, SportID: "sr:sport:1", MarketID: "8:180", FeedMarketID: 21, Outcomes: []OutcomeMapping{
		{OutcomeID: "sr:exact_goals:4+:1326", ProductOutcomeID: "868", ProductOutcomeName: "0"},
		{OutcomeID: "sr:exact_goals:4+:1330", ProductOutcomeID: "876", ProductOutcomeName: "4+"},
	}}}, vs[0].Mappings)
	require.Equal(t, "sr:point_range:55+", vs[1].ID)
	require.Len(t, vs[1].Outcomes, 2)
	require.Nil(t, vs[1].Mappings, "<mappings/> is no mapping")
}

// A market's slices are cut to their length: appending to one never overwrites the next
// market's items in the shared arrays.
func TestParseDescriptionsSlicesAreIndependent(t *testing.T) {
	ds, err := ParseDescriptions(readTestdata(t, "markets_en.xml"))
	require.NoError(t, err)
	_ = append(ds[0].Outcomes, OutcomeDescription{ID: "x"})
	_ = append(ds[0].Groups, "x")
	_ = append(ds[0].Mappings[0].Outcomes, OutcomeMapping{OutcomeID: "x"})
	_ = append(ds[0].Mappings[0].ProductIDs, 99)
	require.Equal(t, "12", ds[1].Outcomes[0].ID)
	require.Equal(t, "all", ds[1].Groups[0])
	require.Equal(t, "1", ds[0].Mappings[1].Outcomes[0].OutcomeID)
	require.Equal(t, []int{3}, ds[0].Mappings[1].ProductIDs)
}

// A list element may come twice; its items add up, as encoding/xml reads them.
func TestParseDescriptionsRepeatedLists(t *testing.T) {
	doc := `<market_descriptions><market id="7" name="m">
		<outcomes><outcome id="1" name="a"/></outcomes>
		<specifiers><specifier name="s" type="integer"/></specifiers>
		<outcomes><outcome id="2" name="b"/></outcomes>
	</market><market id="8" name="n"><outcomes><outcome id="3" name="c"/></outcomes></market></market_descriptions>`
	ds, err := ParseDescriptions([]byte(doc))
	require.NoError(t, err)
	require.Equal(t, []OutcomeDescription{{ID: "1", Name: "a"}, {ID: "2", Name: "b"}}, ds[0].Outcomes)
	require.Equal(t, []OutcomeDescription{{ID: "3", Name: "c"}}, ds[1].Outcomes)
	checkDescriptions(t, []byte(doc))
}

func TestParseDescriptionsErrors(t *testing.T) {
	for _, tt := range []struct {
		name, doc string
		want      string // in the error message
		offset    int    // -1: not checked
	}{
		{"market id not an integer", `<market_descriptions><market id="x1" name="1x2"/></market_descriptions>`,
			`market_descriptions at byte 36: market: <market> attribute id="x1": want an integer`, 36},
		{"market without id", `<market_descriptions><market name="1x2"/></market_descriptions>`,
			`market: <market> lacks attribute id`, -1},
		{"market without name", `<market_descriptions><market id="5"/></market_descriptions>`,
			`market 5: <market> lacks attribute name`, -1},
		{"outcome without id", `<market_descriptions><market id="18" name="Total"><outcomes><outcome name="over {total}"/></outcomes></market></market_descriptions>`,
			`market 18: <outcome> lacks attribute id`, -1},
		{"outcome without name", `<market_descriptions><market id="18" name="Total"><outcomes><outcome id="12"/></outcomes></market></market_descriptions>`,
			`market 18: <outcome> lacks attribute name`, -1},
		{"specifier without name", `<market_descriptions><market id="18" name="Total"><specifiers><specifier type="decimal"/></specifiers></market></market_descriptions>`,
			`market 18: <specifier> lacks attribute name`, -1},
		{"attribute without name", `<market_descriptions><market id="41" name="C"><attributes><attribute description="d"/></attributes></market></market_descriptions>`,
			`market 41: <attribute> lacks attribute name`, -1},
		{"product id not an integer", `<market_descriptions><market id="18" name="Total"><mappings><mapping product_id="one" sport_id="sr:sport:1" market_id="8:232"/></mappings></market></market_descriptions>`,
			`market 18: <mapping> attribute product_id="one": want an integer`, -1},
		{"product ids not integers", `<market_descriptions><market id="18" name="Total"><mappings><mapping product_ids="1|x" sport_id="sr:sport:1" market_id="8:232"/></mappings></market></market_descriptions>`,
			`market 18: <mapping> attribute product_ids="1|x": want integers separated by |`, -1},
		{"mapping without market", `<market_descriptions><market id="18" name="Total"><mappings><mapping product_id="1"/></mappings></market></market_descriptions>`,
			`market 18: <mapping> lacks attribute market_id`, -1},
		{"mapping without product", `<market_descriptions><market id="18" name="Total"><mappings><mapping market_id="8:232"/></mappings></market></market_descriptions>`,
			`market 18: <mapping> lacks attribute product_id`, -1},
		{"mapping outcome without outcome id", `<market_descriptions><market id="18" name="Total"><mappings><mapping product_id="1" market_id="8:232"><mapping_outcome product_outcome_id="2528"/></mapping></mappings></market></market_descriptions>`,
			`market 18: <mapping_outcome> lacks attribute outcome_id`, -1},
		{"unclosed market", `<market_descriptions><market id="18" name="Total"><outcomes></market></market_descriptions>`,
			`market_descriptions at byte 69: market 18: element outcomes closed by </market>`, 69},
		{"truncated", `<market_descriptions><market id="18" name="To`,
			`unexpected end of input in the value of attribute name`, 45},
		{"wrong root", `<variant_descriptions/>`, `root element is <variant_descriptions>, want <market_descriptions>`, -1},
		{"API error", `<response response_code="NOT_FOUND"><action>x</action><message>No such language</message></response>`,
			`the API answered <response response_code="NOT_FOUND">, not <market_descriptions>`, -1},
		{"empty", ``, `no root element`, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ds, err := ParseDescriptions([]byte(tt.doc))
			require.Nil(t, ds)
			require.ErrorContains(t, err, tt.want)
			var pe *ParseError
			require.ErrorAs(t, err, &pe)
			require.Equal(t, "market_descriptions", pe.Root)
			if tt.offset >= 0 {
				require.Equal(t, tt.offset, pe.Offset)
			}
			checkDescriptions(t, []byte(tt.doc)) // the reference refuses it too
		})
	}
}

func TestParseVariantsErrors(t *testing.T) {
	for _, tt := range []struct{ name, doc, want string }{
		{"variant without id", `<variant_descriptions><variant><outcomes/></variant></variant_descriptions>`, `variant: <variant> lacks attribute id`},
		{"outcome without id", `<variant_descriptions><variant id="sr:exact_goals:4+"><outcomes><outcome name="0"/></outcomes></variant></variant_descriptions>`,
			`variant sr:exact_goals:4+: <outcome> lacks attribute id`},
		{"feed market id not an integer", `<variant_descriptions><variant id="v"><mappings><mapping product_id="1" market_id="x" product_market_id="8:180"/></mappings></variant></variant_descriptions>`,
			`variant v: <mapping> attribute market_id="x": want an integer`},
		{"wrong root", `<market_descriptions/>`, `want <variant_descriptions>`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			vs, err := ParseVariants([]byte(tt.doc))
			require.Nil(t, vs)
			require.ErrorContains(t, err, tt.want)
			checkVariants(t, []byte(tt.doc))
		})
	}
}

// Elements, attributes, comments and text the parser does not know are read past, and
// namespace prefixes are ignored, as encoding/xml ignores them for unqualified fields.
func TestParseDescriptionsSkipsUnknown(t *testing.T) {
	doc := `<?xml version="1.0"?><!-- generated -->
<ns:market_descriptions xmlns:ns="urn:x" response_code="OK" generated_at="2026-11-26T10:00:00Z">
  <info><market id="999" name="not a market of the list"/></info>
  text between
  <market ns:id="5" name="Total" x="1"><![CDATA[<outcome id="no"/>]]>
    <outcomes><group><outcome id="deep" name="no"/></group><outcome id="12" name="over {total}" extra=""/></outcomes>
  </market>
</ns:market_descriptions>`
	ds, err := ParseDescriptions([]byte(doc))
	require.NoError(t, err)
	require.Equal(t, []Description{{ID: 5, Name: "Total", Outcomes: []OutcomeDescription{{ID: "12", Name: "over {total}"}}}}, ds)
	checkDescriptions(t, []byte(doc))
}

func TestParseDescriptionsEmpty(t *testing.T) {
	ds, err := ParseDescriptions([]byte(`<market_descriptions response_code="OK"/>`))
	require.NoError(t, err)
	require.Empty(t, ds)
}

// The differential test: the fast parser reads every document as encoding/xml does.
func TestParseMatchesEncodingXML(t *testing.T) {
	for _, name := range []string{"markets_en.xml", "market_534_variant.xml"} {
		b := readTestdata(t, name)
		_, err := referenceDescriptions(b)
		require.NoError(t, err, name)
		checkDescriptions(t, b)
	}
	b := readTestdata(t, "variants_en.xml")
	_, err := referenceVariants(b)
	require.NoError(t, err)
	checkVariants(t, b)

	for _, n := range []int{1, 10, 1000} {
		doc := buildMarketsDoc(n)
		want, err := referenceDescriptions(doc)
		require.NoError(t, err)
		require.Len(t, want, n)
		checkDescriptions(t, doc)
		// The same document with CRLF line ends and single quotes.
		alt := strings.ReplaceAll(strings.ReplaceAll(string(doc), "\n", "\r\n"), `"`, `'`)
		checkDescriptions(t, []byte(alt))
	}
}

// A large document's arrays are sized from a count of its tags, which prefixed names
// escape and comments inflate: the result is the same either way.
func TestParseDescriptionsSizingGuesses(t *testing.T) {
	doc := string(buildMarketsDoc(200))
	prefixed := strings.NewReplacer("<outcome ", "<x:outcome ", "<mapping ", "<x:mapping ", "</mapping>", "</x:mapping>").Replace(doc)
	prefixed = strings.Replace(prefixed, "<market_descriptions ", `<market_descriptions xmlns:x="urn:x" `, 1)
	commented := strings.Replace(doc, "<market ", "<!-- <outcome <outcome <mapping <market --><market ", -1)
	want, err := ParseDescriptions([]byte(doc))
	require.NoError(t, err)
	for _, variant := range []string{prefixed, commented} {
		got, err := ParseDescriptions([]byte(variant))
		require.NoError(t, err)
		require.Equal(t, want, got)
		_, err = referenceDescriptions([]byte(variant))
		require.NoError(t, err)
		checkDescriptions(t, []byte(variant))
	}
}

// A description that is not well-formed XML is refused whole, as the feed's messages are:
// an attribute twice, content after the root, a mismatched end tag.
func TestParseDescriptionsRefusesMalformedXML(t *testing.T) {
	for _, doc := range []string{
		`<market_descriptions><market id="1" name="a" name="b"/></market_descriptions>`,
		`<market_descriptions><market id="1" name="a"/></market_descriptions>trailing`,
		`<market_descriptions><market id="1" name="a"></markt></market_descriptions>`,
	} {
		_, err := ParseDescriptions([]byte(doc))
		var pe *ParseError
		require.ErrorAs(t, err, &pe, doc)
		_, refErr := referenceDescriptions([]byte(doc))
		require.ErrorIs(t, refErr, errRefXML, doc)
	}
}
