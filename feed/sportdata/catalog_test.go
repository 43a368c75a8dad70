package sportdata_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/sportdata"
)

func TestParseTimeline(t *testing.T) {
	tl, err := sportdata.ParseTimeline(testdata(t, "match_timeline.xml"), "en")
	require.NoError(t, err)
	assert.Equal(t, urn(t, "sr:match:41234568"), tl.Event.ID)
	require.NotNil(t, tl.Event.Venue)
	require.NotNil(t, tl.Status)
	assert.Equal(t, "closed", tl.Status.Status)
	require.Len(t, tl.Events, 7)
	assert.Equal(t, sportdata.TimelineEvent{ID: 1601000002, Type: "period_start", Time: at("2026-11-29T19:45:12Z"),
		Period: "1", PeriodName: "1st half"}, tl.Events[1])
	assert.Equal(t, sportdata.TimelineEvent{ID: 1601000014, Type: "score_change", Time: at("2026-11-29T20:21:05Z"),
		MatchTime: ptr(36), MatchClock: "35:53", Team: "home", HomeScore: ptr(1.0), AwayScore: ptr(0.0),
		Players: []sportdata.Ref{{ID: urn(t, "sr:player:60061"), Name: en("Brennan, Lukas")}, {ID: urn(t, "sr:player:60058"), Name: en("Moreau, Hugo")}}},
		tl.Events[3], "the scorer and the assist")
	assert.Nil(t, tl.Events[0].MatchTime, "absent, not minute 0")
}

func TestParseCatalogue(t *testing.T) {
	sports, err := sportdata.ParseSports(testdata(t, "sports.xml"), "en")
	require.NoError(t, err)
	require.Len(t, sports, 4)
	assert.Equal(t, sportdata.Ref{ID: urn(t, "sr:sport:17"), Name: en("Cycling")}, sports[3])

	cats, err := sportdata.ParseSportCategories(testdata(t, "sport_categories.xml"), "en")
	require.NoError(t, err)
	assert.Equal(t, sportdata.SportCategories{Sport: sportdata.Ref{ID: urn(t, "sr:sport:1"), Name: en("Soccer")},
		Categories: []sportdata.Category{{ID: urn(t, "sr:category:9001"), Name: en("Northland"), CountryCode: "NRL"},
			{ID: urn(t, "sr:category:393"), Name: en("International Clubs")}}}, cats)

	ts, err := sportdata.ParseTournaments(testdata(t, "tournaments.xml"), "en")
	require.NoError(t, err)
	require.Len(t, ts, 3)
	assert.Equal(t, &sportdata.Season{ID: urn(t, "sr:season:120046"), Name: en("Northland Cup 26/27"),
		StartDate: at("2026-09-01T00:00:00Z"), EndDate: at("2027-05-30T00:00:00Z"), Year: "26/27"}, ts[1].CurrentSeason)
	assert.Nil(t, ts[2].CurrentSeason)
	assert.Equal(t, "ATP", ts[2].Category.Name.In("en"))

	seasons, err := sportdata.ParseTournamentSeasons(testdata(t, "tournament_seasons.xml"), "en")
	require.NoError(t, err)
	assert.Equal(t, urn(t, "sr:tournament:9001"), seasons.Tournament.ID)
	require.Len(t, seasons.Seasons, 2)
	assert.Equal(t, urn(t, "sr:tournament:9001"), seasons.Seasons[1].Tournament)

	events, err := sportdata.ParseTournamentSchedule(testdata(t, "tournament_schedule.xml"), "en")
	require.NoError(t, err)
	require.Len(t, events, 1)
	assert.Equal(t, "Riverside Rovers", events[0].Competitors[1].Name.In("en"))
}

