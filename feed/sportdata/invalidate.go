package sportdata

import (
	"slices"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// FixtureChanged drops what the Provider holds of the event's fixture and summary, and
// makes the next read of its fixture in each language ask for
// fixture_change_fixture.xml, which the API serves fresh. Call it for every
// fixture_change the feed sends (the SDK does, for its own Provider).
func (p *Provider) FixtureChanged(event feed.URN) {
	p.fixtures.purge(event)
	p.summaries.purge(event)
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.changed[event]; !ok && len(p.changed) >= p.cfg.CacheSize {
		// Bounded like the caches: the oldest change loses its fresh read, not memory.
		for id := range p.changed {
			delete(p.changed, id)
			break
		}
	}
	p.changed[event] = &change{at: p.cfg.Clock.Now()}
}

// change is a fixture change the Provider was told of: when, and the languages whose
// change fixture was read since.
type change struct {
	at   time.Time
	read []string
}

// changeNeeded reports whether the fixture of event in lang is to be read from
// fixture_change_fixture.xml.
func (p *Provider) changeNeeded(event feed.URN, lang string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.changed[event]
	return ok && !slices.Contains(c.read, lang)
}

// changeRead records that the change fixture of event was read in lang.
func (p *Provider) changeRead(event feed.URN, lang string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.changed[event]; ok && len(c.read) < p.cfg.MaxLanguages {
		c.read = append(c.read, lang)
	} else if ok {
		delete(p.changed, event)
	}
}

// Purge drops everything the Provider holds of id: an event's summary and fixture, a
// competitor's or a player's profile, a sport's categories, a tournament's seasons. The next read asks the API.
func (p *Provider) Purge(id feed.URN) {
	p.summaries.purge(id)
	p.fixtures.purge(id)
	p.competitors.purge(id)
	p.players.purge(id)
	p.categories.purge(id)
	p.seasons.purge(id)
}

// PurgeReadBefore drops every entity none of whose languages was read at or after t, and
// returns how many it dropped: a host that keeps a Provider for days calls it to let go
// of the events of past days.
func (p *Provider) PurgeReadBefore(t time.Time) int {
	n := p.summaries.purgeReadBefore(t) + p.fixtures.purgeReadBefore(t) +
		p.competitors.purgeReadBefore(t) + p.players.purgeReadBefore(t) +
		p.sports.purgeReadBefore(t) + p.categories.purgeReadBefore(t) +
		p.tournaments.purgeReadBefore(t) + p.seasons.purgeReadBefore(t)
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, c := range p.changed {
		if c.at.Before(t) {
			delete(p.changed, id)
		}
	}
	return n
}

// Stats counts what each cache of the Provider did.
type Stats struct {
	Summaries   CacheStats `json:"event_summaries"`
	Fixtures    CacheStats `json:"fixtures"`
	Competitors CacheStats `json:"competitor_profiles"`
	Players     CacheStats `json:"player_profiles"`
	Sports      CacheStats `json:"sports"`
	Categories  CacheStats `json:"categories"`
	Tournaments CacheStats `json:"tournaments"`
	Seasons     CacheStats `json:"seasons"`
}

// Stats returns the caches' counts.
func (p *Provider) Stats() Stats {
	return Stats{Summaries: p.summaries.stats(), Fixtures: p.fixtures.stats(),
		Competitors: p.competitors.stats(), Players: p.players.stats(),
		Sports: p.sports.stats(), Categories: p.categories.stats(),
		Tournaments: p.tournaments.stats(), Seasons: p.seasons.stats()}
}
