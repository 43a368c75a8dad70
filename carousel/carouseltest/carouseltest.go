// Package carouseltest checks implementations of carousel's Source and MetadataStore
// against the contracts the scheduler relies on, so that the in-memory and the
// PostgreSQL implementations are held to the same tests: TestSource, TestMetadataStore
// (the fence of the saves by generation included), and TestFailover, two schedulers
// handing a cycle to each other through a store, with the items republished counted.
//
// The suites use times in UTC truncated to microseconds, the precision of PostgreSQL's
// timestamptz, and compare times with time.Time.Equal, so that an implementation may
// return them in another location.
//
// Item ids mix upper and lower case, digits and punctuation, and the suites expect the
// order of Query.Less, which compares ids byte by byte: an SQL source must compare ids in
// a byte-wise collation (in PostgreSQL, ORDER BY and > on id COLLATE "C"), or a database
// with a linguistic default collation lists them in another order.
package carouseltest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/carousel"
)

// base is the time the suites' items are modified around: microseconds, not nanoseconds,
// so that a database keeps it exactly.
var base = time.Date(2024, 3, 10, 12, 0, 0, 123456000, time.UTC)

// at returns base plus n minutes.
func at(n int) time.Time { return base.Add(time.Duration(n) * time.Minute) }

// sourceItems is the collection TestSource lists. Several items share a modification
// time, so that the window's order needs its tie-break by id, and the ids sort
// differently byte-wise than under a linguistic collation ("B" before "a", "a-1" before
// "a1" before "a_1").
func sourceItems() []carousel.Item {
	return []carousel.Item{
		{ID: "a1", Modified: at(0)},
		{ID: "B2", Modified: at(1)},
		{ID: "a-1", Modified: at(1)},
		{ID: "a_1", Modified: at(1)},
		{ID: "b10", Modified: at(2)},
		{ID: "b9", Modified: at(2)},
		{ID: "Z", Modified: at(3)},
		{ID: "a.2", Modified: at(4)},
		{ID: "c3", Modified: at(4)},
		{ID: "0z", Modified: at(4)},
		{ID: "c30", Modified: at(5)},
		{ID: "y", Modified: at(6)},
	}
}

// expect returns the items of items that q selects, in q's order: what List must return.
func expect(q carousel.Query, items []carousel.Item) []carousel.Item {
	var out []carousel.Item
	for _, it := range items {
		if q.Contains(it) {
			out = append(out, it)
		}
	}
	slices.SortFunc(out, func(a, b carousel.Item) int {
		switch {
		case q.Less(a, b):
			return -1
		case q.Less(b, a):
			return 1
		}
		return 0
	})
	return out
}

// assertItems checks that got is want, comparing times as instants.
func assertItems(t *testing.T, want, got []carousel.Item, msgAndArgs ...any) {
	t.Helper()
	ids := func(items []carousel.Item) []string {
		out := make([]string, len(items))
		for i, it := range items {
			out[i] = it.ID
		}
		return out
	}
	if !assert.Equal(t, ids(want), ids(got), msgAndArgs...) {
		return
	}
	for i := range want {
		assert.True(t, want[i].Modified.Equal(got[i].Modified), "item %s: modified %v, want %v", want[i].ID, got[i].Modified, want[i].Modified)
	}
}

// listAll pages through q with limit, checking that every page but the last is full.
func listAll(t *testing.T, s carousel.Source, q carousel.Query, after carousel.Item, limit int) []carousel.Item {
	t.Helper()
	var all []carousel.Item
	for range 100 { // far more pages than any test has: a source that never ends fails
		page, err := s.List(context.Background(), q, after, limit)
		require.NoError(t, err)
		require.LessOrEqual(t, len(page), limit)
		all = append(all, page...)
		if len(page) < limit {
			return all
		}
		after = page[len(page)-1]
	}
	t.Fatalf("List with limit %d did not come to an end", limit)
	return nil
}

