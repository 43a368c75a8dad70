package carousel

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/feedkit/feedkit/internal/jsonfile"
)

// FileStore is a MetadataStore in one JSON file holding every cycle's metadata. The file
// is read once, at the first call, and rewritten whole on every Save and Delete through a
// temporary file and a rename, so that a crash leaves either the old file or the new one.
// It is safe for concurrent use by one process; two processes must not share a file.
//
// A file the store cannot read whole (not JSON, of another version, holding a cycle twice,
// with a value it cannot decode) is refused, naming the file and what is wrong, and never
// overwritten. The file is its owner's only (mode 0600): it is this process's state.
//
// The file keeps, beside each cycle's metadata, the generation that saved it (in a map
// "generations" of its own, which a file written before fencing lacks: its cycles read
// as saved by generation 0).
type FileStore struct {
	file   jsonfile.File
	mu     sync.Mutex
	cycles map[string]CycleMetadata // nil until loaded
	gens   map[string]Generation    // the generation that saved each cycle; absent is 0
}

// NewFileStore returns a store in the file at path. The file need not exist yet (a missing
// file is an empty store); its directory must, by the first Save.
func NewFileStore(path string) *FileStore {
	return &FileStore{file: jsonfile.File{Path: path, Store: "carousel: file store", Version: 1}}
}

// fileFormat is the file's content: the format's version, and the cycles sorted by id so
// that the file diffs well and reads the same on every write. CycleMetadata reads its
// saved config without validating it, so one cycle saved under rules that have changed
// does not make the file unreadable.
type fileFormat struct {
	jsonfile.Header
	Cycles      []json.RawMessage     `json:"cycles"`
	Generations map[string]Generation `json:"generations,omitempty"`
}

// savedFormat is fileFormat as written: the cycles encoded in place.
type savedFormat struct {
	jsonfile.Header
	Cycles      []CycleMetadata       `json:"cycles"`
	Generations map[string]Generation `json:"generations,omitempty"`
}

// Load implements MetadataStore.
func (s *FileStore) Load(_ context.Context, id string) (CycleMetadata, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.loadLocked(); err != nil {
		return CycleMetadata{}, false, err
	}
	m, ok := s.cycles[id]
	return m.clone(), ok, nil
}

// Save implements MetadataStore. When the file cannot be written, the store is left as it
// was, so that what Load returns is what the file holds.
func (s *FileStore) Save(_ context.Context, m CycleMetadata, gen Generation) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.loadLocked(); err != nil {
		return err
	}
	oldGen := s.gens[m.CycleID]
	if err := fence(m.CycleID, oldGen, gen); err != nil {
		return err
	}
	old, had := s.cycles[m.CycleID]
	s.cycles[m.CycleID], s.gens[m.CycleID] = m.clone(), gen
	if err := s.writeLocked(); err != nil {
		if had {
			s.cycles[m.CycleID], s.gens[m.CycleID] = old, oldGen
		} else {
			delete(s.cycles, m.CycleID)
			delete(s.gens, m.CycleID)
		}
		return err
	}
	return nil
}

// Delete implements MetadataStore. Deleting a cycle the file does not hold does not write.
func (s *FileStore) Delete(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.loadLocked(); err != nil {
		return err
	}
	old, had := s.cycles[id]
	if !had {
		return nil
	}
	oldGen := s.gens[id]
	delete(s.cycles, id)
	delete(s.gens, id)
	if err := s.writeLocked(); err != nil {
		s.cycles[id], s.gens[id] = old, oldGen
		return err
	}
	return nil
}

// loadLocked reads the file unless it was read already. A failed read is not remembered:
// the next call tries again, so that an operator can repair the file without a restart,
// and no Save overwrites a file that could not be read.
func (s *FileStore) loadLocked() error {
	if s.cycles != nil {
		return nil
	}
	var f fileFormat
	if _, err := s.file.Load(&f); err != nil {
		return err
	}
	list := make([]CycleMetadata, len(f.Cycles))
	for i, raw := range f.Cycles {
		if err := json.Unmarshal(raw, &list[i]); err != nil {
			return s.file.Error(fmt.Errorf("cycles[%d]: %w", i, err))
		}
	}
	cycles, err := jsonfile.Index("cycles", "cycleId", list, func(m CycleMetadata) string { return m.CycleID })
	if err != nil {
		return s.file.Error(err)
	}
	gens := make(map[string]Generation, len(f.Generations))
	for id, g := range f.Generations {
		if _, ok := cycles[id]; !ok {
			return s.file.Error(fmt.Errorf("generations[%q]: no such cycle in the file", id))
		}
		gens[id] = g
	}
	s.cycles, s.gens = cycles, gens
	return nil
}

func (s *FileStore) writeLocked() error {
	sorted := slices.SortedFunc(maps.Values(s.cycles), func(a, b CycleMetadata) int {
		return strings.Compare(a.CycleID, b.CycleID)
	})
	gens := make(map[string]Generation, len(s.gens))
	for id, g := range s.gens {
		if g != 0 {
			gens[id] = g
		}
	}
	return s.file.Save(&savedFormat{Cycles: sorted, Generations: gens})
}
