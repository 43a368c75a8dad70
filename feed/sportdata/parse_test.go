package sportdata_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/sportdata"
)

func testdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

func urn(t testing.TB, s string) feed.URN {
	t.Helper()
	u, err := feed.ParseURN(s)
	require.NoError(t, err)
	return u
}

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func ptr[T any](v T) *T { return &v }

func en(s string) sportdata.Text { return sportdata.TextOf("en", s) }

// Every value of a full fixture is read, and what the fixture leaves out stays absent.
func TestParseFixture(t *testing.T) {
	f, err := sportdata.ParseFixture(testdata(t, "fixture.xml"), "en")
	require.NoError(t, err)
	want := sportdata.Fixture{
		Event: sportdata.Event{
			ID:           urn(t, "sr:match:41234567"),
			Scheduled:    at("2026-12-05T19:45:00Z"),
			StartTimeTBD: ptr(false),
			LiveOdds:     "booked",
			Sport:        sportdata.Ref{ID: urn(t, "sr:sport:1"), Name: en("Soccer")},
			Category:     sportdata.Ref{ID: urn(t, "sr:category:9001"), Name: en("Northland")},
			Tournament:   sportdata.Ref{ID: urn(t, "sr:tournament:9001"), Name: en("Northern League")},
			Season:       sportdata.Ref{ID: urn(t, "sr:season:120045"), Name: en("Northern League 26/27")},
			Competitors: []sportdata.Competitor{
				{ID: urn(t, "sr:competitor:4001"), Name: en("Northbridge United"), Abbreviation: "NBU", Qualifier: "home", Country: en("Northland"), CountryCode: "NRL", Gender: "male"},
				{ID: urn(t, "sr:competitor:4002"), Name: en("Riverside Rovers"), Abbreviation: "RIV", Qualifier: "away", Country: en("Northland"), CountryCode: "NRL", Gender: "male"},
			},
			Venue: &sportdata.Venue{ID: urn(t, "sr:venue:7001"), Name: en("Bridge Park"), City: en("Northbridge"), Country: en("Northland"),
				CountryCode: "NRL", Capacity: ptr(31250), MapCoordinates: "54.97,-1.61"},
		},
		StartTime:          at("2026-12-05T19:45:00Z"),
		StartTimeConfirmed: ptr(true),
		NextLiveTime:       at("2026-12-05T19:45:00Z"),
		Status:             "not_started",
		TVChannels: []sportdata.TVChannel{
			{Name: "Northland Sport 1", StartTime: at("2026-12-05T19:30:00Z")},
			{Name: "Stream North", StreamURL: "https://stream.example/nbu-riv"},
		},
		ExtraInfo:    []sportdata.Info{{Key: "neutral_ground", Value: "false"}, {Key: "period_length", Value: "45"}},
		ReferenceIDs: []sportdata.Info{{Key: "BetradarCtrl", Value: "11050343"}, {Key: "aams", Value: "70231"}},
	}
	assert.Equal(t, want, f)
}

func TestParseSummary(t *testing.T) {
	s, err := sportdata.ParseSummary(testdata(t, "match_summary.xml"), "en")
	require.NoError(t, err)
	assert.Equal(t, urn(t, "sr:match:41234568"), s.Event.ID)
	assert.True(t, s.Event.Name.IsZero(), "a match has no name of its own")
	assert.Equal(t, "Eastwick Athletic", s.Event.Competitors[0].Name.In("en"))
	require.NotNil(t, s.Event.Venue, "the venue of the conditions")
	assert.Equal(t, "Eastwick Road", s.Event.Venue.Name.In("en"))
	assert.Equal(t, ptr(18000), s.Event.Venue.Capacity)
	assert.Equal(t, &sportdata.EventStatus{Status: "closed", MatchStatus: "ended", HomeScore: ptr(2.0), AwayScore: ptr(0.0),
		Winner: urn(t, "sr:competitor:4003")}, s.Status, "a score of 0 is kept apart from no score")

	// A season's summary is a tournament_info: its event is the season.
	s, err = sportdata.ParseSummary(testdata(t, "tournament_info.xml"), "de")
	require.NoError(t, err)
	assert.Equal(t, urn(t, "sr:season:120045"), s.Event.ID)
	assert.Equal(t, "Northern League 26/27", s.Event.Name.In("de"))
	assert.Equal(t, urn(t, "sr:tournament:9001"), s.Event.Tournament.ID)
	assert.Equal(t, "Soccer", s.Event.Sport.Name.In("de"))
	assert.Nil(t, s.Status)
}

