package feedtest

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// The simulator's catalogue: its sports, each with one category and one tournament
// (sr:category:900N and sr:tournament:900N for sport N), whose one season runs through
// the simulator clock's year; and each match's timeline, from its messages.
const (
	// RouteSports lists the sports.
	RouteSports = "GET /v1/sports/{lang}/sports.xml"
	// RouteSportCategories lists a sport's categories.
	RouteSportCategories = "GET /v1/sports/{lang}/sports/{urn}/categories.xml"
	// RouteTournaments lists the tournaments, each with its current season.
	RouteTournaments = "GET /v1/sports/{lang}/tournaments.xml"
	// RouteTournamentSeasons lists a tournament's seasons.
	RouteTournamentSeasons = "GET /v1/sports/{lang}/tournaments/{urn}/seasons.xml"
	// RouteTournamentSchedule lists a tournament's matches.
	RouteTournamentSchedule = "GET /v1/sports/{lang}/tournaments/{urn}/schedule.xml"
	// RouteTimeline is a match's timeline: started at its first message, ended at its
	// settlement.
	RouteTimeline = "GET /v1/sports/{lang}/sport_events/{urn}/timeline.xml"
)

const catalogBase = 9000 // sr:category:9001 and sr:tournament:9001 are sport 1's

func (s *Simulator) registerCatalog(mux *apiMux) {
	mux.HandleFunc(RouteSports, s.serveSports)
	mux.HandleFunc(RouteSportCategories, s.serveSportCategories)
	mux.HandleFunc(RouteTournaments, s.serveTournaments)
	mux.HandleFunc(RouteTournamentSeasons, s.serveTournamentSeasons)
	mux.HandleFunc(RouteTournamentSchedule, s.serveTournamentSchedule)
	mux.HandleFunc(RouteTimeline, s.serveTimeline)
}