// TestSource checks a Source. newSource returns a Source whose collection named
// collection holds exactly items; it may hold other collections as well, and items may be
// nil.
func TestSource(t *testing.T, newSource func(t *testing.T, collection string, items []carousel.Item) carousel.Source) {
	const coll = "carouseltest-items"
	ctx := context.Background()
	whole := carousel.Query{Collection: coll}
	// A window that cuts through the items sharing at(1) and at(4), at its two ends.
	window := carousel.Query{Collection: coll, Start: at(1), End: at(4)}

	t.Run("whole collection in id order", func(t *testing.T) {
		items := sourceItems()
		s := newSource(t, coll, items)
		n, err := s.Count(ctx, whole)
		require.NoError(t, err)
		assert.Equal(t, len(items), n)
		got, err := s.List(ctx, whole, carousel.Item{}, 1000)
		require.NoError(t, err)
		assertItems(t, expect(whole, items), got)
	})

	t.Run("paging visits every item once", func(t *testing.T) {
		items := sourceItems()
		s := newSource(t, coll, items)
		for _, q := range []carousel.Query{whole, {Collection: coll, Start: at(0), End: at(7)}} {
			for _, limit := range []int{1, 2, 3, 4, 100} {
				got := listAll(t, s, q, carousel.Item{}, limit)
				assertItems(t, expect(q, items), got, "windowed %v, limit %d", q.Windowed(), limit)
			}
		}
	})

	t.Run("window includes its start and excludes its end", func(t *testing.T) {
		items := append(sourceItems(),
			carousel.Item{ID: "before-start", Modified: at(1).Add(-time.Microsecond)},
			carousel.Item{ID: "before-end", Modified: at(4).Add(-time.Microsecond)},
		)
		s := newSource(t, coll, items)
		want := expect(window, items)
		require.Equal(t, []string{"B2", "a-1", "a_1", "b10", "b9", "Z", "before-end"}, idsOf(want), "the suite's own expectation")
		n, err := s.Count(ctx, window)
		require.NoError(t, err)
		assert.Equal(t, len(want), n)
		got, err := s.List(ctx, window, carousel.Item{}, 1000)
		require.NoError(t, err)
		assertItems(t, want, got)
	})

	t.Run("window in modified then id order", func(t *testing.T) {
		items := sourceItems()
		s := newSource(t, coll, items)
		q := carousel.Query{Collection: coll, Start: at(0), End: at(5)}
		got, err := s.List(ctx, q, carousel.Item{}, 1000)
		require.NoError(t, err)
		assert.Equal(t, []string{"a1", "B2", "a-1", "a_1", "b10", "b9", "Z", "0z", "a.2", "c3"}, idsOf(got))
		assertItems(t, expect(q, items), got)
	})

	t.Run("resumes after an item that was removed", func(t *testing.T) {
		items := sourceItems()
		s := newSource(t, coll, items)
		// Neither is in the collection: each falls between items, in its query's order.
		gone := carousel.Item{ID: "a0", Modified: at(2)}
		for _, q := range []carousel.Query{whole, window} {
			var want []carousel.Item
			for _, it := range expect(q, items) {
				if q.Less(gone, it) {
					want = append(want, it)
				}
			}
			require.NotEmpty(t, want)
			require.Less(t, len(want), len(expect(q, items)), "the suite's own expectation")
			for _, limit := range []int{1, 3, 100} {
				assertItems(t, want, listAll(t, s, q, gone, limit), "windowed %v, limit %d", q.Windowed(), limit)
			}
		}
	})

	t.Run("after the last item", func(t *testing.T) {
		items := sourceItems()
		s := newSource(t, coll, items)
		for _, q := range []carousel.Query{whole, window} {
			all := expect(q, items)
			got, err := s.List(ctx, q, all[len(all)-1], 10)
			require.NoError(t, err)
			assert.Empty(t, got, "windowed %v", q.Windowed())
		}
	})

	t.Run("empty collection", func(t *testing.T) {
		s := newSource(t, coll, nil)
		for _, q := range []carousel.Query{whole, window} {
			n, err := s.Count(ctx, q)
			require.NoError(t, err)
			assert.Zero(t, n)
			got, err := s.List(ctx, q, carousel.Item{}, 10)
			require.NoError(t, err)
			assert.Empty(t, got)
		}
	})

	t.Run("unknown collection", func(t *testing.T) {
		s := newSource(t, coll, sourceItems())
		for _, q := range []carousel.Query{{Collection: "carouseltest-no-such"}, {Collection: "carouseltest-no-such", Start: at(0), End: at(9)}} {
			n, err := s.Count(ctx, q)
			require.NoError(t, err)
			assert.Zero(t, n)
			got, err := s.List(ctx, q, carousel.Item{}, 10)
			require.NoError(t, err)
			assert.Empty(t, got)
		}
	})

	t.Run("cancelled context", func(t *testing.T) {
		s := newSource(t, coll, sourceItems())
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, err := s.Count(cctx, whole)
		assert.Error(t, err, "Count")
		_, err = s.List(cctx, whole, carousel.Item{}, 10)
		assert.Error(t, err, "List")
	})
}

