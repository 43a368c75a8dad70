package feedtest

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// The simulator's fixtures and schedules. A match's scheduled start is the start_time of
// the last fixture_change it sent, or else when its first message was stamped; a match
// whose messages the history no longer holds has none (the attribute is left out, as
// the API leaves out what it does not know).
const (
	// RouteFixture is the fixture of a match the simulator has created.
	RouteFixture = "GET /v1/sports/{lang}/sport_events/{urn}/fixture.xml"
	// RouteFixtureChangeFixture is the same fixture, as the API serves it after a
	// fixture_change (uncached on the real API).
	RouteFixtureChangeFixture = "GET /v1/sports/{lang}/sport_events/{urn}/fixture_change_fixture.xml"
	// RouteDateSchedule lists the matches scheduled on a day (YYYY-MM-DD, UTC).
	RouteDateSchedule = "GET /v1/sports/{lang}/schedules/{date}/schedule.xml"
	// RouteLiveSchedule lists the matches running now.
	RouteLiveSchedule = "GET /v1/sports/{lang}/schedules/live/schedule.xml"
	// RoutePreMatchSchedule lists, a page at a time (start, limit), the matches whose
	// scheduled start is still to come.
	RoutePreMatchSchedule = "GET /v1/sports/{lang}/schedules/pre/schedule.xml"
)

func (s *Simulator) registerFixtures(mux *apiMux) {
	mux.HandleFunc(RouteFixture, s.serveFixture)
	mux.HandleFunc(RouteFixtureChangeFixture, s.serveFixture)
	mux.HandleFunc(RouteDateSchedule, s.serveDateSchedule)
	mux.HandleFunc(RouteLiveSchedule, s.serveLiveSchedule)
	mux.HandleFunc(RoutePreMatchSchedule, s.servePreMatchSchedule)
}

// simFixture is what the simulator knows of a match's fixture.
type simFixture struct {
	urn       feed.URN
	sport     int // 0 when not known any more
	running   bool
	scheduled time.Time // zero when not known
	changed   bool      // a fixture_change set scheduled
}

// fixtureOf returns the fixture of match u, if the simulator created it.
func (s *Simulator) fixtureOf(u feed.URN) (simFixture, bool) {
	created, sport, running := s.matchCreated(u)
	if !created {
		return simFixture{}, false
	}
	f := simFixture{urn: u, sport: sport, running: running}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.history.each(func(r *record) {
		if r.key.Event != u {
			return
		}
		if f.scheduled.IsZero() {
			f.scheduled = time.UnixMilli(r.stamp).UTC()
		}
		if r.key.Type == feed.MessageFixtureChange {
			if fc, err := feed.DecodeFixtureChange(r.body); err == nil && !fc.StartTime.IsZero() {
				f.scheduled, f.changed = fc.StartTime.UTC(), true
			}
		}
	})
	return f, true
}

// fixtures returns the fixtures of the matches running or in the history, by id.
func (s *Simulator) fixtures() []simFixture {
	s.mu.Lock()
	var ids []feed.URN
	for _, m := range s.matches {
		ids = append(ids, m.urn)
	}
	s.history.each(func(r *record) {
		if r.key.Event.Type == "match" {
			ids = append(ids, r.key.Event)
		}
	})
	s.mu.Unlock()
	slices.SortFunc(ids, func(a, b feed.URN) int { return int(a.ID - b.ID) })
	ids = slices.Compact(ids)
	out := make([]simFixture, 0, len(ids))
	for _, u := range ids {
		if f, ok := s.fixtureOf(u); ok {
			out = append(out, f)
		}
	}
	return out
}

func (s *Simulator) serveFixture(w http.ResponseWriter, r *http.Request) {
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
	startXML(w)
	fmt.Fprintf(w, `<fixtures_fixture xmlns="%s" generated_at="%s">`+"\n", unifiedNamespace, s.clock.Now().UTC().Format(time.RFC3339))
	writeSportEvent(w, "fixture", f, l)
	io.WriteString(w, "</fixtures_fixture>\n")
}

