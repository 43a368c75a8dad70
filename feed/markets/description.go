package markets

// Description describes a market in one language, as the Sports API's market
// descriptions give it (GET /v1/descriptions/{lang}/markets.xml and
// /v1/descriptions/{lang}/markets/{id}/variants/{variant}).
type Description struct {
	ID int
	// Name is the market's name template, such as "Total {total}" or
	// "{!periodnr} period - {$competitor1} total"; see Template.
	Name string
	// Groups are the market groups a bet stop may name, such as "all", "score".
	Groups []string
	// Description is the API's explanation of the market, when it gives one (the
	// description attribute); empty otherwise.
	Description string
	// Variant is the variant this description is for, such as "sr:exact_goals:4+" or
	// "pre:markettext:41234"; empty in the general description of a market.
	Variant string
	// OutcomeType says what the outcome ids are when the description lists no outcomes:
	// "player" or "competitor" (ids are URNs such as sr:player:1234 or sr:competitor:4),
	// "map" ..., or empty.
	OutcomeType string
	// IncludesOutcomesOfType says which other outcomes a market offers beside those
	// listed, such as "sr:player" or "sr:competitor"; empty when none.
	IncludesOutcomesOfType string
	Outcomes               []OutcomeDescription
	Specifiers             []SpecifierDescription
	Mappings               []Mapping
	Attributes             []Attribute
}

// Outcome returns the description of the outcome id, and whether the market lists it.
func (d *Description) Outcome(id string) (*OutcomeDescription, bool) {
	for i := range d.Outcomes {
		if d.Outcomes[i].ID == id {
			return &d.Outcomes[i], true
		}
	}
	return nil, false
}

// OutcomeDescription describes one outcome of a market.
type OutcomeDescription struct {
	ID string
	// Name is the outcome's name template, such as "over {total}" or "{$competitor1}".
	Name        string
	Description string // empty when the API gives none
}

// SpecifierDescription describes one specifier of a market.
type SpecifierDescription struct {
	Name string // such as "total"
	// Type is the value's type: "decimal", "integer", "string", "variable_text", ...
	Type        string
	Description string // empty when the API gives none
}

// Mapping maps a market to the market of a producer's older odds products.
type Mapping struct {
	ProductIDs []int  // product_ids, or product_id when that is all there is
	SportID    string // such as "sr:sport:1", or "all"
	MarketID   string // the product's market id, such as "8:232"
	// FeedMarketID is the market of this feed that the mapping is for, where the API names
	// it: the variant list's mappings carry it (market_id, with the product's market in
	// product_market_id). 0 in a market's own mappings, which are for that market.
	FeedMarketID int
	// SovTemplate is the template of the product's special odds value, such as
	// "{total}"; empty when none.
	SovTemplate string
	// ValidFor limits the mapping to specifier values, such as "total~*.5"; empty
	// when the mapping holds for every line.
	ValidFor string
	Outcomes []OutcomeMapping
}

// OutcomeMapping maps one outcome of a market to an outcome of a mapped product market.
type OutcomeMapping struct {
	OutcomeID          string
	ProductOutcomeID   string
	ProductOutcomeName string
}

// Attribute is a named property of a market, such as "is_flex_score" or
// "is_golden_goal"; see Description.Attributes.
type Attribute struct {
	Name        string
	Description string
}

// HasAttribute reports whether the description carries the attribute name.
func (d *Description) HasAttribute(name string) bool {
	for _, a := range d.Attributes {
		if a.Name == name {
			return true
		}
	}
	return false
}

// Variant describes the outcomes of one variant of the variant list
// (GET /v1/descriptions/{lang}/variants.xml): a market whose variant specifier names it,
// such as variant=sr:exact_goals:4+, takes its outcomes from here.
type Variant struct {
	ID       string // such as "sr:exact_goals:4+"
	Outcomes []OutcomeDescription
	Mappings []Mapping
}
