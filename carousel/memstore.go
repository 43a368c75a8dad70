package carousel

import (
	"context"
	"sync"
)

// MemoryStore is a MetadataStore that lives as long as the process: metadata survives a
// scheduler being shut down and built again, not a restart. It is safe for concurrent use,
// and its zero value is ready to use.
type MemoryStore struct {
	mu     sync.RWMutex
	cycles map[string]CycleMetadata
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{cycles: make(map[string]CycleMetadata)}
}

// Load implements MetadataStore.
func (s *MemoryStore) Load(_ context.Context, id string) (CycleMetadata, bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	m, ok := s.cycles[id]
	// A clone, so that the caller's changes to States do not reach the stored metadata.
	return m.clone(), ok, nil
}

// Save implements MetadataStore.
func (s *MemoryStore) Save(_ context.Context, m CycleMetadata) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cycles == nil {
		s.cycles = make(map[string]CycleMetadata)
	}
	s.cycles[m.CycleID] = m.clone()
	return nil
}

// Delete implements MetadataStore.
func (s *MemoryStore) Delete(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.cycles, id)
	return nil
}
