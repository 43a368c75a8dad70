package carousel

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"
)

// MemorySource is a Source over collections held in memory, kept sorted by id and by
// modification time so that List is a binary search and a copy. It is safe for
// concurrent use; Put and Remove may be called while cycles list.
type MemorySource struct {
	mu          sync.RWMutex
	collections map[string]*memCollection
}

type memCollection struct {
	byID       []Item // sorted by ID
	byModified []Item // sorted by Modified, then ID
}

// NewMemorySource returns an empty MemorySource.
func NewMemorySource() *MemorySource {
	return &MemorySource{collections: make(map[string]*memCollection)}
}

// Put adds items to collection, replacing those with the same id. An item without an id
// is refused, and then nothing is added.
func (s *MemorySource) Put(collection string, items ...Item) error {
	for i, it := range items {
		if it.ID == "" {
			return fmt.Errorf("carousel: MemorySource.Put: items[%d] has no ID", i)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.collections[collection]
	if c == nil {
		c = &memCollection{}
		s.collections[collection] = c
	}
	for _, it := range items {
		c.remove(it.ID)
		c.byID = insertSorted(c.byID, it, Query{}.Less)
		c.byModified = insertSorted(c.byModified, it, windowOrder.Less)
	}
	return nil
}

// Remove deletes the items with the given ids from collection; unknown ids are ignored.
func (s *MemorySource) Remove(collection string, ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.collections[collection]; c != nil {
		for _, id := range ids {
			c.remove(id)
		}
	}
}

// windowOrder is any windowed Query: its Less orders by Modified, then ID.
var windowOrder = Query{End: time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)}

func insertSorted(s []Item, it Item, less func(a, b Item) bool) []Item {
	i := sort.Search(len(s), func(i int) bool { return !less(s[i], it) })
	return slices.Insert(s, i, it)
}

func (c *memCollection) remove(id string) {
	i, found := slices.BinarySearchFunc(c.byID, id, func(it Item, id string) int {
		switch {
		case it.ID < id:
			return -1
		case it.ID > id:
			return 1
		}
		return 0
	})
	if !found {
		return
	}
	old := c.byID[i]
	c.byID = slices.Delete(c.byID, i, i+1)
	j := sort.Search(len(c.byModified), func(j int) bool { return !windowOrder.Less(c.byModified[j], old) })
	c.byModified = slices.Delete(c.byModified, j, j+1)
}

// Count implements Source.
func (s *MemorySource) Count(ctx context.Context, q Query) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	lo, hi := s.span(q)
	return hi - lo, nil
}

// List implements Source.
func (s *MemorySource) List(ctx context.Context, q Query, after Item, limit int) ([]Item, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, errors.New("carousel: MemorySource.List: limit must be positive")
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	lo, hi := s.span(q)
	if c := s.collections[q.Collection]; c != nil && (after != Item{}) {
		sorted := c.byID
		if q.Windowed() {
			sorted = c.byModified
		}
		lo = max(lo, sort.Search(len(sorted), func(i int) bool { return q.Less(after, sorted[i]) }))
	}
	if lo >= hi {
		return nil, nil
	}
	sorted := s.collections[q.Collection].byID
	if q.Windowed() {
		sorted = s.collections[q.Collection].byModified
	}
	return slices.Clone(sorted[lo:min(hi, lo+limit)]), nil
}

// span returns the range of q's items in the slice List reads: all of byID, or the
// window's part of byModified.
func (s *MemorySource) span(q Query) (lo, hi int) {
	c := s.collections[q.Collection]
	if c == nil {
		return 0, 0
	}
	if !q.Windowed() {
		return 0, len(c.byID)
	}
	lo = sort.Search(len(c.byModified), func(i int) bool { return !c.byModified[i].Modified.Before(q.Start) })
	hi = sort.Search(len(c.byModified), func(i int) bool { return !c.byModified[i].Modified.Before(q.End) })
	return lo, max(lo, hi)
}