// writeSportEvent writes f as a <fixture> or a schedule's <sport_event>.
func writeSportEvent(w io.Writer, elem string, f simFixture, l int) {
	fmt.Fprintf(w, `  <%s id="%s"`, elem, f.urn)
	if !f.scheduled.IsZero() {
		fmt.Fprintf(w, ` scheduled="%s"`, f.scheduled.Format(time.RFC3339))
	}
	fmt.Fprintf(w, ` start_time_tbd="false"`)
	if elem == "fixture" && !f.scheduled.IsZero() {
		fmt.Fprintf(w, ` start_time="%s" start_time_confirmed="%t"`, f.scheduled.Format(time.RFC3339), f.changed)
	}
	status := "closed"
	if f.running {
		status = "live"
	}
	fmt.Fprintf(w, ` status="%s">`+"\n", status)
	if names, ok := sportNames[f.sport]; ok {
		fmt.Fprintf(w, `    <tournament id="sr:tournament:%d" name="%s">`+"\n", 9000+f.sport, [2]string{"Simulated League", "Simulierte Liga"}[l])
		fmt.Fprintf(w, `      <sport id="sr:sport:%d" name="%s"/>`+"\n", f.sport, escapeAttr(names[l]))
		fmt.Fprintf(w, `      <category id="sr:category:%d" name="%s"/>`+"\n", 9000+f.sport, [2]string{"Simulated", "Simuliert"}[l])
		io.WriteString(w, "    </tournament>\n")
	}
	home, away := matchTeams(f.urn.ID)
	io.WriteString(w, "    <competitors>\n")
	for i, t := range []int{home, away} {
		c := teamCountries[t%len(teamCountries)]
		fmt.Fprintf(w, `      <competitor id="%s" name="%s" abbreviation="%s" qualifier="%s" country="%s" country_code="%s" gender="male"/>`+"\n",
			competitorURN(t), escapeAttr(teamNames[t]), escapeAttr(teamAbbreviation(t)), [2]string{"home", "away"}[i], c[0], c[1])
	}
	io.WriteString(w, "    </competitors>\n")
	if elem == "fixture" {
		fmt.Fprintf(w, "    <extra_info>\n      <info key=\"simulated\" value=\"true\"/>\n    </extra_info>\n")
		fmt.Fprintf(w, "    <reference_ids>\n      <reference_id name=\"BetradarCtrl\" value=\"%d\"/>\n    </reference_ids>\n", f.urn.ID)
	}
	fmt.Fprintf(w, "  </%s>\n", elem)
}

func (s *Simulator) serveSchedule(w http.ResponseWriter, l int, fs []simFixture) {
	startXML(w)
	fmt.Fprintf(w, `<schedule xmlns="%s" generated_at="%s">`+"\n", unifiedNamespace, s.clock.Now().UTC().Format(time.RFC3339))
	for _, f := range fs {
		writeSportEvent(w, "sport_event", f, l)
	}
	io.WriteString(w, "</schedule>\n")
}

func (s *Simulator) serveDateSchedule(w http.ResponseWriter, r *http.Request) {
	l := s.language(w, r)
	if l < 0 {
		return
	}
	day, err := time.Parse(time.DateOnly, r.PathValue("date"))
	if err != nil {
		writeResponse(w, r, http.StatusBadRequest, "Invalid date "+r.PathValue("date"))
		return
	}
	var out []simFixture
	for _, f := range s.fixtures() {
		if !f.scheduled.IsZero() && f.scheduled.Truncate(24*time.Hour).Equal(day) {
			out = append(out, f)
		}
	}
	s.serveSchedule(w, l, out)
}

func (s *Simulator) serveLiveSchedule(w http.ResponseWriter, r *http.Request) {
	l := s.language(w, r)
	if l < 0 {
		return
	}
	var out []simFixture
	for _, f := range s.fixtures() {
		if f.running {
			out = append(out, f)
		}
	}
	s.serveSchedule(w, l, out)
}

func (s *Simulator) servePreMatchSchedule(w http.ResponseWriter, r *http.Request) {
	l := s.language(w, r)
	if l < 0 {
		return
	}
	start, limit := 0, 1000
	for _, q := range []struct {
		name     string
		v        *int
		min, max int
	}{{"start", &start, 0, 1 << 30}, {"limit", &limit, 1, 1000}} {
		v := r.URL.Query().Get(q.name)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < q.min || n > q.max {
			writeResponse(w, r, http.StatusBadRequest, "Invalid "+q.name+" "+v)
			return
		}
		*q.v = n
	}
	now := s.clock.Now()
	var out []simFixture
	for _, f := range s.fixtures() {
		if f.scheduled.After(now) {
			out = append(out, f)
		}
	}
	out = out[min(start, len(out)):]
	out = out[:min(limit, len(out))]
	s.serveSchedule(w, l, out)
}
