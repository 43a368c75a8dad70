package markets

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
)

// lockProbe is an Observer that reads the cache's Stats, which take the cache's lock,
// from within each call: it would deadlock if the cache told it with the lock held.
type lockProbe struct {
	mu                      sync.Mutex
	c                       *cache[string, string]
	hits, misses, evictions int64
}

func (o *lockProbe) CacheRead(name string, hit bool) {
	_ = o.c.stats()
	o.mu.Lock()
	defer o.mu.Unlock()
	if hit {
		o.hits++
	} else {
		o.misses++
	}
}

func (o *lockProbe) CacheEvicted(string) {
	_ = o.c.stats()
	o.mu.Lock()
	defer o.mu.Unlock()
	o.evictions++
}

// Concurrent readers that share one fetch are each told as a miss, a refetch is a miss
// too, and the cache's lock is not held while the observer is told.
func TestCacheTellsItsObserverOutsideItsLock(t *testing.T) {
	var f counter
	o := &lockProbe{}
	c := newCache(clocktest.NewFake(t0), 3, time.Hour, time.Minute, f.fetch).observed("profiles", o)
	o.c = c
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			_, err := c.get(ctx, fmt.Sprintf("k%d", i%8))
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	_, fetched, err := c.refetch(ctx, "k1", time.Minute)
	require.NoError(t, err)
	assert.True(t, fetched)
	st := c.stats()
	o.mu.Lock()
	defer o.mu.Unlock()
	assert.Equal(t, int64(40+1), st.Hits+st.Misses)
	assert.Equal(t, st.Hits, o.hits)
	assert.Equal(t, st.Misses, o.misses)
	assert.Equal(t, st.Evictions, o.evictions)
	assert.NotZero(t, o.evictions)
}
