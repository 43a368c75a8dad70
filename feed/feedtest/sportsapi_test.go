package feedtest_test

import (
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/markets"
)

// sportsAPI is a simulator with some traffic published and its API served.
type sportsAPI struct {
	sim *feedtest.Simulator
	srv *httptest.Server
}

func newSportsAPI(t *testing.T, cfg feedtest.SimulatorConfig, messages int) *sportsAPI {
	t.Helper()
	cfg.Rate, cfg.Clock = feedtest.Unlimited, clocktest.NewFake(t0)
	sim := newSimulator(t, discard{}, cfg)
	require.NoError(t, sim.Publish(t.Context(), messages))
	srv := httptest.NewServer(sim.APIHandler(feedtest.Account{}))
	t.Cleanup(srv.Close)
	return &sportsAPI{sim: sim, srv: srv}
}

// get fetches path with the simulator's token, returning the status and the body.
func (a *sportsAPI) get(t *testing.T, path string) (int, []byte) {
	t.Helper()
	return a.getWithToken(t, path, feedtest.DefaultAccessToken)
}

func (a *sportsAPI) getWithToken(t *testing.T, path, token string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, a.srv.URL+path, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("x-access-token", token)
	}
	resp, err := a.srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, body
}

func (a *sportsAPI) descriptions(t *testing.T, path string) map[int]markets.Description {
	t.Helper()
	status, body := a.get(t, path)
	require.Equal(t, http.StatusOK, status, "%s", body)
	ds, err := markets.ParseDescriptions(body)
	require.NoError(t, err)
	byID := make(map[int]markets.Description, len(ds))
	for _, d := range ds {
		require.NotContains(t, byID, d.ID, "market %d listed twice", d.ID)
		byID[d.ID] = d
	}
	return byID
}

func outcomeNames(d markets.Description) map[string]string {
	out := make(map[string]string, len(d.Outcomes))
	for _, o := range d.Outcomes {
		out[o.ID] = o.Name
	}
	return out
}

