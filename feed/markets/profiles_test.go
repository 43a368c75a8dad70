package markets_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/markets"
)

// seasonInfoDoc is the summary of a season, a tournament_info document as the Sports API
// sends it (GET /v1/sports/en/sport_events/sr:season:104/summary.xml).
const seasonInfoDoc = `<?xml version="1.0" encoding="UTF-8"?>
<tournament_info xmlns="http://schemas.sportradar.com/sportsapi/v1/unified" generated_at="2026-11-26T12:00:00+00:00">
 <tournament id="sr:tournament:17" name="Premier League">
  <sport id="sr:sport:1" name="Soccer"/>
  <category id="sr:category:1" name="England" country_code="ENG"/>
  <current_season id="sr:season:104" name="Premier League 26/27" start_date="2026-08-15" end_date="2027-05-23" year="26/27"/>
 </tournament>
 <season id="sr:season:104" name="Premier League 26/27" start_date="2026-08-15" end_date="2027-05-23" year="26/27" tournament_id="sr:tournament:17"/>
 <groups><group><competitor id="sr:competitor:42" name="Arsenal FC"/></group></groups>
</tournament_info>`

// tournamentInfoDoc is a tournament's summary: a tournament_info without a season.
const tournamentInfoDoc = `<tournament_info xmlns="http://schemas.sportradar.com/sportsapi/v1/unified">
 <tournament id="sr:simple_tournament:86" name="Cheltenham Gold Cup"/>
</tournament_info>`

// A season's or a tournament's summary is a tournament_info: its event is the season it
// describes, else the tournament, with the name the document gives.
func TestParseEventSummaryOfASeasonOrATournament(t *testing.T) {
	s, err := markets.ParseEventSummary([]byte(seasonInfoDoc))
	require.NoError(t, err)
	assert.Equal(t, markets.EventSummary{Event: feed.MustParseURN("sr:season:104"), Name: "Premier League 26/27"}, s)
	s, err = markets.ParseEventSummary([]byte(tournamentInfoDoc))
	require.NoError(t, err)
	assert.Equal(t, markets.EventSummary{Event: feed.MustParseURN("sr:simple_tournament:86"), Name: "Cheltenham Gold Cup"}, s)

	for doc, want := range map[string]string{
		`<tournament_info/>`: "without a season or a tournament id",
		`<tournament_info><tournament id="17" name="x"/></tournament_info>`:             "tournament_info's tournament id",
		`<tournament_info><season id="sr:season:1"/></tournament_info>`:                 "season sr:season:1 has no name",
		`<tournament_info><tournament id="sr:tournament:1" name=""/></tournament_info>`: "tournament sr:tournament:1 has no name",
	} {
		_, err := markets.ParseEventSummary([]byte(doc))
		assert.ErrorContains(t, err, want, doc)
	}
}

// {$event} of a season's market names the season, from its tournament_info summary.
func TestNamesEventOfASeason(t *testing.T) {
	api := newFakeAPI()
	api.docs["v1/sports/en/sport_events/sr:season:104/summary.xml"] = seasonInfoDoc
	n, _ := newNames(t, api)
	got, err := n.MarketName(context.Background(), "en", feed.MustParseURN("sr:season:104"), 145, "inningnr=1")
	require.NoError(t, err)
	assert.Equal(t, "Premier League 26/27 - 1st innings", got)
}
