package feedtest

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// The routes of the Sports API that the simulator's API serves beside the account and
// recovery ones (see APIHandler), as patterns for APIRequests.
const (
	// RouteMarketDescriptions lists the market descriptions (markets.xml), with the
	// mappings to older products when the query has include_mappings=true.
	RouteMarketDescriptions = "GET /v1/descriptions/{lang}/markets.xml"
	// RouteMarketVariant describes one market for one variant: a market whose outcomes
	// come from the variant list (market 21, variant sr:exact_goals:4+) or a free-text
	// market (market 534, variant pre:markettext:1001).
	RouteMarketVariant = "GET /v1/descriptions/{lang}/markets/{id}/variants/{variant}"
	// RouteVariantDescriptions lists the variant lists (variants.xml).
	RouteVariantDescriptions = "GET /v1/descriptions/{lang}/variants.xml"
	// RouteEventSummary is the summary of a match the simulator has created, or of one
	// of its tournaments or seasons (a tournament_info).
	RouteEventSummary = "GET /v1/sports/{lang}/sport_events/{urn}/summary.xml"
	// RoutePlayerProfile is the profile of a player of the simulator's teams.
	RoutePlayerProfile = "GET /v1/sports/{lang}/players/{urn}/profile.xml"
	// RouteCompetitorProfile is the profile of one of the simulator's teams, with its squad.
	RouteCompetitorProfile = "GET /v1/sports/{lang}/competitors/{urn}/profile.xml"
)

const unifiedNamespace = "http://schemas.sportradar.com/sportsapi/v1/unified"

// APIRequests returns how many requests the simulator's API has received on the route
// pattern, as registered: one of the Route constants, or an account or recovery route
// such as "GET /v1/users/whoami.xml". Every request counts, those refused (401, 404)
// included, from before it is answered: once a client has its response, the count
// includes its request. A request that matches no route counts under "".
func (s *Simulator) APIRequests(pattern string) int {
	s.apiStats.mu.Lock()
	defer s.apiStats.mu.Unlock()
	return s.apiStats.byPattern[pattern]
}

// apiCounter counts the API's requests by route pattern.
type apiCounter struct {
	mu        sync.Mutex
	byPattern map[string]int
}

// countRequests wraps the API's mux: it counts each request under the pattern the mux
// routes it to, before the route's handler answers.
func (s *Simulator) countRequests(mux *apiMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pattern := mux.Handler(r)
		if pattern == routeUnknown {
			pattern = "" // matched no route of the API's
		}
		s.apiStats.mu.Lock()
		if s.apiStats.byPattern == nil {
			s.apiStats.byPattern = make(map[string]int)
		}
		s.apiStats.byPattern[pattern]++
		s.apiStats.mu.Unlock()
		// The API's clock is the simulator's: a client reading the server's time off Date
		// (feedapi's clock offset) finds the simulated one, fake or real.
		w.Header().Set("Date", s.clock.Now().UTC().Format(http.TimeFormat))
		mux.ServeHTTP(w, r)
	})
}

// registerSportsAPI adds the Sports API's routes to the API's mux.
func (s *Simulator) registerSportsAPI(mux *apiMux) {
	mux.HandleFunc(RouteMarketDescriptions, s.serveMarkets)
	mux.HandleFunc(RouteMarketVariant, s.serveMarketVariant)
	mux.HandleFunc(RouteVariantDescriptions, s.serveVariants)
	mux.HandleFunc(RouteEventSummary, s.serveSummary)
	mux.HandleFunc(RoutePlayerProfile, s.servePlayerProfile)
	mux.HandleFunc(RouteCompetitorProfile, s.serveCompetitorProfile)
	s.registerFixtures(mux)
	s.registerCatalog(mux)
	s.registerChangesAPI(mux)
}

// language checks the token and the {lang} of a request: the index of its names, or -1
// once it has answered 401 or 404.
func (s *Simulator) language(w http.ResponseWriter, r *http.Request) int {
	if !s.authorized(w, r) {
		return -1
	}
	lang := r.PathValue("lang")
	l, ok := apiLanguages[lang]
	if !ok {
		notFound(w, r, "Language "+lang+" is not supported")
		return -1
	}
	return l
}

