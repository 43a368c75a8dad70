package markets

import (
	"testing"
)

// The fuzz targets assert that the parsers never panic, that an error is a *ParseError,
// and that wherever encoding/xml reads the input the fast parser gives the same result, or
// refuses it when the reference finds a rule broken. The seeds are small documents with
// every element and attribute the parsers read: the fuzzer minimizes each input that finds
// new code, which takes long on a large one (TestParseMatchesEncodingXML covers the large
// documents).

func FuzzParseDescriptions(f *testing.F) {
	f.Add([]byte(`<market_descriptions response_code="OK"><market id="18" name="Total" groups="all|score" description="d">` +
		`<outcomes><outcome id="12" name="over {total}" description="o"/><outcome id="13" name="under &amp; {total}"/></outcomes>` +
		`<specifiers><specifier name="total" type="decimal" description="s"/></specifiers>` +
		`<mappings><mapping product_id="1" product_ids="1|4" sport_id="sr:sport:1" market_id="8:232" sov_template="{total}" valid_for="total~*.5">` +
		`<mapping_outcome outcome_id="13" product_outcome_id="2528" product_outcome_name="under"/></mapping></mappings>` +
		`<attributes><attribute name="is_flex_score" description="a"/></attributes></market></market_descriptions>`))
	f.Add([]byte(`<market_descriptions><market id="40" name="Anytime goalscorer" variant="v" outcome_type="player" includes_outcomes_of_type="sr:player"/>` +
		`<market id="1" name="1x2"><mappings><mapping product_id="3" market_id="2" product_market_id="1"/></mappings></market></market_descriptions>`))
	f.Add([]byte(`<market_descriptions><market id="534" name="m" variant="pre:markettext:1"><outcomes><outcome id="pre:outcometext:1" name="A"/></outcomes></market></market_descriptions>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDescriptions(t, b)
	})
}

func FuzzParseVariants(f *testing.F) {
	f.Add([]byte(`<variant_descriptions response_code="OK"><variant id="sr:exact_goals:4+">` +
		`<outcomes><outcome id="sr:exact_goals:4+:1" name="0"/><outcome id="sr:exact_goals:4+:5" name="4+"/></outcomes>` +
		`<mappings><mapping product_id="1" product_ids="1|4" sport_id="sr:sport:1" market_id="21" product_market_id="8:180">` +
		`<mapping_outcome outcome_id="sr:exact_goals:4+:1" product_outcome_id="868" product_outcome_name="0"/></mapping></mappings>` +
		`</variant></variant_descriptions>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkVariants(t, b)
	})
}
