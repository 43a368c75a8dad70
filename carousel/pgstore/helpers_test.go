package pgstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/carousel"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// at returns t0 plus d.
func at(d time.Duration) time.Time { return t0.Add(d) }

// createItems creates table (id idType, last_modified timestamptz) with items in the
// pool's schema.
func createItems(t *testing.T, pool *pgxpool.Pool, table, idType string, items []carousel.Item) {
	t.Helper()
	name := pgx.Identifier{table}.Sanitize()
	_, err := pool.Exec(t.Context(), `CREATE TABLE `+name+` (id `+idType+` PRIMARY KEY, last_modified timestamptz)`)
	require.NoError(t, err)
	insertItems(t, pool, name, `INSERT INTO `+name+` (id, last_modified) VALUES ($1, $2)`, items)
}

// insertItems runs insert, whose arguments are an item's id and time (NULL for the zero
// time) followed by extra, once per item, in one batch.
func insertItems(t *testing.T, pool *pgxpool.Pool, table, insert string, items []carousel.Item, extra ...any) {
	t.Helper()
	var b pgx.Batch
	for _, it := range items {
		var m *time.Time
		if !it.Modified.IsZero() {
			m = &it.Modified
		}
		b.Queue(insert, append([]any{it.ID, m}, extra...)...)
	}
	require.NoError(t, pool.SendBatch(t.Context(), &b).Close(), "insert into %s", table)
}

// newTestSource returns a Source on pool with opts, failing the test on an error.
func newTestSource(t *testing.T, pool *pgxpool.Pool, opts SourceOptions) *Source {
	t.Helper()
	s, err := NewSource(pool, opts)
	require.NoError(t, err)
	return s
}

// listAll lists every item q selects, limit at a time, checking that every page but the
// last is full.
func listAll(t *testing.T, s carousel.Source, q carousel.Query, limit int) []carousel.Item {
	t.Helper()
	var all []carousel.Item
	var after carousel.Item
	for {
		page, err := s.List(t.Context(), q, after, limit)
		require.NoError(t, err)
		all = append(all, page...)
		if len(page) < limit {
			return all
		}
		after = page[len(page)-1]
	}
}

// uniqueName returns a lease name no other test uses: advisory locks are per database,
// shared by the tests of every package running at once.
func uniqueName(t *testing.T) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return t.Name() + "-" + hex.EncodeToString(b[:])
}

// currentSchema returns the schema pool's connections create tables in.
func currentSchema(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	var s string
	require.NoError(t, pool.QueryRow(t.Context(), "SELECT current_schema()").Scan(&s))
	return s
}

// background is a context for cleanups, which run after t.Context() is canceled.
func background() context.Context { return context.Background() }

// contextCanceled returns a context already canceled.
func contextCanceled(t *testing.T) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	return ctx, cancel
}

// linguisticCollation returns a COLLATE clause with a collation that does not order by
// bytes, so that a query forgetting COLLATE "C" orders wrongly, or "" when the server
// has none (the test database's own is C).
func linguisticCollation(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	var name string
	err := pool.QueryRow(t.Context(), `SELECT collname FROM pg_collation
		WHERE collname IN ('und-x-icu', 'en_US.utf8', 'en_US.UTF-8') ORDER BY collname DESC LIMIT 1`).Scan(&name)
	if errors.Is(err, pgx.ErrNoRows) {
		t.Log("no linguistic collation on the server: the ids are ordered by bytes however they are queried")
		return ""
	}
	require.NoError(t, err)
	return " COLLATE " + pgx.Identifier{name}.Sanitize()
}
