package sportdata

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// The largest documents read: an entity's, and a schedule's (a day of every sport, or a
// page of the pre-match schedule, runs to megabytes).
const (
	maxEntitySize   = 4 << 20
	maxScheduleSize = 64 << 20
)

// Provider reads the sport data behind the feed's messages from the Sports API (events,
// fixtures, competitors, players, schedules), caches the entities and merges the
// languages read for each into one value. It is safe for concurrent use.
type Provider struct {
	api API
	cfg Config

	summaries   *cache[Summary]
	fixtures    *cache[Fixture]
	competitors *cache[CompetitorProfile]
	players     *cache[Player]
	sports      *cache[[]Ref]
	categories  *cache[SportCategories]
	tournaments *cache[[]Tournament]
	seasons     *cache[TournamentSeasons]

	// changed holds the events whose fixture changed (FixtureChanged), with the
	// languages read since from fixture_change_fixture.xml, which the API serves fresh
	// where fixture.xml may be minutes old.
	mu      sync.Mutex
	changed map[feed.URN]*change
}

// New returns a Provider reading through api. A bad Config is refused with the field
// named.
func New(api API, cfg Config) (*Provider, error) {
	if api == nil {
		return nil, errors.New("sportdata: New: the API is nil")
	}
	cfg.Languages = append([]string(nil), cfg.Languages...)
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	p := &Provider{api: api, cfg: cfg, changed: make(map[feed.URN]*change)}
	p.summaries = newCache(p, "event_summaries", p.fetchSummary, mergeSummary)
	p.fixtures = newCache(p, "fixtures", p.fetchFixture, mergeFixture)
	p.competitors = newCache(p, "competitor_profiles", p.fetchCompetitor, mergeCompetitorProfile)
	p.players = newCache(p, "player_profiles", p.fetchPlayer, mergePlayer)
	p.sports = newCache(p, "sports", p.fetchSports, mergeSports)
	p.categories = newCache(p, "categories", p.fetchCategories, mergeSportCategories)
	p.tournaments = newCache(p, "tournaments", p.fetchTournaments, mergeTournaments)
	p.seasons = newCache(p, "seasons", p.fetchSeasons, mergeTournamentSeasons)
	return p, nil
}

func newCache[V any](p *Provider, name string, fetch func(context.Context, feed.URN, string) (V, error), merge func(old, v V) V) *cache[V] {
	return &cache[V]{name: name, clock: p.cfg.Clock, max: p.cfg.CacheSize, maxLangs: p.cfg.MaxLanguages,
		ttl: p.cfg.TTL, errTTL: p.cfg.ErrorTTL, fetch: fetch, merge: merge, obs: p.cfg.Observer,
		entries: make(map[feed.URN]*list.Element)}
}

// Summary returns the summary of the event id (a match, a stage, a season or a
// tournament) in langs, Config.Languages when none is named.
func (p *Provider) Summary(ctx context.Context, id feed.URN, langs ...string) (Summary, error) {
	return read(ctx, p, p.summaries, id, langs)
}

// Fixture returns the fixture of the event id in langs, Config.Languages when none is
// named.
func (p *Provider) Fixture(ctx context.Context, id feed.URN, langs ...string) (Fixture, error) {
	return read(ctx, p, p.fixtures, id, langs)
}

// Competitor returns the profile of the competitor id, with its squad, in langs,
// Config.Languages when none is named.
func (p *Provider) Competitor(ctx context.Context, id feed.URN, langs ...string) (CompetitorProfile, error) {
	return read(ctx, p, p.competitors, id, langs)
}

// Player returns the profile of the player id in langs, Config.Languages when none is
// named.
func (p *Provider) Player(ctx context.Context, id feed.URN, langs ...string) (Player, error) {
	return read(ctx, p, p.players, id, langs)
}

