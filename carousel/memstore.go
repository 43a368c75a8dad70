package carousel

import (
	"context"
	"fmt"
	"sync"
)

// MemoryStore is a MetadataStore that lives as long as the process: metadata survives a
// scheduler being shut down and built again, not a restart. It is safe for concurrent use,
// and its zero value is ready to use.
type MemoryStore struct {
	mu     sync.RWMutex
	cycles map[string]savedMetadata
}

// savedMetadata is a cycle's metadata with the generation that saved it.
type savedMetadata struct {
	m   CycleMetadata
	gen Generation
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{cycles: make(map[string]savedMetadata)}
}

// Load implements MetadataStore.
func (s *MemoryStore) Load(_ context.Context, id string) (CycleMetadata, bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	sm, ok := s.cycles[id]
	// A clone, so that the caller's changes to States do not reach the stored metadata.
	return sm.m.clone(), ok, nil
}

// Save implements MetadataStore.
func (s *MemoryStore) Save(_ context.Context, m CycleMetadata, gen Generation) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cycles == nil {
		s.cycles = make(map[string]savedMetadata)
	}
	if err := fence(m.CycleID, s.cycles[m.CycleID].gen, gen); err != nil {
		return err
	}
	s.cycles[m.CycleID] = savedMetadata{m.clone(), gen}
	return nil
}

// Delete implements MetadataStore.
func (s *MemoryStore) Delete(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.cycles, id)
	return nil
}

// fence returns the error of a save of cycle id by generation gen, when the store holds
// the cycle as saved by generation saved, or nil if the save may go ahead.
func fence(id string, saved, gen Generation) error {
	if gen < saved {
		return fmt.Errorf("%w: cycle %s saved by generation %d, this save is of generation %d", ErrFenced, id, saved, gen)
	}
	return nil
}
