package changes

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// Cursor is how far one list has been delivered: every change listed before At, and
// the changes at At of the Events, went to the listener. Times tie (the API writes them
// to the second), so the time alone cannot tell a change at At that was delivered from
// one listed later at the same second; the events can.
type Cursor struct {
	Kind Kind `json:"kind"`
	// At is the update_time of the latest change delivered, in UTC to the microsecond.
	At time.Time `json:"at"`
	// Events are the events whose change at At was delivered, in the order of their ids.
	Events []feed.URN `json:"events"`
}

// Store keeps each list's Cursor across restarts. The manager loads every cursor before
// its first poll and saves a list's cursor after each change it delivers. A Store is
// used by one manager at a time.
type Store interface {
	// Load returns every cursor saved, at most one per kind, in any order.
	Load(ctx context.Context) ([]Cursor, error)
	// Save creates or replaces the cursor of c.Kind, its events included.
	Save(ctx context.Context, c Cursor) error
}

// MemoryStore is a Store that lives as long as the process: cursors survive a manager
// closed and another made on the store, not a restart, after which every change the
// API still lists is delivered again. Its zero value is ready to use.
type MemoryStore struct {
	mu      sync.Mutex
	cursors map[Kind]Cursor
}

// NewMemoryStore returns an empty in-memory store.
func NewMemoryStore() *MemoryStore { return &MemoryStore{} }

// Load implements Store.
func (s *MemoryStore) Load(context.Context) ([]Cursor, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Cursor, 0, len(s.cursors))
	for _, c := range s.cursors {
		out = append(out, c.clone())
	}
	return out, nil
}

// Save implements Store.
func (s *MemoryStore) Save(_ context.Context, c Cursor) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cursors == nil {
		s.cursors = make(map[Kind]Cursor)
	}
	s.cursors[c.Kind] = c.clone()
	return nil
}

// clone returns c with events of its own, so that the caller's slice and the store's
// do not alias.
func (c Cursor) clone() Cursor {
	c.Events = slices.Clone(c.Events)
	return c
}