func TestParseProfiles(t *testing.T) {
	c, err := sportdata.ParseCompetitorProfile(testdata(t, "competitor_profile.xml"), "en")
	require.NoError(t, err)
	assert.Equal(t, "Northbridge United", c.Competitor.Name.In("en"))
	require.Len(t, c.Players, 3, "the manager is no player")
	assert.Equal(t, sportdata.Player{ID: urn(t, "sr:player:60003"), Name: en("Quinn, Theo"), Type: "forward",
		Nationality: en("Northland"), CountryCode: "NRL"}, c.Players[2], "no jersey number, no birth date: absent")

	p, err := sportdata.ParsePlayerProfile(testdata(t, "player_profile.xml"), "en")
	require.NoError(t, err)
	assert.Equal(t, sportdata.Player{ID: urn(t, "sr:player:60001"), Name: en("Hartley, James"), FullName: en("James Hartley"),
		Type: "goalkeeper", DateOfBirth: at("1994-03-12T00:00:00Z"), Nationality: en("Northland"), CountryCode: "NRL",
		JerseyNumber: ptr(1), Gender: "male"}, p)
}

func TestParseSchedule(t *testing.T) {
	events, err := sportdata.ParseSchedule(testdata(t, "schedule.xml"), "en")
	require.NoError(t, err)
	require.Len(t, events, 2)
	assert.Equal(t, urn(t, "sr:match:41234567"), events[0].ID)
	stage := events[1]
	assert.Equal(t, "Stage 3 - Harbour to Vale", stage.Name.In("en"))
	assert.Equal(t, at("2026-12-06T16:00:00Z"), stage.ScheduledEnd)
	assert.Equal(t, ptr(true), stage.StartTimeTBD)
	assert.Empty(t, stage.Competitors)
	assert.Nil(t, stage.Venue)
}

// A document that cannot be read is an error naming the document and what was wrong.
func TestParseErrors(t *testing.T) {
	fixture := string(testdata(t, "fixture.xml"))
	for _, c := range []struct {
		name, doc, want string
	}{
		{"the API's refusal", `<response response_code="NOT_FOUND"><action>x</action><message>No data</message></response>`,
			`fixture in en: the API answered <response response_code="NOT_FOUND">`},
		{"another document", `<match_summary/>`, "fixture in en: root element is <match_summary>, want <fixtures_fixture>"},
		{"no fixture", `<fixtures_fixture/>`, "<fixture> without an id"},
		{"a bad id", strings.Replace(fixture, `id="sr:venue:7001"`, `id="venue 7001"`, 1), `<venue id="venue 7001">`},
		{"a bad time", strings.Replace(fixture, `start_time="2026-12-05T19:45:00+00:00"`, `start_time="soon"`, 1), `<fixture start_time="soon">: not a time`},
		{"a bad number", strings.Replace(fixture, `capacity="31250"`, `capacity="many"`, 1), `<venue capacity="many">: not an integer`},
		{"a bad boolean", strings.Replace(fixture, `start_time_tbd="false"`, `start_time_tbd="perhaps"`, 1), `not a boolean`},
		{"cut short", fixture[:len(fixture)/2], "unexpected end of input"},
		{"a competitor without id", strings.Replace(fixture, `id="sr:competitor:4002"`, ``, 1), "<competitor> without an id"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := sportdata.ParseFixture([]byte(c.doc), "en")
			require.Error(t, err)
			var pe *sportdata.ParseError
			require.ErrorAs(t, err, &pe)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// Languages merge: the document read last decides the facts, the names of the other
// languages are kept.
func TestTextMerge(t *testing.T) {
	a := sportdata.TextOf("en", "Soccer")
	assert.Equal(t, "Soccer", a.In("en"))
	assert.Empty(t, a.In("de"))
	assert.True(t, sportdata.TextOf("en", "").IsZero())
	b, err := a.MarshalJSON()
	require.NoError(t, err)
	assert.JSONEq(t, `{"en":"Soccer"}`, string(b))
	var c sportdata.Text
	require.NoError(t, c.UnmarshalJSON([]byte(`{"de":"Fußball","en":"Soccer"}`)))
	assert.Equal(t, []string{"de", "en"}, c.Languages())
	assert.Equal(t, "Fußball", c.In("de"))
}
