package markets

import (
	"encoding/xml"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/internal/xmlscan/xmlref"
)

// The reference parser: encoding/xml's Unmarshal, then the same rules as the fast parser
// (required attributes, integer values, the variant list's two market ids). The
// differential tests and fuzz targets compare the fast parser against it, so that the XML
// handling (entities, quoting, whitespace, comments, namespaces, nesting, repeated
// attributes) is checked against the standard library's.

// refAttr is an attribute value and whether the element had it. Integers are parsed when
// encoding/xml meets them, as Unmarshal does for a field of a basic type: a bad value stops
// the decode at that attribute.
type refAttr struct {
	v   string
	set bool
}

func (a *refAttr) UnmarshalXMLAttr(x xml.Attr) error {
	a.v, a.set = x.Value, true
	return nil
}

type refInt struct {
	v   int
	set bool
}

func (a *refInt) UnmarshalXMLAttr(x xml.Attr) error {
	v, err := parseInt(x.Value)
	if err != nil {
		return err
	}
	a.v, a.set = v, true
	return nil
}

type refDescriptions struct {
	XMLName xml.Name    `xml:"market_descriptions"`
	Markets []refMarket `xml:"market"`
}

type refVariants struct {
	XMLName  xml.Name     `xml:"variant_descriptions"`
	Variants []refVariant `xml:"variant"`
}

type refMarket struct {
	ID                     refInt         `xml:"id,attr"`
	Name                   refAttr        `xml:"name,attr"`
	Groups                 refAttr        `xml:"groups,attr"`
	Description            refAttr        `xml:"description,attr"`
	Variant                refAttr        `xml:"variant,attr"`
	OutcomeType            refAttr        `xml:"outcome_type,attr"`
	IncludesOutcomesOfType refAttr        `xml:"includes_outcomes_of_type,attr"`
	Outcomes               []refOutcome   `xml:"outcomes>outcome"`
	Specifiers             []refSpecifier `xml:"specifiers>specifier"`
	Mappings               []refMapping   `xml:"mappings>mapping"`
	Attributes             []refAttribute `xml:"attributes>attribute"`
}

type refVariant struct {
	ID       refAttr      `xml:"id,attr"`
	Outcomes []refOutcome `xml:"outcomes>outcome"`
	Mappings []refMapping `xml:"mappings>mapping"`
}

type refOutcome struct {
	ID          refAttr `xml:"id,attr"`
	Name        refAttr `xml:"name,attr"`
	Description refAttr `xml:"description,attr"`
}

type refSpecifier struct {
	Name        refAttr `xml:"name,attr"`
	Type        refAttr `xml:"type,attr"`
	Description refAttr `xml:"description,attr"`
}

type refAttribute struct {
	Name        refAttr `xml:"name,attr"`
	Description refAttr `xml:"description,attr"`
}

type refMapping struct {
	ProductID       refInt              `xml:"product_id,attr"`
	ProductIDs      refAttr             `xml:"product_ids,attr"`
	SportID         refAttr             `xml:"sport_id,attr"`
	MarketID        refAttr             `xml:"market_id,attr"`
	ProductMarketID refAttr             `xml:"product_market_id,attr"`
	SovTemplate     refAttr             `xml:"sov_template,attr"`
	ValidFor        refAttr             `xml:"valid_for,attr"`
	Outcomes        []refMappingOutcome `xml:"mapping_outcome"`
}

type refMappingOutcome struct {
	OutcomeID          refAttr `xml:"outcome_id,attr"`
	ProductOutcomeID   refAttr `xml:"product_outcome_id,attr"`
	ProductOutcomeName refAttr `xml:"product_outcome_name,attr"`
}

// errRefXML marks a document encoding/xml refuses, as opposed to one that breaks a rule.
var errRefXML = errors.New("encoding/xml refuses the document")

func referenceDescriptions(b []byte) ([]Description, error) {
	if err := xmlref.WellFormed(b, false); err != nil {
		return nil, fmt.Errorf("%w: %v", errRefXML, err)
	}
	var doc refDescriptions
	if err := xml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%w: %v", errRefXML, err)
	}
	var out []Description
	for _, m := range doc.Markets {
		if !m.ID.set || !m.Name.set {
			return nil, errors.New("market without id or name")
		}
		d := Description{
			ID: m.ID.v, Name: m.Name.v, Description: m.Description.v, Variant: m.Variant.v,
			OutcomeType: m.OutcomeType.v, IncludesOutcomesOfType: m.IncludesOutcomesOfType.v,
		}
		if m.Groups.v != "" {
			d.Groups = strings.Split(m.Groups.v, "|")
		}
		var err error
		if d.Outcomes, err = refOutcomes(m.Outcomes); err != nil {
			return nil, err
		}
		for _, s := range m.Specifiers {
			if !s.Name.set {
				return nil, errors.New("specifier without name")
			}
			d.Specifiers = append(d.Specifiers, SpecifierDescription{Name: s.Name.v, Type: s.Type.v, Description: s.Description.v})
		}
		if d.Mappings, err = refMappings(m.Mappings); err != nil {
			return nil, err
		}
		for _, a := range m.Attributes {
			if !a.Name.set {
				return nil, errors.New("attribute without name")
			}
			d.Attributes = append(d.Attributes, Attribute{Name: a.Name.v, Description: a.Description.v})
		}
		out = append(out, d)
	}
	return out, nil
}

