package markets_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/markets"
)

var (
	t0    = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	match = feed.MustParseURN("sr:match:1")
)

func newNames(t *testing.T, api markets.API) (*markets.Names, *clocktest.Fake) {
	t.Helper()
	clk := clocktest.NewFake(t0)
	n, err := markets.New(api, markets.Config{Clock: clk})
	require.NoError(t, err)
	return n, clk
}

// Every form a market line is named in, from real descriptions: specifiers as sent,
// signed, ordinals, competitors of the event, players, the event's name, variant lists,
// single variants, flex scores and player outcomes, in two languages.
func TestNames(t *testing.T) {
	api := newFakeAPI()
	n, _ := newNames(t, api)
	ctx := context.Background()
	for _, c := range []struct {
		lang    string
		market  int
		specs   feed.Specifiers
		outcome string // "" names the market
		want    string
	}{
		{"en", 1, "", "", "1x2"},
		{"en", 1, "", "1", "Arsenal FC"},
		{"en", 1, "", "2", "draw"},
		{"en", 1, "", "3", "Chelsea FC"},
		{"de", 1, "", "3", "FC Chelsea"},
		{"de", 1, "", "2", "unentschieden"},
		{"en", 18, "total=2.50", "", "Total"},
		{"en", 18, "total=2.50", "12", "over 2.50"},
		{"de", 18, "total=2.5", "12", "über 2.5"},
		{"en", 16, "hcp=-1.5", "", "Handicap -1.5"},
		{"en", 16, "hcp=-1.5", "1714", "Arsenal FC (-1.5)"},
		{"en", 16, "hcp=-1.5", "1715", "Chelsea FC (+1.5)"},
		{"en", 16, "hcp=0", "1715", "Chelsea FC (0)"},
		{"en", 8, "goalnr=2", "", "2nd goal"},
		{"en", 8, "goalnr=11", "", "11th goal"},
		{"de", 8, "goalnr=3", "8", "FC Chelsea"},
		{"en", 282, "total=4.5", "", "Innings 1 to 5th top - Arsenal FC total"},
		{"en", 145, "inningnr=1", "", "Arsenal FC vs Chelsea FC - 1st innings"},
		{"en", 919, "player=sr:player:7|total=19.5", "", "Kane, Harry points (incl. overtime)"},
		{"en", 919, "player=sr:player:7|total=19.5", "13", "under 19.5"},
		{"en", 40, "", "sr:player:8", "Saka, Bukayo"},
		{"en", 40, "", "sr:player:7,sr:player:8", "Kane, Harry,Saka, Bukayo"}, // as both SDKs join them
		{"en", 41, "score=1:1", "", "Correct score [1:1]"},
		{"en", 41, "score=1:1", "114", "2:1"},
		{"en", 41, "score=0:2", "110", "0:2"},
		{"en", 41, "score=1:1", "1000", "other"},
		{"en", 21, "variant=sr:exact_goals:4+", "", "Exact goals"},
		{"en", 21, "variant=sr:exact_goals:4+", "sr:exact_goals:4+:5", "4+"},
		{"en", 534, "variant=pre:markettext:222539", "", "Top batsman"},
		{"en", 534, "variant=pre:markettext:222539", "pre:outcometext:11706416", "Hughes, Daniel Peter"},
	} {
		var got string
		var err error
		if c.outcome == "" {
			got, err = n.MarketName(ctx, c.lang, match, c.market, c.specs)
		} else {
			got, err = n.OutcomeName(ctx, c.lang, match, c.market, c.specs, c.outcome)
		}
		require.NoError(t, err, "%s market %d %s outcome %q", c.lang, c.market, c.specs, c.outcome)
		assert.Equal(t, c.want, got, "%s market %d %s outcome %q", c.lang, c.market, c.specs, c.outcome)
	}

	// Each document was read once, whatever the number of names taken from it.
	for _, lang := range []string{"en", "de"} {
		assert.Equal(t, 1, api.count("v1/descriptions/"+lang+"/markets.xml"), lang)
		assert.Equal(t, 1, api.count("v1/sports/"+lang+"/sport_events/sr:match:1/summary.xml"), lang)
	}
	assert.Equal(t, 1, api.count("v1/descriptions/en/variants.xml"))
	assert.Equal(t, 0, api.count("v1/descriptions/de/variants.xml"), "a language's variants are read when first needed")
	assert.Equal(t, 1, api.count("v1/descriptions/en/markets/534/variants/pre:markettext:222539"))
	assert.Equal(t, 1, api.count("v1/sports/en/players/sr:player:7/profile.xml"))
	assert.Equal(t, 1, api.count("v1/sports/en/players/sr:player:8/profile.xml"))
	st := n.Stats()
	// 30 names, 28 of them from the markets lists (the single variant's come from its own).
	assert.Equal(t, markets.CacheStats{Hits: 26, Misses: 2, Fetches: 2, Entries: 2}, st.Markets)
	assert.Equal(t, int64(1), st.Variants.Fetches)
	assert.Equal(t, int64(2), st.Summaries.Fetches)
	assert.Equal(t, int64(2), st.Profiles.Fetches)
	assert.Equal(t, int64(0), st.Refetches)
}