func idsOf(items []carousel.Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.ID
	}
	return out
}

// fullMetadata returns metadata with every field set, times in microseconds.
func fullMetadata(id string) carousel.CycleMetadata {
	return carousel.CycleMetadata{
		CycleID: id,
		Config: carousel.CycleConfig{
			Name:            id,
			Type:            carousel.ScalingWindow,
			Origin:          "http://cmdb/systems/methode",
			Collection:      "universal-content",
			CoolDown:        90 * time.Second,
			Throttle:        1500 * time.Millisecond,
			TimeWindow:      time.Hour + 30*time.Minute,
			MinimumThrottle: 250 * time.Millisecond,
			MaximumThrottle: 2 * time.Minute,
		},
		Iteration:      7,
		Total:          1234,
		Completed:      567,
		Errors:         3,
		CurrentItem:    "b9",
		Last:           carousel.Item{ID: "b9", Modified: at(2)},
		WindowStart:    at(-90),
		WindowEnd:      at(0),
		IterationStart: at(1),
		IterationEnd:   at(-1),
		Throttle:       4200 * time.Millisecond,
		States:         []carousel.State{carousel.Running, carousel.Unhealthy},
		LastError:      "carousel: source: connection refused",
		UpdatedAt:      at(3),
	}
}

// normal returns m with its times in UTC, so that metadata returned in another location
// compares equal.
func normal(m carousel.CycleMetadata) carousel.CycleMetadata {
	for _, p := range []*time.Time{&m.Last.Modified, &m.WindowStart, &m.WindowEnd, &m.IterationStart, &m.IterationEnd, &m.UpdatedAt} {
		if !p.IsZero() {
			*p = p.UTC()
		}
	}
	return m
}

func mustLoad(t *testing.T, s carousel.MetadataStore, id string) carousel.CycleMetadata {
	t.Helper()
	m, ok, err := s.Load(context.Background(), id)
	require.NoError(t, err)
	require.True(t, ok, "metadata of %q", id)
	return normal(m)
}

func assertMissing(t *testing.T, s carousel.MetadataStore, id string) {
	t.Helper()
	_, ok, err := s.Load(context.Background(), id)
	require.NoError(t, err)
	assert.False(t, ok, "metadata of %q", id)
}