// Every market and outcome the simulator's traffic sends is described, in English and
// German, with the names the feed's API gives them.
func TestSportsAPIDescribesEveryMarketOfTheTraffic(t *testing.T) {
	api := newSportsAPI(t, feedtest.SimulatorConfig{Matches: 20, Seed: 22}, 2000)
	en := api.descriptions(t, "/v1/descriptions/en/markets.xml?include_mappings=true")
	de := api.descriptions(t, "/v1/descriptions/de/markets.xml?include_mappings=true")

	sent := 0
	for _, s := range api.sim.Sent() {
		oc, ok := s.Message.(*feed.OddsChange)
		if !ok {
			continue
		}
		for _, m := range oc.Markets {
			for _, lang := range []map[int]markets.Description{en, de} {
				d, ok := lang[m.ID]
				require.True(t, ok, "market %d is not described", m.ID)
				for _, o := range m.Outcomes {
					_, ok := d.Outcome(o.ID)
					require.True(t, ok, "market %d outcome %s is not described", m.ID, o.ID)
					sent++
				}
			}
		}
	}
	require.Positive(t, sent)

	require.Equal(t, "1x2", en[1].Name)
	require.Equal(t, map[string]string{"1": "{$competitor1}", "2": "draw", "3": "{$competitor2}"}, outcomeNames(en[1]))
	require.Equal(t, map[string]string{"1": "{$competitor1}", "2": "unentschieden", "3": "{$competitor2}"}, outcomeNames(de[1]))
	require.Equal(t, "Total", en[18].Name)
	require.Equal(t, map[string]string{"12": "over {total}", "13": "under {total}"}, outcomeNames(en[18]))
	require.Equal(t, map[string]string{"12": "über {total}", "13": "unter {total}"}, outcomeNames(de[18]))
	require.Equal(t, []markets.SpecifierDescription{{Name: "total", Type: "decimal"}}, en[18].Specifiers)
	require.Equal(t, "Handicap {hcp}", en[16].Name)
	require.Equal(t, map[string]string{"1714": "{$competitor1} ({+hcp})", "1715": "{$competitor2} ({-hcp})"}, outcomeNames(en[16]))
	require.Equal(t, []markets.SpecifierDescription{{Name: "hcp", Type: "decimal"}}, en[16].Specifiers)
	require.Equal(t, "Double chance", en[10].Name)
	require.Equal(t, "Doppelte Chance", de[10].Name)
	require.Equal(t, map[string]string{"9": "{$competitor1} or draw", "10": "{$competitor1} or {$competitor2}", "11": "draw or {$competitor2}"}, outcomeNames(en[10]))
	require.Equal(t, "Both teams to score", en[29].Name)
	require.Equal(t, map[string]string{"74": "yes", "76": "no"}, outcomeNames(en[29]))
	require.Equal(t, "1st half - 1x2", en[60].Name)
	require.Equal(t, "1. Halbzeit - 1x2", de[60].Name)

	// The markets beyond the traffic, for the other forms of name templates.
	require.Equal(t, "{!goalnr} goal", en[8].Name)
	require.Equal(t, []markets.SpecifierDescription{{Name: "goalnr", Type: "integer"}}, en[8].Specifiers)
	require.Equal(t, "player", en[40].OutcomeType)
	require.Equal(t, "sr:player", en[40].IncludesOutcomesOfType)
	require.Equal(t, "Exact goals", en[21].Name)
	require.Nil(t, en[21].Outcomes)
	require.Equal(t, []markets.SpecifierDescription{{Name: "variant", Type: "variable_text"}}, en[21].Specifiers)
	flex := en[41]
	require.True(t, flex.HasAttribute("is_flex_score"))
	require.Equal(t, "0:0", outcomeNames(en[41])["110"])
	require.Equal(t, "Exact strikes of {%player} {!appearancenr} time at bat", en[1084].Name)
	require.Len(t, en, 12)
	require.Len(t, de, 12)

	require.Equal(t, []markets.Mapping{
		{ProductIDs: []int{1, 4}, SportID: "sr:sport:1", MarketID: "8:232", SovTemplate: "{total}", Outcomes: []markets.OutcomeMapping{
			{OutcomeID: "13", ProductOutcomeID: "2528", ProductOutcomeName: "under"}, {OutcomeID: "12", ProductOutcomeID: "2530", ProductOutcomeName: "over"}}},
		{ProductIDs: []int{3}, SportID: "sr:sport:1", MarketID: "56", SovTemplate: "{total}", Outcomes: []markets.OutcomeMapping{
			{OutcomeID: "12", ProductOutcomeID: "12", ProductOutcomeName: "over"}, {OutcomeID: "13", ProductOutcomeID: "13", ProductOutcomeName: "under"}}},
	}, en[18].Mappings)
	without := api.descriptions(t, "/v1/descriptions/en/markets.xml")
	for id, d := range without {
		require.Nil(t, d.Mappings, "market %d: mappings only with include_mappings=true", id)
	}
	require.Equal(t, 3, api.sim.APIRequests(feedtest.RouteMarketDescriptions))
}

func TestSportsAPIVariants(t *testing.T) {
	api := newSportsAPI(t, feedtest.SimulatorConfig{Matches: 2}, 0)
	status, body := api.get(t, "/v1/descriptions/en/variants.xml")
	require.Equal(t, http.StatusOK, status)
	require.NotContains(t, string(body), "<mappings", "no empty <mappings>: the schema wants a <mapping> in one")
	vs, err := markets.ParseVariants(body)
	require.NoError(t, err)
	ids := make([]string, len(vs))
	for i, v := range vs {
		ids[i] = v.ID
	}
	require.Equal(t, []string{"sr:exact_goals:2+", "sr:exact_goals:3+", "sr:exact_goals:4+", "sr:exact_goals:5+", "sr:exact_goals:6+"}, ids)
	var names []string
	for _, o := range vs[2].Outcomes {
		require.True(t, strings.HasPrefix(o.ID, "sr:exact_goals:4+:"), o.ID)
		names = append(names, o.Name)
	}
	require.Equal(t, []string{"0", "1", "2", "3", "4+"}, names)

	// One market for one variant: its outcomes are the variant's.
	status, body = api.get(t, "/v1/descriptions/de/markets/21/variants/sr:exact_goals:4+?include_mappings=true")
	require.Equal(t, http.StatusOK, status, "%s", body)
	ds, err := markets.ParseDescriptions(body)
	require.NoError(t, err)
	require.Len(t, ds, 1)
	require.Equal(t, 21, ds[0].ID)
	require.Equal(t, "Genaue Anzahl Tore", ds[0].Name)
	require.Equal(t, "sr:exact_goals:4+", ds[0].Variant)
	require.Equal(t, vs[2].Outcomes, ds[0].Outcomes)

	// A free-text market: its own name and outcomes.
	status, body = api.get(t, "/v1/descriptions/en/markets/534/variants/pre:markettext:1001")
	require.Equal(t, http.StatusOK, status, "%s", body)
	ds, err = markets.ParseDescriptions(body)
	require.NoError(t, err)
	require.Len(t, ds, 1)
	require.Equal(t, "Simulated League 2026/27 - Winner", ds[0].Name)
	require.Equal(t, "pre:markettext:1001", ds[0].Variant)
	require.Len(t, ds[0].Outcomes, 6)
	require.Equal(t, "pre:outcometext:5001", ds[0].Outcomes[0].ID)

	for _, path := range []string{
		"/v1/descriptions/en/markets/21/variants/sr:exact_goals:9+", // no such list
		"/v1/descriptions/en/markets/18/variants/sr:exact_goals:4+", // market 18 has no variants
		"/v1/descriptions/en/markets/77777/variants/sr:exact_goals:4+",
		"/v1/descriptions/en/markets/534/variants/pre:markettext:1",
	} {
		status, body := api.get(t, path)
		require.Equal(t, http.StatusNotFound, status, path)
		require.Contains(t, string(body), `response_code="NOT_FOUND"`)
	}
	require.Equal(t, 1, api.sim.APIRequests(feedtest.RouteVariantDescriptions))
	require.Equal(t, 6, api.sim.APIRequests(feedtest.RouteMarketVariant))
}

