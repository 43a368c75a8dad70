package feedtest_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/sportdata/changes"
)

// changesAPI is a simulator whose traffic went out a minute at a time over an hour, so
// that its changes fall at many times, some sharing a second.
type changesAPI struct {
	*sportsAPI
	clock *clocktest.Fake
}

func newChangesAPI(t *testing.T) *changesAPI {
	t.Helper()
	clk := clocktest.NewFake(t0)
	sim := newSimulator(t, discard{}, feedtest.SimulatorConfig{Matches: 6, Seed: 36, Rate: feedtest.Unlimited,
		HistoryAge: 48 * time.Hour, Clock: clk})
	for range 60 {
		require.NoError(t, sim.Publish(t.Context(), 40))
		clk.Advance(time.Minute)
	}
	srv := httptest.NewServer(sim.APIHandler(feedtest.Account{}))
	t.Cleanup(srv.Close)
	return &changesAPI{sportsAPI: &sportsAPI{sim: sim, srv: srv}, clock: clk}
}

// published returns the changes the traffic made, of the kind: an event and its
// message's second, once each, with the sport of each event.
func (a *changesAPI) published(kind changes.Kind) (map[changes.Change]int, map[feed.URN]int) {
	t := feed.MessageFixtureChange
	if kind == changes.ResultChange {
		t = feed.MessageBetSettlement
	}
	out, sports := map[changes.Change]int{}, map[feed.URN]int{}
	for _, s := range a.sim.Sent() {
		if s.Key.Type != t || s.Replay {
			continue
		}
		at := s.Message.MessageHeader().Timestamp.UTC().Truncate(time.Second)
		out[changes.Change{Kind: kind, Event: s.Key.Event, UpdatedAt: at}] = 1
		sports[s.Key.Event] = s.Key.SportID
	}
	return out, sports
}

// list fetches a list and parses it as the changes package does.
func (a *changesAPI) list(t *testing.T, path string) ([]changes.Change, string) {
	t.Helper()
	status, body := a.get(t, path)
	require.Equal(t, http.StatusOK, status, "%s", body)
	list, err := changes.ParseChanges(body)
	require.NoError(t, err, "%s", body)
	return list, string(body)
}

func counted(list []changes.Change) map[changes.Change]int {
	out := map[changes.Change]int{}
	for _, c := range list {
		out[c]++
	}
	return out
}

// Each list has an entry for each fixture_change, or bet_settlement, the simulator
// published, at its message's second, once, newest first, written as the API writes it.
func TestSportsAPIChangesListWhatWasPublished(t *testing.T) {
	api := newChangesAPI(t)
	for _, c := range []struct {
		kind        changes.Kind
		path, root  string
		entryPrefix string
	}{
		{changes.FixtureChange, "/v1/sports/en/fixtures/changes.xml", "<fixture_changes ", "<fixture_change "},
		{changes.ResultChange, "/v1/sports/de/results/changes.xml", "<result_changes ", "<result_change "},
	} {
		want, _ := api.published(c.kind)
		require.Greater(t, len(want), 5, "the traffic made %s changes", c.kind)
		list, body := api.list(t, c.path)
		assert.Equal(t, want, counted(list), c.kind)
		assert.True(t, slices.IsSortedFunc(list, func(a, b changes.Change) int { return b.UpdatedAt.Compare(a.UpdatedAt) }), "newest first")
		assert.Contains(t, body, c.root+`xmlns="http://schemas.sportradar.com/sportsapi/v1/unified" generated_at="`+
			api.clock.Now().UTC().Format("2006-01-02T15:04:05")+`+00:00">`)
		assert.Regexp(t, regexp.MustCompile(c.entryPrefix+`sport_event_id="sr:match:\d+" update_time="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00"/>`), body)
	}
	assert.Equal(t, 1, api.sim.APIRequests(feedtest.RouteFixtureChanges))
	assert.Equal(t, 1, api.sim.APIRequests(feedtest.RouteResultChanges))
}