func sportIDs() []int {
	ids := make([]int, 0, len(sportNames))
	for id := range sportNames {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// sportOf returns the sport whose category or tournament u is (of type typ).
func sportOf(u feed.URN, typ string) (int, bool) {
	sport := int(u.ID - catalogBase)
	_, ok := sportNames[sport]
	return sport, ok && u.Prefix == "sr" && u.Type == typ
}

// seasonOf returns the sport whose season u is (sr:season:9000N is sport N's).
func seasonOf(u feed.URN) (int, bool) {
	sport := int(u.ID - 10*catalogBase)
	_, ok := sportNames[sport]
	return sport, ok && u.Prefix == "sr" && u.Type == "season"
}

func (s *Simulator) openDoc(w http.ResponseWriter, root string) {
	startXML(w)
	fmt.Fprintf(w, `<%s xmlns="%s" generated_at="%s">`+"\n", root, unifiedNamespace, s.clock.Now().UTC().Format(time.RFC3339))
}

func (s *Simulator) serveSports(w http.ResponseWriter, r *http.Request) {
	l := s.language(w, r)
	if l < 0 {
		return
	}
	s.openDoc(w, "sports")
	for _, id := range sportIDs() {
		fmt.Fprintf(w, `  <sport id="sr:sport:%d" name="%s"/>`+"\n", id, escapeAttr(sportNames[id][l]))
	}
	io.WriteString(w, "</sports>\n")
}

func (s *Simulator) serveSportCategories(w http.ResponseWriter, r *http.Request) {
	l := s.language(w, r)
	if l < 0 {
		return
	}
	u, err := feed.ParseURN(r.PathValue("urn"))
	names, ok := sportNames[int(u.ID)]
	if err != nil || !ok || u.Type != "sport" {
		notFound(w, r, "No data for sport "+r.PathValue("urn"))
		return
	}
	s.openDoc(w, "sport_categories")
	fmt.Fprintf(w, `  <sport id="%s" name="%s"/>`+"\n", u, escapeAttr(names[l]))
	fmt.Fprintf(w, "  <categories>\n    <category id=\"sr:category:%d\" name=\"%s\"/>\n  </categories>\n", catalogBase+u.ID, [2]string{"Simulated", "Simuliert"}[l])
	io.WriteString(w, "</sport_categories>\n")
}

// writeTournament writes sport's tournament, with its current season when elem is a
// tournament list's.
func (s *Simulator) writeTournament(w io.Writer, sport, l int, current bool) {
	fmt.Fprintf(w, `  <tournament id="sr:tournament:%d" name="%s">`+"\n", catalogBase+sport, [2]string{"Simulated League", "Simulierte Liga"}[l])
	fmt.Fprintf(w, `    <sport id="sr:sport:%d" name="%s"/>`+"\n", sport, escapeAttr(sportNames[sport][l]))
	fmt.Fprintf(w, `    <category id="sr:category:%d" name="%s"/>`+"\n", catalogBase+sport, [2]string{"Simulated", "Simuliert"}[l])
	if current {
		s.writeSeason(w, "    ", "current_season", sport, l)
	}
	io.WriteString(w, "  </tournament>\n")
}

func (s *Simulator) writeSeason(w io.Writer, indent, elem string, sport, l int) {
	year := s.clock.Now().UTC().Year()
	fmt.Fprintf(w, `%s<%s id="sr:season:%d" name="%s %d" start_date="%d-01-01" end_date="%d-12-31" year="%d" tournament_id="sr:tournament:%d"/>`+"\n",
		indent, elem, 10*catalogBase+sport, [2]string{"Simulated League", "Simulierte Liga"}[l], year, year, year, year, catalogBase+sport)
}

func (s *Simulator) serveTournaments(w http.ResponseWriter, r *http.Request) {
	l := s.language(w, r)
	if l < 0 {
		return
	}
	s.openDoc(w, "tournaments")
	for _, id := range sportIDs() {
		s.writeTournament(w, id, l, true)
	}
	io.WriteString(w, "</tournaments>\n")
}

// tournament reads the {urn} of a tournament route: the sport whose tournament it is.
func (s *Simulator) tournament(w http.ResponseWriter, r *http.Request) (int, bool) {
	u, err := feed.ParseURN(r.PathValue("urn"))
	sport, ok := sportOf(u, "tournament")
	if err != nil || !ok {
		notFound(w, r, "No data for tournament "+r.PathValue("urn"))
		return 0, false
	}
	return sport, true
}

func (s *Simulator) serveTournamentSeasons(w http.ResponseWriter, r *http.Request) {
	l := s.language(w, r)
	if l < 0 {
		return
	}
	sport, ok := s.tournament(w, r)
	if !ok {
		return
	}
	s.openDoc(w, "tournament_seasons")
	s.writeTournament(w, sport, l, false)
	io.WriteString(w, "  <seasons>\n")
	s.writeSeason(w, "    ", "season", sport, l)
	io.WriteString(w, "  </seasons>\n</tournament_seasons>\n")
}

func (s *Simulator) serveTournamentSchedule(w http.ResponseWriter, r *http.Request) {
	l := s.language(w, r)
	if l < 0 {
		return
	}
	sport, ok := s.tournament(w, r)
	if !ok {
		return
	}
	s.openDoc(w, "tournament_schedule")
	s.writeTournament(w, sport, l, false)
	io.WriteString(w, "  <sport_events>\n")
	for _, f := range s.fixtures() {
		if f.sport == sport {
			writeSportEvent(w, "sport_event", f, l)
		}
	}
	io.WriteString(w, "  </sport_events>\n</tournament_schedule>\n")
}

func (s *Simulator) serveTimeline(w http.ResponseWriter, r *http.Request) {
	l := s.language(w, r)
	if l < 0 {
		return
	}
	u, err := feed.ParseURN(r.PathValue("urn"))
	f, ok := simFixture{}, false
	if err == nil {
		f, ok = s.fixtureOf(u)
	}
	if !ok {
		notFound(w, r, "No data for event "+r.PathValue("urn"))
		return
	}
	var started, ended time.Time
	s.mu.Lock()
	s.history.each(func(rec *record) {
		if rec.key.Event != u || rec.replay {
			return
		}
		if started.IsZero() {
			started = time.UnixMilli(rec.stamp).UTC()
		}
		if rec.key.Type == feed.MessageBetSettlement && ended.IsZero() {
			ended = time.UnixMilli(rec.stamp).UTC()
		}
	})
	s.mu.Unlock()
	s.openDoc(w, "match_timeline")
	writeSportEvent(w, "sport_event", f, l)
	status := "closed"
	if f.running {
		status = "live"
	}
	fmt.Fprintf(w, `  <sport_event_status status="%s"/>`+"\n", status)
	io.WriteString(w, "  <timeline>\n")
	if !started.IsZero() {
		fmt.Fprintf(w, `    <event id="%d" type="match_started" time="%s"/>`+"\n", 2*u.ID, started.Format(time.RFC3339))
	}
	if !ended.IsZero() {
		fmt.Fprintf(w, `    <event id="%d" type="match_ended" time="%s"/>`+"\n", 2*u.ID+1, ended.Format(time.RFC3339))
	}
	io.WriteString(w, "  </timeline>\n</match_timeline>\n")
}

// serveTournamentInfo answers the summary of one of the simulator's tournaments or
// seasons, a tournament_info as the API's, and reports whether u is one.
func (s *Simulator) serveTournamentInfo(w http.ResponseWriter, u feed.URN, l int) bool {
	sport, ok := sportOf(u, "tournament")
	if !ok {
		if sport, ok = seasonOf(u); !ok {
			return false
		}
	}
	s.openDoc(w, "tournament_info")
	s.writeTournament(w, sport, l, true)
	if u.Type == "season" {
		s.writeSeason(w, "  ", "season", sport, l)
	}
	io.WriteString(w, "</tournament_info>\n")
	return true
}
