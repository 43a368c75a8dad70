// Package changestest holds the conformance suite that every changes.Store passes: the
// MemoryStore and FileStore of package changes, and the PostgreSQL one of
// changes/pgstore. A new implementation calls it from a test:
//
//	func TestStoreConformance(t *testing.T) {
//		changestest.TestStore(t, func(t *testing.T) changes.Store { return newStore(t) })
//	}
//
// The suite uses whole microseconds and UTC times only, which every implementation keeps
// exactly (PostgreSQL stores no finer time).
package changestest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/sportdata/changes"
)

// t0 is the start of every scenario; its date does not matter.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func urns(ids ...string) []feed.URN {
	out := make([]feed.URN, len(ids))
	for i, id := range ids {
		out[i] = feed.MustParseURN(id)
	}
	return out
}

// TestStore runs the conformance suite of changes.Store. newStore must return an empty
// store of its own on every call, and release what it holds when t ends.
func TestStore(t *testing.T, newStore func(t *testing.T) changes.Store) {
	fixture := changes.Cursor{Kind: changes.FixtureChange, At: t0.Add(123456 * time.Microsecond),
		Events: urns("sr:match:1", "sr:match:22", "sr:stage:3", "vf:match:-4")}
	result := changes.Cursor{Kind: changes.ResultChange, At: t0.Add(-time.Hour), Events: urns("sr:match:5")}

	t.Run("EmptyLoad", func(t *testing.T) {
		s := newStore(t)
		cs, err := s.Load(t.Context())
		require.NoError(t, err)
		assert.Empty(t, cs)
	})

	t.Run("RoundTrip", func(t *testing.T) {
		s := newStore(t)
		require.NoError(t, s.Save(t.Context(), fixture))
		require.NoError(t, s.Save(t.Context(), result))
		cs, err := s.Load(t.Context())
		require.NoError(t, err)
		assert.ElementsMatch(t, []changes.Cursor{fixture, result}, cs, "events in the order saved")
	})

	t.Run("SaveReplacesTheKindsCursor", func(t *testing.T) {
		s := newStore(t)
		require.NoError(t, s.Save(t.Context(), fixture))
		require.NoError(t, s.Save(t.Context(), result))
		later := changes.Cursor{Kind: changes.FixtureChange, At: t0.Add(time.Minute), Events: urns("sr:match:9")}
		require.NoError(t, s.Save(t.Context(), later))
		cs, err := s.Load(t.Context())
		require.NoError(t, err)
		assert.ElementsMatch(t, []changes.Cursor{later, result}, cs, "the events replaced, not added to; the other kind untouched")

		tied := later
		tied.Events = urns("sr:match:9", "sr:match:10")
		require.NoError(t, s.Save(t.Context(), tied))
		cs, err = s.Load(t.Context())
		require.NoError(t, err)
		assert.ElementsMatch(t, []changes.Cursor{tied, result}, cs, "an event more at the same time")
	})

	t.Run("ManyEvents", func(t *testing.T) {
		s := newStore(t)
		c := changes.Cursor{Kind: changes.ResultChange, At: t0}
		for i := range 2000 {
			c.Events = append(c.Events, feed.URN{Prefix: "sr", Type: "match", ID: int64(i + 1)})
		}
		require.NoError(t, s.Save(t.Context(), c))
		cs, err := s.Load(t.Context())
		require.NoError(t, err)
		require.Len(t, cs, 1)
		assert.Equal(t, c, cs[0])
	})

	t.Run("LoadedCursorsAreTheCallers", func(t *testing.T) {
		s := newStore(t)
		mine := fixture
		mine.Events = urns("sr:match:1", "sr:match:2")
		require.NoError(t, s.Save(t.Context(), mine))
		mine.Events[0] = feed.MustParseURN("sr:match:99")
		cs, err := s.Load(t.Context())
		require.NoError(t, err)
		require.Len(t, cs, 1)
		cs[0].Events[1] = feed.MustParseURN("sr:match:98")
		again, err := s.Load(t.Context())
		require.NoError(t, err)
		assert.Equal(t, urns("sr:match:1", "sr:match:2"), again[0].Events, "neither the saved nor the loaded slice is the store's")
	})

	t.Run("ConcurrentSavesOfBothKinds", func(t *testing.T) {
		s := newStore(t)
		var wg sync.WaitGroup
		for _, k := range []changes.Kind{changes.FixtureChange, changes.ResultChange} {
			wg.Go(func() {
				for i := range 20 {
					c := changes.Cursor{Kind: k, At: t0.Add(time.Duration(i) * time.Second), Events: urns(fmt.Sprintf("sr:match:%d", i+1))}
					assert.NoError(t, s.Save(t.Context(), c))
				}
			})
		}
		wg.Wait()
		cs, err := s.Load(t.Context())
		require.NoError(t, err)
		want := func(k changes.Kind) changes.Cursor {
			return changes.Cursor{Kind: k, At: t0.Add(19 * time.Second), Events: urns("sr:match:20")}
		}
		assert.ElementsMatch(t, []changes.Cursor{want(changes.FixtureChange), want(changes.ResultChange)}, cs)
	})
}