// read reads id in each language and returns the merged value; the errors of the
// languages that failed are joined, and Config.Errors says whether the languages read
// come with them.
func read[V any](ctx context.Context, p *Provider, c *cache[V], id feed.URN, langs []string) (V, error) {
	if len(langs) == 0 {
		langs = p.cfg.Languages
	}
	var v V
	var errs []error
	got := false
	for _, l := range langs {
		if err := checkLang(l); err != nil {
			errs = append(errs, err)
			continue
		}
		x, err := c.get(ctx, id, l)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		v, got = *x, true
	}
	if len(errs) == 0 {
		return v, nil
	}
	err := errs[0]
	if len(errs) > 1 {
		err = errors.Join(errs...)
	}
	if p.cfg.Errors == ReturnPartial && got {
		return v, err
	}
	var zero V
	return zero, err
}

func (p *Provider) fetchSummary(ctx context.Context, id feed.URN, lang string) (Summary, error) {
	b, err := p.api.Get(ctx, "v1/sports/"+lang+"/sport_events/"+id.String()+"/summary.xml", maxEntitySize)
	if err != nil {
		return Summary{}, err
	}
	return parseSummary(b, lang, "summary of "+id.String()+" in "+lang)
}

func (p *Provider) fetchFixture(ctx context.Context, id feed.URN, lang string) (Fixture, error) {
	doc, change := "fixture.xml", p.changeNeeded(id, lang)
	if change {
		doc = "fixture_change_fixture.xml"
	}
	b, err := p.api.Get(ctx, "v1/sports/"+lang+"/sport_events/"+id.String()+"/"+doc, maxEntitySize)
	if err != nil {
		return Fixture{}, err
	}
	f, err := parseFixture(b, lang, doc+" of "+id.String()+" in "+lang)
	if err == nil && change {
		p.changeRead(id, lang)
	}
	return f, err
}

func (p *Provider) fetchCompetitor(ctx context.Context, id feed.URN, lang string) (CompetitorProfile, error) {
	b, err := p.api.Get(ctx, "v1/sports/"+lang+"/competitors/"+id.String()+"/profile.xml", maxEntitySize)
	if err != nil {
		return CompetitorProfile{}, err
	}
	return parseCompetitorProfile(b, lang, "profile of "+id.String()+" in "+lang)
}

func (p *Provider) fetchPlayer(ctx context.Context, id feed.URN, lang string) (Player, error) {
	b, err := p.api.Get(ctx, "v1/sports/"+lang+"/players/"+id.String()+"/profile.xml", maxEntitySize)
	if err != nil {
		return Player{}, err
	}
	return parsePlayerProfile(b, lang, "profile of "+id.String()+" in "+lang)
}

// Schedule returns the events scheduled on date's day (in UTC) in lang. Schedules are
// read at each call, never cached: they change as the day goes.
func (p *Provider) Schedule(ctx context.Context, date time.Time, lang string) ([]Event, error) {
	return p.schedule(ctx, "schedules/"+date.UTC().Format(time.DateOnly)+"/schedule.xml", lang)
}

// LiveSchedule returns the events live now, in lang.
func (p *Provider) LiveSchedule(ctx context.Context, lang string) ([]Event, error) {
	return p.schedule(ctx, "schedules/live/schedule.xml", lang)
}

// PreMatchSchedule returns a page of the events not started yet, in lang: limit events
// (at most 1000, as the API serves) from the start-th. A page shorter than limit is the
// last.
func (p *Provider) PreMatchSchedule(ctx context.Context, start, limit int, lang string) ([]Event, error) {
	if start < 0 || limit < 1 || limit > 1000 {
		return nil, fmt.Errorf("sportdata: PreMatchSchedule: start %d must not be negative and limit %d must be 1 to 1000", start, limit)
	}
	return p.schedule(ctx, "schedules/pre/schedule.xml?start="+strconv.Itoa(start)+"&limit="+strconv.Itoa(limit), lang)
}

func (p *Provider) schedule(ctx context.Context, path, lang string) ([]Event, error) {
	if err := checkLang(lang); err != nil {
		return nil, err
	}
	b, err := p.api.Get(ctx, "v1/sports/"+lang+"/"+path, maxScheduleSize)
	if err != nil {
		return nil, err
	}
	return parseSchedule(b, lang, path+" in "+lang)
}

// checkLang refuses what is no language code before it reaches a URL.
func checkLang(lang string) error {
	if !validLang(lang) {
		return fmt.Errorf("sportdata: %q is no language code", lang)
	}
	return nil
}
