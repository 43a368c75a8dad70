package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/feedkit/feedkit/carousel"
)

// demoCollections are the collections the demo republishes, with how many items each
// has and how far back their modification times go.
var demoCollections = []struct {
	name  string
	items int
	span  time.Duration
}{
	{"articles", 200, 3 * time.Hour},
	{"videos", 40, 30 * time.Minute},
}

// demoItems returns a collection's items, ids like "articles-0042", modified at random
// over span before now.
func demoItems(name string, n int, span time.Duration, now time.Time, rnd *rand.Rand) []carousel.Item {
	items := make([]carousel.Item, n)
	for i := range items {
		items[i] = carousel.Item{ID: fmt.Sprintf("%s-%04d", name, i), Modified: now.Add(-time.Duration(rnd.Int64N(int64(span)))).UTC().Truncate(time.Microsecond)}
	}
	return items
}

// store is what the demo edits while it runs: an item modified now, as an editor would,
// so that the windowed cycles have something new to republish.
type store interface {
	touch(ctx context.Context, collection, id string, at time.Time) error
}

// memoryStore edits a MemorySource.
type memoryStore struct{ src *carousel.MemorySource }

func newMemoryCollections(now time.Time, rnd *rand.Rand) (*carousel.MemorySource, error) {
	src := carousel.NewMemorySource()
	for _, c := range demoCollections {
		if err := src.Put(c.name, demoItems(c.name, c.items, c.span, now, rnd)...); err != nil {
			return nil, err
		}
	}
	return src, nil
}

func (m memoryStore) touch(_ context.Context, collection, id string, at time.Time) error {
	return m.src.Put(collection, carousel.Item{ID: id, Modified: at})
}

// pgTable is the table of a demo collection in PostgreSQL.
func pgTable(collection string) string { return "carousel_demo_" + collection }

// pgStore edits the demo tables.
type pgStore struct{ pool *pgxpool.Pool }

// setUpPostgres creates the demo tables when they are missing and fills those that are
// empty, so that the demo runs on a fresh database and leaves an existing one's rows be.
// It does so in one transaction under an advisory lock: instances started together
// would otherwise trip over each other's CREATE TABLE IF NOT EXISTS (not safe against a
// concurrent creation) and fill the tables twice.
func setUpPostgres(ctx context.Context, pool *pgxpool.Pool, now time.Time, rnd *rand.Rand) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('carousel-demo-setup', 0))`); err != nil {
			return err
		}
		for _, c := range demoCollections {
			if err := setUpTable(ctx, tx, c.name, demoItems(c.name, c.items, c.span, now, rnd)); err != nil {
				return err
			}
		}
		return nil
	})
}

func setUpTable(ctx context.Context, tx pgx.Tx, collection string, items []carousel.Item) error {
	table := pgx.Identifier{pgTable(collection)}.Sanitize()
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+table+` (
		id text PRIMARY KEY,
		last_modified timestamptz NOT NULL)`); err != nil {
		return fmt.Errorf("creating %s: %w", table, err)
	}
	// The windowed cycles' queries: WHERE last_modified in a window, ORDER BY
	// (last_modified, id) in byte order.
	index := pgx.Identifier{pgTable(collection) + "_modified"}.Sanitize()
	if _, err := tx.Exec(ctx, `CREATE INDEX IF NOT EXISTS `+index+` ON `+table+` (last_modified, id COLLATE "C")`); err != nil {
		return fmt.Errorf("indexing %s: %w", table, err)
	}
	var n int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM `+table).Scan(&n); err != nil || n > 0 {
		return err
	}
	rows := make([][]any, len(items))
	for i, it := range items {
		rows[i] = []any{it.ID, it.Modified}
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{pgTable(collection)}, []string{"id", "last_modified"}, pgx.CopyFromRows(rows)); err != nil {
		return fmt.Errorf("filling %s: %w", table, err)
	}
	return nil
}

func (p pgStore) touch(ctx context.Context, collection, id string, at time.Time) error {
	_, err := p.pool.Exec(ctx, `UPDATE `+pgx.Identifier{pgTable(collection)}.Sanitize()+` SET last_modified = $2 WHERE id = $1`, id, at)
	return err
}

// edit modifies a random item every interval until ctx ends.
func edit(ctx context.Context, s store, every time.Duration, rnd *rand.Rand, report func(error)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			c := demoCollections[rnd.IntN(len(demoCollections))]
			id := fmt.Sprintf("%s-%04d", c.name, rnd.IntN(c.items))
			if err := s.touch(ctx, c.name, id, now.UTC().Truncate(time.Microsecond)); err != nil && ctx.Err() == nil {
				report(err)
			}
		}
	}
}