// TestMetadataStore checks a MetadataStore. newStore returns an empty store.
func TestMetadataStore(t *testing.T, newStore func(t *testing.T) carousel.MetadataStore) {
	ctx := context.Background()

	t.Run("load missing", func(t *testing.T) {
		assertMissing(t, newStore(t), "carouseltest-none")
	})

	t.Run("round trip of every field", func(t *testing.T) {
		s := newStore(t)
		m := fullMetadata("round-trip")
		require.NoError(t, s.Save(ctx, m, 0))
		assert.Equal(t, m, mustLoad(t, s, "round-trip"))

		minimal := carousel.CycleMetadata{CycleID: "minimal", Config: carousel.CycleConfig{
			Name: "minimal", Type: carousel.ThrottledWholeCollection, Origin: "o", Collection: "c",
			CoolDown: time.Minute, Throttle: time.Second,
		}, States: []carousel.State{carousel.Stopped}}
		require.NoError(t, s.Save(ctx, minimal, 0))
		assert.Equal(t, minimal, mustLoad(t, s, "minimal"), "zero times and items stay zero")
	})

	// The scheduler, not the store, decides what saved progress means: a count only (as the
	// Financial Times' publish-carousel saves it, resumed by skipping that many items), a count past the total (bounded
	// when the iteration is counted again), an ended iteration whose count stays. A store
	// that dropped, bounded or invented any of it would resume at another item.
	t.Run("progress kept as saved", func(t *testing.T) {
		s := newStore(t)
		cfg := carousel.CycleConfig{Name: "x", Type: carousel.ThrottledWholeCollection, Origin: "o", Collection: "c",
			CoolDown: time.Minute, Throttle: time.Second}
		for _, m := range []carousel.CycleMetadata{
			{CycleID: "count-only", Iteration: 1, Total: 1000, Completed: 300, InProgress: true},
			{CycleID: "count-past-total", Iteration: 1, Total: 1000, Completed: 1300, Errors: 1400, InProgress: true},
			{CycleID: "last-past-total", Iteration: 2, Total: 10, Completed: 13, InProgress: true, Last: carousel.Item{ID: "z"}},
			{CycleID: "ended", Iteration: 3, Total: 1000, Completed: 1000},
		} {
			m.Config, m.Config.Name = cfg, m.CycleID
			m.States = []carousel.State{carousel.Stopped}
			require.NoError(t, s.Save(ctx, m, 0))
			assert.Equal(t, m, mustLoad(t, s, m.CycleID))
		}
	})

	t.Run("overwrite", func(t *testing.T) {
		s := newStore(t)
		m := fullMetadata("overwrite")
		require.NoError(t, s.Save(ctx, m, 0))
		m.Iteration++
		m.Completed = 0
		m.Last = carousel.Item{}
		m.States = []carousel.State{carousel.CoolDown}
		m.LastError = ""
		require.NoError(t, s.Save(ctx, m, 0))
		assert.Equal(t, m, mustLoad(t, s, "overwrite"))
	})

	t.Run("delete", func(t *testing.T) {
		s := newStore(t)
		require.NoError(t, s.Save(ctx, fullMetadata("gone"), 0))
		require.NoError(t, s.Save(ctx, fullMetadata("kept"), 0))
		require.NoError(t, s.Delete(ctx, "gone"))
		assertMissing(t, s, "gone")
		assert.Equal(t, fullMetadata("kept"), mustLoad(t, s, "kept"))

		require.NoError(t, s.Delete(ctx, "gone"), "deleting what is not there")
		require.NoError(t, s.Delete(ctx, "carouseltest-never"), "deleting what never was")
		require.NoError(t, s.Save(ctx, fullMetadata("gone"), 0), "saving again after a delete")
		assert.Equal(t, fullMetadata("gone"), mustLoad(t, s, "gone"))
	})

	t.Run("no aliasing", func(t *testing.T) {
		s := newStore(t)
		m := fullMetadata("alias")
		require.NoError(t, s.Save(ctx, m, 0))
		m.States[0] = carousel.Stopped
		assert.Equal(t, fullMetadata("alias"), mustLoad(t, s, "alias"), "changing what was saved")

		got, _, err := s.Load(ctx, "alias")
		require.NoError(t, err)
		got.States[0] = carousel.Stopped
		assert.Equal(t, fullMetadata("alias"), mustLoad(t, s, "alias"), "changing what was loaded")
	})

	t.Run("concurrent saves", func(t *testing.T) {
		s := newStore(t)
		const writers, saves = 8, 20
		var wg sync.WaitGroup
		errs := make(chan error, writers*saves)
		for w := range writers {
			wg.Go(func() {
				m := fullMetadata(fmt.Sprintf("concurrent-%d", w))
				for i := range saves {
					m.Completed = i
					if err := s.Save(ctx, m, 0); err != nil {
						errs <- err
					}
					if _, _, err := s.Load(ctx, m.CycleID); err != nil {
						errs <- err
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		for w := range writers {
			m := mustLoad(t, s, fmt.Sprintf("concurrent-%d", w))
			assert.Equal(t, saves-1, m.Completed, "writer %d's last save", w)
		}
	})

	testFencing(t, newStore)
}

// testFencing checks that a store refuses the saves of an older generation than the
// last it saved, and of no other.
func testFencing(t *testing.T, newStore func(t *testing.T) carousel.MetadataStore) {
	ctx := context.Background()
	progress := func(id string, completed int) carousel.CycleMetadata {
		m := fullMetadata(id)
		m.Completed = completed
		return m
	}

	t.Run("an older generation's save is refused", func(t *testing.T) {
		s := newStore(t)
		require.NoError(t, s.Save(ctx, progress("fenced", 10), 5))
		err := s.Save(ctx, progress("fenced", 99), 4)
		require.ErrorIs(t, err, carousel.ErrFenced, "generation 4 after 5")
		assert.Equal(t, progress("fenced", 10), mustLoad(t, s, "fenced"), "the refused save left it as it was")
		require.ErrorIs(t, s.Save(ctx, progress("fenced", 98), 0), carousel.ErrFenced, "generation 0 after 5")

		require.NoError(t, s.Save(ctx, progress("fenced", 11), 5), "the same generation saves again")
		require.NoError(t, s.Save(ctx, progress("fenced", 12), 7), "a later one takes over")
		require.ErrorIs(t, s.Save(ctx, progress("fenced", 13), 5), carousel.ErrFenced, "the generation is now 7")
		assert.Equal(t, progress("fenced", 12), mustLoad(t, s, "fenced"))

		// Generations are per cycle.
		require.NoError(t, s.Save(ctx, progress("other", 1), 1))
		assert.Equal(t, progress("other", 1), mustLoad(t, s, "other"))
	})

	t.Run("generation 0 saves until a numbered one has", func(t *testing.T) {
		s := newStore(t)
		require.NoError(t, s.Save(ctx, progress("unfenced", 1), 0))
		require.NoError(t, s.Save(ctx, progress("unfenced", 2), 0))
		require.NoError(t, s.Save(ctx, progress("unfenced", 3), 1))
		require.ErrorIs(t, s.Save(ctx, progress("unfenced", 4), 0), carousel.ErrFenced)
		assert.Equal(t, progress("unfenced", 3), mustLoad(t, s, "unfenced"))
	})

	t.Run("a delete forgets the generation", func(t *testing.T) {
		s := newStore(t)
		require.NoError(t, s.Save(ctx, progress("deleted", 1), 9))
		require.NoError(t, s.Delete(ctx, "deleted"))
		require.NoError(t, s.Save(ctx, progress("deleted", 2), 1), "a cycle added again under the name starts afresh")
		assert.Equal(t, progress("deleted", 2), mustLoad(t, s, "deleted"))
	})

	t.Run("a large generation", func(t *testing.T) {
		// A FileToggle's generation is a time in nanoseconds since 1970.
		s := newStore(t)
		big := carousel.Generation(time.Date(2262, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
		require.NoError(t, s.Save(ctx, progress("big", 1), big))
		require.ErrorIs(t, s.Save(ctx, progress("big", 2), big-1), carousel.ErrFenced)
		require.NoError(t, s.Save(ctx, progress("big", 3), big))
		assert.Equal(t, progress("big", 3), mustLoad(t, s, "big"))
	})

	// The check and the write are one step: of writers racing with generations 1 to 8,
	// the last save standing is the last of generation 8, which is never refused, and
	// every refusal is ErrFenced.
	t.Run("concurrent generations", func(t *testing.T) {
		s := newStore(t)
		const writers, saves = 8, 20
		var wg sync.WaitGroup
		errs := make(chan error, writers*saves)
		for w := 1; w <= writers; w++ {
			wg.Go(func() {
				for i := range saves {
					err := s.Save(ctx, progress("race", w*100+i), carousel.Generation(w))
					switch {
					case err == nil:
					case w == writers:
						errs <- fmt.Errorf("generation %d, the latest, refused: %w", w, err)
					case !errors.Is(err, carousel.ErrFenced):
						errs <- fmt.Errorf("generation %d: %w", w, err)
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		assert.Equal(t, writers*100+saves-1, mustLoad(t, s, "race").Completed, "the last save of the latest generation")
	})
}
