package recovery

import (
	"context"
	"errors"
	"fmt"
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

// ErrFenced is returned by a FencedStore's SaveGeneration when a later generation has
// saved the record already: the process saving it is no longer the active one.
var ErrFenced = errors.New("recovery: a later generation saved the record: this process is no longer the active one")

// FencedStore is a Store whose records remember the generation that saved them (a
// lease's, as carousel.Generation counts them) and refuse a save of an earlier one, so
// that a process that lost its lease, and does not know it yet, cannot overwrite the
// recovery point of the one that took over. group.Ingress uses it when its
// Recovery.Store has it: MemoryStore and recovery/pgstore's Store do.
type FencedStore interface {
	Store
	// SaveGeneration saves r as Save does, marked with gen, unless the record was last
	// saved by a later generation: then it saves nothing and returns ErrFenced. Save is
	// SaveGeneration with generation 0.
	SaveGeneration(ctx context.Context, r Record, gen int64) error
}

// MemoryStore is a Store that lives as long as the process: records survive a manager
// being closed and opened again, not a restart. Its zero value is ready to use.
type MemoryStore struct {
	mu      sync.Mutex
	records map[int]Record
	gens    map[int]int64 // the generation that last saved each record
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
func (s *MemoryStore) Save(ctx context.Context, r Record) error {
	return s.SaveGeneration(ctx, r, 0)
}

// SaveGeneration implements FencedStore.
func (s *MemoryStore) SaveGeneration(_ context.Context, r Record, gen int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.records == nil {
		s.records, s.gens = make(map[int]Record), make(map[int]int64)
	}
	if last, ok := s.gens[r.Producer]; ok && last > gen {
		return fmt.Errorf("%w (producer %d: generation %d, saving %d)", ErrFenced, r.Producer, last, gen)
	}
	s.records[r.Producer], s.gens[r.Producer] = r, gen
	return nil
}
