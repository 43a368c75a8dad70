package feedtest_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// The schemas of the API's documents, under xsdDir.
const (
	xsdResponse     = "UnifiedFeedResponse.xsd"     // <response>, <bookmaker_details>
	xsdDescriptions = "UnifiedFeedDescriptions.xsd" // producers, markets, variants
	xsdSports       = "sportsapi/endpoints/unified/"
)

// apiDocument is a request to the simulator's API, the status it is answered with and
// the published schema the answer must satisfy. A new route adds its lines here: the
// test fails for a route that has none.
type apiDocument struct {
	// req is the method and the path with its query. {lang} stands for every language
	// the API serves (one request each), {match} for a match of the live producer in
	// play, {ended} for one that is over, {virtual} for a virtual one, {today} for the day
	// {match} began (see apiVars).
	req    string
	status int
	schema string
	// fail, when not 0, makes the request after FailRecoveries(fail, 1).
	fail int
}

var apiDocuments = []apiDocument{
	{req: "GET /v1/users/whoami.xml", status: 200, schema: xsdResponse},
	{req: "GET /v1/descriptions/producers.xml", status: 200, schema: xsdDescriptions},

	{req: "POST /v1/liveodds/recovery/initiate_request?request_id=1&node_id=2", status: 202, schema: xsdResponse},
	{req: "POST /v1/pre/recovery/initiate_request?request_id=2", status: 202, schema: xsdResponse},
	{req: "POST /v1/liveodds/recovery/initiate_request?request_id=x", status: 400, schema: xsdResponse},
	{req: "POST /v1/liveodds/recovery/initiate_request?request_id=3&after=1", status: 400, schema: xsdResponse},
	{req: "POST /v1/nosuchproduct/recovery/initiate_request?request_id=4", status: 404, schema: xsdResponse},
	{req: "POST /v1/liveodds/recovery/initiate_request?request_id=5", status: 503, schema: xsdResponse, fail: 503},
	{req: "POST /v1/liveodds/recovery/initiate_request?request_id=6", status: 429, schema: xsdResponse, fail: 429},
	{req: "POST /v1/liveodds/odds/events/{match}/initiate_request?request_id=7", status: 202, schema: xsdResponse},
	{req: "POST /v1/liveodds/odds/events/not-a-urn/initiate_request?request_id=8", status: 400, schema: xsdResponse},
	{req: "POST /v1/liveodds/stateful_messages/events/{match}/initiate_request?request_id=9", status: 202, schema: xsdResponse},
	{req: "POST /v1/liveodds/stateful_messages/events/not-a-urn/initiate_request?request_id=10", status: 400, schema: xsdResponse},

	{req: "GET /v1/descriptions/{lang}/markets.xml", status: 200, schema: xsdDescriptions},
	{req: "GET /v1/descriptions/{lang}/markets.xml?include_mappings=true", status: 200, schema: xsdDescriptions},
	{req: "GET /v1/descriptions/xx/markets.xml", status: 404, schema: xsdResponse},
	{req: "GET /v1/descriptions/{lang}/markets/21/variants/sr:exact_goals:4+?include_mappings=true", status: 200, schema: xsdDescriptions},
	{req: "GET /v1/descriptions/{lang}/markets/534/variants/pre:markettext:1001", status: 200, schema: xsdDescriptions},
	{req: "GET /v1/descriptions/{lang}/markets/18/variants/sr:exact_goals:4+", status: 404, schema: xsdResponse},
	{req: "GET /v1/descriptions/{lang}/variants.xml", status: 200, schema: xsdDescriptions},
	{req: "GET /v1/descriptions/xx/variants.xml", status: 404, schema: xsdResponse},

	{req: "GET /v1/sports/{lang}/sport_events/{match}/summary.xml", status: 200, schema: xsdSports + "match_summary.xsd"},
	{req: "GET /v1/sports/{lang}/sport_events/{ended}/summary.xml", status: 200, schema: xsdSports + "match_summary.xsd"},
	{req: "GET /v1/sports/{lang}/sport_events/{virtual}/summary.xml", status: 200, schema: xsdSports + "match_summary.xsd"},
	{req: "GET /v1/sports/{lang}/sport_events/sr:match:1/summary.xml", status: 404, schema: xsdResponse},
	{req: "GET /v1/sports/{lang}/sport_events/sr:tournament:9001/summary.xml", status: 200, schema: xsdSports + "tournament_info.xsd"},
	{req: "GET /v1/sports/{lang}/sport_events/sr:season:90001/summary.xml", status: 200, schema: xsdSports + "tournament_info.xsd"},
	{req: "GET /v1/sports/{lang}/sport_events/sr:season:1/summary.xml", status: 404, schema: xsdResponse},
	{req: "GET /v1/sports/xx/sport_events/{match}/summary.xml", status: 404, schema: xsdResponse},
	{req: "GET /v1/sports/{lang}/players/sr:player:60001/profile.xml", status: 200, schema: xsdSports + "player_profile.xsd"},
	{req: "GET /v1/sports/{lang}/players/sr:player:1/profile.xml", status: 404, schema: xsdResponse},
	{req: "GET /v1/sports/{lang}/competitors/sr:competitor:4001/profile.xml", status: 200, schema: xsdSports + "competitor_profile.xsd"},
	{req: "GET /v1/sports/{lang}/competitors/sr:competitor:1/profile.xml", status: 404, schema: xsdResponse},

	{req: "GET /v1/sports/{lang}/sport_events/{match}/fixture.xml", status: 200, schema: xsdSports + "fixtures_fixture.xsd"},
	{req: "GET /v1/sports/{lang}/sport_events/{ended}/fixture.xml", status: 200, schema: xsdSports + "fixtures_fixture.xsd"},
	{req: "GET /v1/sports/{lang}/sport_events/{match}/fixture_change_fixture.xml", status: 200, schema: xsdSports + "fixtures_fixture.xsd"},
	{req: "GET /v1/sports/{lang}/sport_events/sr:match:1/fixture.xml", status: 404, schema: xsdResponse},
	{req: "GET /v1/sports/{lang}/schedules/live/schedule.xml", status: 200, schema: xsdSports + "schedule.xsd"},
	{req: "GET /v1/sports/{lang}/schedules/pre/schedule.xml?start=0&limit=5", status: 200, schema: xsdSports + "schedule.xsd"},
	{req: "GET /v1/sports/{lang}/schedules/pre/schedule.xml?limit=0", status: 400, schema: xsdResponse},
	{req: "GET /v1/sports/{lang}/schedules/{today}/schedule.xml", status: 200, schema: xsdSports + "schedule.xsd"},
	{req: "GET /v1/sports/{lang}/schedules/someday/schedule.xml", status: 400, schema: xsdResponse},
	{req: "GET /v1/sports/{lang}/sports.xml", status: 200, schema: xsdSports + "sports.xsd"},
	{req: "GET /v1/sports/{lang}/sports/sr:sport:1/categories.xml", status: 200, schema: xsdSports + "sport_categories.xsd"},
	{req: "GET /v1/sports/{lang}/sports/sr:sport:99/categories.xml", status: 404, schema: xsdResponse},
	{req: "GET /v1/sports/{lang}/tournaments.xml", status: 200, schema: xsdSports + "tournaments.xsd"},
	{req: "GET /v1/sports/{lang}/tournaments/sr:tournament:9001/seasons.xml", status: 200, schema: xsdSports + "tournament_seasons.xsd"},
	{req: "GET /v1/sports/{lang}/tournaments/sr:tournament:1/seasons.xml", status: 404, schema: xsdResponse},
	{req: "GET /v1/sports/{lang}/tournaments/sr:tournament:9001/schedule.xml", status: 200, schema: xsdSports + "tournament_schedule.xsd"},
	{req: "GET /v1/sports/{lang}/tournaments/sr:tournament:1/schedule.xml", status: 404, schema: xsdResponse},
	{req: "GET /v1/sports/{lang}/sport_events/{match}/timeline.xml", status: 200, schema: xsdSports + "match_timeline.xsd"},
	{req: "GET /v1/sports/{lang}/sport_events/{ended}/timeline.xml", status: 200, schema: xsdSports + "match_timeline.xsd"},
	{req: "GET /v1/sports/{lang}/sport_events/sr:match:1/timeline.xml", status: 404, schema: xsdResponse},

	{req: "GET /v1/sports/{lang}/fixtures/changes.xml", status: 200, schema: xsdSports + "fixture_changes.xsd"},
	{req: "GET /v1/sports/{lang}/fixtures/changes.xml?sportId=sr:sport:1", status: 200, schema: xsdSports + "fixture_changes.xsd"},
	{req: "GET /v1/sports/{lang}/fixtures/changes.xml?afterDateTime=2100-01-01T00:00:00Z", status: 200, schema: xsdSports + "fixture_changes.xsd"},
	{req: "GET /v1/sports/{lang}/fixtures/changes.xml?afterDateTime=yesterday", status: 400, schema: xsdResponse},
	{req: "GET /v1/sports/{lang}/results/changes.xml", status: 200, schema: xsdSports + "result_changes.xsd"},
	{req: "GET /v1/sports/{lang}/results/changes.xml?sportId=sr:sport", status: 400, schema: xsdResponse},

	{req: "GET /v1/no/such/endpoint.xml", status: 404, schema: xsdResponse},
	{req: "GET /v1/liveodds/recovery/initiate_request", status: 405, schema: xsdResponse},
	{req: "POST /v1/users/whoami.xml", status: 405, schema: xsdResponse},
}

