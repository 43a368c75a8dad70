package markets

import (
	"context"
	"fmt"
	"strings"

	"github.com/feedkit/feedkit/feed"
)

// MarketName returns the name of the market line id with specs in lang, such as
// "Total 2.5" for market 18 with total=2.5, for the event it belongs to (whose
// competitors some names mention: "Handicap {$competitor1}").
//
// A market line with a variant specifier is named from the description of its variant:
// variant=pre:… from the market's single-variant description, any other variant from the
// market's description with the variant list's outcomes. The first name in a language
// reads that language's descriptions; a market they lack makes them be read again, at
// most once per Config.RefetchInterval, and if it is still missing the error matches
// ErrUnknownMarket.
func (n *Names) MarketName(ctx context.Context, lang string, event feed.URN, id int, specs feed.Specifiers) (string, error) {
	l, err := n.find(ctx, lang, id, specs)
	if err != nil {
		return "", err
	}
	if l.m.nameErr != nil {
		return "", fmt.Errorf("markets: %s: %w", l.what(), l.m.nameErr)
	}
	name, err := n.render(ctx, lang, event, l.m.name, specs)
	if err != nil {
		return "", fmt.Errorf("markets: %s: %w", l.what(), err)
	}
	return name, nil
}

// OutcomeName returns the name of outcome outcomeID of the market line id with specs in
// lang, such as "over 2.5" for outcome 12 of market 18 with total=2.5.
//
// An outcome id that is a player or competitor URN (sr:player:1234), or several of them
// separated by bare commas ("sr:player:1,sr:competitor:2"), is named from their
// profiles, the names joined with a bare comma, as both Sportradar SDKs join them
// ("Kane, Harry,Saka, Bukayo"); an id with spaces around a comma is no such id. An
// outcome of a flex-score market (one with the is_flex_score attribute) named as a score
// is shifted by the score specifier (see FlexScore): outcome "1:0" with score=1:1 is
// "2:1"; its other outcomes ("other", "draw") keep their names, and a line without the
// score specifier is an error (ErrSpecifierMissing), not the score unshifted. An outcome the
// descriptions lack makes them be read again, at most once per Config.RefetchInterval,
// and if it is still missing the error matches ErrUnknownOutcome.
func (n *Names) OutcomeName(ctx context.Context, lang string, event feed.URN, id int, specs feed.Specifiers, outcomeID string) (string, error) {
	l, err := n.find(ctx, lang, id, specs)
	if err != nil {
		return "", err
	}
	o := l.outcomes[outcomeID]
	if o == nil {
		if urns, ok := outcomeURNs(outcomeID); ok {
			return n.profileNames(ctx, lang, urns)
		}
		if n.refetch(ctx, &l) {
			o = l.outcomes[outcomeID]
		}
		if o == nil {
			return "", fmt.Errorf("%w: %s has no outcome %q", ErrUnknownOutcome, l.what(), outcomeID)
		}
	}
	if o.err != nil {
		return "", fmt.Errorf("markets: %s outcome %q: %w", l.what(), outcomeID, o.err)
	}
	name, err := n.render(ctx, lang, event, o.name, specs)
	if err == nil && l.m.flex && strings.Contains(name, ":") {
		if score, ok := specs.Get("score"); ok {
			name, err = FlexScore(name, score)
		} else {
			err = fmt.Errorf("%w: score, which a flex-score market's outcome %q is shifted by", ErrSpecifierMissing, name)
		}
	}
	if err != nil {
		return "", fmt.Errorf("markets: %s outcome %q: %w", l.what(), outcomeID, err)
	}
	return name, nil
}

// Description returns the description of the market line id with specs in lang: the
// market's, or for a line with a variant specifier its variant's (the variant list's
// outcomes in place of the market's). The caller must not change it.
func (n *Names) Description(ctx context.Context, lang string, id int, specs feed.Specifiers) (*Description, error) {
	l, err := n.find(ctx, lang, id, specs)
	if err != nil {
		return nil, err
	}
	if l.variant == nil {
		return &l.m.desc, nil
	}
	d := l.m.desc
	d.Variant = l.variant.ID
	d.Outcomes = l.variant.Outcomes
	d.Mappings = l.variant.Mappings
	return &d, nil
}

// lookup is where the names of one market line come from.
type lookup struct {
	lang     string
	id       int
	specs    feed.Specifiers
	m        *market
	outcomes map[string]*outcome // the market's, or its variant's from the variant list
	variant  *Variant            // the variant list's entry, when the outcomes are its
	source   int                 // which document the outcomes came from: fromMarkets, ...
}

// what names the market line in errors: "market 18 (en)", "market 21 variant
// sr:exact_goals:4+ (en)". It is made only for an error: naming a line must not allocate.
func (l *lookup) what() string {
	if variant, ok := l.specs.Get("variant"); ok && l.source != fromMarkets {
		return fmt.Sprintf("market %d variant %s (%s)", l.id, variant, l.lang)
	}
	return fmt.Sprintf("market %d (%s)", l.id, l.lang)
}

const (
	fromMarkets = iota
	fromVariants
	fromSingleVariant
)

