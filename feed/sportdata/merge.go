package sportdata

import "github.com/feedkit/feedkit/feed"

// Merging a language into what is held: the document read last decides every fact (a
// start time, the competitors, a score), and the names of the other languages read
// before are kept for the entities it still lists. So a value is never a mix of two
// versions of the facts, and reading one more language never loses the others.

func mergeSummary(old, v Summary) Summary {
	v.Event = mergeEvent(&old.Event, v.Event)
	return v
}

func mergeFixture(old, v Fixture) Fixture {
	v.Event = mergeEvent(&old.Event, v.Event)
	return v
}

func mergeCompetitorProfile(old, v CompetitorProfile) CompetitorProfile {
	v.Competitor = mergeCompetitor(old.Competitor, v.Competitor)
	v.Players = mergeList(old.Players, v.Players, func(p Player) feed.URN { return p.ID }, mergePlayer)
	return v
}

func mergeEvent(old *Event, v Event) Event {
	if old.ID != v.ID {
		return v
	}
	v.Name = old.Name.merged(v.Name)
	v.Sport = mergeRef(old.Sport, v.Sport)
	v.Category = mergeRef(old.Category, v.Category)
	v.Tournament = mergeRef(old.Tournament, v.Tournament)
	v.Season = mergeRef(old.Season, v.Season)
	v.Competitors = mergeList(old.Competitors, v.Competitors, func(c Competitor) feed.URN { return c.ID }, mergeCompetitor)
	if old.Venue != nil && v.Venue != nil && old.Venue.ID == v.Venue.ID {
		m := *v.Venue
		m.Name = old.Venue.Name.merged(m.Name)
		m.City = old.Venue.City.merged(m.City)
		m.Country = old.Venue.Country.merged(m.Country)
		v.Venue = &m
	}
	return v
}

func mergeRef(old, v Ref) Ref {
	if old.ID == v.ID {
		v.Name = old.Name.merged(v.Name)
	}
	return v
}

func mergeCompetitor(old, v Competitor) Competitor {
	if old.ID == v.ID {
		v.Name = old.Name.merged(v.Name)
		v.Country = old.Country.merged(v.Country)
	}
	return v
}

func mergePlayer(old, v Player) Player {
	if old.ID == v.ID {
		v.Name = old.Name.merged(v.Name)
		v.FullName = old.FullName.merged(v.FullName)
		v.Nationality = old.Nationality.merged(v.Nationality)
	}
	return v
}

// mergeList merges each item of v with the item of old that has the same id.
func mergeList[T any](old, v []T, id func(T) feed.URN, merge func(old, v T) T) []T {
	if len(old) == 0 {
		return v
	}
	byID := make(map[feed.URN]int, len(old))
	for i, o := range old {
		byID[id(o)] = i
	}
	out := make([]T, len(v))
	for i, x := range v {
		if j, ok := byID[id(x)]; ok {
			x = merge(old[j], x)
		}
		out[i] = x
	}
	return out
}
