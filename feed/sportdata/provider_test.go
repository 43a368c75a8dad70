package sportdata_test

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/sportdata"
)

var epoch = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// world is a simulator that has published some traffic, its API, and a client of it.
type world struct {
	sim *feedtest.Simulator
	clk *clocktest.Fake
	api *feedapi.Client
}

func newWorld(t testing.TB, messages int) *world {
	t.Helper()
	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	t.Cleanup(broker.Close)
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	clk := clocktest.NewFake(epoch)
	sim, err := feedtest.NewSimulator(broker, feedtest.SimulatorConfig{Producers: []feed.Producer{lo}, Matches: 5, Rate: feedtest.Unlimited, Clock: clk, Seed: 7})
	require.NoError(t, err)
	require.NoError(t, sim.Publish(context.Background(), messages))
	srv := httptest.NewServer(sim.APIHandler(feedtest.Account{}))
	t.Cleanup(srv.Close)
	api, err := feedapi.NewClient(feedapi.Config{BaseURL: srv.URL, AccessToken: feedtest.DefaultAccessToken, MaxAttempts: 1})
	require.NoError(t, err)
	return &world{sim: sim, clk: clk, api: api}
}

func (w *world) provider(t testing.TB, cfg sportdata.Config) *sportdata.Provider {
	t.Helper()
	cfg.Clock = w.clk
	p, err := sportdata.New(w.api, cfg)
	require.NoError(t, err)
	return p
}

// matches returns the matches the simulator sent messages about, and for each the
// start it schedules: the last fixture_change's start_time, or its first message's stamp.
func (w *world) matches() map[feed.URN]time.Time {
	out := make(map[feed.URN]time.Time)
	for _, s := range w.sim.Sent() {
		u := s.Message.MessageHeader().Event
		if u.IsZero() {
			continue
		}
		if _, ok := out[u]; !ok {
			out[u] = s.Message.MessageHeader().Timestamp.Truncate(time.Second)
		}
		if fc, ok := s.Message.(*feed.FixtureChange); ok {
			out[u] = fc.StartTime.Truncate(time.Second)
		}
	}
	return out
}

// Every match the feed spoke of has a fixture and a summary in English and German,
// merged into one value, with the start the feed announced; each document is read
// once, and every later read is answered from the cache.
func TestFixturesAndSummariesOfEveryMatchInTwoLanguages(t *testing.T) {
	w := newWorld(t, 300)
	p := w.provider(t, sportdata.Config{Languages: []string{"en", "de"}})
	ctx := t.Context()
	matches := w.matches()
	require.NotEmpty(t, matches)
	for u, start := range matches {
		f, err := p.Fixture(ctx, u)
		require.NoError(t, err, u)
		assert.Equal(t, u, f.Event.ID)
		assert.True(t, f.Event.Scheduled.Equal(start), "%s scheduled %v, the feed said %v", u, f.Event.Scheduled, start)
		assert.Equal(t, "Simulated League", f.Event.Tournament.Name.In("en"))
		assert.Equal(t, "Simulierte Liga", f.Event.Tournament.Name.In("de"))
		assert.Equal(t, []string{"de", "en"}, f.Event.Tournament.Name.Languages())
		home, ok := f.Event.Home()
		require.True(t, ok)
		away, ok := f.Event.Away()
		require.True(t, ok)
		assert.NotEqual(t, home.ID, away.ID)
		assert.Equal(t, []sportdata.Info{{Key: "BetradarCtrl", Value: strconv.FormatInt(u.ID, 10)}}, f.ReferenceIDs)

		s, err := p.Summary(ctx, u)
		require.NoError(t, err, u)
		assert.Equal(t, u, s.Event.ID)
		sHome, _ := s.Event.Home()
		assert.Equal(t, home.ID, sHome.ID, "the summary and the fixture agree")
		assert.Equal(t, home.Name.In("en"), sHome.Name.In("en"))
		require.NotNil(t, s.Status)
		assert.Contains(t, []string{"live", "closed"}, s.Status.Status)
	}
	n := len(matches)
	assert.Equal(t, 2*n, w.sim.APIRequests(feedtest.RouteFixture), "one request per match and language")
	assert.Equal(t, 2*n, w.sim.APIRequests(feedtest.RouteEventSummary))
	for u := range matches {
		_, err := p.Fixture(ctx, u)
		require.NoError(t, err)
	}
	assert.Equal(t, 2*n, w.sim.APIRequests(feedtest.RouteFixture), "a second read is a cache hit")
	st := p.Stats().Fixtures
	assert.Equal(t, sportdata.CacheStats{Hits: int64(2 * n), Misses: int64(2 * n), Fetches: int64(2 * n), Entries: n}, st)
}

