package markets

import (
	"encoding/xml"
	"fmt"

	"github.com/feedkit/feedkit/feed"
)

// EventSummary is what a name template takes from an event's summary
// (GET /v1/sports/{lang}/sport_events/{urn}/summary.xml).
type EventSummary struct {
	Event feed.URN
	// Name is the event's own name, which stages, seasons and outrights have; empty for
	// a match, which is named after its competitors (see Names).
	Name string
	// Competitors are the event's competitors: home first and away second where the
	// summary says which is which, else in the summary's order.
	Competitors []Competitor
}

// Competitor is one competitor of an event.
type Competitor struct {
	ID        feed.URN
	Name      string
	Qualifier string // "home", "away", or empty
}

type summaryXML struct {
	XMLName xml.Name
	// The tournament_info document a season's or a tournament's summary is.
	Tournament *namedXML `xml:"tournament"`
	Season     *namedXML `xml:"season"`
	SportEvent struct {
		ID          string `xml:"id,attr"`
		Name        string `xml:"name,attr"`
		Competitors []struct {
			ID        string `xml:"id,attr"`
			Name      string `xml:"name,attr"`
			Qualifier string `xml:"qualifier,attr"`
		} `xml:"competitors>competitor"`
	} `xml:"sport_event"`
}

// namedXML is an element with an id and a name.
type namedXML struct {
	ID   string `xml:"id,attr"`
	Name string `xml:"name,attr"`
}

// ParseEventSummary reads a sport event summary (match_summary, stage_summary, ...):
// the event's id and name and its competitors. The summary of a season or a tournament
// is a tournament_info document: its event is the season it describes, or the
// tournament when it describes none, named as the document names it, without
// competitors. A summary without a sport_event id (or a tournament_info without a
// tournament or season id), or a competitor without an id or name, is an error naming
// what is missing.
func ParseEventSummary(b []byte) (EventSummary, error) {
	var x summaryXML
	if err := xml.Unmarshal(b, &x); err != nil {
		return EventSummary{}, fmt.Errorf("markets: event summary: %w", err)
	}
	if x.XMLName.Local == "tournament_info" {
		return parseTournamentInfo(&x)
	}
	id, err := feed.ParseURN(x.SportEvent.ID)
	if err != nil {
		return EventSummary{}, fmt.Errorf("markets: event summary: sport_event id: %w", err)
	}
	s := EventSummary{Event: id, Name: x.SportEvent.Name}
	var home, away, other []Competitor
	for i, c := range x.SportEvent.Competitors {
		cid, err := feed.ParseURN(c.ID)
		if err != nil {
			return EventSummary{}, fmt.Errorf("markets: event summary of %s: competitor %d: id: %w", id, i, err)
		}
		if c.Name == "" {
			return EventSummary{}, fmt.Errorf("markets: event summary of %s: competitor %s has no name", id, cid)
		}
		comp := Competitor{ID: cid, Name: c.Name, Qualifier: c.Qualifier}
		switch c.Qualifier {
		case "home":
			home = append(home, comp)
		case "away":
			away = append(away, comp)
		default:
			other = append(other, comp)
		}
	}
	s.Competitors = append(append(append(s.Competitors, home...), away...), other...)
	return s, nil
}

// parseTournamentInfo reads the event of a season's or a tournament's summary.
func parseTournamentInfo(x *summaryXML) (EventSummary, error) {
	what, el := "season", x.Season
	if el == nil || el.ID == "" {
		what, el = "tournament", x.Tournament
	}
	if el == nil || el.ID == "" {
		return EventSummary{}, fmt.Errorf("markets: event summary: a tournament_info without a season or a tournament id")
	}
	id, err := feed.ParseURN(el.ID)
	if err != nil {
		return EventSummary{}, fmt.Errorf("markets: event summary: tournament_info's %s id: %w", what, err)
	}
	if el.Name == "" {
		return EventSummary{}, fmt.Errorf("markets: event summary: tournament_info's %s %s has no name", what, id)
	}
	return EventSummary{Event: id, Name: el.Name}, nil
}

type profileXML struct {
	XMLName    xml.Name
	Player     *profileEntityXML `xml:"player"`
	Competitor *profileEntityXML `xml:"competitor"`
}

type profileEntityXML struct {
	ID   string `xml:"id,attr"`
	Name string `xml:"name,attr"`
}

// ParseProfileName reads a player_profile, competitor_profile or simple_team_profile and
// returns the name of the player or competitor it describes, checking that it is the
// one wanted.
func ParseProfileName(b []byte, want feed.URN) (string, error) {
	var x profileXML
	if err := xml.Unmarshal(b, &x); err != nil {
		return "", fmt.Errorf("markets: profile of %s: %w", want, err)
	}
	e := x.Player
	if e == nil {
		e = x.Competitor
	}
	if e == nil {
		return "", fmt.Errorf("markets: profile of %s: <%s> has neither a player nor a competitor", want, x.XMLName.Local)
	}
	if e.ID != want.String() {
		return "", fmt.Errorf("markets: profile of %s: it describes %q", want, e.ID)
	}
	if e.Name == "" {
		return "", fmt.Errorf("markets: profile of %s: the name is empty", want)
	}
	return e.Name, nil
}
