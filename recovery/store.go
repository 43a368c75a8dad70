package recovery

import (
	"context"
	"maps"
	"slices"
	"sync"
)

// Store persists producer records, so that a restarted process recovers each producer
// from the right time. The manager loads every record when it opens, saves a record when
// the producer's state changes, a moving recovery point at most once per check interval,
// and at Close every record that changed since it was last saved.
type Store interface {
	// Load returns every record saved, in any order.
	Load(ctx context.Context) ([]Record, error)
	// Save creates or replaces the record of r.Producer.
	Save(ctx context.Context, r Record) error
}

// MemoryStore is a Store that lives as long as the process: records survive a manager
// being closed and opened again, not a restart. Its zero value is ready to use.
type MemoryStore struct {
	mu      sync.Mutex
	records map[int]Record
}

// NewMemoryStore returns an empty in-memory store.
func NewMemoryStore() *MemoryStore { return &MemoryStore{} }

// Load implements Store.
func (s *MemoryStore) Load(context.Context) ([]Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Collect(maps.Values(s.records)), nil
}

// Save implements Store.
func (s *MemoryStore) Save(_ context.Context, r Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.records == nil {
		s.records = make(map[int]Record)
	}
	s.records[r.Producer] = r
	return nil
}
