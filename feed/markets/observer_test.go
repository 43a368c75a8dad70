package markets_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/markets"
)

// cacheCounts is what an Observer was told of one cache.
type cacheCounts struct{ Hits, Misses, Evictions int64 }

// cacheObserver counts what a Names tells its Observer, by cache.
type cacheObserver struct {
	mu     sync.Mutex
	caches map[string]cacheCounts
}

func (o *cacheObserver) CacheRead(cache string, hit bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	c := o.caches[cache]
	if hit {
		c.Hits++
	} else {
		c.Misses++
	}
	o.caches[cache] = c
}

func (o *cacheObserver) CacheEvicted(cache string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	c := o.caches[cache]
	c.Evictions++
	o.caches[cache] = c
}

// The Observer is told of every read of each cache, as a hit or a miss, and of every
// eviction, under the name of the cache's field in Stats' JSON: the counts are Stats'.
func TestObserverIsToldOfEveryCacheReadAndEviction(t *testing.T) {
	api := newFakeAPI()
	obs := &cacheObserver{caches: map[string]cacheCounts{}}
	clk := clocktest.NewFake(t0)
	// One language and one entry per cache: switching between two evicts.
	n, err := markets.New(api, markets.Config{Clock: clk, CacheSize: 1, MaxLanguages: 1, Observer: obs})
	require.NoError(t, err)
	ctx := context.Background()
	for range 3 {
		for _, lang := range []string{"en", "de"} {
			for _, c := range []struct {
				market  int
				specs   feed.Specifiers
				outcome string
			}{
				{1, "", "1"},            // markets, summaries
				{40, "", "sr:player:7"}, // profiles
				{40, "", "sr:player:8"}, // profiles: evicts 7
				{21, "variant=sr:exact_goals:4+", "sr:exact_goals:4+:5"},           // variants
				{534, "variant=pre:markettext:222539", "pre:outcometext:11706416"}, // single variants
				{1, "", "4"}, // unknown outcome: a refetch, at most once a minute
			} {
				for range 2 { // the second read of each may hit
					_, _ = n.OutcomeName(ctx, lang, match, c.market, c.specs, c.outcome)
				}
			}
			_, _ = n.MarketName(ctx, lang, feed.MustParseURN("sr:match:404"), 145, "inningnr=1") // a failed summary
		}
	}
	api.failWith("v1/descriptions/en/markets.xml", http.StatusServiceUnavailable)
	require.Error(t, n.Refresh(ctx, "en"))
	clk.Advance(markets.DefaultProfileTTL) // profiles and summaries are due
	_, _ = n.OutcomeName(ctx, "de", match, 40, "", "sr:player:8")

	st := n.Stats()
	b, err := json.Marshal(st)
	require.NoError(t, err)
	var byName map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &byName))
	obs.mu.Lock()
	defer obs.mu.Unlock()
	assert.Len(t, obs.caches, 5, "every cache was read: %v", obs.caches)
	for name, got := range obs.caches {
		var want markets.CacheStats
		require.Contains(t, byName, name, "a cache is named as its Stats field")
		require.NoError(t, json.Unmarshal(byName[name], &want))
		assert.Equal(t, cacheCounts{want.Hits, want.Misses, want.Evictions}, got, name)
		assert.NotZero(t, got.Hits, name)
		assert.NotZero(t, got.Misses, name)
	}
	assert.NotZero(t, st.Markets.Evictions)
	assert.NotZero(t, st.Profiles.Evictions)
	assert.NotZero(t, st.Summaries.Evictions)
	assert.NotZero(t, st.Refetches)
}