// apiSchemaExceptions are where the real API's documents break its published schema; the
// simulator answers as the real API does.
var apiSchemaExceptions = []schemaException{
	{
		route:  "GET /v1/sports/{lang}/fixtures/changes.xml",
		status: http.StatusOK,
		err:    "Missing child element(s). Expected is ( {http://schemas.sportradar.com/sportsapi/v1/unified}fixture_change )",
		why: "fixture_changes.xsd asks for one fixture_change at least, which no list filtered to nothing " +
			"(afterDateTime past every change) can hold; the simulator answers such a request with the empty " +
			"list, and the SDKs read a list of any length.",
	},
	{
		route:  "GET /v1/users/whoami.xml",
		status: http.StatusOK,
		err:    "Missing child element(s). Expected is ( message )",
		why: "UnifiedFeedResponse.xsd requires a <message> in <bookmaker_details>, but the API's whoami.xml " +
			"has none: the Java SDK's tests quote a real answer, <bookmaker_details response_code=\"OK\" " +
			"expire_at=\"2023-02-28T13:16:44Z\" bookmaker_id=\"16281\" virtual_host=\"/unifiedfeed/16281\"/>, " +
			"and the .NET SDK calls the message optional.",
	},
}

// Every document the simulator's API serves is valid by the published schema of its
// kind: each route's answers, in every language the API serves, and its refusals, among
// them the answer to every request in apiDocuments made again with a wrong token.
func TestSimulatorAPIMatchesThePublishedSchemas(t *testing.T) {
	lint := xmllint(t)
	api := newSportsAPI(t, feedtest.SimulatorConfig{Matches: 2, Seed: 36, Producers: schemaTestProducers()}, 2000)
	vars := apiVars(t, api.sim)
	routes := api.sim.APIRoutes()

	var docs []document
	covered := make(map[string]int)
	for _, d := range apiDocuments {
		for _, lang := range langsOf(d.req) {
			path := expand(d.req, lang, vars)
			for _, token := range tokensFor(d) {
				if d.fail != 0 {
					api.sim.FailRecoveries(d.fail, 1)
				}
				route, status, body := api.call(t, routes, path, token)
				want, schema := d.status, d.schema
				if token != feedtest.DefaultAccessToken {
					want, schema = http.StatusUnauthorized, xsdResponse
				}
				name := fmt.Sprintf("%s (%d)", path, status)
				assert.Equal(t, want, status, "%s: %s", name, body)
				covered[route]++
				docs = append(docs, document{name: name, route: route, status: status, schema: schema, body: body})
			}
		}
	}
	api.sim.WaitReplays()
	for _, r := range routes {
		assert.Positive(t, covered[r], "route %q has no documents in apiDocuments", r)
	}
	requireValid(t, docs, validate(t, lint, docs), apiSchemaExceptions)
	t.Logf("%d API documents validated over %d routes", len(docs), len(routes))
}

