package changes_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/sportdata/changes"
	"github.com/feedkit/feedkit/feed/sportdata/changes/pgstore"
	"github.com/feedkit/feedkit/internal/pgtest"
)

// A manager stops and another starts, as across a restart, each with the store a
// process would have: the file and PostgreSQL stores, and a MemoryStore shared by both
// managers (one process), keep the cursors, and nothing is delivered twice; a new
// MemoryStore (a new process) has none, and the second manager delivers again every
// change the API still lists.
func TestRestart(t *testing.T) {
	for _, c := range []struct {
		name   string
		stores func(t *testing.T) (first, second changes.Store)
		keeps  bool
	}{
		{"MemoryStoreOfTheProcess", func(*testing.T) (changes.Store, changes.Store) {
			s := changes.NewMemoryStore()
			return s, s
		}, true},
		{"MemoryStoreOfANewProcess", func(*testing.T) (changes.Store, changes.Store) {
			return changes.NewMemoryStore(), changes.NewMemoryStore()
		}, false},
		{"FileStore", func(t *testing.T) (changes.Store, changes.Store) {
			path := filepath.Join(t.TempDir(), "changes.json")
			return changes.NewFileStore(path), changes.NewFileStore(path)
		}, true},
		{"PostgreSQL", func(t *testing.T) (changes.Store, changes.Store) {
			pool := pgtest.Pool(t)
			first, err := pgstore.NewStore(t.Context(), pool, pgstore.Options{})
			require.NoError(t, err)
			second, err := pgstore.NewStore(t.Context(), pgtest.SecondPool(t, pool), pgstore.Options{})
			require.NoError(t, err)
			return first, second
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			firstStore, secondStore := c.stores(t)
			r := newRig(t, feedtest.SimulatorConfig{Seed: 4})
			rec1, rec2 := newRecorder(r.clock), newRecorder(r.clock)

			m1 := r.manager(rec1, changes.Config{Store: firstStore})
			r.run(m1)
			for range 3 {
				r.clock.Advance(changes.DefaultInterval - 400*tick)
				r.publish(200)
				r.next(m1, 400*tick)
				r.publish(100) // after the poll, in its second: for the next manager
			}
			require.NoError(t, m1.Close(t.Context()))
			require.NotEmpty(t, rec1.changes())
			require.Less(t, len(rec1.changes()), len(r.published()), "some changes were left for the next manager")
			if c.keeps {
				assert.ElementsMatch(t, m1.Cursors(), load(t, secondStore), "the second process finds the first's cursors")
			} else {
				assert.Empty(t, load(t, secondStore))
			}

			r.clock.Advance(10 * tick)
			r.publish(200) // while no manager runs
			m2 := r.manager(rec2, changes.Config{Store: secondStore})
			r.run(m2)
			r.publish(200)
			r.next(m2, changes.DefaultInterval)

			all := rec1.counts()
			for ch, n := range rec2.counts() {
				all[ch] += n
			}
			want := r.published()
			if c.keeps {
				assert.Equal(t, once(want), all, "each change once across the restart")
				assert.ElementsMatch(t, m2.Cursors(), load(t, secondStore))
				return
			}
			assert.Equal(t, once(want), rec2.counts(), "the new process delivered every change listed")
			for _, ch := range rec1.changes() {
				assert.Equal(t, 2, all[ch], "%s: delivered again by the new process", ch)
			}
		})
	}
}

// tick is a second of the clock.
const tick = time.Second

func load(t *testing.T, s changes.Store) []changes.Cursor {
	t.Helper()
	cs, err := s.Load(context.Background())
	require.NoError(t, err)
	return cs
}
