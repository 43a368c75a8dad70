package changes

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/feedkit/feedkit/internal/jsonfile"
)

// FileStore is a Store in one JSON file, read at the first call and rewritten whole on
// every save through a temporary file and a rename, so that a crash leaves either the
// old file or the new one. It is safe for concurrent use by one process; two processes
// must not share a file.
//
// A missing file is an empty store. A file the store cannot read whole (not JSON, of
// another version, holding a kind twice or one it does not know, an event id that does
// not parse) is refused, naming the file and what is wrong, and never overwritten: the
// manager reports it and tries again at its next poll, delivering nothing meanwhile,
// so that the file can be repaired without a restart. The file is its owner's only
// (mode 0600): it is this process's state.
type FileStore struct {
	file    jsonfile.File
	mu      sync.Mutex
	cursors map[Kind]Cursor // nil until loaded
}

// NewFileStore returns a store in the file at path; the file need not exist yet, its
// directory must.
func NewFileStore(path string) *FileStore {
	return &FileStore{file: jsonfile.File{Path: path, Store: "changes: file store", Version: 1}}
}

// fileFormat is the file's content: the format's version, and the cursors in the order
// of their kinds.
type fileFormat struct {
	jsonfile.Header
	Cursors []Cursor `json:"cursors"`
}

// Load implements Store.
func (s *FileStore) Load(context.Context) ([]Cursor, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.loadLocked(); err != nil {
		return nil, err
	}
	out := make([]Cursor, 0, len(s.cursors))
	for _, c := range s.cursors {
		out = append(out, c.clone())
	}
	return out, nil
}

// loadLocked reads the file unless it was read already. A failed read is not
// remembered: the next call tries again, and no Save overwrites a file that could not
// be read.
func (s *FileStore) loadLocked() error {
	if s.cursors != nil {
		return nil
	}
	var f fileFormat
	if _, err := s.file.Load(&f); err != nil {
		return err
	}
	for i, c := range f.Cursors {
		if !c.Kind.valid() {
			return s.file.Error(fmt.Errorf("cursors[%d].kind is missing", i))
		}
	}
	cursors, err := jsonfile.Index("cursors", "kind", f.Cursors, func(c Cursor) Kind { return c.Kind })
	if err != nil {
		return s.file.Error(err)
	}
	s.cursors = cursors
	return nil
}

// Save implements Store. When the file cannot be written, the store is left as it was,
// so that what Load returns is what the file holds.
func (s *FileStore) Save(_ context.Context, c Cursor) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.loadLocked(); err != nil {
		return err
	}
	old, had := s.cursors[c.Kind]
	s.cursors[c.Kind] = c.clone()
	if err := s.writeLocked(); err != nil {
		if had {
			s.cursors[c.Kind] = old
		} else {
			delete(s.cursors, c.Kind)
		}
		return err
	}
	return nil
}

func (s *FileStore) writeLocked() error {
	f := fileFormat{Cursors: make([]Cursor, 0, len(s.cursors))}
	for _, k := range slices.Sorted(maps.Keys(s.cursors)) {
		f.Cursors = append(f.Cursors, s.cursors[k])
	}
	return s.file.Save(&f)
}
