package markets

import (
	"os"
	"path/filepath"
	"testing"
)

// The fuzz targets assert that the parsers never panic, that an error is a *ParseError,
// and that wherever encoding/xml reads the input the fast parser gives the same result, or
// refuses it when the reference finds a rule broken.

func FuzzParseDescriptions(f *testing.F) {
	for _, name := range []string{"markets_en.xml", "market_534_variant.xml"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(buildMarketsDoc(3))
	f.Add([]byte(`<market_descriptions><market id="1" name="x"><mappings><mapping product_ids="1|4" market_id="8:1" product_market_id="2"/></mappings></market></market_descriptions>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDescriptions(t, b)
	})
}

func FuzzParseVariants(f *testing.F) {
	b, err := os.ReadFile(filepath.Join("testdata", "variants_en.xml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		checkVariants(t, b)
	})
}