// A team's profile lists its squad, and each player's own profile agrees with it.
func TestCompetitorAndPlayerProfiles(t *testing.T) {
	w := newWorld(t, 50)
	p := w.provider(t, sportdata.Config{})
	ctx := t.Context()
	var u feed.URN
	for m := range w.matches() {
		u = m
		break
	}
	f, err := p.Fixture(ctx, u)
	require.NoError(t, err)
	home, _ := f.Event.Home()
	c, err := p.Competitor(ctx, home.ID)
	require.NoError(t, err)
	assert.Equal(t, home.ID, c.Competitor.ID)
	assert.Equal(t, home.Name.In("en"), c.Competitor.Name.In("en"))
	require.Len(t, c.Players, 22)
	for _, sq := range c.Players[:3] {
		pl, err := p.Player(ctx, sq.ID)
		require.NoError(t, err)
		assert.Equal(t, sq.Name.In("en"), pl.Name.In("en"))
		require.NotNil(t, pl.JerseyNumber)
		assert.Equal(t, *sq.JerseyNumber, *pl.JerseyNumber)
		assert.False(t, pl.DateOfBirth.IsZero())
	}
}

// After a fixture_change the next read of the fixture asks for fixture_change_fixture.xml,
// once per language, and the summary is read again too.
func TestFixtureChangeReadsTheChangeFixture(t *testing.T) {
	w := newWorld(t, 50)
	p := w.provider(t, sportdata.Config{Languages: []string{"en", "de"}})
	ctx := t.Context()
	var u feed.URN
	for m := range w.matches() {
		u = m
		break
	}
	_, err := p.Fixture(ctx, u)
	require.NoError(t, err)
	_, err = p.Summary(ctx, u)
	require.NoError(t, err)
	p.FixtureChanged(u)
	for range 3 {
		_, err = p.Fixture(ctx, u)
		require.NoError(t, err)
		_, err = p.Summary(ctx, u)
		require.NoError(t, err)
	}
	assert.Equal(t, 2, w.sim.APIRequests(feedtest.RouteFixture), "fixture.xml before the change only")
	assert.Equal(t, 2, w.sim.APIRequests(feedtest.RouteFixtureChangeFixture), "the change fixture once per language")
	assert.Equal(t, 4, w.sim.APIRequests(feedtest.RouteEventSummary), "the summary read again after the change")
	assert.Equal(t, int64(2), p.Stats().Fixtures.Purged+p.Stats().Summaries.Purged)
}

// Many callers reading one fixture at once cost one request.
func TestConcurrentReadsShareOneRequest(t *testing.T) {
	w := newWorld(t, 50)
	p := w.provider(t, sportdata.Config{})
	var u feed.URN
	for m := range w.matches() {
		u = m
		break
	}
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			f, err := p.Fixture(context.Background(), u)
			assert.NoError(t, err)
			assert.Equal(t, u, f.Event.ID)
		})
	}
	wg.Wait()
	assert.Equal(t, 1, w.sim.APIRequests(feedtest.RouteFixture))
	st := p.Stats().Fixtures
	assert.Equal(t, int64(1), st.Fetches)
	assert.Equal(t, int64(32), st.Hits+st.Misses)
}

// A failed read is answered again for ErrorTTL, then asked for again.
func TestAFailureIsRememberedForErrorTTL(t *testing.T) {
	w := newWorld(t, 10)
	p := w.provider(t, sportdata.Config{ErrorTTL: time.Minute})
	unknown := feed.URN{Prefix: "sr", Type: "match", ID: 999_999}
	_, err := p.Fixture(t.Context(), unknown)
	var apiErr *feed.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 404, apiErr.StatusCode)
	assert.Contains(t, err.Error(), "/v1/sports/en/sport_events/sr:match:999999/fixture.xml")
	_, err2 := p.Fixture(t.Context(), unknown)
	assert.Same(t, err, err2, "the same failure, answered from the cache")
	assert.Equal(t, 1, w.sim.APIRequests(feedtest.RouteFixture))
	w.clk.Advance(time.Minute)
	_, err = p.Fixture(t.Context(), unknown)
	require.Error(t, err)
	assert.Equal(t, 2, w.sim.APIRequests(feedtest.RouteFixture), "asked again after ErrorTTL")
}

// A read in two languages of which one fails: by default nothing and the error; with
// ReturnPartial, what was read and the error.
func TestErrorPolicy(t *testing.T) {
	w := newWorld(t, 50)
	var u feed.URN
	for m := range w.matches() {
		u = m
		break
	}
	strict := w.provider(t, sportdata.Config{})
	f, err := strict.Fixture(t.Context(), u, "en", "fr") // the simulator speaks en and de
	require.Error(t, err)
	assert.Contains(t, err.Error(), "/v1/sports/fr/sport_events/"+u.String()+"/fixture.xml")
	assert.Zero(t, f)

	partial := w.provider(t, sportdata.Config{Errors: sportdata.ReturnPartial})
	f, err = partial.Fixture(t.Context(), u, "en", "fr")
	require.Error(t, err)
	var apiErr *feed.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, u, f.Event.ID)
	assert.Equal(t, "Simulated League", f.Event.Tournament.Name.In("en"))
	assert.Empty(t, f.Event.Tournament.Name.In("fr"))

	f, err = partial.Fixture(t.Context(), u, "fr")
	require.Error(t, err)
	assert.Zero(t, f, "nothing read: nothing returned")
}

