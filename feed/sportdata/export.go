package sportdata

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// The export format: a JSON document naming itself and its version, then each cache's
// entities with the time each language was read. A later version of the kit reads the
// versions before it; a version it does not know is refused, never guessed at.
const (
	exportFormat  = "feedkit/sportdata"
	exportVersion = 1
)

type exportDoc struct {
	Format      string                        `json:"format"`
	Version     int                           `json:"version"`
	ExportedAt  time.Time                     `json:"exported_at"`
	Summaries   []exported[Summary]           `json:"summaries"`
	Fixtures    []exported[Fixture]           `json:"fixtures"`
	Competitors []exported[CompetitorProfile] `json:"competitors"`
	Players     []exported[Player]            `json:"players"`
	Sports      []exported[[]Ref]             `json:"sports"`
	Categories  []exported[SportCategories]   `json:"categories"`
	Tournaments []exported[[]Tournament]      `json:"tournaments"`
	Seasons     []exported[TournamentSeasons] `json:"seasons"`
}

type exported[V any] struct {
	ID        feed.URN             `json:"id"`
	Languages map[string]time.Time `json:"languages"` // when each was read
	Value     V                    `json:"value"`
}

// Export writes every entity the Provider holds (summaries, fixtures, competitor and
// player profiles, sports, categories, tournaments and seasons, each with its languages
// and when they were read) to w, in a versioned JSON format that Import reads: a
// restarted or a new process imports it and starts warm. Schedules and timelines, never
// cached, are not in it.
func (p *Provider) Export(w io.Writer) error {
	doc := exportDoc{Format: exportFormat, Version: exportVersion, ExportedAt: p.cfg.Clock.Now().UTC(),
		Summaries: exportCache(p.summaries), Fixtures: exportCache(p.fixtures),
		Competitors: exportCache(p.competitors), Players: exportCache(p.players),
		Sports: exportCache(p.sports), Categories: exportCache(p.categories),
		Tournaments: exportCache(p.tournaments), Seasons: exportCache(p.seasons)}
	if err := json.NewEncoder(w).Encode(&doc); err != nil {
		return fmt.Errorf("sportdata: Export: %w", err)
	}
	return nil
}

func exportCache[V any](c *cache[V]) []exported[V] {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]exported[V], 0, c.lru.Len())
	// Least recently read first: an import that fills its cache keeps the most recent.
	for el := c.lru.Back(); el != nil; el = el.Prev() {
		e := el.Value.(*entry[V])
		x := exported[V]{ID: e.id, Languages: make(map[string]time.Time, len(e.langs)), Value: *e.val}
		for _, l := range e.langs {
			x.Languages[l.lang] = l.at.UTC()
		}
		out = append(out, x)
	}
	return out
}

// Import reads what Export wrote and adds the entities the Provider does not hold; one
// it holds keeps what it has (read later than any export). Each language keeps the time
// it was read, so an import ages as the cache it came from would have: what is older
// than Config.TTL is read again at its next read. A document of another format or
// version, or that is not whole, is refused with nothing imported.
func (p *Provider) Import(r io.Reader) (int, error) {
	var doc exportDoc
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return 0, fmt.Errorf("sportdata: Import: %w", err)
	}
	if doc.Format != exportFormat {
		return 0, fmt.Errorf("sportdata: Import: format %q, want %q", doc.Format, exportFormat)
	}
	if doc.Version != exportVersion {
		return 0, fmt.Errorf("sportdata: Import: version %d of the format, this kit reads version %d", doc.Version, exportVersion)
	}
	for _, check := range []error{
		checkImport("summaries", doc.Summaries, func(v Summary) feed.URN { return v.Event.ID }),
		checkImport("fixtures", doc.Fixtures, func(v Fixture) feed.URN { return v.Event.ID }),
		checkImport("competitors", doc.Competitors, func(v CompetitorProfile) feed.URN { return v.Competitor.ID }),
		checkImport("players", doc.Players, func(v Player) feed.URN { return v.ID }),
		checkImport("sports", doc.Sports, func([]Ref) feed.URN { return listKey }),
		checkImport("categories", doc.Categories, func(v SportCategories) feed.URN { return v.Sport.ID }),
		checkImport("tournaments", doc.Tournaments, func([]Tournament) feed.URN { return listKey }),
		checkImport("seasons", doc.Seasons, func(v TournamentSeasons) feed.URN { return v.Tournament.ID }),
	} {
		if check != nil {
			return 0, check
		}
	}
	n := importCache(p.summaries, doc.Summaries) + importCache(p.fixtures, doc.Fixtures) +
		importCache(p.competitors, doc.Competitors) + importCache(p.players, doc.Players) +
		importCache(p.sports, doc.Sports) + importCache(p.categories, doc.Categories) +
		importCache(p.tournaments, doc.Tournaments) + importCache(p.seasons, doc.Seasons)
	return n, nil
}

// checkImport refuses an entity whose id is not its value's (a list's is the zero id), or
// without a language.
func checkImport[V any](cache string, xs []exported[V], id func(V) feed.URN) error {
	for i, x := range xs {
		if x.ID != id(x.Value) || x.ID.IsZero() && cache != "sports" && cache != "tournaments" {
			return fmt.Errorf("sportdata: Import: %s[%d]: id %s, its value's %s", cache, i, x.ID, id(x.Value))
		}
		if len(x.Languages) == 0 {
			return fmt.Errorf("sportdata: Import: %s[%d] (%s) has no language", cache, i, x.ID)
		}
		for l := range x.Languages {
			if !validLang(l) {
				return fmt.Errorf("sportdata: Import: %s[%d] (%s): %q is no language code", cache, i, x.ID, l)
			}
		}
	}
	return nil
}

func importCache[V any](c *cache[V], xs []exported[V]) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, x := range xs {
		if _, held := c.entries[x.ID]; held {
			continue
		}
		e, _ := c.entryLocked(x.ID)
		v := x.Value
		e.val = &v
		for l, at := range x.Languages {
			if len(e.langs) < c.maxLangs {
				e.langs = append(e.langs, langAt{l, at})
			}
		}
		n++
	}
	c.imported.Add(int64(n))
	return n
}