// The catalogue of the simulator, in two languages: every sport with its category and
// tournament, whose current season runs through the year; a tournament's schedule holds
// the matches of its sport; the lists are read once per language.
func TestCatalogueFromTheSimulator(t *testing.T) {
	w := newWorld(t, 300)
	p := w.provider(t, sportdata.Config{Languages: []string{"en", "de"}})
	ctx := t.Context()
	sports, err := p.Sports(ctx)
	require.NoError(t, err)
	require.Len(t, sports, 5)
	assert.Equal(t, "Fußball", sports[0].Name.In("de"))
	assert.Equal(t, "Soccer", sports[0].Name.In("en"))

	tournaments, err := p.Tournaments(ctx)
	require.NoError(t, err)
	require.Len(t, tournaments, 5)
	for i, tr := range tournaments {
		assert.Equal(t, sports[i].ID, tr.Sport.ID)
		require.NotNil(t, tr.CurrentSeason)
		assert.Equal(t, epoch.Year(), tr.CurrentSeason.StartDate.Year())
		assert.Equal(t, tr.ID, tr.CurrentSeason.Tournament)
		cats, err := p.Categories(ctx, tr.Sport.ID)
		require.NoError(t, err)
		assert.Equal(t, []sportdata.Category{tr.Category}, cats.Categories)
		seasons, err := p.Seasons(ctx, tr.ID)
		require.NoError(t, err)
		assert.Equal(t, []sportdata.Season{*tr.CurrentSeason}, seasons.Seasons)
		// A season's and a tournament's summaries are tournament_info documents.
		ss, err := p.Summary(ctx, tr.CurrentSeason.ID)
		require.NoError(t, err)
		assert.Equal(t, tr.CurrentSeason.ID, ss.Event.ID)
		assert.Equal(t, tr.CurrentSeason.Name, ss.Event.Name)
		assert.Equal(t, tr.ID, ss.Event.Tournament.ID)
		assert.Equal(t, tr.Sport, ss.Event.Sport)
		ts, err := p.Summary(ctx, tr.ID)
		require.NoError(t, err)
		assert.Equal(t, tr.ID, ts.Event.ID)
		assert.Equal(t, tr.Name, ts.Event.Name)
	}
	_, err = p.Sports(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2, w.sim.APIRequests(feedtest.RouteSports), "once per language")
	assert.Equal(t, 2, w.sim.APIRequests(feedtest.RouteTournaments))

	// Each match is in its sport's tournament schedule, once.
	bySport := make(map[int]int)
	seen := make(map[feed.URN]bool)
	for _, s := range w.sim.Sent() {
		if k := s.Key; k.Event.Type == "match" && !seen[k.Event] {
			seen[k.Event] = true
			bySport[k.SportID]++
		}
	}
	for _, tr := range tournaments {
		events, err := p.TournamentSchedule(ctx, tr.ID, "en")
		require.NoError(t, err)
		assert.Len(t, events, bySport[int(tr.Sport.ID.ID)], tr.ID)
		for _, e := range events {
			assert.Equal(t, tr.ID, e.Tournament.ID)
		}
	}
}

// A match's timeline starts at its first message and ends at its settlement.
func TestTimelineFromTheSimulator(t *testing.T) {
	w := newWorld(t, 500)
	first := make(map[feed.URN]time.Time)
	settled := make(map[feed.URN]time.Time)
	for _, s := range w.sim.Sent() {
		u, ts := s.Key.Event, s.Message.MessageHeader().Timestamp
		if u.Type != "match" || s.Replay {
			continue
		}
		if _, ok := first[u]; !ok {
			first[u] = ts
		}
		if _, ok := settled[u]; !ok && s.Key.Type == feed.MessageBetSettlement {
			settled[u] = ts
		}
	}
	require.NotEmpty(t, settled, "some matches were settled")
	p := w.provider(t, sportdata.Config{})
	for u, start := range first {
		tl, err := p.Timeline(t.Context(), u, "en")
		require.NoError(t, err)
		require.NotEmpty(t, tl.Events)
		assert.Equal(t, "match_started", tl.Events[0].Type)
		assert.True(t, tl.Events[0].Time.Equal(start.Truncate(time.Second)))
		if end, ok := settled[u]; ok {
			require.Len(t, tl.Events, 2)
			assert.Equal(t, "match_ended", tl.Events[1].Type)
			assert.True(t, tl.Events[1].Time.Equal(end.Truncate(time.Second)))
		} else {
			assert.Len(t, tl.Events, 1)
		}
	}
	_, err := p.Timeline(t.Context(), feed.URN{Prefix: "sr", Type: "match", ID: 1}, "en")
	var apiErr *feed.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 404, apiErr.StatusCode)
}