type competitorProfile struct {
	Competitor struct {
		ID   string `xml:"id,attr"`
		Name string `xml:"name,attr"`
	} `xml:"competitor"`
	Players []struct {
		ID   string `xml:"id,attr"`
		Name string `xml:"name,attr"`
	} `xml:"players>player"`
}

// Every match the simulator has created has a summary with its two teams, the same in
// every language and every time, running or over; their profiles name them and their
// players.
func TestSportsAPISummariesAndProfiles(t *testing.T) {
	// One match at a time, and enough messages for the first ones to finish.
	api := newSportsAPI(t, feedtest.SimulatorConfig{Matches: 1, Seed: 5}, 1000)
	events := api.sim.EventsByMatch()
	require.Greater(t, len(events), 2, "several matches have come and gone")

	summaries := 0
	for urn := range events {
		var got []markets.EventSummary
		for _, lang := range []string{"en", "de", "en"} {
			status, body := api.get(t, "/v1/sports/"+lang+"/sport_events/"+urn.String()+"/summary.xml")
			require.Equal(t, http.StatusOK, status, "%s", body)
			s, err := markets.ParseEventSummary(body)
			require.NoError(t, err)
			summaries++
			got = append(got, s)
		}
		require.Equal(t, got[0], got[1])
		require.Equal(t, got[0], got[2])
		s := got[0]
		require.Equal(t, urn, s.Event)
		require.Len(t, s.Competitors, 2)
		home, away := s.Competitors[0], s.Competitors[1]
		require.Equal(t, "home", home.Qualifier)
		require.Equal(t, "away", away.Qualifier)
		require.NotEqual(t, home.ID, away.ID)
		require.NotEqual(t, home.Name, away.Name)
		for _, c := range s.Competitors {
			require.Equal(t, "competitor", c.ID.Type)
			status, body := api.get(t, "/v1/sports/en/competitors/"+c.ID.String()+"/profile.xml")
			require.Equal(t, http.StatusOK, status)
			name, err := markets.ParseProfileName(body, c.ID)
			require.NoError(t, err)
			require.Equal(t, c.Name, name)
		}
	}

	// The first match is over; its summary stays.
	var first, last feed.URN
	for urn := range events {
		if first.ID == 0 || urn.ID < first.ID {
			first = urn
		}
		last.ID = max(last.ID, urn.ID)
	}
	status, body := api.get(t, "/v1/sports/en/sport_events/"+first.String()+"/summary.xml")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, string(body), `status="closed"`)
	require.Contains(t, string(body), `<sport id="sr:sport:`, "its sport is read from the history")
	s, err := markets.ParseEventSummary(body)
	require.NoError(t, err)
	require.Equal(t, first, s.Event)

	// A team's squad, and a player's own profile.
	status, body = api.get(t, "/v1/sports/de/competitors/"+s.Competitors[0].ID.String()+"/profile.xml")
	require.Equal(t, http.StatusOK, status)
	var cp competitorProfile
	require.NoError(t, xml.Unmarshal(body, &cp))
	require.Len(t, cp.Players, 22)
	player, err := feed.ParseURN(cp.Players[9].ID)
	require.NoError(t, err)
	status, body = api.get(t, "/v1/sports/en/players/"+player.String()+"/profile.xml")
	require.Equal(t, http.StatusOK, status)
	name, err := markets.ParseProfileName(body, player)
	require.NoError(t, err)
	require.Equal(t, cp.Players[9].Name, name)
	require.Contains(t, name, ", ", "the API names players Last, First")
	require.NotContains(t, string(body), "<roles>", "player_profile has no roles in the Sports API's schema")

	for _, path := range []string{
		"/v1/sports/en/sport_events/sr:match:" + strconv.FormatInt(last.ID+1, 10) + "/summary.xml", // not created yet
		"/v1/sports/en/sport_events/sr:match:" + strconv.FormatInt(first.ID-1, 10) + "/summary.xml",
		"/v1/sports/en/sport_events/vf:match:" + strconv.FormatInt(first.ID, 10) + "/summary.xml", // the match is LO's, not virtual
		"/v1/sports/en/sport_events/not-a-urn/summary.xml",
		"/v1/sports/en/players/sr:player:1/profile.xml",
		"/v1/sports/en/competitors/sr:competitor:1/profile.xml",
	} {
		status, body := api.get(t, path)
		require.Equal(t, http.StatusNotFound, status, path)
		require.Contains(t, string(body), `response_code="NOT_FOUND"`)
	}
	require.Equal(t, summaries+1+4, api.sim.APIRequests(feedtest.RouteEventSummary))
	require.Equal(t, 2*len(events)+1+1, api.sim.APIRequests(feedtest.RouteCompetitorProfile))
	require.Equal(t, 2, api.sim.APIRequests(feedtest.RoutePlayerProfile))
}

