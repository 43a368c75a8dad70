package sportdata_test

import (
	"encoding/xml"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/sportdata"
)

// The reference reading: encoding/xml into structs of the same attributes (bench_test.go's
// x types), then the values converted as the parsers convert them. The differential test
// holds the parsers to it on every document of testdata, and the benchmark times it as
// the baseline: the same result by the standard library's way.

// conv converts attribute values, keeping the first failure.
type conv struct {
	lang string
	err  error
}

func (c *conv) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

func (c *conv) urn(s string) feed.URN {
	if s == "" {
		return feed.URN{}
	}
	u, err := feed.ParseURN(s)
	c.fail(err)
	return u
}

func (c *conv) time(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05", time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	c.fail(&time.ParseError{Value: s})
	return time.Time{}
}

func (c *conv) text(s string) sportdata.Text { return sportdata.TextOf(c.lang, s) }

func (c *conv) boolp(s string) *bool {
	if s == "" {
		return nil
	}
	b, err := strconv.ParseBool(s)
	c.fail(err)
	return &b
}

func (c *conv) intp(s string) *int {
	if s == "" {
		return nil
	}
	n, err := strconv.Atoi(s)
	c.fail(err)
	return &n
}

func (c *conv) floatp(s string) *float64 {
	if s == "" {
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	c.fail(err)
	return &f
}

func (c *conv) ref(x xRef) sportdata.Ref {
	return sportdata.Ref{ID: c.urn(x.ID), Name: c.text(x.Name)}
}

func (c *conv) venue(x *xVenue) *sportdata.Venue {
	if x == nil {
		return nil
	}
	return &sportdata.Venue{ID: c.urn(x.ID), Name: c.text(x.Name), City: c.text(x.City), Country: c.text(x.Country),
		CountryCode: x.CountryCode, Capacity: c.intp(x.Capacity), MapCoordinates: x.MapCoordinates}
}

func (c *conv) event(x *xEvent) sportdata.Event {
	e := sportdata.Event{ID: c.urn(x.ID), Name: c.text(x.Name), Scheduled: c.time(x.Scheduled),
		ScheduledEnd: c.time(x.ScheduledEnd), StartTimeTBD: c.boolp(x.StartTimeTBD), LiveOdds: x.LiveOdds,
		Sport: c.ref(x.Tournament.Sport), Category: c.ref(x.Tournament.Category), Tournament: c.ref(x.Tournament.xRef),
		Season: c.ref(x.Season), Venue: c.venue(x.Venue)}
	if x.Competitors != nil {
		e.Competitors = make([]sportdata.Competitor, 0, len(x.Competitors))
	}
	for _, k := range x.Competitors {
		e.Competitors = append(e.Competitors, sportdata.Competitor{ID: c.urn(k.ID), Name: c.text(k.Name), Abbreviation: k.Abbreviation,
			Qualifier: k.Qualifier, Country: c.text(k.Country), CountryCode: k.CountryCode, Gender: k.Gender})
	}
	return e
}

func (c *conv) status(x *xStatus) *sportdata.EventStatus {
	if x == nil {
		return nil
	}
	return &sportdata.EventStatus{Status: x.Status, MatchStatus: x.MatchStatus, HomeScore: c.floatp(x.HomeScore),
		AwayScore: c.floatp(x.AwayScore), Winner: c.urn(x.Winner)}
}

func (c *conv) player(x xPlayer) sportdata.Player {
	return sportdata.Player{ID: c.urn(x.ID), Name: c.text(x.Name), FullName: c.text(x.FullName), Type: x.Type,
		DateOfBirth: c.time(x.DateOfBirth), Nationality: c.text(x.Nationality), CountryCode: x.CountryCode,
		JerseyNumber: c.intp(x.JerseyNumber), Gender: x.Gender}
}

func (c *conv) category(x xCategory) sportdata.Category {
	return sportdata.Category{ID: c.urn(x.ID), Name: c.text(x.Name), CountryCode: x.CountryCode}
}

func (c *conv) season(x *xSeason) sportdata.Season {
	return sportdata.Season{ID: c.urn(x.ID), Name: c.text(x.Name), StartDate: c.time(x.StartDate),
		EndDate: c.time(x.EndDate), Year: x.Year, Tournament: c.urn(x.Tournament)}
}

func (c *conv) tournament(x *xTournament) sportdata.Tournament {
	t := sportdata.Tournament{ID: c.urn(x.ID), Name: c.text(x.Name), Sport: c.ref(x.Sport), Category: c.category(x.Category)}
	if x.CurrentSeason != nil {
		s := c.season(x.CurrentSeason)
		t.CurrentSeason = &s
	}
	return t
}

func refFixture(b []byte, lang string) (sportdata.Fixture, error) {
	var x xFixture
	if err := xml.Unmarshal(b, &x); err != nil {
		return sportdata.Fixture{}, err
	}
	c := &conv{lang: lang}
	f := sportdata.Fixture{Event: c.event(&x.Fixture), StartTime: c.time(x.Fixture.StartTime),
		StartTimeConfirmed: c.boolp(x.Fixture.StartTimeConfirmed), NextLiveTime: c.time(x.Fixture.NextLiveTime), Status: x.Fixture.Status}
	for _, t := range x.Fixture.TVChannels {
		f.TVChannels = append(f.TVChannels, sportdata.TVChannel{Name: t.Name, StartTime: c.time(t.StartTime), StreamURL: t.StreamURL})
	}
	for _, i := range x.Fixture.ExtraInfo {
		f.ExtraInfo = append(f.ExtraInfo, sportdata.Info{Key: i.Key, Value: i.Value})
	}
	for _, i := range x.Fixture.ReferenceIDs {
		f.ReferenceIDs = append(f.ReferenceIDs, sportdata.Info{Key: i.Name, Value: i.Value})
	}
	return f, c.err
}

func refSummary(b []byte, lang string) (sportdata.Summary, error) {
	c := &conv{lang: lang}
	if strings.Contains(string(b), "<tournament_info") {
		var x struct {
			Tournament xTournament `xml:"tournament"`
			Season     *xSeason    `xml:"season"`
		}
		if err := xml.Unmarshal(b, &x); err != nil {
			return sportdata.Summary{}, err
		}
		e := sportdata.Event{ID: c.urn(x.Tournament.ID), Name: c.text(x.Tournament.Name), Sport: c.ref(x.Tournament.Sport),
			Category:   sportdata.Ref{ID: c.urn(x.Tournament.Category.ID), Name: c.text(x.Tournament.Category.Name)},
			Tournament: sportdata.Ref{ID: c.urn(x.Tournament.ID), Name: c.text(x.Tournament.Name)}}
		if x.Season != nil {
			e.Season = sportdata.Ref{ID: c.urn(x.Season.ID), Name: c.text(x.Season.Name)}
			e.ID, e.Name = e.Season.ID, e.Season.Name
		}
		return sportdata.Summary{Event: e}, c.err
	}
	var x xSummary
	if err := xml.Unmarshal(b, &x); err != nil {
		return sportdata.Summary{}, err
	}
	s := sportdata.Summary{Event: c.event(&x.Event), Status: c.status(x.Status)}
	if x.Conditions != nil {
		s.Event.Venue = c.venue(x.Conditions)
	}
	return s, c.err
}

func refCompetitorProfile(b []byte, lang string) (sportdata.CompetitorProfile, error) {
	var x xCompetitorProfile
	if err := xml.Unmarshal(b, &x); err != nil {
		return sportdata.CompetitorProfile{}, err
	}
	c := &conv{lang: lang}
	k := x.Competitor
	p := sportdata.CompetitorProfile{Competitor: sportdata.Competitor{ID: c.urn(k.ID), Name: c.text(k.Name), Abbreviation: k.Abbreviation,
		Qualifier: k.Qualifier, Country: c.text(k.Country), CountryCode: k.CountryCode, Gender: k.Gender}}
	if x.Players != nil {
		p.Players = make([]sportdata.Player, 0, len(x.Players))
	}
	for _, pl := range x.Players {
		p.Players = append(p.Players, c.player(pl))
	}
	return p, c.err
}

func refPlayerProfile(b []byte, lang string) (sportdata.Player, error) {
	var x xPlayerProfile
	if err := xml.Unmarshal(b, &x); err != nil {
		return sportdata.Player{}, err
	}
	c := &conv{lang: lang}
	return c.player(x.Player), c.err
}

func refEvents(xs []xEvent, lang string) ([]sportdata.Event, error) {
	c := &conv{lang: lang}
	out := make([]sportdata.Event, 0, len(xs))
	for i := range xs {
		out = append(out, c.event(&xs[i]))
	}
	return out, c.err
}

func refSchedule(b []byte, lang string) ([]sportdata.Event, error) {
	var x xSchedule
	if err := xml.Unmarshal(b, &x); err != nil {
		return nil, err
	}
	return refEvents(x.Events, lang)
}

func refTournamentSchedule(b []byte, lang string) ([]sportdata.Event, error) {
	var x xTournamentSchedule
	if err := xml.Unmarshal(b, &x); err != nil {
		return nil, err
	}
	return refEvents(x.Events, lang)
}

func refSports(b []byte, lang string) ([]sportdata.Ref, error) {
	var x xSports
	if err := xml.Unmarshal(b, &x); err != nil {
		return nil, err
	}
	c := &conv{lang: lang}
	out := make([]sportdata.Ref, 0, len(x.Sports))
	for _, s := range x.Sports {
		out = append(out, c.ref(s))
	}
	return out, c.err
}

func refSportCategories(b []byte, lang string) (sportdata.SportCategories, error) {
	var x xSportCategories
	if err := xml.Unmarshal(b, &x); err != nil {
		return sportdata.SportCategories{}, err
	}
	c := &conv{lang: lang}
	s := sportdata.SportCategories{Sport: c.ref(x.Sport), Categories: make([]sportdata.Category, 0, len(x.Categories))}
	for _, k := range x.Categories {
		s.Categories = append(s.Categories, c.category(k))
	}
	return s, c.err
}

func refTournaments(b []byte, lang string) ([]sportdata.Tournament, error) {
	var x xTournaments
	if err := xml.Unmarshal(b, &x); err != nil {
		return nil, err
	}
	c := &conv{lang: lang}
	out := make([]sportdata.Tournament, 0, len(x.Tournaments))
	for i := range x.Tournaments {
		out = append(out, c.tournament(&x.Tournaments[i]))
	}
	return out, c.err
}

func refTournamentSeasons(b []byte, lang string) (sportdata.TournamentSeasons, error) {
	var x xTournamentSeasons
	if err := xml.Unmarshal(b, &x); err != nil {
		return sportdata.TournamentSeasons{}, err
	}
	c := &conv{lang: lang}
	s := sportdata.TournamentSeasons{Tournament: c.tournament(&x.Tournament), Seasons: make([]sportdata.Season, 0, len(x.Seasons))}
	for i := range x.Seasons {
		s.Seasons = append(s.Seasons, c.season(&x.Seasons[i]))
	}
	return s, c.err
}

func refTimeline(b []byte, lang string) (sportdata.Timeline, error) {
	var x xTimeline
	if err := xml.Unmarshal(b, &x); err != nil {
		return sportdata.Timeline{}, err
	}
	c := &conv{lang: lang}
	tl := sportdata.Timeline{Event: c.event(&x.Event), Status: c.status(x.Status)}
	if x.Conditions != nil {
		tl.Event.Venue = c.venue(x.Conditions)
	}
	tl.Events = make([]sportdata.TimelineEvent, 0, len(x.Events))
	for _, e := range x.Events {
		id, err := strconv.ParseInt(e.ID, 10, 64)
		c.fail(err)
		te := sportdata.TimelineEvent{ID: id, Type: e.Type, Time: c.time(e.Time), MatchTime: c.intp(e.MatchTime),
			MatchClock: e.MatchClock, Team: e.Team, Period: e.Period, PeriodName: e.PeriodName,
			HomeScore: c.floatp(e.HomeScore), AwayScore: c.floatp(e.AwayScore)}
		for _, p := range e.Players {
			switch p.XMLName.Local {
			case "player", "assist", "goal_scorer":
				te.Players = append(te.Players, c.ref(p.xRef))
			}
		}
		tl.Events = append(tl.Events, te)
	}
	return tl, c.err
}

// The parsers read every document of testdata as the reference does.
func TestParsersAgreeWithTheReference(t *testing.T) {
	for _, d := range documents(t) {
		t.Run(d.name, func(t *testing.T) {
			fast, err := d.parse(d.body)
			require.NoError(t, err)
			ref, err := d.ref(d.body)
			require.NoError(t, err)
			assert.Equal(t, ref, fast)
		})
	}
}
