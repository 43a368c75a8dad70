package jsonfile_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/carousel"
	"github.com/feedkit/feedkit/recovery"
)

// fileStore is what these tests ask of each file store built on this package: save the
// entry of a key, and say whether it holds one.
type fileStore interface {
	save(key int) error
	has(key int) (bool, error)
}

// stores are the file stores built on this package, held here to one behaviour: what
// each store's own tests check beyond it is its own.
var stores = []struct {
	name  string // as its errors name it
	empty string // a file of its format with nothing in it
	dup   string // a file holding one key twice
	// dupErr is what the error says of dup.
	dupErr string
	open   func(path string) fileStore
}{
	{
		name: "recovery: file store", empty: `{"version":1,"producers":[]}`,
		dup:    `{"version":1,"producers":[{"producer":7,"state":"healthy"},{"producer":7,"state":"disconnected"}]}`,
		dupErr: `producers[1].producer 7 appears twice`,
		open:   func(path string) fileStore { return recoveryStore{recovery.NewFileStore(path)} },
	},
	{
		name: "carousel: file store", empty: `{"version":1,"cycles":[]}`,
		dup:    `{"version":1,"cycles":[{"cycleId":"7"},{"cycleId":"7"}]}`,
		dupErr: `cycles[1].cycleId "7" appears twice`,
		open:   func(path string) fileStore { return carouselStore{carousel.NewFileStore(path)} },
	},
}

type recoveryStore struct{ s *recovery.FileStore }

func (r recoveryStore) save(key int) error {
	return r.s.Save(context.Background(), recovery.Record{Producer: key, State: recovery.Healthy})
}

func (r recoveryStore) has(key int) (bool, error) {
	records, err := r.s.Load(context.Background())
	return slices.ContainsFunc(records, func(rec recovery.Record) bool { return rec.Producer == key }), err
}

type carouselStore struct{ s *carousel.FileStore }

func (c carouselStore) save(key int) error {
	return c.s.Save(context.Background(), carousel.CycleMetadata{CycleID: strconv.Itoa(key)}, 0)
}

func (c carouselStore) has(key int) (bool, error) {
	_, ok, err := c.s.Load(context.Background(), strconv.Itoa(key))
	return ok, err
}

// A missing file is an empty store, and reading it writes nothing.
func TestStoresMissingFileIsEmpty(t *testing.T) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.json")
			ok, err := st.open(path).has(1)
			require.NoError(t, err)
			assert.False(t, ok)
			_, err = os.Stat(path)
			assert.ErrorIs(t, err, os.ErrNotExist)
		})
	}
}

// A file a store cannot read whole is refused, naming the store, the file and what is
// wrong; it is never overwritten; once repaired, the same store reads it.
func TestStoresRefuseBadFiles(t *testing.T) {
	for _, st := range stores {
		cases := map[string]struct{ content, want string }{
			"not JSON":      {st.empty[:len(st.empty)-2], "unexpected end of JSON input"},
			"empty":         {``, "unexpected end of JSON input"},
			"no version":    {`{}`, "version 0, want 1"},
			"later version": {`{"version":2}`, "version 2, want 1"},
			"key twice":     {st.dup, st.dupErr},
		}
		for name, c := range cases {
			t.Run(st.name+"/"+name, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "state.json")
				require.NoError(t, os.WriteFile(path, []byte(c.content), 0o600))
				s := st.open(path)

				_, err := s.has(1)
				require.Error(t, err)
				assert.Contains(t, err.Error(), st.name+" "+path+": ")
				assert.Contains(t, err.Error(), c.want)

				require.Error(t, s.save(1), "a store must not overwrite a file it could not read")
				b, err := os.ReadFile(path)
				require.NoError(t, err)
				assert.Equal(t, c.content, string(b))

				require.NoError(t, os.WriteFile(path, []byte(st.empty), 0o600))
				ok, err := s.has(1)
				require.NoError(t, err)
				assert.False(t, ok)
			})
		}
	}
}

// A save that cannot be written fails naming the file, and changes nothing the store
// holds: what it reads is what the file holds.
func TestStoresRollBackAFailedSave(t *testing.T) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			require.NoError(t, os.Mkdir(dir, 0o700))
			path := filepath.Join(dir, "state.json")
			s := st.open(path)
			require.NoError(t, s.save(1))

			require.NoError(t, os.RemoveAll(dir)) // every write fails now
			err := s.save(2)
			require.Error(t, err)
			assert.Contains(t, err.Error(), st.name+" "+path+": ")
			for key, want := range map[int]bool{1: true, 2: false} {
				ok, err := s.has(key)
				require.NoError(t, err)
				assert.Equal(t, want, ok, "key %d", key)
			}

			require.NoError(t, os.Mkdir(dir, 0o700))
			require.NoError(t, s.save(3))
			restarted := st.open(path)
			for key, want := range map[int]bool{1: true, 2: false, 3: true} {
				ok, err := restarted.has(key)
				require.NoError(t, err)
				assert.Equal(t, want, ok, "key %d after a restart", key)
			}
		})
	}
}
