package pgstore

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/carousel"
	"github.com/feedkit/feedkit/internal/pgtest"
)

// TestSourceAgreesWithMemorySource lists random queries, with random cursors and
// limits, from a table and from a carousel.MemorySource holding the same items: they
// must answer the same. The ids are chosen so that byte order differs from any
// language's collation (upper case, digits, non-ASCII), and the column has such a
// collation when the server has one, the times tie often and have
// NULLs, and the bounds and cursors have nanoseconds, which PostgreSQL does not keep.
func TestSourceAgreesWithMemorySource(t *testing.T) {
	pool := pgtest.Pool(t)
	rng := rand.New(rand.NewPCG(1, 2))
	letters := []string{"a", "b", "B", "z", "é", "1", "10", "9", "_", "-"}
	seen := map[string]bool{}
	var items []carousel.Item
	for len(items) < 80 {
		id := ""
		for range 1 + rng.IntN(3) {
			id += letters[rng.IntN(len(letters))]
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		it := carousel.Item{ID: id}
		if rng.IntN(10) > 0 {
			it.Modified = at(time.Duration(rng.IntN(12))*time.Millisecond + time.Duration(rng.IntN(2))*time.Microsecond)
		}
		items = append(items, it)
	}
	createItems(t, pool, "things", "text"+linguisticCollation(t, pool), items)
	mem := carousel.NewMemorySource()
	require.NoError(t, mem.Put("things", items...))
	src := newTestSource(t, pool, SourceOptions{})

	randomTime := func() time.Time {
		if rng.IntN(6) == 0 {
			return time.Time{}
		}
		return at(time.Duration(rng.IntN(14)-1)*time.Millisecond + time.Duration(rng.IntN(3))*time.Microsecond/2)
	}
	for i := range 400 {
		q := carousel.Query{Collection: "things"}
		if rng.IntN(4) > 0 {
			q.Start, q.End = randomTime(), randomTime()
		}
		var after carousel.Item
		switch rng.IntN(4) {
		case 1:
			after = items[rng.IntN(len(items))]
		case 2:
			after = carousel.Item{ID: letters[rng.IntN(len(letters))], Modified: randomTime()}
		case 3:
			after = carousel.Item{ID: "", Modified: randomTime()}
		}
		limit := 1 + rng.IntN(7)
		desc := fmt.Sprintf("#%d: query %+v after %+v limit %d", i, q, after, limit)

		wantN, err := mem.Count(t.Context(), q)
		require.NoError(t, err)
		gotN, err := src.Count(t.Context(), q)
		require.NoError(t, err, desc)
		require.Equal(t, wantN, gotN, desc)

		want, err := mem.List(t.Context(), q, after, limit)
		require.NoError(t, err)
		got, err := src.List(t.Context(), q, after, limit)
		require.NoError(t, err, desc)
		require.Equal(t, len(want), len(got), desc)
		for j := range want {
			require.Equal(t, want[j].ID, got[j].ID, "%s: item %d", desc, j)
			require.True(t, want[j].Modified.Equal(got[j].Modified), "%s: item %d: %v, want %v", desc, j, got[j].Modified, want[j].Modified)
		}
		if i%10 == 0 {
			require.Equal(t, listAll(t, mem, q, limit), listAll(t, src, q, limit), "paged through: %s", desc)
		}
	}
}

// Times come back in UTC whatever the session's time zone, and a page resumes after
// the last item even when items were added before it meanwhile.
func TestSourceWindowPagesAndUTC(t *testing.T) {
	pool := pgtest.Pool(t)
	createItems(t, pool, "things", "text", []carousel.Item{
		{ID: "b", Modified: at(time.Second)}, {ID: "a", Modified: at(time.Second)},
		{ID: "c", Modified: at(2 * time.Second)}, {ID: "z", Modified: at(0)},
		{ID: "late", Modified: at(time.Hour)},
	})
	_, err := pool.Exec(t.Context(), "SET TIME ZONE 'Asia/Kolkata'") // one connection's, enough to show the scan ignores it
	require.NoError(t, err)
	src := newTestSource(t, pool, SourceOptions{})
	q := carousel.Query{Collection: "things", Start: at(0), End: at(time.Minute)}

	page, err := src.List(t.Context(), q, carousel.Item{}, 2)
	require.NoError(t, err)
	assert.Equal(t, []carousel.Item{{ID: "z", Modified: at(0)}, {ID: "a", Modified: at(time.Second)}}, page)
	assert.Equal(t, time.UTC, page[0].Modified.Location())

	insertItems(t, pool, "things", `INSERT INTO things VALUES ($1, $2)`, []carousel.Item{{ID: "0", Modified: at(time.Second)}})
	page, err = src.List(t.Context(), q, page[1], 2)
	require.NoError(t, err)
	assert.Equal(t, []carousel.Item{{ID: "b", Modified: at(time.Second)}, {ID: "c", Modified: at(2 * time.Second)}}, page)

	n, err := src.Count(t.Context(), q)
	require.NoError(t, err)
	assert.Equal(t, 5, n)
}

// Integer ids are read as text and ordered as Go orders strings: "10" before "9".
func TestSourceIntegerIDs(t *testing.T) {
	pool := pgtest.Pool(t)
	_, err := pool.Exec(t.Context(), `CREATE TABLE numbers (num bigint PRIMARY KEY, changed timestamptz NOT NULL)`)
	require.NoError(t, err)
	_, err = pool.Exec(t.Context(), `INSERT INTO numbers SELECT n, $1 FROM generate_series(1, 12) n`, t0)
	require.NoError(t, err)
	src := newTestSource(t, pool, SourceOptions{IDColumn: "num", ModifiedColumn: "changed"})

	var ids []string
	for _, it := range listAll(t, src, carousel.Query{Collection: "numbers"}, 5) {
		ids = append(ids, it.ID)
	}
	assert.Equal(t, []string{"1", "10", "11", "12", "2", "3", "4", "5", "6", "7", "8", "9"}, ids)

	page, err := src.List(t.Context(), carousel.Query{Collection: "numbers", Start: t0, End: at(time.Second)},
		carousel.Item{ID: "12", Modified: t0}, 2)
	require.NoError(t, err)
	assert.Equal(t, []carousel.Item{{ID: "2", Modified: t0}, {ID: "3", Modified: t0}}, page)
}

// UUID ids work as well, in the order of their text.
func TestSourceUUIDIDs(t *testing.T) {
	pool := pgtest.Pool(t)
	items := []carousel.Item{
		{ID: "f47ac10b-58cc-4372-a567-0e02b2c3d479", Modified: t0},
		{ID: "0e02b2c3-58cc-4372-a567-f47ac10bd479", Modified: t0},
	}
	createItems(t, pool, "docs", "uuid", items)
	src := newTestSource(t, pool, SourceOptions{})
	assert.Equal(t, []carousel.Item{items[1], items[0]}, listAll(t, src, carousel.Query{Collection: "docs"}, 10))
}

// With Table and CollectionColumn, the collections share one table and see only their
// own rows; with Tables, a collection reads another table, here through Schema.
func TestSourceSharedTableAndTables(t *testing.T) {
	pool := pgtest.Pool(t)
	_, err := pool.Exec(t.Context(), `CREATE TABLE content (id text, kind text, last_modified timestamptz, PRIMARY KEY (kind, id))`)
	require.NoError(t, err)
	insert := `INSERT INTO content (id, last_modified, kind) VALUES ($1, $2, $3)`
	insertItems(t, pool, "content", insert, []carousel.Item{{ID: "a", Modified: at(time.Second)}, {ID: "b", Modified: at(2 * time.Second)}}, "articles")
	insertItems(t, pool, "content", insert, []carousel.Item{{ID: "a", Modified: at(3 * time.Second)}}, "videos")
	createItems(t, pool, "legacy_images", "text", []carousel.Item{{ID: "img", Modified: at(4 * time.Second)}})

	src := newTestSource(t, pool, SourceOptions{
		Table: "content", CollectionColumn: "kind", Schema: currentSchema(t, pool),
		Tables: map[string]string{"images": "legacy_images"},
	})
	assert.Equal(t, []carousel.Item{{ID: "a", Modified: at(time.Second)}, {ID: "b", Modified: at(2 * time.Second)}},
		listAll(t, src, carousel.Query{Collection: "articles"}, 10))
	assert.Equal(t, []carousel.Item{{ID: "a", Modified: at(3 * time.Second)}},
		listAll(t, src, carousel.Query{Collection: "videos", Start: at(0), End: at(time.Hour)}, 10))
	assert.Empty(t, listAll(t, src, carousel.Query{Collection: "podcasts"}, 10), "a collection without rows is empty")

	// The mapped table has no collection column: CollectionColumn applies to it too.
	_, err = src.Count(t.Context(), carousel.Query{Collection: "images"})
	require.ErrorContains(t, err, `"kind"`)
	_, err = pool.Exec(t.Context(), `ALTER TABLE legacy_images ADD COLUMN kind text DEFAULT 'images'`)
	require.NoError(t, err)
	n, err := src.Count(t.Context(), carousel.Query{Collection: "images"})
	require.NoError(t, err)
	assert.Equal(t, 1, n)
}

// Bad options are refused at construction, naming the field and the value.
func TestSourceOptionsErrors(t *testing.T) {
	tests := []struct {
		opts SourceOptions
		want string
	}{
		{SourceOptions{IDColumn: "id; DROP TABLE x"}, `SourceOptions.IDColumn "id; DROP TABLE x"`},
		{SourceOptions{ModifiedColumn: "last-modified"}, `SourceOptions.ModifiedColumn "last-modified"`},
		{SourceOptions{CollectionColumn: "9kind"}, `SourceOptions.CollectionColumn "9kind"`},
		{SourceOptions{Schema: "my.schema"}, `SourceOptions.Schema "my.schema"`},
		{SourceOptions{Table: "a b", CollectionColumn: "kind"}, `SourceOptions.Table "a b"`},
		{SourceOptions{Table: "content"}, `SourceOptions.CollectionColumn "" is required when Table is set`},
		{SourceOptions{Tables: map[string]string{"news": "news", "videos": `"x"`}}, `SourceOptions.Tables["videos"] "\"x\""`},
		{SourceOptions{Tables: map[string]string{"news": ""}}, `SourceOptions.Tables["news"] "" is empty`},
		{SourceOptions{IDColumn: string(make([]byte, 64))}, `SourceOptions.IDColumn`},
	}
	pool := pgtest.Pool(t)
	for _, tt := range tests {
		_, err := NewSource(pool, tt.opts)
		require.ErrorIs(t, err, ErrInvalidOptions, "%+v", tt.opts)
		assert.ErrorContains(t, err, tt.want)
	}
	_, err := NewSource(nil, SourceOptions{})
	assert.ErrorIs(t, err, ErrInvalidOptions)
}

// A collection whose table does not exist, or whose name cannot be a table's, fails
// its queries, naming it; so does a limit that is not positive.
func TestSourceQueryErrors(t *testing.T) {
	pool := pgtest.Pool(t)
	src := newTestSource(t, pool, SourceOptions{})

	_, err := src.Count(t.Context(), carousel.Query{Collection: "missing"})
	assert.ErrorContains(t, err, `collection "missing"`)
	assert.ErrorContains(t, err, "42P01") // undefined_table
	_, err = src.List(t.Context(), carousel.Query{Collection: "missing"}, carousel.Item{}, 10)
	assert.ErrorContains(t, err, `collection "missing"`)

	_, err = src.List(t.Context(), carousel.Query{Collection: "news-items"}, carousel.Item{}, 10)
	assert.ErrorContains(t, err, `collection "news-items"`)
	assert.ErrorContains(t, err, "SourceOptions.Tables")

	createItems(t, pool, "things", "text", nil)
	_, err = src.List(t.Context(), carousel.Query{Collection: "things"}, carousel.Item{}, 0)
	assert.ErrorContains(t, err, "limit 0 must be positive")

	ctx, cancel := contextCanceled(t)
	defer cancel()
	_, err = src.Count(ctx, carousel.Query{Collection: "things"})
	assert.True(t, errors.Is(err, ctx.Err()), "%v", err)
}

// A huge limit (a caller asking for "everything", or a big Config.PageSize) bounds the
// answer, not the allocation: List answers as MemorySource does, without panicking or
// allocating for rows that are not there.
func TestSourceListWithAHugeLimit(t *testing.T) {
	pool := pgtest.Pool(t)
	items := []carousel.Item{{ID: "a", Modified: at(0)}, {ID: "b", Modified: at(1000)}}
	createItems(t, pool, "review_items", "text", items)
	s := newTestSource(t, pool, SourceOptions{Tables: map[string]string{"c": "review_items"}})

	mem := carousel.NewMemorySource()
	require.NoError(t, mem.Put("c", items...))
	want, err := mem.List(t.Context(), carousel.Query{Collection: "c"}, carousel.Item{}, math.MaxInt)
	require.NoError(t, err)
	require.Len(t, want, 2)

	got, err := func() (got []carousel.Item, err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("List panicked: %v", r)
			}
		}()
		return s.List(t.Context(), carousel.Query{Collection: "c"}, carousel.Item{}, math.MaxInt)
	}()
	require.NoError(t, err)
	require.Len(t, got, len(want))
	for i := range want {
		assert.Equal(t, want[i].ID, got[i].ID)
	}
}
