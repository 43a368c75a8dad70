package sportdata

import (
	"context"

	"github.com/feedkit/feedkit/feed"
)

// The lists of sports and tournaments are cached under the zero id: one entry per
// Provider, with the languages read.
var listKey = feed.URN{}

// Sports returns the sports the API knows, in langs, Config.Languages when none is
// named.
func (p *Provider) Sports(ctx context.Context, langs ...string) ([]Ref, error) {
	return read(ctx, p, p.sports, listKey, langs)
}

// Categories returns the sport's categories, in langs, Config.Languages when none is
// named.
func (p *Provider) Categories(ctx context.Context, sport feed.URN, langs ...string) (SportCategories, error) {
	return read(ctx, p, p.categories, sport, langs)
}

// Tournaments returns the tournaments the API knows, each with its sport, category and
// current season, in langs, Config.Languages when none is named.
func (p *Provider) Tournaments(ctx context.Context, langs ...string) ([]Tournament, error) {
	return read(ctx, p, p.tournaments, listKey, langs)
}

// Seasons returns the tournament with its seasons, in langs, Config.Languages when none
// is named.
func (p *Provider) Seasons(ctx context.Context, tournament feed.URN, langs ...string) (TournamentSeasons, error) {
	return read(ctx, p, p.seasons, tournament, langs)
}

// TournamentSchedule returns the events of a tournament or a season, in lang. It is read
// at each call, never cached.
func (p *Provider) TournamentSchedule(ctx context.Context, tournament feed.URN, lang string) ([]Event, error) {
	if err := checkLang(lang); err != nil {
		return nil, err
	}
	path := "v1/sports/" + lang + "/tournaments/" + tournament.String() + "/schedule.xml"
	b, err := p.api.Get(ctx, path, maxScheduleSize)
	if err != nil {
		return nil, err
	}
	return parseTournamentSchedule(b, lang, "schedule of "+tournament.String()+" in "+lang)
}

// Timeline returns a match's timeline in lang. It is read at each call, never cached:
// it grows as the match is played.
func (p *Provider) Timeline(ctx context.Context, match feed.URN, lang string) (Timeline, error) {
	if err := checkLang(lang); err != nil {
		return Timeline{}, err
	}
	b, err := p.api.Get(ctx, "v1/sports/"+lang+"/sport_events/"+match.String()+"/timeline.xml", maxEntitySize)
	if err != nil {
		return Timeline{}, err
	}
	return parseTimeline(b, lang, "timeline of "+match.String()+" in "+lang)
}

func (p *Provider) fetchSports(ctx context.Context, _ feed.URN, lang string) ([]Ref, error) {
	b, err := p.api.Get(ctx, "v1/sports/"+lang+"/sports.xml", maxEntitySize)
	if err != nil {
		return nil, err
	}
	return parseSports(b, lang, "sports in "+lang)
}

func (p *Provider) fetchCategories(ctx context.Context, sport feed.URN, lang string) (SportCategories, error) {
	b, err := p.api.Get(ctx, "v1/sports/"+lang+"/sports/"+sport.String()+"/categories.xml", maxEntitySize)
	if err != nil {
		return SportCategories{}, err
	}
	return parseSportCategories(b, lang, "categories of "+sport.String()+" in "+lang)
}

func (p *Provider) fetchTournaments(ctx context.Context, _ feed.URN, lang string) ([]Tournament, error) {
	b, err := p.api.Get(ctx, "v1/sports/"+lang+"/tournaments.xml", maxScheduleSize)
	if err != nil {
		return nil, err
	}
	return parseTournaments(b, lang, "tournaments in "+lang)
}

func (p *Provider) fetchSeasons(ctx context.Context, tournament feed.URN, lang string) (TournamentSeasons, error) {
	b, err := p.api.Get(ctx, "v1/sports/"+lang+"/tournaments/"+tournament.String()+"/seasons.xml", maxEntitySize)
	if err != nil {
		return TournamentSeasons{}, err
	}
	return parseTournamentSeasons(b, lang, "seasons of "+tournament.String()+" in "+lang)
}

func mergeSports(old, v []Ref) []Ref {
	return mergeList(old, v, func(r Ref) feed.URN { return r.ID }, mergeRef)
}

func mergeCategory(old, v Category) Category {
	if old.ID == v.ID {
		v.Name = old.Name.merged(v.Name)
	}
	return v
}

func mergeSportCategories(old, v SportCategories) SportCategories {
	v.Sport = mergeRef(old.Sport, v.Sport)
	v.Categories = mergeList(old.Categories, v.Categories, func(c Category) feed.URN { return c.ID }, mergeCategory)
	return v
}

func mergeSeason(old, v Season) Season {
	if old.ID == v.ID {
		v.Name = old.Name.merged(v.Name)
	}
	return v
}

func mergeTournament(old, v Tournament) Tournament {
	if old.ID != v.ID {
		return v
	}
	v.Name = old.Name.merged(v.Name)
	v.Sport = mergeRef(old.Sport, v.Sport)
	v.Category = mergeCategory(old.Category, v.Category)
	if old.CurrentSeason != nil && v.CurrentSeason != nil {
		s := mergeSeason(*old.CurrentSeason, *v.CurrentSeason)
		v.CurrentSeason = &s
	}
	return v
}

func mergeTournaments(old, v []Tournament) []Tournament {
	return mergeList(old, v, func(t Tournament) feed.URN { return t.ID }, mergeTournament)
}

func mergeTournamentSeasons(old, v TournamentSeasons) TournamentSeasons {
	v.Tournament = mergeTournament(old.Tournament, v.Tournament)
	v.Seasons = mergeList(old.Seasons, v.Seasons, func(s Season) feed.URN { return s.ID }, mergeSeason)
	return v
}