// French names have French ordinals; the same market in German keeps English ones.
func TestNamesFrenchOrdinals(t *testing.T) {
	n, _ := newNames(t, newFakeAPI())
	ctx := context.Background()
	for _, c := range []struct {
		lang  string
		specs feed.Specifiers
		want  string
	}{
		{"fr", "goalnr=1", "1er but"},
		{"fr", "goalnr=2", "2e but"},
		{"de", "goalnr=1", "1st Tor"},
	} {
		got, err := n.MarketName(ctx, c.lang, match, 8, c.specs)
		require.NoError(t, err)
		assert.Equal(t, c.want, got, "%s %s", c.lang, c.specs)
	}
}

// What cannot be named is an error saying what is missing, never a name that is wrong.
func TestNamesErrors(t *testing.T) {
	api := newFakeAPI()
	n, _ := newNames(t, api)
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		lang    string
		event   feed.URN
		market  int
		specs   feed.Specifiers
		outcome string
		is      error
		want    string
	}{
		{"missing specifier", "en", match, 18, "", "12", markets.ErrSpecifierMissing, "total"},
		{"decimal ordinal", "en", match, 8, "goalnr=2.5", "", markets.ErrSpecifierValue, "goalnr"},
		{"player not a URN", "en", match, 919, "player=kane|total=1.5", "", markets.ErrSpecifierValue, "player"},
		{"no event", "en", feed.URN{}, 1, "", "1", nil, "no event was given"},
		{"unknown event", "en", feed.MustParseURN("sr:match:404"), 1, "", "1", feed.ErrNotFound, "sr:match:404"},
		{"unknown player", "en", match, 40, "", "sr:player:404", feed.ErrNotFound, "sr:player:404"},
		{"unknown variant", "en", match, 21, "variant=sr:exact_goals:9+", "", feed.ErrNotFound, "sr:exact_goals:9+"},
		{"bad language", "e/n", match, 1, "", "1", nil, `language "e/n"`},
		{"bad flex score", "en", match, 41, "score=1", "114", markets.ErrSpecifierValue, "score"},
		{"flex score without score", "en", match, 41, "", "114", markets.ErrSpecifierMissing, "score"},
		{"spaces around a composite id's comma", "en", match, 40, "", "sr:player:7, sr:player:8", markets.ErrUnknownOutcome, `"sr:player:7, sr:player:8"`},
	} {
		var err error
		if c.outcome == "" {
			_, err = n.MarketName(ctx, c.lang, c.event, c.market, c.specs)
		} else {
			_, err = n.OutcomeName(ctx, c.lang, c.event, c.market, c.specs, c.outcome)
		}
		require.Error(t, err, c.name)
		if c.is != nil {
			assert.ErrorIs(t, err, c.is, c.name)
		}
		assert.Contains(t, err.Error(), c.want, c.name)
	}
	assert.Zero(t, api.count("v1/descriptions/e/n/markets.xml"), "a bad language reaches no URL")
}