func startXML(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/xml")
	io.WriteString(w, `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>`+"\n")
}

func (s *Simulator) serveMarkets(w http.ResponseWriter, r *http.Request) {
	l := s.language(w, r)
	if l < 0 {
		return
	}
	mappings := r.URL.Query().Get("include_mappings") == "true"
	startXML(w)
	io.WriteString(w, `<market_descriptions response_code="OK">`+"\n")
	for _, m := range apiMarkets {
		writeMarket(w, m, l, mappings, "", m.name[l], m.outcomes)
	}
	io.WriteString(w, "</market_descriptions>\n")
}

func (s *Simulator) serveMarketVariant(w http.ResponseWriter, r *http.Request) {
	l := s.language(w, r)
	if l < 0 {
		return
	}
	id, err := strconv.Atoi(r.PathValue("id"))
	m, ok := findAPIMarket(id)
	if err != nil || !ok {
		notFound(w, r, "Market description for id "+r.PathValue("id")+" not found")
		return
	}
	variant := r.PathValue("variant")
	name, outcomes, found := m.name[l], []apiOutcome(nil), false
	if v, ok := findAPIVariant(variant); ok && m.hasVariantSpecifier() && m.id != 534 {
		outcomes, found = v.outcomes, true
	}
	for _, ft := range apiFreeTexts {
		if m.id == 534 && ft.variant == variant {
			name, outcomes, found = ft.name[l], ft.outcomes, true
		}
	}
	if !found {
		notFound(w, r, fmt.Sprintf("Market description for id %d and variant %s not found", id, variant))
		return
	}
	mappings := r.URL.Query().Get("include_mappings") == "true"
	startXML(w)
	io.WriteString(w, `<market_descriptions response_code="OK">`+"\n")
	writeMarket(w, m, l, mappings, variant, name, outcomes)
	io.WriteString(w, "</market_descriptions>\n")
}

// writeMarket writes one <market>: its name and outcomes are given, as a variant's answer
// has its own.
func writeMarket(w io.Writer, m apiMarket, l int, mappings bool, variant, name string, outcomes []apiOutcome) {
	fmt.Fprintf(w, `  <market id="%d" name="%s"`, m.id, escapeAttr(name))
	if variant != "" {
		fmt.Fprintf(w, ` variant="%s"`, escapeAttr(variant))
	}
	fmt.Fprintf(w, ` groups="%s"`, m.groups)
	if m.includes != "" {
		fmt.Fprintf(w, ` includes_outcomes_of_type="%s"`, m.includes)
	}
	if m.outcomeType != "" {
		fmt.Fprintf(w, ` outcome_type="%s"`, m.outcomeType)
	}
	io.WriteString(w, ">\n")
	writeOutcomes(w, outcomes, l, "    ")
	if len(m.specifiers) > 0 && variant == "" {
		io.WriteString(w, "    <specifiers>\n")
		for _, sp := range m.specifiers {
			fmt.Fprintf(w, `      <specifier name="%s" type="%s"`, sp.name, sp.typ)
			if sp.description != "" {
				fmt.Fprintf(w, ` description="%s"`, escapeAttr(sp.description))
			}
			io.WriteString(w, "/>\n")
		}
		io.WriteString(w, "    </specifiers>\n")
	}
	if mappings && len(m.mappings) > 0 {
		io.WriteString(w, "    <mappings>\n")
		for _, mp := range m.mappings {
			fmt.Fprintf(w, `      <mapping product_id="%d" product_ids="%s" sport_id="%s" market_id="%s"`, mp.productID, mp.productIDs, mp.sport, mp.marketID)
			if mp.sov != "" {
				fmt.Fprintf(w, ` sov_template="%s"`, escapeAttr(mp.sov))
			}
			if mp.validFor != "" {
				fmt.Fprintf(w, ` valid_for="%s"`, escapeAttr(mp.validFor))
			}
			io.WriteString(w, ">\n")
			for _, o := range mp.outcomes {
				fmt.Fprintf(w, `        <mapping_outcome outcome_id="%s" product_outcome_id="%s" product_outcome_name="%s"/>`+"\n",
					o.outcome, o.productOutcome, escapeAttr(o.productName))
			}
			io.WriteString(w, "      </mapping>\n")
		}
		io.WriteString(w, "    </mappings>\n")
	}
	if len(m.attributes) > 0 {
		io.WriteString(w, "    <attributes>\n")
		for _, a := range m.attributes {
			fmt.Fprintf(w, `      <attribute name="%s" description="%s"/>`+"\n", a[0], escapeAttr(a[1]))
		}
		io.WriteString(w, "    </attributes>\n")
	}
	io.WriteString(w, "  </market>\n")
}

