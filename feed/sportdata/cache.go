package sportdata

import (
	"container/list"
	"context"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/feed"
)

// CacheStats counts what one cache did since the Provider was made.
type CacheStats struct {
	// Hits are reads answered from the cache: a fresh value, or a failure recent enough
	// to be answered again without asking the API.
	Hits int64 `json:"hits"`
	// Misses are reads that needed the API.
	Misses int64 `json:"misses"`
	// Fetches are the API requests made; fewer than Misses when concurrent reads of one
	// document shared a request.
	Fetches int64 `json:"fetches"`
	// Errors are the fetches that failed.
	Errors int64 `json:"errors"`
	// Evictions are entries dropped to keep the cache within its size.
	Evictions int64 `json:"evictions"`
	// Purged are entries dropped by a purge or a fixture change.
	Purged int64 `json:"purged"`
	// Imported are entries an Import added.
	Imported int64 `json:"imported"`
	// Entries is the number of entities held now.
	Entries int `json:"entries"`
}

// cache holds one kind of entity by id, each with the languages read: at most max
// entities, the least recently read dropped first, and at most maxLangs languages each.
// A language is fresh for ttl after it was read; a failed read is answered again for
// errTTL, so that a storm of reads of a failing document costs one request, and then
// asked for again. Concurrent reads of one document share one request.
type cache[V any] struct {
	name     string
	clock    clock.Clock
	max      int
	maxLangs int
	ttl      time.Duration
	errTTL   time.Duration
	fetch    func(ctx context.Context, id feed.URN, lang string) (V, error)
	merge    func(old, v V) V
	obs      Observer

	mu      sync.Mutex
	entries map[feed.URN]*list.Element // of *entry[V]
	lru     list.List                  // front: read most recently

	group singleflight.Group

	hits, misses, fetches, errors, evictions, purged, imported atomic.Int64
}

type entry[V any] struct {
	id feed.URN
	// val is replaced whole, never changed in place: a reader takes the pointer under
	// the lock and copies the value after, and a value is large (an event with its
	// competitors), so it is copied once per read, not once per call on the way out.
	val   *V
	langs []langAt   // the languages val holds, each with when it was read
	fails []langFail // the languages whose last read failed recently
}

type langAt struct {
	lang string
	at   time.Time
}

type langFail struct {
	lang string
	err  error
	at   time.Time
}

// get returns the entity id with lang among its languages, reading the document in lang
// when the cache has nothing fresh for it. The value is shared: the caller copies it.
func (c *cache[V]) get(ctx context.Context, id feed.URN, lang string) (*V, error) {
	if v, err, ok := c.cached(id, lang); ok {
		c.read(true)
		return v, err
	}
	c.read(false)
	return c.load(ctx, id, lang)
}

func (c *cache[V]) read(hit bool) {
	if hit {
		c.hits.Add(1)
	} else {
		c.misses.Add(1)
	}
	if c.obs != nil {
		c.obs.CacheRead(c.name, hit)
	}
}

// cached returns what the cache may answer for (id, lang) without asking the API.
func (c *cache[V]) cached(id feed.URN, lang string) (v *V, err error, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, found := c.entries[id]
	if !found {
		return v, nil, false
	}
	e := el.Value.(*entry[V])
	now := c.clock.Now()
	for _, f := range e.fails {
		if f.lang == lang && now.Sub(f.at) < c.errTTL {
			c.lru.MoveToFront(el)
			return v, f.err, true
		}
	}
	for _, l := range e.langs {
		if l.lang == lang && now.Sub(l.at) < c.ttl {
			c.lru.MoveToFront(el)
			return e.val, nil, true
		}
	}
	return v, nil, false
}

