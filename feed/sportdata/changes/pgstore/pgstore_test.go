package pgstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/sportdata/changes"
	"github.com/feedkit/feedkit/feed/sportdata/changes/changestest"
	"github.com/feedkit/feedkit/feed/sportdata/changes/pgstore"
	"github.com/feedkit/feedkit/internal/pgtest"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func newStore(t *testing.T, pool *pgxpool.Pool) *pgstore.Store {
	t.Helper()
	s, err := pgstore.NewStore(t.Context(), pool, pgstore.Options{})
	require.NoError(t, err)
	return s
}

func TestStoreConformance(t *testing.T) {
	changestest.TestStore(t, func(t *testing.T) changes.Store { return newStore(t, pgtest.Pool(t)) })
}

func fixtureCursor(at time.Time, events ...string) changes.Cursor {
	c := changes.Cursor{Kind: changes.FixtureChange, At: at}
	for _, e := range events {
		c.Events = append(c.Events, feed.MustParseURN(e))
	}
	return c
}

// A second store on the table, as a restarted process makes, finds the cursors; the
// table is kept, with its rows.
func TestNewIsIdempotent(t *testing.T) {
	pool := pgtest.Pool(t)
	c := fixtureCursor(t0, "sr:match:1")
	require.NoError(t, newStore(t, pool).Save(t.Context(), c))
	got, err := newStore(t, pgtest.SecondPool(t, pool)).Load(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []changes.Cursor{c}, got)
}

// Processes starting together on an empty schema each create the table or find it.
func TestNewConcurrently(t *testing.T) {
	p1 := pgtest.Pool(t)
	pools := []*pgxpool.Pool{p1, pgtest.SecondPool(t, p1), pgtest.SecondPool(t, p1)}
	pgtest.Together(t, pools, 12, func(_ int, p *pgxpool.Pool) error {
		_, err := pgstore.NewStore(t.Context(), p, pgstore.Options{})
		return err
	})
	var tables int
	require.NoError(t, p1.QueryRow(t.Context(),
		"SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'feedkit_changes_cursors'").Scan(&tables))
	assert.Equal(t, 1, tables)
}

func TestOptionsTablePrefix(t *testing.T) {
	pool := pgtest.Pool(t)
	for _, bad := range []string{"Feedkit_", "9lives_", "my-app_", `x"; DROP TABLE y; --`, "x_34567890123456789012345678901234567890123456789012345_7"} {
		_, err := pgstore.NewStore(t.Context(), pool, pgstore.Options{TablePrefix: bad})
		require.ErrorIs(t, err, pgstore.ErrInvalidOptions, "%q", bad)
		assert.Contains(t, err.Error(), "Options.TablePrefix")
		assert.Contains(t, err.Error(), fmt.Sprintf("%q", bad))
	}
	longest := "x_345678901234567890123456789012345678901234567890123456" // 56 bytes
	for _, prefix := range []string{"myapp_", longest} {
		s, err := pgstore.NewStore(t.Context(), pool, pgstore.Options{TablePrefix: prefix})
		require.NoError(t, err, prefix)
		require.NoError(t, s.Save(t.Context(), fixtureCursor(t0, "sr:match:1")))
		var exists bool
		require.NoError(t, pool.QueryRow(t.Context(), "SELECT to_regclass($1) IS NOT NULL", prefix+"cursors").Scan(&exists))
		assert.True(t, exists, prefix)
	}
	var exists bool
	require.NoError(t, pool.QueryRow(t.Context(), "SELECT to_regclass('feedkit_changes_cursors') IS NOT NULL").Scan(&exists))
	assert.False(t, exists, "a prefix replaces the default")
}

// Times are kept to the microsecond, in UTC.
func TestSaveTruncatesToMicroseconds(t *testing.T) {
	s := newStore(t, pgtest.Pool(t))
	at := t0.Add(1999 * time.Nanosecond).In(time.FixedZone("", 3600))
	require.NoError(t, s.Save(t.Context(), fixtureCursor(at, "sr:match:1")))
	got, err := s.Load(t.Context())
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, t0.Add(time.Microsecond), got[0].At)
}

func TestErrors(t *testing.T) {
	pool := pgtest.Pool(t)
	s := newStore(t, pool)
	canceled, cancel := context.WithCancel(t.Context())
	cancel()

	_, err := s.Load(canceled)
	require.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "pgstore: load")
	err = s.Save(canceled, fixtureCursor(t0, "sr:match:1"))
	require.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "pgstore: save the fixture cursor")
	_, err = pgstore.NewStore(canceled, pool, pgstore.Options{})
	require.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "pgstore: create table feedkit_changes_cursors")

	err = s.Save(t.Context(), changes.Cursor{Kind: changes.Kind(9), At: t0})
	require.Error(t, err, "a kind with no name cannot be stored")
	assert.Contains(t, err.Error(), "pgstore: save")

	_, err = pool.Exec(t.Context(), "INSERT INTO feedkit_changes_cursors (kind, at, events) VALUES ('odds', now(), '{}')")
	require.NoError(t, err)
	_, err = s.Load(t.Context())
	require.Error(t, err)
	assert.Contains(t, err.Error(), `pgstore: load cursor "odds"`)
	_, err = pool.Exec(t.Context(), "UPDATE feedkit_changes_cursors SET kind = 'result', events = '{match:1}'")
	require.NoError(t, err)
	_, err = s.Load(t.Context())
	require.Error(t, err)
	assert.Contains(t, err.Error(), `pgstore: load cursor "result": event "match:1"`)
}
