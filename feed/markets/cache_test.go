package markets

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
)

var t0 = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

// counter is a fetch that counts its calls and answers with the key and the call number,
// or with the error it is told to fail with.
type counter struct {
	calls atomic.Int64
	fail  atomic.Pointer[error]
}

func (c *counter) fetch(_ context.Context, key string) (string, error) {
	n := c.calls.Add(1)
	if err := c.fail.Load(); err != nil {
		return "", *err
	}
	return fmt.Sprintf("%s#%d", key, n), nil
}

func (c *counter) failWith(err error) { c.fail.Store(&err) }
func (c *counter) succeed()           { c.fail.Store(nil) }

// Many readers of one key that is not cached wait for one request, and all get its
// answer; reads after it are hits.
func TestCacheConcurrentReadsShareOneFetch(t *testing.T) {
	release, started := make(chan struct{}), make(chan struct{})
	var calls atomic.Int64
	fetch := func(context.Context, string) (string, error) {
		if calls.Add(1) == 1 {
			close(started)
		}
		<-release
		return "en markets", nil
	}
	c := newCache(clocktest.NewFake(t0), 10, time.Hour, time.Minute, fetch)
	const readers = 50
	var wg sync.WaitGroup
	got := make([]string, readers)
	errs := make([]error, readers)
	for i := range readers {
		wg.Go(func() { got[i], errs[i] = c.get(context.Background(), "en") })
	}
	<-started // the request is held while the other readers arrive
	close(release)
	wg.Wait()
	for i := range readers {
		require.NoError(t, errs[i])
		require.Equal(t, "en markets", got[i])
	}
	st := c.stats()
	assert.Equal(t, int64(1), calls.Load())
	assert.Equal(t, int64(1), st.Fetches)
	assert.Equal(t, int64(readers), st.Hits+st.Misses, "every read counted once")
	assert.Equal(t, 1, st.Entries)
}

// A value is used for ttl and fetched again on the first read after it.
func TestCacheRefreshesAfterTTL(t *testing.T) {
	clk := clocktest.NewFake(t0)
	var f counter
	c := newCache(clk, 10, time.Hour, time.Minute, f.fetch)
	ctx := context.Background()
	v, err := c.get(ctx, "en")
	require.NoError(t, err)
	assert.Equal(t, "en#1", v)
	clk.Advance(time.Hour - time.Nanosecond)
	v, _ = c.get(ctx, "en")
	assert.Equal(t, "en#1", v, "still fresh 1 ns before the ttl")
	clk.Advance(time.Nanosecond)
	v, _ = c.get(ctx, "en")
	assert.Equal(t, "en#2", v, "read again at the ttl")
	assert.Equal(t, CacheStats{Hits: 1, Misses: 2, Fetches: 2, Entries: 1}, c.stats())
}

// A failure is answered again for errTTL, then asked for again; a failed refresh keeps the
// old value in use, and is tried again after errTTL.
func TestCacheFailures(t *testing.T) {
	clk := clocktest.NewFake(t0)
	var f counter
	c := newCache(clk, 10, time.Hour, time.Minute, f.fetch)
	ctx := context.Background()
	boom := errors.New("503")
	f.failWith(boom)
	for range 5 {
		_, err := c.get(ctx, "en")
		require.ErrorIs(t, err, boom)
	}
	assert.Equal(t, int64(1), f.calls.Load(), "one request for five reads within ErrorTTL")
	clk.Advance(time.Minute)
	f.succeed()
	v, err := c.get(ctx, "en")
	require.NoError(t, err)
	assert.Equal(t, "en#2", v, "asked again after ErrorTTL")

	clk.Advance(time.Hour) // due for refresh
	f.failWith(boom)
	v, err = c.get(ctx, "en")
	require.NoError(t, err, "a failed refresh serves the old value")
	assert.Equal(t, "en#2", v)
	v, _ = c.get(ctx, "en")
	assert.Equal(t, "en#2", v)
	assert.Equal(t, int64(3), f.calls.Load(), "no second request within ErrorTTL of the failed refresh")
	clk.Advance(time.Minute)
	f.succeed()
	v, _ = c.get(ctx, "en")
	assert.Equal(t, "en#4", v, "the refresh is tried again after ErrorTTL")
	st := c.stats()
	assert.Equal(t, int64(4), st.Fetches)
	assert.Equal(t, int64(2), st.Errors)
}

// The cache holds at most max entries and drops the one read least recently.
func TestCacheIsBounded(t *testing.T) {
	var f counter
	c := newCache(clocktest.NewFake(t0), 3, time.Hour, time.Minute, f.fetch)
	ctx := context.Background()
	for _, k := range []string{"a", "b", "c"} {
		_, err := c.get(ctx, k)
		require.NoError(t, err)
	}
	_, _ = c.get(ctx, "a") // a is now the most recent; b the least
	_, _ = c.get(ctx, "d")
	_, held := c.peek("b")
	assert.False(t, held, "b, read least recently, was dropped")
	for _, k := range []string{"a", "c", "d"} {
		_, held := c.peek(k)
		assert.True(t, held, k)
	}
	for i := range 100 {
		k := fmt.Sprintf("k%d", i)
		_, _ = c.get(ctx, k)
	}
	st := c.stats()
	assert.Equal(t, 3, st.Entries)
	assert.Equal(t, int64(101), st.Evictions)
}

// A refetch forced by a missing name asks the API at most once per interval.
func TestCacheRefetchIsRateLimited(t *testing.T) {
	clk := clocktest.NewFake(t0)
	var f counter
	c := newCache(clk, 10, time.Hour, time.Minute, f.fetch)
	ctx := context.Background()
	_, _ = c.get(ctx, "en")
	v, fetched, err := c.refetch(ctx, "en", time.Minute)
	require.NoError(t, err)
	assert.True(t, fetched)
	assert.Equal(t, "en#2", v)
	for range 10 {
		v, fetched, _ = c.refetch(ctx, "en", time.Minute)
		assert.False(t, fetched)
		assert.Equal(t, "en#2", v)
	}
	clk.Advance(time.Minute)
	_, fetched, _ = c.refetch(ctx, "en", time.Minute)
	assert.True(t, fetched)
	assert.Equal(t, int64(3), f.calls.Load())
}

// A reader whose context ends stops waiting; the request goes on and its answer is kept
// for the next reader.
func TestCacheReaderCancelled(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	var calls atomic.Int64
	fetch := func(ctx context.Context, _ string) (string, error) {
		if calls.Add(1) == 1 {
			close(started)
		}
		<-release
		return "en markets", ctx.Err()
	}
	c := newCache(clocktest.NewFake(t0), 10, time.Hour, time.Minute, fetch)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := c.get(ctx, "en")
		done <- err
	}()
	<-started
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	close(release)
	v, err := c.get(context.Background(), "en")
	// The read finds the answer stored, or joins the request still storing it.
	require.NoError(t, err, "the request of the cancelled reader was lost")
	assert.Equal(t, "en markets", v)
	assert.Equal(t, int64(1), calls.Load())
}

// peek returns the value held for key, fresh or not, without fetching.
func (c *cache[K, V]) peek(key K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		if e := el.Value.(*entry[K, V]); e.ok {
			return e.val, true
		}
	}
	var zero V
	return zero, false
}
