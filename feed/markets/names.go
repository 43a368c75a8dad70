package markets

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"sync/atomic"

	"github.com/feedkit/feedkit/feed"
)

// Errors of a name that cannot be given, matched with errors.Is; the error says which
// market, variant, outcome and language.
var (
	// ErrUnknownMarket: the descriptions, read again once, do not have the market.
	ErrUnknownMarket = errors.New("markets: unknown market")
	// ErrUnknownOutcome: the market's descriptions, read again once, do not have the
	// outcome, and it is not a player or competitor id.
	ErrUnknownOutcome = errors.New("markets: unknown outcome")
)

// Largest documents read. The markets list with mappings of one language is a few
// megabytes; a summary or a profile a few kilobytes.
const (
	maxListSize    = 64 << 20
	maxSummarySize = 4 << 20
)

// Names gives the names of markets and outcomes, in the languages asked for, from the
// Sports API's descriptions. It is safe for concurrent use by every listener of an SDK.
//
// Nothing is read before a name is asked for: a language's market descriptions and
// variant list are read the first time a name in that language is wanted (one request
// for all callers that want it at once), an event's summary the first time a template
// names its competitors, a profile the first time a player or competitor is named.
type Names struct {
	api API
	cfg Config

	markets        *cache[string, *marketSet]  // by language: markets.xml
	variants       *cache[string, *variantSet] // by language: variants.xml
	singleVariants *cache[variantKey, *market]
	summaries      *cache[urnKey, EventSummary]
	profiles       *cache[urnKey, string]

	refetches atomic.Int64
}

// Cache keys: comparable values, so that a read of a cached name builds no string.
type (
	urnKey struct {
		lang string
		urn  feed.URN
	}
	variantKey struct {
		lang    string
		market  int
		variant string
	}
)

// New returns a Names reading the Sports API through api. A bad cfg is refused, naming
// the field.
func New(api API, cfg Config) (*Names, error) {
	if api == nil {
		return nil, errors.New("markets: the API is nil")
	}
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	c := cfg.Clock
	n := &Names{
		api: api,
		cfg: cfg,
	}
	// Each cache is named for the observer as its Stats field is in JSON.
	o := cfg.Observer
	n.markets = newCache(c, cfg.MaxLanguages, cfg.RefreshInterval, cfg.ErrorTTL, n.fetchMarkets).observed("markets", o)
	n.variants = newCache(c, cfg.MaxLanguages, cfg.RefreshInterval, cfg.ErrorTTL, n.fetchVariants).observed("variants", o)
	n.singleVariants = newCache(c, cfg.CacheSize, cfg.RefreshInterval, cfg.ErrorTTL, n.fetchSingleVariant).
		observed("single_variants", o)
	n.summaries = newCache(c, cfg.CacheSize, cfg.ProfileTTL, cfg.ErrorTTL, n.fetchSummary).observed("summaries", o)
	n.profiles = newCache(c, cfg.CacheSize, cfg.ProfileTTL, cfg.ErrorTTL, n.fetchProfileName).observed("profiles", o)
	return n, nil
}

// Stats counts what the caches did.
type Stats struct {
	Markets        CacheStats `json:"markets"`         // market descriptions, one entry per language
	Variants       CacheStats `json:"variants"`        // variant lists, one entry per language
	SingleVariants CacheStats `json:"single_variants"` // descriptions of single-variant markets
	Summaries      CacheStats `json:"summaries"`       // event summaries
	Profiles       CacheStats `json:"profiles"`        // player and competitor names
	// Refetches are descriptions read again because a name was missing from them.
	Refetches int64 `json:"refetches"`
}

// Stats returns the caches' counters.
func (n *Names) Stats() Stats {
	return Stats{
		Markets:        n.markets.stats(),
		Variants:       n.variants.stats(),
		SingleVariants: n.singleVariants.stats(),
		Summaries:      n.summaries.stats(),
		Profiles:       n.profiles.stats(),
		Refetches:      n.refetches.Load(),
	}
}

// Refresh reads the market descriptions and the variant list of lang again now, as the
// schedule would after Config.RefreshInterval. If the API fails, the descriptions held
// stay in use and the error is returned.
func (n *Names) Refresh(ctx context.Context, lang string) error {
	if err := checkLang(lang); err != nil {
		return err
	}
	if _, _, err := n.markets.refetch(ctx, lang, 0); err != nil {
		return err
	}
	_, _, err := n.variants.refetch(ctx, lang, 0)
	return err
}