// afterDateTime keeps the changes after the time, not at it; sportId those of the sport.
func TestSportsAPIChangesTakeTheAPIsQuery(t *testing.T) {
	api := newChangesAPI(t)
	want, sports := api.published(changes.FixtureChange)
	mid := t0.Add(30 * time.Minute)
	for _, after := range []string{mid.Format(time.RFC3339), mid.Format("2006-01-02T15:04:05.0000000Z07:00"), mid.In(time.FixedZone("", 3600)).Format(time.RFC3339)} {
		list, _ := api.list(t, "/v1/sports/en/fixtures/changes.xml?afterDateTime="+url.QueryEscape(after))
		later := map[changes.Change]int{}
		for c := range want {
			if c.UpdatedAt.After(mid) {
				later[c] = 1
			}
		}
		require.NotEmpty(t, later)
		require.Less(t, len(later), len(want))
		assert.Equal(t, later, counted(list), after)
	}

	for _, sport := range []int{1, 2, 3} {
		list, _ := api.list(t, "/v1/sports/en/fixtures/changes.xml?sportId=sr:sport:"+strconv.Itoa(sport))
		of := map[changes.Change]int{}
		for c := range want {
			if sports[c.Event] == sport {
				of[c] = 1
			}
		}
		assert.Equal(t, of, counted(list), "sport %d", sport)
	}
	list, _ := api.list(t, "/v1/sports/en/fixtures/changes.xml?sportId=sr:sport:1&afterDateTime="+url.QueryEscape(mid.Format(time.RFC3339)))
	for _, c := range list {
		assert.Equal(t, 1, sports[c.Event])
		assert.True(t, c.UpdatedAt.After(mid))
	}
}

// The lists reach back a day of the simulator's clock.
func TestSportsAPIChangesReachBackADay(t *testing.T) {
	api := newChangesAPI(t)
	all, _ := api.list(t, "/v1/sports/en/results/changes.xml")
	require.NotEmpty(t, all)
	oldest := all[len(all)-1].UpdatedAt
	api.clock.Set(oldest.Add(24 * time.Hour))
	list, _ := api.list(t, "/v1/sports/en/results/changes.xml")
	assert.Less(t, len(list), len(all), "the oldest second is a day old")
	for _, c := range list {
		assert.True(t, c.UpdatedAt.After(oldest))
	}
	api.clock.Advance(2 * time.Hour)
	list, _ = api.list(t, "/v1/sports/en/results/changes.xml")
	assert.Empty(t, list)
}

// What the lists cannot answer is refused as the API refuses it, with a <response>.
func TestSportsAPIChangesRefusals(t *testing.T) {
	api := newChangesAPI(t)
	for _, c := range []struct {
		path, token string
		status      int
		code, msg   string
	}{
		{"/v1/sports/en/fixtures/changes.xml?afterDateTime=yesterday", feedtest.DefaultAccessToken, 400, "BAD_REQUEST", `afterDateTime &#34;yesterday&#34;`},
		{"/v1/sports/en/fixtures/changes.xml?afterDateTime=2026-01-01T10:00:00", feedtest.DefaultAccessToken, 400, "BAD_REQUEST", "afterDateTime"},
		{"/v1/sports/en/results/changes.xml?sportId=sr:match:1", feedtest.DefaultAccessToken, 400, "BAD_REQUEST", `sportId &#34;sr:match:1&#34;`},
		{"/v1/sports/en/results/changes.xml?sportId=1", feedtest.DefaultAccessToken, 400, "BAD_REQUEST", "sportId"},
		{"/v1/sports/en/results/changes.xml", "wrong", 401, "FORBIDDEN", "x-access-token"},
		{"/v1/sports/xx/fixtures/changes.xml", feedtest.DefaultAccessToken, 404, "NOT_FOUND", "Language xx"},
	} {
		status, body := api.getWithToken(t, c.path, c.token)
		assert.Equal(t, c.status, status, c.path)
		assert.Contains(t, string(body), `<response response_code="`+c.code+`">`, c.path)
		assert.Contains(t, string(body), c.msg, c.path)
	}
	assert.Equal(t, 3, api.sim.APIRequests(feedtest.RouteFixtureChanges))
	assert.Equal(t, 3, api.sim.APIRequests(feedtest.RouteResultChanges))
}