// An export imported into a new Provider makes every entity it holds readable with no
// API request, equal to what the first Provider read.
func TestImportStartsWarm(t *testing.T) {
	w := newWorld(t, 300)
	cfg := sportdata.Config{Languages: []string{"en", "de"}}
	p1 := w.provider(t, cfg)
	ctx := t.Context()
	type read struct {
		f sportdata.Fixture
		s sportdata.Summary
		c sportdata.CompetitorProfile
	}
	first := make(map[feed.URN]read)
	for u := range w.matches() {
		f, err := p1.Fixture(ctx, u)
		require.NoError(t, err)
		s, err := p1.Summary(ctx, u)
		require.NoError(t, err)
		home, _ := f.Event.Home()
		c, err := p1.Competitor(ctx, home.ID)
		require.NoError(t, err)
		first[u] = read{f, s, c}
	}
	sports, err := p1.Sports(ctx)
	require.NoError(t, err)
	tournaments, err := p1.Tournaments(ctx)
	require.NoError(t, err)
	cats, err := p1.Categories(ctx, sports[0].ID)
	require.NoError(t, err)
	seasons, err := p1.Seasons(ctx, tournaments[0].ID)
	require.NoError(t, err)
	catalogue := func() int {
		return w.sim.APIRequests(feedtest.RouteSports) + w.sim.APIRequests(feedtest.RouteTournaments) +
			w.sim.APIRequests(feedtest.RouteSportCategories) + w.sim.APIRequests(feedtest.RouteTournamentSeasons)
	}
	catalogueBefore := catalogue()
	var buf bytes.Buffer
	require.NoError(t, p1.Export(&buf))
	before := w.sim.APIRequests("GET /v1/sports/{lang}/sport_events/{urn}/fixture.xml") +
		w.sim.APIRequests(feedtest.RouteEventSummary) + w.sim.APIRequests(feedtest.RouteCompetitorProfile)

	p2 := w.provider(t, cfg)
	n, err := p2.Import(&buf)
	require.NoError(t, err)
	st1 := p1.Stats()
	assert.Equal(t, st1.Fixtures.Entries+st1.Summaries.Entries+st1.Competitors.Entries+4, n, "and the four of the catalogue")
	for u, want := range first {
		f, err := p2.Fixture(ctx, u)
		require.NoError(t, err)
		assert.Equal(t, want.f, f)
		s, err := p2.Summary(ctx, u)
		require.NoError(t, err)
		assert.Equal(t, want.s, s)
		home, _ := f.Event.Home()
		c, err := p2.Competitor(ctx, home.ID)
		require.NoError(t, err)
		assert.Equal(t, want.c, c)
	}
	sports2, err := p2.Sports(ctx)
	require.NoError(t, err)
	assert.Equal(t, sports, sports2)
	tournaments2, err := p2.Tournaments(ctx)
	require.NoError(t, err)
	assert.Equal(t, tournaments, tournaments2)
	cats2, err := p2.Categories(ctx, sports[0].ID)
	require.NoError(t, err)
	assert.Equal(t, cats, cats2)
	seasons2, err := p2.Seasons(ctx, tournaments[0].ID)
	require.NoError(t, err)
	assert.Equal(t, seasons, seasons2)
	assert.Equal(t, catalogueBefore, catalogue(), "the catalogue came from the import")
	after := w.sim.APIRequests(feedtest.RouteFixture) + w.sim.APIRequests(feedtest.RouteEventSummary) +
		w.sim.APIRequests(feedtest.RouteCompetitorProfile)
	assert.Equal(t, before, after, "no API request after the import")
	assert.Zero(t, p2.Stats().Fixtures.Misses)
}