// find returns the descriptions of a market line, reading what is not cached.
func (n *Names) find(ctx context.Context, lang string, id int, specs feed.Specifiers) (lookup, error) {
	if err := checkLang(lang); err != nil {
		return lookup{}, err
	}
	l := lookup{lang: lang, id: id, specs: specs}
	variant, hasVariant := specs.Get("variant")
	if hasVariant && strings.HasPrefix(variant, "pre:") {
		return n.findSingleVariant(ctx, l, variant)
	}
	set, err := n.markets.get(ctx, lang)
	if err != nil {
		return lookup{}, err
	}
	l.m = set.byID[id]
	if l.m == nil {
		if set, fetched, err := n.markets.refetch(ctx, lang, n.cfg.RefetchInterval); fetched {
			n.refetches.Add(1)
			if err == nil {
				l.m = set.byID[id]
			}
		}
		if l.m == nil {
			return lookup{}, fmt.Errorf("%w: the descriptions of %s have no market %d", ErrUnknownMarket, lang, id)
		}
	}
	l.outcomes, l.source = l.m.outcomes, fromMarkets
	if !hasVariant {
		return l, nil
	}
	vs, err := n.variants.get(ctx, lang)
	if err != nil {
		return lookup{}, err
	}
	if v, ok := vs.byID[variant]; ok {
		l.outcomes, l.variant, l.source = v.outcomes, &v.desc, fromVariants
		return l, nil
	}
	// A variant the list does not have is described on its own, as single variants are.
	return n.findSingleVariant(ctx, l, variant)
}

func (n *Names) findSingleVariant(ctx context.Context, l lookup, variant string) (lookup, error) {
	m, err := n.singleVariants.get(ctx, variantKey{l.lang, l.id, variant})
	if err != nil {
		return lookup{}, err
	}
	l.m, l.outcomes, l.variant, l.source = m, m.outcomes, nil, fromSingleVariant
	return l, nil
}

// refetch reads the document l's outcomes came from again, unless that was done less
// than Config.RefetchInterval ago, and points l at what it read. It reports whether l
// may have new outcomes.
func (n *Names) refetch(ctx context.Context, l *lookup) bool {
	var fetched bool
	var err error
	switch l.source {
	case fromMarkets:
		var set *marketSet
		set, fetched, err = n.markets.refetch(ctx, l.lang, n.cfg.RefetchInterval)
		if fetched && err == nil {
			if m := set.byID[l.id]; m != nil {
				l.m, l.outcomes = m, m.outcomes
			}
		}
	case fromVariants:
		var vs *variantSet
		vs, fetched, err = n.variants.refetch(ctx, l.lang, n.cfg.RefetchInterval)
		if fetched && err == nil {
			if v, ok := vs.byID[l.variant.ID]; ok {
				l.outcomes, l.variant = v.outcomes, &v.desc
			}
		}
	case fromSingleVariant:
		variant, _ := l.specs.Get("variant")
		var m *market
		m, fetched, err = n.singleVariants.refetch(ctx, variantKey{l.lang, l.id, variant}, n.cfg.RefetchInterval)
		if fetched && err == nil {
			l.m, l.outcomes = m, m.outcomes
		}
	}
	if fetched {
		n.refetches.Add(1)
	}
	return fetched && err == nil
}

// outcomeURNs reads an outcome id made of player or competitor URNs separated by commas.
func outcomeURNs(id string) ([]feed.URN, bool) {
	var out []feed.URN
	for part := range strings.SplitSeq(id, ",") {
		u, err := feed.ParseURN(part) // spaces around a comma make it no URN
		if err != nil || (u.Type != "player" && u.Type != "competitor" && u.Type != "simple_team") {
			return nil, false
		}
		out = append(out, u)
	}
	return out, len(out) > 0
}

func (n *Names) profileNames(ctx context.Context, lang string, urns []feed.URN) (string, error) {
	names := make([]string, len(urns))
	for i, u := range urns {
		name, err := n.profileName(ctx, lang, u)
		if err != nil {
			return "", err
		}
		names[i] = name
	}
	return strings.Join(names, ","), nil
}

// render renders t, reading the event's summary or profiles only if t names them.
func (n *Names) render(ctx context.Context, lang string, event feed.URN, t *Template, specs feed.Specifiers) (string, error) {
	if !t.NeedsEntities() {
		return t.RenderIn(lang, specs, nil)
	}
	return t.RenderIn(lang, specs, &eventNames{n: n, ctx: ctx, lang: lang, event: event})
}

// eventNames gives a template the names of an event's competitors and of players.
type eventNames struct {
	n     *Names
	ctx   context.Context
	lang  string
	event feed.URN
}

func (e *eventNames) summary() (EventSummary, error) {
	if e.event.IsZero() {
		return EventSummary{}, fmt.Errorf("markets: the name mentions the event's competitors, and no event was given")
	}
	return e.n.summary(e.ctx, e.lang, e.event)
}

// Competitor returns the name of competitor i: 1 home, 2 away.
func (e *eventNames) Competitor(i int) (string, error) {
	s, err := e.summary()
	if err != nil {
		return "", err
	}
	if i < 1 || i > len(s.Competitors) {
		return "", fmt.Errorf("markets: the summary of %s (%s) has %d competitors, not a competitor %d", e.event, e.lang, len(s.Competitors), i)
	}
	return s.Competitors[i-1].Name, nil
}

// Event returns the event's name: its own, or for a match MatchEventName of its
// competitors.
func (e *eventNames) Event() (string, error) {
	s, err := e.summary()
	if err != nil {
		return "", err
	}
	if s.Name != "" {
		return s.Name, nil
	}
	if len(s.Competitors) < 2 {
		return "", fmt.Errorf("markets: the summary of %s (%s) has neither a name nor two competitors", e.event, e.lang)
	}
	return MatchEventName(s.Competitors[0].Name, s.Competitors[1].Name), nil
}

// Profile returns the name of a player or competitor.
func (e *eventNames) Profile(u feed.URN) (string, error) { return e.n.profileName(e.ctx, e.lang, u) }