// schemaTestProducers are LO, Ctrl and VF: a live, a prematch and a virtual producer.
func schemaTestProducers() []feed.Producer {
	var ps []feed.Producer
	for _, id := range []int{1, 3, 6} {
		p, _ := feed.LookupProducer(feed.DefaultProducers(), id)
		ps = append(ps, p)
	}
	return ps
}

// apiVars finds the matches the placeholders of apiDocuments stand for: the newest
// match of LO still in play, the first match created (long over by then) and a virtual
// one.
func apiVars(t *testing.T, sim *feedtest.Simulator) map[string]string {
	t.Helper()
	var match, ended, virtual feed.URN
	for urn, msgs := range sim.EventsByMatch() {
		if urn.Prefix == "vf" {
			virtual = urn
			continue
		}
		if ended.IsZero() || urn.ID < ended.ID {
			ended = urn
		}
		last := msgs[len(msgs)-1].Key.Type
		inPlay := last == feed.MessageOddsChange || last == feed.MessageBetStop || last == feed.MessageFixtureChange
		if inPlay && msgs[0].Message.MessageHeader().Producer == 1 && urn.ID > match.ID {
			match = urn
		}
	}
	require.False(t, match.IsZero(), "a match of LO in play")
	require.False(t, virtual.IsZero(), "a virtual match")
	require.NotEqual(t, match, ended, "a match that is over")
	today := sim.EventsByMatch()[match][0].Message.MessageHeader().Timestamp.UTC().Format(time.DateOnly)
	return map[string]string{"{match}": match.String(), "{ended}": ended.String(), "{virtual}": virtual.String(), "{today}": today}
}