// An import refuses another format, another version, and an entity filed under another
// id, and imports nothing then.
func TestImportRefusesWhatItCannotTrust(t *testing.T) {
	w := newWorld(t, 10)
	p := w.provider(t, sportdata.Config{})
	for _, c := range []struct{ doc, want string }{
		{`{"format":"other","version":1}`, `format "other"`},
		{`{"format":"feedkit/sportdata","version":2}`, "version 2"},
		{`{"format":"feedkit/sportdata","version":1,"players":[{"id":"sr:player:1","languages":{"en":"2026-11-29T12:00:00Z"},"value":{"id":"sr:player:2"}}]}`, "players[0]: id sr:player:1, its value's sr:player:2"},
		{`{"format":"feedkit/sportdata","version":1,"players":[{"id":"sr:player:1","languages":{},"value":{"id":"sr:player:1"}}]}`, "has no language"},
		{`{"format":"feedkit/sportdata","version":1,"players":[`, "unexpected EOF"},
	} {
		n, err := p.Import(bytes.NewBufferString(c.doc))
		require.Error(t, err, c.doc)
		assert.Contains(t, err.Error(), c.want)
		assert.Zero(t, n)
	}
	assert.Zero(t, p.Stats().Players.Entries)
}

// The caches hold at most CacheSize entities and MaxLanguages languages each; purges drop
// an entity or what was read before a time.
func TestBoundsAndPurges(t *testing.T) {
	w := newWorld(t, 300)
	p := w.provider(t, sportdata.Config{CacheSize: 3, MaxLanguages: 1})
	ctx := t.Context()
	var ids []feed.URN
	for u := range w.matches() {
		ids = append(ids, u)
	}
	require.GreaterOrEqual(t, len(ids), 5)
	for _, u := range ids[:5] {
		_, err := p.Fixture(ctx, u)
		require.NoError(t, err)
	}
	st := p.Stats().Fixtures
	assert.Equal(t, 3, st.Entries)
	assert.Equal(t, int64(2), st.Evictions)

	f, err := p.Fixture(ctx, ids[4], "de")
	require.NoError(t, err)
	assert.Equal(t, []string{"de"}, f.Event.Tournament.Name.Languages(), "one language at most")

	p.Purge(ids[4])
	assert.Equal(t, 2, p.Stats().Fixtures.Entries)
	w.clk.Advance(time.Minute)
	_, err = p.Fixture(ctx, ids[0])
	require.NoError(t, err)
	assert.Equal(t, 2, p.PurgeReadBefore(w.clk.Now()), "the two read a minute ago")
	assert.Equal(t, 1, p.Stats().Fixtures.Entries)
}

// A bad Config is refused with the field named.
func TestConfigRefused(t *testing.T) {
	w := newWorld(t, 1)
	for _, c := range []struct {
		cfg  sportdata.Config
		want string
	}{
		{sportdata.Config{CacheSize: -1}, "Config.CacheSize"},
		{sportdata.Config{MaxLanguages: -1}, "Config.MaxLanguages"},
		{sportdata.Config{TTL: -time.Second}, "Config.TTL"},
		{sportdata.Config{ErrorTTL: -time.Second}, "Config.ErrorTTL"},
		{sportdata.Config{Errors: 7}, "Config.Errors"},
		{sportdata.Config{Languages: []string{"en", "d e"}}, `Config.Languages[1] "d e"`},
		{sportdata.Config{Languages: []string{"en", "de"}, MaxLanguages: 1}, "more than Config.MaxLanguages 1"},
	} {
		_, err := sportdata.New(w.api, c.cfg)
		require.Error(t, err)
		assert.Contains(t, err.Error(), c.want)
	}
	_, err := sportdata.New(nil, sportdata.Config{})
	assert.Error(t, err)
}

// The schedules: the live one lists the matches running, a day's those scheduled that
// day, and the pre-match one's pages join up to the whole list.
func TestSchedules(t *testing.T) {
	w := newWorld(t, 400)
	p := w.provider(t, sportdata.Config{})
	ctx := t.Context()
	live, err := p.LiveSchedule(ctx, "en")
	require.NoError(t, err)
	assert.Len(t, live, 5, "five matches run at a time")

	matches := w.matches()
	day, err := p.Schedule(ctx, epoch, "en")
	require.NoError(t, err)
	wantDay := 0
	for _, start := range matches {
		if start.Truncate(24 * time.Hour).Equal(epoch.Truncate(24 * time.Hour)) {
			wantDay++
		}
	}
	assert.Len(t, day, wantDay)

	all, err := p.PreMatchSchedule(ctx, 0, 1000, "en")
	require.NoError(t, err)
	wantPre := 0
	for _, start := range matches {
		if start.After(w.clk.Now()) {
			wantPre++
		}
	}
	require.Positive(t, wantPre, "fixture changes put starts an hour ahead")
	assert.Len(t, all, wantPre)
	var paged []sportdata.Event
	for start := 0; ; start += 2 {
		page, err := p.PreMatchSchedule(ctx, start, 2, "en")
		require.NoError(t, err)
		paged = append(paged, page...)
		if len(page) < 2 {
			break
		}
	}
	assert.Equal(t, all, paged)
	_, err = p.PreMatchSchedule(ctx, 0, 1001, "en")
	assert.ErrorContains(t, err, "limit 1001")
}
