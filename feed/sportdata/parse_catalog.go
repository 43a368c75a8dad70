package sportdata

// ParseSports reads the list of sports (sports.xml) in lang.
func ParseSports(b []byte, lang string) ([]Ref, error) {
	return parseSports(b, lang, "sports in "+lang)
}

func parseSports(b []byte, lang, doc string) ([]Ref, error) {
	p := newParser(b, lang, doc)
	var out []Ref
	if p.root("sports") != "" {
		out = make([]Ref, 0, p.count("<sport "))
		p.each("sport", func() {
			out = append(out, p.ref("sport"))
		})
	}
	return out, p.err
}

// ParseSportCategories reads a sport's categories (sport_categories) in lang.
func ParseSportCategories(b []byte, lang string) (SportCategories, error) {
	return parseSportCategories(b, lang, "categories in "+lang)
}

func parseSportCategories(b []byte, lang, doc string) (SportCategories, error) {
	p := newParser(b, lang, doc)
	var s SportCategories
	if p.root("sport_categories") != "" {
		p.children(func(child string) {
			switch child {
			case "sport":
				s.Sport = p.ref(child)
			case "categories":
				s.Categories = make([]Category, 0, p.count("<category "))
				p.each("category", func() {
					s.Categories = append(s.Categories, p.category())
				})
			default:
				p.skip()
			}
		})
		p.need("sport", s.Sport.ID)
	}
	return s, p.err
}

func (p *parser) category() Category {
	var c Category
	for n, v, ok := p.attr(); ok; n, v, ok = p.attr() {
		switch n {
		case "id":
			c.ID = p.urn("category", n, v)
		case "name":
			c.Name = p.text(v)
		case "country_code":
			c.CountryCode = v
		}
	}
	p.need("category", c.ID)
	p.skip()
	return c
}

// ParseTournaments reads the list of tournaments (tournaments.xml) in lang.
func ParseTournaments(b []byte, lang string) ([]Tournament, error) {
	return parseTournaments(b, lang, "tournaments in "+lang)
}

func parseTournaments(b []byte, lang, doc string) ([]Tournament, error) {
	p := newParser(b, lang, doc)
	var out []Tournament
	if p.root("tournaments") != "" {
		out = make([]Tournament, 0, p.count("<tournament "))
		p.each("tournament", func() {
			out = append(out, p.tournamentEntry())
		})
	}
	return out, p.err
}

// tournamentEntry reads a <tournament> of the tournament list or of a tournament's
// seasons, with its sport, category and current season.
func (p *parser) tournamentEntry() Tournament {
	var t Tournament
	for n, v, ok := p.attr(); ok; n, v, ok = p.attr() {
		switch n {
		case "id":
			t.ID = p.urn("tournament", n, v)
		case "name":
			t.Name = p.text(v)
		}
	}
	p.need("tournament", t.ID)
	p.children(func(child string) {
		switch child {
		case "sport":
			t.Sport = p.ref(child)
		case "category":
			t.Category = p.category()
		case "current_season":
			s := p.season(child)
			t.CurrentSeason = &s
		default:
			p.skip()
		}
	})
	return t
}

func (p *parser) season(elem string) Season {
	var s Season
	for n, v, ok := p.attr(); ok; n, v, ok = p.attr() {
		switch n {
		case "id":
			s.ID = p.urn(elem, n, v)
		case "name":
			s.Name = p.text(v)
		case "start_date":
			s.StartDate = p.time(elem, n, v)
		case "end_date":
			s.EndDate = p.time(elem, n, v)
		case "year":
			s.Year = v
		case "tournament_id":
			s.Tournament = p.urn(elem, n, v)
		}
	}
	p.need(elem, s.ID)
	p.skip()
	return s
}

// ParseTournamentSeasons reads a tournament's seasons (tournament_seasons) in lang.
func ParseTournamentSeasons(b []byte, lang string) (TournamentSeasons, error) {
	return parseTournamentSeasons(b, lang, "seasons in "+lang)
}

func parseTournamentSeasons(b []byte, lang, doc string) (TournamentSeasons, error) {
	p := newParser(b, lang, doc)
	var s TournamentSeasons
	if p.root("tournament_seasons") != "" {
		p.children(func(child string) {
			switch child {
			case "tournament":
				s.Tournament = p.tournamentEntry()
			case "seasons":
				s.Seasons = make([]Season, 0, p.count("<season "))
				p.each("season", func() {
					s.Seasons = append(s.Seasons, p.season("season"))
				})
			default:
				p.skip()
			}
		})
		p.need("tournament", s.Tournament.ID)
	}
	return s, p.err
}

// ParseTournamentSchedule reads a tournament's or a season's schedule
// (tournament_schedule) in lang: its events, in the API's order.
func ParseTournamentSchedule(b []byte, lang string) ([]Event, error) {
	return parseTournamentSchedule(b, lang, "tournament schedule in "+lang)
}

func parseTournamentSchedule(b []byte, lang, doc string) ([]Event, error) {
	p := newParser(b, lang, doc)
	var events []Event
	if p.root("tournament_schedule") != "" {
		events = make([]Event, 0, p.count("<sport_event "))
		p.each("sport_events", func() {
			p.each("sport_event", func() {
				events = append(events, p.event("sport_event", nil))
			})
		})
	}
	if err := p.err; err != nil {
		return nil, err
	}
	return events, nil
}
