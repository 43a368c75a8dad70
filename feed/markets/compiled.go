package markets

// Descriptions are kept with their templates compiled once, when they are read, so that
// naming an outcome costs a map lookup and a render.

// marketSet is one language's market descriptions.
type marketSet struct {
	byID map[int]*market
}

// market is a description with its templates compiled.
type market struct {
	desc     Description
	name     *Template
	nameErr  error
	outcomes map[string]*outcome
	flex     bool // is_flex_score: outcome scores are shifted by the score specifier
}

// outcome is an outcome description with its template compiled.
type outcome struct {
	desc *OutcomeDescription
	name *Template
	err  error
}

// variantSet is one language's variant list.
type variantSet struct {
	byID map[string]*variant
}

// variant is a variant list's entry with its outcome templates compiled.
type variant struct {
	desc     Variant
	outcomes map[string]*outcome
}

func newMarketSet(descs []Description) *marketSet {
	s := &marketSet{byID: make(map[int]*market, len(descs))}
	for _, d := range descs {
		s.byID[d.ID] = compileMarket(d)
	}
	return s
}

func compileMarket(d Description) *market {
	m := &market{desc: d, flex: d.HasAttribute("is_flex_score")}
	m.name, m.nameErr = ParseTemplate(d.Name)
	m.outcomes = compileOutcomes(m.desc.Outcomes)
	return m
}

func compileOutcomes(ds []OutcomeDescription) map[string]*outcome {
	out := make(map[string]*outcome, len(ds))
	for i := range ds {
		o := &outcome{desc: &ds[i]}
		o.name, o.err = ParseTemplate(ds[i].Name)
		out[ds[i].ID] = o
	}
	return out
}

func newVariantSet(vs []Variant) *variantSet {
	s := &variantSet{byID: make(map[string]*variant, len(vs))}
	for _, v := range vs {
		e := &variant{desc: v}
		e.outcomes = compileOutcomes(e.desc.Outcomes)
		s.byID[v.ID] = e
	}
	return s
}
