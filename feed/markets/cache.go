package markets

import (
	"container/list"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/feedkit/feedkit/clock"
)

// CacheStats counts what one cache did since the Names was made.
type CacheStats struct {
	// Hits are reads answered from the cache: a fresh value, or a failure recent enough
	// to be answered again without asking the API.
	Hits int64 `json:"hits"`
	// Misses are reads that needed the API: nothing cached, or a value due for refresh.
	Misses int64 `json:"misses"`
	// Fetches are the API requests made; fewer than Misses when concurrent reads of one
	// key shared a request.
	Fetches int64 `json:"fetches"`
	// Errors are the fetches that failed.
	Errors int64 `json:"errors"`
	// Evictions are entries dropped to keep the cache within its size.
	Evictions int64 `json:"evictions"`
	// Entries is the number of entries held now.
	Entries int `json:"entries"`
}

// cache holds what the API answered, by key: at most max entries, the least recently
// read dropped first. A value is fresh for ttl; a failure is answered again for errTTL,
// so that a storm of reads of a failing key does not become a storm of requests, and then
// asked for again. Concurrent reads of a key that needs fetching share one request.
//
// A value past its ttl is fetched again on the next read; if that fails, the old value is
// still served (a description that is a little old names markets better than none) and
// the refresh is tried again after errTTL.
type cache[K comparable, V any] struct {
	clock  clock.Clock
	max    int
	ttl    time.Duration
	errTTL time.Duration
	// fetch asks the API for a key's value. It is the cache's, not each read's, so that
	// a read that hits makes no closure.
	fetch func(context.Context, K) (V, error)
	// name and obs: the observer, if any, is told of the reads and evictions of the
	// cache by this name (see observed).
	name string
	obs  Observer

	mu      sync.Mutex
	entries map[K]*list.Element // of *entry[K, V]
	lru     list.List           // front: read most recently

	group singleflight.Group

	hits, misses, fetches, errors, evictions atomic.Int64
}

type entry[K comparable, V any] struct {
	key      K
	val      V
	ok       bool      // val holds a fetched value
	err      error     // the last fetch's failure, nil after a success
	at       time.Time // when val was fetched
	failedAt time.Time // when err happened
	forcedAt time.Time // when a refetch was last forced (see refetch)
}

func newCache[K comparable, V any](c clock.Clock, max int, ttl, errTTL time.Duration, fetch func(context.Context, K) (V, error)) *cache[K, V] {
	return &cache[K, V]{clock: c, max: max, ttl: ttl, errTTL: errTTL, fetch: fetch, entries: make(map[K]*list.Element)}
}

// observed names the cache and gives it the observer to tell of its reads and
// evictions; nil tells no one.
func (c *cache[K, V]) observed(name string, o Observer) *cache[K, V] {
	c.name, c.obs = name, o
	return c
}

// read counts a read as a hit or a miss and tells the observer.
func (c *cache[K, V]) read(hit bool) {
	if hit {
		c.hits.Add(1)
	} else {
		c.misses.Add(1)
	}
	if c.obs != nil {
		c.obs.CacheRead(c.name, hit)
	}
}

// get returns the value of key, fetching it when the cache has nothing fresh.
func (c *cache[K, V]) get(ctx context.Context, key K) (V, error) {
	if r, ok := c.cached(key); ok {
		c.read(true)
		return r.val, r.err
	}
	c.read(false)
	r := c.load(ctx, key, false)
	if r.held {
		return r.val, nil // a failed refresh: the old value goes on being used
	}
	return r.val, r.err
}

// cached returns what the cache may answer for key without asking the API: a fresh
// value, or a recent failure (with the old value, if there is one, in its place).
func (c *cache[K, V]) cached(key K) (result[V], bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return result[V]{}, false
	}
	e := el.Value.(*entry[K, V])
	now := c.clock.Now()
	c.lru.MoveToFront(el)
	switch {
	case e.err != nil && now.Sub(e.failedAt) < c.errTTL:
		if e.ok {
			return result[V]{val: e.val}, true
		}
		return result[V]{err: e.err}, true
	case e.ok && now.Sub(e.at) < c.ttl:
		return result[V]{val: e.val}, true
	}
	return result[V]{}, false
}