func writeOutcomes(w io.Writer, outcomes []apiOutcome, l int, indent string) {
	if len(outcomes) == 0 {
		return
	}
	io.WriteString(w, indent+"<outcomes>\n")
	for _, o := range outcomes {
		fmt.Fprintf(w, `%s  <outcome id="%s" name="%s"/>`+"\n", indent, escapeAttr(o.id), escapeAttr(o.name[l]))
	}
	io.WriteString(w, indent+"</outcomes>\n")
}

func (s *Simulator) serveVariants(w http.ResponseWriter, r *http.Request) {
	l := s.language(w, r)
	if l < 0 {
		return
	}
	startXML(w)
	io.WriteString(w, `<variant_descriptions response_code="OK">`+"\n")
	for _, v := range apiVariants {
		fmt.Fprintf(w, `  <variant id="%s">`+"\n", escapeAttr(v.id))
		writeOutcomes(w, v.outcomes, l, "    ")
		// No <mappings> at all: the schema wants at least one <mapping> in it, and these
		// lists map to no older product's market.
		io.WriteString(w, "  </variant>\n")
	}
	io.WriteString(w, "</variant_descriptions>\n")
}

// matchCreated reports whether the simulator has created the match u (ids are handed out
// in turn, each to the producer whose turn it is), with its sport when the match is
// running or its messages are still in the history (0 when not known any more), and
// whether it is running.
func (s *Simulator) matchCreated(u feed.URN) (created bool, sport int, running bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	first := s.nextID - int64(s.nextRound) + 1 // the id of the first match created
	if u.Type != "match" || u.ID < first || u.ID > s.nextID {
		return false, 0, false
	}
	p := s.cfg.Producers[(u.ID-first)%int64(len(s.cfg.Producers))]
	prefix := "sr"
	if p.Scope&feed.ScopeVirtual != 0 {
		prefix = "vf"
	}
	if u.Prefix != prefix {
		return false, 0, false
	}
	for _, m := range s.matches {
		if m.urn == u {
			return true, m.sport, true
		}
	}
	s.history.each(func(r *record) {
		if sport == 0 && r.key.Event == u {
			sport = r.key.SportID
		}
	})
	return true, sport, false
}

