package sportdata

// The documents of the Sports API, one function each. Each reads what it knows and skips
// the rest; a required id missing or a value that is not what the schema says fails the
// document with a *ParseError naming it.

// ParseSummary reads an event's summary in lang: a match_summary or a stage_summary, or
// the tournament_info a season's or a tournament's summary is.
func ParseSummary(b []byte, lang string) (Summary, error) {
	return parseSummary(b, lang, "summary in "+lang)
}

func parseSummary(b []byte, lang, doc string) (Summary, error) {
	p := newParser(b, lang, doc)
	var s Summary
	switch p.root("match_summary", "stage_summary", "tournament_info") {
	case "tournament_info":
		s.Event = p.tournamentInfo()
	case "":
	default:
		p.children(func(child string) {
			switch child {
			case "sport_event":
				s.Event = p.event(child, nil)
			case "sport_event_status":
				st := p.status()
				s.Status = &st
			case "sport_event_conditions":
				p.conditions(&s.Event)
			default:
				p.skip()
			}
		})
		p.need("sport_event", s.Event.ID)
	}
	return s, p.err
}

// tournamentInfo reads a season's or a tournament's summary as an event: the season it
// describes, or the tournament when it describes none.
func (p *parser) tournamentInfo() Event {
	var e Event
	var tournament, season Ref
	p.children(func(child string) {
		switch child {
		case "tournament":
			tournament = p.tournament(&e)
		case "season":
			season = p.ref(child)
		default:
			p.skip()
		}
	})
	e.Tournament, e.Season = tournament, season
	e.ID, e.Name = tournament.ID, tournament.Name
	if !season.ID.IsZero() {
		e.ID, e.Name = season.ID, season.Name
	}
	if p.err == nil && e.ID.IsZero() {
		p.failf("a tournament_info without a season or a tournament")
	}
	return e
}

// status reads a summary's <sport_event_status>.
func (p *parser) status() EventStatus {
	var s EventStatus
	for n, v, ok := p.attr(); ok; n, v, ok = p.attr() {
		switch n {
		case "status":
			s.Status = v
		case "match_status":
			s.MatchStatus = v
		case "home_score":
			s.HomeScore = p.float("sport_event_status", n, v)
		case "away_score":
			s.AwayScore = p.float("sport_event_status", n, v)
		case "winner_id":
			s.Winner = p.urn("sport_event_status", n, v)
		}
	}
	p.skip()
	return s
}

// conditions reads the venue of a summary's <sport_event_conditions>.
func (p *parser) conditions(e *Event) {
	p.each("venue", func() {
		v := p.venue()
		e.Venue = &v
	})
}

// ParseFixture reads an event's fixture in lang (fixtures_fixture, from fixture.xml or
// fixture_change_fixture.xml).
func ParseFixture(b []byte, lang string) (Fixture, error) {
	return parseFixture(b, lang, "fixture in "+lang)
}

func parseFixture(b []byte, lang, doc string) (Fixture, error) {
	p := newParser(b, lang, doc)
	var f Fixture
	if p.root("fixtures_fixture") != "" {
		p.each("fixture", func() {
			f.Event = p.event("fixture", &f)
		})
		p.need("fixture", f.Event.ID)
	}
	return f, p.err
}

// ParseCompetitorProfile reads a competitor_profile (or a simple_team_profile) in lang.
func ParseCompetitorProfile(b []byte, lang string) (CompetitorProfile, error) {
	return parseCompetitorProfile(b, lang, "competitor profile in "+lang)
}

func parseCompetitorProfile(b []byte, lang, doc string) (CompetitorProfile, error) {
	p := newParser(b, lang, doc)
	var c CompetitorProfile
	if p.root("competitor_profile", "simple_team_profile") != "" {
		p.children(func(child string) {
			switch child {
			case "competitor":
				c.Competitor = p.competitor()
			case "players":
				c.Players = make([]Player, 0, p.count("<player "))
				p.each("player", func() {
					c.Players = append(c.Players, p.player())
				})
			default:
				p.skip()
			}
		})
		p.need("competitor", c.Competitor.ID)
	}
	return c, p.err
}

// ParsePlayerProfile reads a player_profile in lang.
func ParsePlayerProfile(b []byte, lang string) (Player, error) {
	return parsePlayerProfile(b, lang, "player profile in "+lang)
}

func parsePlayerProfile(b []byte, lang, doc string) (Player, error) {
	p := newParser(b, lang, doc)
	var pl Player
	if p.root("player_profile") != "" {
		p.each("player", func() {
			pl = p.player()
		})
		p.need("player", pl.ID)
	}
	return pl, p.err
}

func (p *parser) player() Player {
	var pl Player
	for n, v, ok := p.attr(); ok; n, v, ok = p.attr() {
		switch n {
		case "id":
			pl.ID = p.urn("player", n, v)
		case "name":
			pl.Name = p.text(v)
		case "full_name":
			pl.FullName = p.text(v)
		case "type":
			pl.Type = v
		case "date_of_birth":
			pl.DateOfBirth = p.time("player", n, v)
		case "nationality":
			pl.Nationality = p.text(v)
		case "country_code":
			pl.CountryCode = v
		case "jersey_number":
			pl.JerseyNumber = p.int("player", n, v)
		case "gender":
			pl.Gender = v
		}
	}
	p.need("player", pl.ID)
	p.skip()
	return pl
}

// ParseSchedule reads a schedule in lang (schedules/{date}, live or pre-match): its
// events, in the API's order.
func ParseSchedule(b []byte, lang string) ([]Event, error) {
	return parseSchedule(b, lang, "schedule in "+lang)
}

func parseSchedule(b []byte, lang, doc string) ([]Event, error) {
	p := newParser(b, lang, doc)
	var events []Event
	if p.root("schedule") != "" {
		events = make([]Event, 0, p.count("<sport_event "))
		p.each("sport_event", func() {
			events = append(events, p.event("sport_event", nil))
		})
	}
	if err := p.err; err != nil {
		return nil, err
	}
	return events, nil
}