func referenceVariants(b []byte) ([]Variant, error) {
	if err := xmlref.WellFormed(b, false); err != nil {
		return nil, fmt.Errorf("%w: %v", errRefXML, err)
	}
	var doc refVariants
	if err := xml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%w: %v", errRefXML, err)
	}
	var out []Variant
	for _, rv := range doc.Variants {
		if !rv.ID.set {
			return nil, errors.New("variant without id")
		}
		v := Variant{ID: rv.ID.v}
		var err error
		if v.Outcomes, err = refOutcomes(rv.Outcomes); err != nil {
			return nil, err
		}
		if v.Mappings, err = refMappings(rv.Mappings); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func refOutcomes(in []refOutcome) ([]OutcomeDescription, error) {
	var out []OutcomeDescription
	for _, o := range in {
		if !o.ID.set || !o.Name.set {
			return nil, errors.New("outcome without id or name")
		}
		out = append(out, OutcomeDescription{ID: o.ID.v, Name: o.Name.v, Description: o.Description.v})
	}
	return out, nil
}

func refMappings(in []refMapping) ([]Mapping, error) {
	var out []Mapping
	for _, rm := range in {
		if !rm.MarketID.set || !(rm.ProductID.set || rm.ProductIDs.set) {
			return nil, errors.New("mapping without market_id or product_id")
		}
		m := Mapping{SportID: rm.SportID.v, MarketID: rm.MarketID.v, SovTemplate: rm.SovTemplate.v, ValidFor: rm.ValidFor.v}
		if rm.ProductIDs.set {
			for _, s := range strings.Split(rm.ProductIDs.v, "|") {
				id, err := parseInt(s)
				if err != nil {
					return nil, err
				}
				m.ProductIDs = append(m.ProductIDs, id)
			}
		} else {
			m.ProductIDs = []int{rm.ProductID.v}
		}
		if rm.ProductMarketID.set {
			id, err := parseInt(rm.MarketID.v)
			if err != nil {
				return nil, err
			}
			m.MarketID, m.FeedMarketID = rm.ProductMarketID.v, id
		}
		for _, o := range rm.Outcomes {
			if !o.OutcomeID.set || !o.ProductOutcomeID.set {
				return nil, errors.New("mapping_outcome without outcome_id or product_outcome_id")
			}
			m.Outcomes = append(m.Outcomes, OutcomeMapping{OutcomeID: o.OutcomeID.v, ProductOutcomeID: o.ProductOutcomeID.v, ProductOutcomeName: o.ProductOutcomeName.v})
		}
		out = append(out, m)
	}
	return out, nil
}

// checkDescriptions compares ParseDescriptions with the reference on b: wherever
// encoding/xml reads the document, the fast parser must give the same descriptions, or
// fail when the reference finds a rule broken.
func checkDescriptions(t *testing.T, b []byte) {
	t.Helper()
	got, err := ParseDescriptions(b)
	if err != nil {
		var pe *ParseError
		require.ErrorAs(t, err, &pe)
		require.NotEmpty(t, pe.Msg)
	}
	want, refErr := referenceDescriptions(b)
	switch {
	case errors.Is(refErr, errRefXML):
		require.Error(t, err, "not well-formed XML (%v): %q", refErr, b)
		return
	case refErr != nil:
		require.Error(t, err, "the reference refuses %q: %v", b, refErr)
	default:
		require.NoError(t, err, "encoding/xml reads %q", b)
		require.Equal(t, want, got)
	}
}

func checkVariants(t *testing.T, b []byte) {
	t.Helper()
	got, err := ParseVariants(b)
	if err != nil {
		var pe *ParseError
		require.ErrorAs(t, err, &pe)
	}
	want, refErr := referenceVariants(b)
	switch {
	case errors.Is(refErr, errRefXML):
		require.Error(t, err, "not well-formed XML (%v): %q", refErr, b)
		return
	case refErr != nil:
		require.Error(t, err, "the reference refuses %q: %v", b, refErr)
	default:
		require.NoError(t, err, "encoding/xml reads %q", b)
		require.Equal(t, want, got)
	}
}