// langsOf returns the languages to request req in: each the API serves when it has
// {lang}, else just one, "".
func langsOf(req string) []string {
	if strings.Contains(req, "{lang}") {
		return feedtest.APILanguages()
	}
	return []string{""}
}

func expand(req, lang string, vars map[string]string) string {
	req = strings.ReplaceAll(req, "{lang}", lang)
	for k, v := range vars {
		req = strings.ReplaceAll(req, k, v)
	}
	return req
}

// tokensFor returns the tokens to make d's request with: the right one, and for a
// request the API takes, a wrong one too, whose refusal is a document of its own.
func tokensFor(d apiDocument) []string {
	if d.status >= 300 || d.fail != 0 {
		return []string{feedtest.DefaultAccessToken}
	}
	return []string{feedtest.DefaultAccessToken, "wrong"}
}

// call makes the request "METHOD path" with token and returns the route that took it
// (by which route's count of APIRequests went up), the status and the body.
func (a *sportsAPI) call(t *testing.T, routes []string, req, token string) (route string, status int, body []byte) {
	t.Helper()
	method, path, _ := strings.Cut(req, " ")
	before := make(map[string]int, len(routes))
	for _, r := range routes {
		before[r] = a.requests(r)
	}
	hr, err := http.NewRequestWithContext(t.Context(), method, a.srv.URL+path, nil)
	require.NoError(t, err)
	hr.Header.Set("x-access-token", token)
	resp, err := a.srv.Client().Do(hr)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err = io.ReadAll(resp.Body)
	require.NoError(t, err)
	for _, r := range routes {
		if a.requests(r) > before[r] {
			require.Empty(t, route, "%s counted under two routes", req)
			route = r
		}
	}
	require.NotEmpty(t, route, "%s counted under no route", req)
	return route, resp.StatusCode, body
}

// requests is APIRequests for a route pattern, the catch-all "/" counting under "".
func (a *sportsAPI) requests(route string) int {
	if route == "/" {
		route = ""
	}
	return a.sim.APIRequests(route)
}