// checkLang accepts a language code as the API names them ("en", "de", "zht", "sr-latn"),
// so that nothing else reaches a URL or a cache key.
func checkLang(lang string) error {
	ok := len(lang) >= 2 && len(lang) <= 12
	for i := 0; ok && i < len(lang); i++ {
		c := lang[i]
		ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && (c == '-' || c >= '0' && c <= '9')
	}
	if !ok {
		return fmt.Errorf("markets: language %q: want a code such as en or de", lang)
	}
	return nil
}

func (n *Names) fetchMarkets(ctx context.Context, lang string) (*marketSet, error) {
	body, err := n.api.Get(ctx, "v1/descriptions/"+lang+"/markets.xml?include_mappings=true", maxListSize)
	if err != nil {
		return nil, fmt.Errorf("markets: market descriptions (%s): %w", lang, err)
	}
	descs, err := ParseDescriptions(body)
	if err != nil {
		return nil, fmt.Errorf("markets: market descriptions (%s): %w", lang, err)
	}
	return newMarketSet(descs), nil
}

func (n *Names) fetchVariants(ctx context.Context, lang string) (*variantSet, error) {
	body, err := n.api.Get(ctx, "v1/descriptions/"+lang+"/variants.xml?include_mappings=true", maxListSize)
	if err != nil {
		return nil, fmt.Errorf("markets: variant descriptions (%s): %w", lang, err)
	}
	vs, err := ParseVariants(body)
	if err != nil {
		return nil, fmt.Errorf("markets: variant descriptions (%s): %w", lang, err)
	}
	return newVariantSet(vs), nil
}

func (n *Names) fetchSingleVariant(ctx context.Context, k variantKey) (*market, error) {
	lang, id, variant := k.lang, k.market, k.variant
	what := fmt.Sprintf("market %d variant %s (%s)", id, variant, lang)
	body, err := n.api.Get(ctx, "v1/descriptions/"+lang+"/markets/"+strconv.Itoa(id)+"/variants/"+
		url.PathEscape(variant)+"?include_mappings=true", maxListSize)
	if err != nil {
		return nil, fmt.Errorf("markets: %s: %w", what, err)
	}
	descs, err := ParseDescriptions(body)
	if err != nil {
		return nil, fmt.Errorf("markets: %s: %w", what, err)
	}
	for _, d := range descs {
		if d.ID == id {
			return compileMarket(d), nil
		}
	}
	return nil, fmt.Errorf("%w: %s: the API's answer describes no market %d", ErrUnknownMarket, what, id)
}

func (n *Names) summary(ctx context.Context, lang string, event feed.URN) (EventSummary, error) {
	return n.summaries.get(ctx, urnKey{lang, event})
}

func (n *Names) fetchSummary(ctx context.Context, k urnKey) (EventSummary, error) {
	lang, event := k.lang, k.urn
	body, err := n.api.Get(ctx, "v1/sports/"+lang+"/sport_events/"+event.String()+"/summary.xml", maxSummarySize)
	if err != nil {
		return EventSummary{}, fmt.Errorf("markets: summary of %s (%s): %w", event, lang, err)
	}
	s, err := ParseEventSummary(body)
	if err == nil && s.Event != event {
		err = fmt.Errorf("markets: summary of %s (%s): it describes %s", event, lang, s.Event)
	}
	return s, err
}

// profileName returns the name of a player or competitor.
func (n *Names) profileName(ctx context.Context, lang string, u feed.URN) (string, error) {
	switch u.Type {
	case "player", "competitor", "simple_team":
		return n.profiles.get(ctx, urnKey{lang, u})
	}
	return "", fmt.Errorf("markets: %s is neither a player nor a competitor", u)
}

func (n *Names) fetchProfileName(ctx context.Context, k urnKey) (string, error) {
	lang, u := k.lang, k.urn
	kind := "players"
	if u.Type != "player" {
		kind = "competitors"
	}
	body, err := n.api.Get(ctx, "v1/sports/"+lang+"/"+kind+"/"+u.String()+"/profile.xml", maxSummarySize)
	if err != nil {
		return "", fmt.Errorf("markets: profile of %s (%s): %w", u, lang, err)
	}
	return ParseProfileName(body, u)
}
