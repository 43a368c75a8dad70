package recovery

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/feedkit/feedkit/internal/jsonfile"
)

// FileStore is a Store in one JSON file, read at the first call and rewritten whole on
// every save through a temporary file and a rename, so that a crash leaves either the old
// file or the new one. It is safe for concurrent use by one process; two processes must
// not share a file.
//
// A missing file is an empty store. A file the store cannot read whole (not JSON, of
// another version, holding a producer twice, with a state it does not know) is refused,
// naming the file and what is wrong, and never overwritten: the manager's Open fails and
// may be tried again once the file is repaired. The file is its owner's only (mode 0600):
// it is this process's state.
type FileStore struct {
	file    jsonfile.File
	mu      sync.Mutex
	records map[int]Record // nil until loaded
}

// NewFileStore returns a store in the file at path; the file need not exist yet, its
// directory must.
func NewFileStore(path string) *FileStore {
	return &FileStore{file: jsonfile.File{Path: path, Store: "recovery: file store", Version: 1}}
}

// fileFormat is the file's content: the format's version, and the records sorted by
// producer.
type fileFormat struct {
	jsonfile.Header
	Producers []Record `json:"producers"`
}

// Load implements Store.
func (s *FileStore) Load(context.Context) ([]Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.loadLocked(); err != nil {
		return nil, err
	}
	return slices.Collect(maps.Values(s.records)), nil
}

// loadLocked reads the file unless it was read already. A failed read is not remembered:
// the next call tries again, so that an operator can repair the file without a restart,
// and no Save overwrites a file that could not be read.
func (s *FileStore) loadLocked() error {
	if s.records != nil {
		return nil
	}
	var f fileFormat
	if _, err := s.file.Load(&f); err != nil {
		return err
	}
	records, err := jsonfile.Index("producers", "producer", f.Producers, func(r Record) int { return r.Producer })
	if err != nil {
		return s.file.Error(err)
	}
	s.records = records
	return nil
}

// Save implements Store. When the file cannot be written, the store is left as it was,
// so that what Load returns is what the file holds.
func (s *FileStore) Save(_ context.Context, r Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.loadLocked(); err != nil {
		return err
	}
	old, had := s.records[r.Producer]
	s.records[r.Producer] = r
	if err := s.writeLocked(); err != nil {
		if had {
			s.records[r.Producer] = old
		} else {
			delete(s.records, r.Producer)
		}
		return err
	}
	return nil
}

func (s *FileStore) writeLocked() error {
	sorted := slices.SortedFunc(maps.Values(s.records), func(a, b Record) int { return cmp.Compare(a.Producer, b.Producer) })
	return s.file.Save(&fileFormat{Producers: sorted})
}