// An outcome the cached descriptions lack is an error until the descriptions, read again
// once, have it; a second unknown outcome within the refetch interval reads nothing.
func TestNamesRefetchAMissingOutcome(t *testing.T) {
	api := newFakeAPI()
	n, clk := newNames(t, api)
	ctx := context.Background()
	const path = "v1/descriptions/en/markets.xml"
	_, err := n.MarketName(ctx, "en", match, 1, "")
	require.NoError(t, err)

	// The feed starts sending outcome 4 of market 1 before the cached descriptions have it.
	api.set(path, `<market_descriptions><market id="1" name="1x2"><outcomes>
	  <outcome id="1" name="{$competitor1}"/><outcome id="4" name="no bet"/></outcomes></market></market_descriptions>`)
	got, err := n.OutcomeName(ctx, "en", match, 1, "", "4")
	require.NoError(t, err)
	assert.Equal(t, "no bet", got)
	assert.Equal(t, 2, api.count(path), "read again once")

	_, err = n.OutcomeName(ctx, "en", match, 1, "", "5")
	require.ErrorIs(t, err, markets.ErrUnknownOutcome)
	assert.Contains(t, err.Error(), `market 1 (en) has no outcome "5"`)
	_, err = n.MarketName(ctx, "en", match, 77, "")
	require.ErrorIs(t, err, markets.ErrUnknownMarket)
	assert.Equal(t, 2, api.count(path), "no second read within RefetchInterval")

	clk.Advance(markets.DefaultRefetchInterval)
	_, err = n.OutcomeName(ctx, "en", match, 1, "", "5")
	require.ErrorIs(t, err, markets.ErrUnknownOutcome)
	assert.Equal(t, 3, api.count(path), "read again once the interval has passed")
	assert.Equal(t, int64(2), n.Stats().Refetches)
}

// While the API fails, names of what is cached go on; what is not cached fails with the
// API's error, asked for once per ErrorTTL; Refresh reads a language again on demand.
func TestNamesWhileTheAPIFails(t *testing.T) {
	api := newFakeAPI()
	n, clk := newNames(t, api)
	ctx := context.Background()
	const en, de = "v1/descriptions/en/markets.xml", "v1/descriptions/de/markets.xml"
	_, err := n.MarketName(ctx, "en", match, 18, "total=2.5")
	require.NoError(t, err)
	api.failWith(en, http.StatusServiceUnavailable)
	api.failWith(de, http.StatusServiceUnavailable)

	for range 10 {
		_, err = n.OutcomeName(ctx, "de", match, 18, "total=2.5", "12")
		require.ErrorIs(t, err, feed.ErrServerError)
	}
	assert.Equal(t, 1, api.count(de), "one request per ErrorTTL")
	assert.Contains(t, err.Error(), "https://api.test/v1/descriptions/de/markets.xml")

	clk.Advance(markets.DefaultRefreshInterval)
	got, err := n.OutcomeName(ctx, "en", match, 18, "total=2.5", "13")
	require.NoError(t, err, "a failed refresh keeps the old descriptions")
	assert.Equal(t, "under 2.5", got)
	require.ErrorIs(t, n.Refresh(ctx, "en"), feed.ErrServerError)

	api.failWith(en, 0)
	api.failWith(de, 0)
	require.NoError(t, n.Refresh(ctx, "en"))
	clk.Advance(markets.DefaultErrorTTL)
	got, err = n.OutcomeName(ctx, "de", match, 18, "total=2.5", "12")
	require.NoError(t, err)
	assert.Equal(t, "über 2.5", got)
	st := n.Stats()
	assert.Equal(t, int64(3), st.Markets.Errors) // de, the en refresh, the failed Refresh
}

// Listeners of many matches asking for names of a language at once read its descriptions
// once.
func TestNamesConcurrentFirstUse(t *testing.T) {
	api := newFakeAPI()
	n, _ := newNames(t, api)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for range 64 {
		wg.Go(func() {
			got, err := n.OutcomeName(context.Background(), "en", match, 16, "hcp=1", "1714")
			if err == nil && got != "Arsenal FC (+1)" {
				err = errors.New("wrong name " + got)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	assert.Equal(t, 1, api.count("v1/descriptions/en/markets.xml"))
	assert.Equal(t, 1, api.count("v1/sports/en/sport_events/sr:match:1/summary.xml"))
}

// A bad Config is refused, naming the field.
func TestNewRefusesABadConfig(t *testing.T) {
	_, err := markets.New(newFakeAPI(), markets.Config{CacheSize: -1})
	require.ErrorContains(t, err, "Config.CacheSize")
	_, err = markets.New(newFakeAPI(), markets.Config{ErrorTTL: -time.Second})
	require.ErrorContains(t, err, "Config.ErrorTTL")
	_, err = markets.New(nil, markets.Config{})
	require.Error(t, err)
}