func TestSportsAPIRefusesWithoutTokenAndUnknownLanguage(t *testing.T) {
	api := newSportsAPI(t, feedtest.SimulatorConfig{Matches: 1}, 1)
	var match feed.URN
	for urn := range api.sim.EventsByMatch() {
		match = urn
	}
	paths := []string{
		"/v1/descriptions/en/markets.xml",
		"/v1/descriptions/en/variants.xml",
		"/v1/descriptions/en/markets/21/variants/sr:exact_goals:4+",
		"/v1/sports/en/sport_events/" + match.String() + "/summary.xml",
		"/v1/sports/en/players/sr:player:60001/profile.xml",
		"/v1/sports/en/competitors/sr:competitor:4001/profile.xml",
	}
	for _, path := range paths {
		status, _ := api.getWithToken(t, path, "")
		require.Equal(t, http.StatusUnauthorized, status, path)
		status, _ = api.getWithToken(t, path, "wrong")
		require.Equal(t, http.StatusUnauthorized, status, path)
		status, _ = api.get(t, path)
		require.Equal(t, http.StatusOK, status, path)
		status, body := api.get(t, strings.Replace(path, "/en/", "/xx/", 1))
		require.Equal(t, http.StatusNotFound, status, path)
		require.Contains(t, string(body), `<response response_code="NOT_FOUND">`)
		require.Contains(t, string(body), "Language xx is not supported")
	}
	_, body := api.get(t, "/v1/descriptions/xx/markets.xml")
	_, err := markets.ParseDescriptions(body)
	require.ErrorContains(t, err, `the API answered <response response_code="NOT_FOUND">`)

	for _, route := range []string{feedtest.RouteMarketDescriptions, feedtest.RouteVariantDescriptions, feedtest.RouteMarketVariant,
		feedtest.RouteEventSummary, feedtest.RoutePlayerProfile, feedtest.RouteCompetitorProfile} {
		want := 4
		if route == feedtest.RouteMarketDescriptions {
			want = 5
		}
		require.Equal(t, want, api.sim.APIRequests(route), route)
	}
	require.Zero(t, api.sim.APIRequests("GET /v1/users/whoami.xml"))
	status, _ := api.get(t, "/v1/no/such/route")
	require.Equal(t, http.StatusNotFound, status)
	require.Equal(t, 1, api.sim.APIRequests(""))
}
