package recovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"sync"

	"github.com/feedkit/feedkit/internal/atomicfile"
)

// Store persists producer records, so that a restarted process recovers each producer
// from the right time. The manager loads every record when it opens and saves a record
// after each change.
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

// FileStore is a Store in one JSON file, rewritten whole on every save through a
// temporary file and a rename, so that a crash leaves either the old file or the new one.
type FileStore struct {
	path    string
	mu      sync.Mutex
	records map[int]Record // nil until loaded
}

// NewFileStore returns a store in the file at path; the file need not exist yet, its
// directory must.
func NewFileStore(path string) *FileStore { return &FileStore{path: path} }

// fileFormat is the file's content: a version for later changes, and the records.
type fileFormat struct {
	Version   int      `json:"version"`
	Producers []Record `json:"producers"`
}

// Load implements Store. A missing file is an empty store.
func (s *FileStore) Load(context.Context) ([]Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.loadLocked(); err != nil {
		return nil, err
	}
	return slices.Collect(maps.Values(s.records)), nil
}

func (s *FileStore) loadLocked() error {
	if s.records != nil {
		return nil
	}
	b, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		s.records = make(map[int]Record)
		return nil
	}
	if err != nil {
		return fmt.Errorf("recovery: file store: %w", err)
	}
	var f fileFormat
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("recovery: file store %s: %w", s.path, err)
	}
	if f.Version != 1 {
		return fmt.Errorf("recovery: file store %s: version %d, want 1", s.path, f.Version)
	}
	s.records = make(map[int]Record, len(f.Producers))
	for _, r := range f.Producers {
		s.records[r.Producer] = r
	}
	return nil
}

// Save implements Store.
func (s *FileStore) Save(_ context.Context, r Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.loadLocked(); err != nil {
		return err
	}
	old, had := s.records[r.Producer]
	s.records[r.Producer] = r
	if err := s.writeLocked(); err != nil {
		if had { // keep memory and file in agreement
			s.records[r.Producer] = old
		} else {
			delete(s.records, r.Producer)
		}
		return err
	}
	return nil
}

func (s *FileStore) writeLocked() error {
	f := fileFormat{Version: 1, Producers: slices.SortedFunc(maps.Values(s.records), func(a, b Record) int { return a.Producer - b.Producer })}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("recovery: file store: %w", err)
	}
	// 0600, as the file has always been created: the records concern this process only.
	if err := atomicfile.WriteFile(s.path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("recovery: file store: %w", err)
	}
	return nil
}