func (s *Simulator) serveSummary(w http.ResponseWriter, r *http.Request) {
	l := s.language(w, r)
	if l < 0 {
		return
	}
	u, err := feed.ParseURN(r.PathValue("urn"))
	if err == nil && s.serveTournamentInfo(w, u, l) {
		return
	}
	created, sport, running := false, 0, false
	if err == nil {
		created, sport, running = s.matchCreated(u)
	}
	if !created {
		notFound(w, r, "No data for event "+r.PathValue("urn"))
		return
	}
	home, away := matchTeams(u.ID)
	startXML(w)
	fmt.Fprintf(w, `<match_summary xmlns="%s" generated_at="%s">`+"\n", unifiedNamespace, s.clock.Now().UTC().Format(time.RFC3339))
	fmt.Fprintf(w, `  <sport_event id="%s" start_time_tbd="false">`+"\n", u)
	if names, ok := sportNames[sport]; ok {
		league := [2]string{"Simulated League", "Simulierte Liga"}[l]
		fmt.Fprintf(w, `    <tournament id="sr:tournament:%d" name="%s">`+"\n", 9000+sport, league)
		fmt.Fprintf(w, `      <sport id="sr:sport:%d" name="%s"/>`+"\n", sport, escapeAttr(names[l]))
		fmt.Fprintf(w, `      <category id="sr:category:%d" name="%s"/>`+"\n", 9000+sport, [2]string{"Simulated", "Simuliert"}[l])
		io.WriteString(w, "    </tournament>\n")
	}
	io.WriteString(w, "    <competitors>\n")
	for i, t := range []int{home, away} {
		c := teamCountries[t%len(teamCountries)]
		fmt.Fprintf(w, `      <competitor id="%s" name="%s" country="%s" country_code="%s" abbreviation="%s" qualifier="%s"/>`+"\n",
			competitorURN(t), escapeAttr(teamNames[t]), c[0], c[1], escapeAttr(teamAbbreviation(t)), [2]string{"home", "away"}[i])
	}
	io.WriteString(w, "    </competitors>\n  </sport_event>\n")
	status := "closed"
	if running {
		status = "live"
	}
	fmt.Fprintf(w, `  <sport_event_status status="%s"/>`+"\n", status)
	io.WriteString(w, "</match_summary>\n")
}

// servePlayerProfile and serveCompetitorProfile give the same names in every language,
// as the API does for most players and teams.
func (s *Simulator) servePlayerProfile(w http.ResponseWriter, r *http.Request) {
	if s.language(w, r) < 0 {
		return
	}
	u, err := feed.ParseURN(r.PathValue("urn"))
	p, ok := simPlayer{}, false
	if err == nil {
		p, ok = playerOf(u)
	}
	if !ok {
		notFound(w, r, "No data for player "+r.PathValue("urn"))
		return
	}
	c := teamCountries[p.team%len(teamCountries)]
	startXML(w)
	fmt.Fprintf(w, `<player_profile xmlns="%s" generated_at="%s">`+"\n", unifiedNamespace, s.clock.Now().UTC().Format(time.RFC3339))
	fmt.Fprintf(w, `  <player id="%s" name="%s" full_name="%s" type="%s" date_of_birth="%d-%02d-%02d" nationality="%s" country_code="%s" jersey_number="%d" gender="male"/>`+"\n",
		p.urn, escapeAttr(p.name()), escapeAttr(p.first+" "+p.last), p.position, 1990+p.index%12, 1+p.team%12, 1+p.index, c[0], c[1], p.index+1)
	io.WriteString(w, "</player_profile>\n")
}

func (s *Simulator) serveCompetitorProfile(w http.ResponseWriter, r *http.Request) {
	if s.language(w, r) < 0 {
		return
	}
	u, err := feed.ParseURN(r.PathValue("urn"))
	team, ok := 0, false
	if err == nil {
		team, ok = teamOf(u)
	}
	if !ok {
		notFound(w, r, "No data for competitor "+r.PathValue("urn"))
		return
	}
	c := teamCountries[team%len(teamCountries)]
	startXML(w)
	fmt.Fprintf(w, `<competitor_profile xmlns="%s" generated_at="%s">`+"\n", unifiedNamespace, s.clock.Now().UTC().Format(time.RFC3339))
	fmt.Fprintf(w, `  <competitor id="%s" name="%s" country="%s" country_code="%s" abbreviation="%s" gender="male"/>`+"\n",
		competitorURN(team), escapeAttr(teamNames[team]), c[0], c[1], escapeAttr(teamAbbreviation(team)))
	io.WriteString(w, "  <players>\n")
	for i := range squadSize {
		p := squadPlayer(team, i)
		fmt.Fprintf(w, `    <player id="%s" name="%s" type="%s" nationality="%s" country_code="%s" jersey_number="%d" gender="male"/>`+"\n",
			p.urn, escapeAttr(p.name()), p.position, c[0], c[1], i+1)
	}
	io.WriteString(w, "  </players>\n</competitor_profile>\n")
}