// load reads (id, lang) once for all concurrent callers and stores the result. The read
// runs on a context that the first caller's cancellation does not end (the others still
// want the answer); each caller stops waiting when its own context ends.
func (c *cache[V]) load(ctx context.Context, id feed.URN, lang string) (*V, error) {
	type result struct {
		v   *V
		err error
	}
	ch := c.group.DoChan(id.String()+" "+lang, func() (any, error) {
		if v, err, ok := c.cached(id, lang); ok {
			return result{v, err}, nil
		}
		c.fetches.Add(1)
		v, err := c.fetch(context.WithoutCancel(ctx), id, lang)
		if err != nil {
			c.errors.Add(1)
		}
		held, evicted := c.store(id, lang, v, err)
		if c.obs != nil {
			for range evicted {
				c.obs.CacheEvicted(c.name)
			}
		}
		return result{held, err}, nil
	})
	select {
	case r := <-ch:
		res := r.Val.(result)
		return res.v, res.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// store merges what a read of lang gave into the entity and returns the merged value,
// and how many entries it evicted to make room.
func (c *cache[V]) store(id feed.URN, lang string, v V, err error) (_ *V, evicted int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	e, evicted := c.entryLocked(id)
	e.fails = dropLang(e.fails, lang, func(f langFail) string { return f.lang })
	if err != nil {
		e.fails = append(e.fails, langFail{lang, err, now})
		return nil, evicted
	}
	c.putLocked(e, lang, v, now)
	return e.val, evicted
}

// putLocked merges v, read in lang at at, into e. An entity that would hold more than
// maxLangs languages starts again from v alone: the bound holds without unpicking a
// language from merged names.
func (c *cache[V]) putLocked(e *entry[V], lang string, v V, at time.Time) {
	e.langs = dropLang(e.langs, lang, func(l langAt) string { return l.lang })
	if len(e.langs) == 0 || len(e.langs) >= c.maxLangs {
		e.val, e.langs = &v, e.langs[:0]
	} else {
		m := c.merge(*e.val, v)
		e.val = &m
	}
	e.langs = append(e.langs, langAt{lang, at})
}

// entryLocked returns id's entry, adding it (and evicting beyond max) when missing.
func (c *cache[V]) entryLocked(id feed.URN) (*entry[V], int) {
	if el, ok := c.entries[id]; ok {
		c.lru.MoveToFront(el)
		return el.Value.(*entry[V]), 0
	}
	e := &entry[V]{id: id}
	c.entries[id] = c.lru.PushFront(e)
	n := 0
	for c.lru.Len() > c.max {
		el := c.lru.Back()
		c.lru.Remove(el)
		delete(c.entries, el.Value.(*entry[V]).id)
		c.evictions.Add(1)
		n++
	}
	return e, n
}

func dropLang[T any](s []T, lang string, of func(T) string) []T {
	out := s[:0]
	for _, x := range s {
		if of(x) != lang {
			out = append(out, x)
		}
	}
	return out
}

// purge drops id's entity and reports whether it was held.
func (c *cache[V]) purge(id feed.URN) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[id]
	if ok {
		c.lru.Remove(el)
		delete(c.entries, id)
		c.purged.Add(1)
	}
	return ok
}

// purgeReadBefore drops the entities none of whose languages was read at or after t,
// and returns how many.
func (c *cache[V]) purgeReadBefore(t time.Time) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for id, el := range c.entries {
		e := el.Value.(*entry[V])
		if newest(e.langs).Before(t) {
			c.lru.Remove(el)
			delete(c.entries, id)
			n++
		}
	}
	c.purged.Add(int64(n))
	return n
}

func newest(langs []langAt) time.Time {
	var t time.Time
	for _, l := range langs {
		if l.at.After(t) {
			t = l.at
		}
	}
	return t
}

func (c *cache[V]) stats() CacheStats {
	c.mu.Lock()
	n := c.lru.Len()
	c.mu.Unlock()
	return CacheStats{Hits: c.hits.Load(), Misses: c.misses.Load(), Fetches: c.fetches.Load(),
		Errors: c.errors.Load(), Evictions: c.evictions.Load(), Purged: c.purged.Load(),
		Imported: c.imported.Load(), Entries: n}
}