// refetch fetches key again, whatever the cache holds, unless a refetch of key was forced
// less than minGap ago; it reports whether it fetched, and the fetch's error. It is how a
// name that the cached description lacks asks the API once, and not once per message.
func (c *cache[K, V]) refetch(ctx context.Context, key K, minGap time.Duration) (V, bool, error) {
	c.mu.Lock()
	now := c.clock.Now()
	if el, ok := c.entries[key]; ok {
		e := el.Value.(*entry[K, V])
		if !e.forcedAt.IsZero() && now.Sub(e.forcedAt) < minGap {
			c.mu.Unlock()
			return e.val, false, nil
		}
		e.forcedAt = now
	}
	c.mu.Unlock()
	c.read(false)
	r := c.load(ctx, key, true)
	return r.val, true, r.err
}

// result is what a fetch left in the cache: the value readers get, whether it is an old
// value held after the fetch failed, and the fetch's error.
type result[V any] struct {
	val  V
	held bool
	err  error
}

// load fetches key, once for all concurrent callers (the key's text form names the
// request; only a miss pays for making it), and stores the result. Unless force, a value
// that became fresh since the caller missed is taken as it is. The fetch
// runs on a context that the first caller's cancellation does not end (the others still
// want the answer); each caller stops waiting when its own context ends.
func (c *cache[K, V]) load(ctx context.Context, key K, force bool) result[V] {
	ch := c.group.DoChan(fmt.Sprint(key), func() (any, error) {
		// A reader that missed just as another's request stored its answer finds it
		// here, instead of asking again.
		if r, ok := c.cached(key); ok && !force {
			return r, nil
		}
		c.fetches.Add(1)
		v, err := c.fetch(context.WithoutCancel(ctx), key)
		if err != nil {
			c.errors.Add(1)
		}
		r, evicted := c.store(key, v, err)
		if c.obs != nil {
			for range evicted { // told once the lock is let go
				c.obs.CacheEvicted(c.name)
			}
		}
		return r, nil
	})
	select {
	case r := <-ch:
		return r.Val.(result[V])
	case <-ctx.Done():
		return result[V]{err: ctx.Err()}
	}
}

// store keeps a fetch's result and returns what readers get, and how many entries it
// evicted to make room.
func (c *cache[K, V]) store(key K, v V, err error) (_ result[V], evicted int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	var e *entry[K, V]
	if el, ok := c.entries[key]; ok {
		e = el.Value.(*entry[K, V])
		c.lru.MoveToFront(el)
	} else {
		e = &entry[K, V]{key: key}
		c.entries[key] = c.lru.PushFront(e)
		evicted = c.evictLocked()
	}
	if err != nil {
		e.err, e.failedAt = err, now
		return result[V]{val: e.val, held: e.ok, err: err}, evicted
	}
	e.val, e.ok, e.err, e.at = v, true, nil, now
	return result[V]{val: v}, evicted
}

// evictLocked drops the least recently read entries beyond max and returns how many.
func (c *cache[K, V]) evictLocked() (n int) {
	for c.lru.Len() > c.max {
		el := c.lru.Back()
		c.lru.Remove(el)
		delete(c.entries, el.Value.(*entry[K, V]).key)
		c.evictions.Add(1)
		n++
	}
	return n
}

func (c *cache[K, V]) stats() CacheStats {
	c.mu.Lock()
	n := c.lru.Len()
	c.mu.Unlock()
	return CacheStats{Hits: c.hits.Load(), Misses: c.misses.Load(), Fetches: c.fetches.Load(),
		Errors: c.errors.Load(), Evictions: c.evictions.Load(), Entries: n}
}
