package pgstore

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/carousel"
	"github.com/feedkit/feedkit/internal/pgtest"
)

func newTestStore(t *testing.T, pool *pgxpool.Pool) *Store {
	t.Helper()
	s, err := NewStore(t.Context(), pool, StoreOptions{})
	require.NoError(t, err)
	return s
}

// fullMetadata has every field set, with what JSON or PostgreSQL could lose: times
// with nanoseconds and offsets, a throttle with nanoseconds, an error text with a NUL.
func fullMetadata(id string) carousel.CycleMetadata {
	india := time.FixedZone("", 5*3600+1800) // unnamed, as time.Parse makes it
	return carousel.CycleMetadata{
		CycleID: id,
		Config: carousel.CycleConfig{Name: id, Type: carousel.ScalingWindow, Origin: "http://cms", Collection: "articles",
			CoolDown: time.Minute, TimeWindow: time.Hour, MinimumThrottle: time.Second, MaximumThrottle: time.Minute},
		Iteration: 7, Total: 120, Completed: 45, Errors: 2,
		CurrentItem:    "item-46",
		Last:           carousel.Item{ID: "item-45", Modified: at(123456789 * time.Nanosecond)},
		WindowStart:    at(-time.Hour),
		WindowEnd:      at(1),
		IterationStart: at(2).In(india),
		IterationEnd:   at(-3 * time.Hour),
		Throttle:       1500*time.Millisecond + 7,
		States:         []carousel.State{carousel.Running, carousel.Unhealthy},
		LastError:      "publish \"item-45\": 503 \x00 naïve",
		UpdatedAt:      at(999),
	}
}

// What Save stores, Load returns exactly, and a second Save replaces it.
func TestStoreRoundTrip(t *testing.T) {
	s := newTestStore(t, pgtest.Pool(t))
	m := fullMetadata("news")
	require.NoError(t, s.Save(t.Context(), m, 1))
	got, ok, err := s.Load(t.Context(), "news")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, m, got)

	m.Completed, m.States, m.Throttle, m.LastError = 46, []carousel.State{carousel.CoolDown}, 0, ""
	require.NoError(t, s.Save(t.Context(), m, 1))
	got, ok, err = s.Load(t.Context(), "news")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, m, got)

	require.NoError(t, s.Delete(t.Context(), "news"))
	require.NoError(t, s.Delete(t.Context(), "news"), "deleting what is not there")
	_, ok, err = s.Load(t.Context(), "news")
	require.NoError(t, err)
	assert.False(t, ok)
}

// Metadata saved under a config that the rules refuse (saved by another version) still
// loads: it is progress, and the scheduler decides whether the config still fits.
func TestStoreLoadsAnUnvalidatedConfig(t *testing.T) {
	pool := pgtest.Pool(t)
	s := newTestStore(t, pool)
	_, err := pool.Exec(t.Context(), `INSERT INTO feedkit_carousel_cycle_metadata VALUES ('old', $1, now())`,
		`{"cycleId":"old","config":{"name":"old","type":"RoundRobin","coolDown":"1m","extra":true},"iteration":3,"last":{"id":"x"},"states":["stopped"],"throttle":"2s"}`)
	require.NoError(t, err)
	got, ok, err := s.Load(t.Context(), "old")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, carousel.CycleMetadata{
		CycleID: "old", Config: carousel.CycleConfig{Name: "old", Type: "RoundRobin", CoolDown: time.Minute},
		Iteration: 3, Last: carousel.Item{ID: "x"}, States: []carousel.State{carousel.Stopped}, Throttle: 2 * time.Second,
	}, got)

	// A duration that does not parse is the one thing refused, named.
	_, err = pool.Exec(t.Context(), `INSERT INTO feedkit_carousel_cycle_metadata VALUES ('bad', $1, now())`,
		`{"cycleId":"bad","config":{"name":"bad","timeWindow":"an hour"}}`)
	require.NoError(t, err)
	_, _, err = s.Load(t.Context(), "bad")
	assert.ErrorContains(t, err, `cycle "bad"`)
	assert.ErrorContains(t, err, `config.timeWindow "an hour" is not a duration`)
}

// Metadata in publish-carousel's format (a completed count, no last item, no inProgress) loads
// as an iteration under way, to be resumed by count; the count is kept as written, past
// the total or not, for the scheduler to bound against the collection.
func TestStoreLoadsPublishCarouselsFormat(t *testing.T) {
	pool := pgtest.Pool(t)
	s := newTestStore(t, pool)
	_, err := pool.Exec(t.Context(), `INSERT INTO feedkit_carousel_cycle_metadata VALUES ('seed', $1, now())`,
		`{"cycleId":"seed","config":{"name":"seed","type":"ThrottledWholeCollection","origin":"o","collection":"c","coolDown":"1m","throttle":"1s"},
		"total":1000,"completed":1300,"progress":1,"errors":2,"iteration":4,"currentUuid":"item-1299","states":["running"]}`)
	require.NoError(t, err)
	got, ok, err := s.Load(t.Context(), "seed")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, carousel.CycleMetadata{
		CycleID: "seed", Config: carousel.CycleConfig{Name: "seed", Type: carousel.ThrottledWholeCollection, Origin: "o",
			Collection: "c", CoolDown: time.Minute, Throttle: time.Second},
		Iteration: 4, Total: 1000, Completed: 1300, Errors: 2, InProgress: true, States: []carousel.State{carousel.Running},
	}, got)
}

// A Store made later, as by a restarted process, on the same schema reads what the
// first saved; the table is not created twice.
func TestStoreRestart(t *testing.T) {
	pool := pgtest.Pool(t)
	require.NoError(t, newTestStore(t, pool).Save(t.Context(), fullMetadata("news"), 1))

	again := newTestStore(t, pgtest.SecondPool(t, pool))
	got, ok, err := again.Load(t.Context(), "news")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, fullMetadata("news"), got)
}

// Stores created at the same moment, from two pools as from two processes, create the
// table once and all work.
func TestStoreConcurrentMigration(t *testing.T) {
	p1 := pgtest.Pool(t)
	pools := []*pgxpool.Pool{p1, pgtest.SecondPool(t, p1)}
	stores := make([]*Store, 8)
	pgtest.Together(t, pools, len(stores), func(i int, p *pgxpool.Pool) (err error) {
		stores[i], err = NewStore(t.Context(), p, StoreOptions{})
		return err
	})
	require.NoError(t, stores[0].Save(t.Context(), fullMetadata("news"), 1))
	_, ok, err := stores[7].Load(t.Context(), "news")
	require.NoError(t, err)
	assert.True(t, ok)
}

// A table made before saves were fenced, with progress in it: NewStore adds the
// generation column, the progress loads as it was saved, and counts as saved by
// generation 0, which any activation's save replaces.
func TestStoreMigratesATableWithoutGenerations(t *testing.T) {
	pool := pgtest.Pool(t)
	_, err := pool.Exec(t.Context(), `CREATE TABLE feedkit_carousel_cycle_metadata (
		id       text        PRIMARY KEY,
		metadata json        NOT NULL,
		saved_at timestamptz NOT NULL)`)
	require.NoError(t, err)
	old, err := json.Marshal(fullMetadata("news"))
	require.NoError(t, err)
	_, err = pool.Exec(t.Context(), `INSERT INTO feedkit_carousel_cycle_metadata VALUES ('news', $1, now())`, old)
	require.NoError(t, err)

	s := newTestStore(t, pool)
	got, ok, err := s.Load(t.Context(), "news")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, fullMetadata("news"), got, "the progress saved before the upgrade")

	next := fullMetadata("news")
	next.Completed++
	require.NoError(t, s.Save(t.Context(), next, 3), "an activation's save replaces it")
	require.ErrorIs(t, s.Save(t.Context(), fullMetadata("news"), 2), carousel.ErrFenced)
	again := newTestStore(t, pgtest.SecondPool(t, pool)) // migrating again changes nothing
	got, _, err = again.Load(t.Context(), "news")
	require.NoError(t, err)
	assert.Equal(t, next, got)
	var gen int64
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT generation FROM feedkit_carousel_cycle_metadata WHERE id = 'news'`).Scan(&gen))
	assert.Equal(t, int64(3), gen)
}

// A generation a bigint cannot hold is refused, not wrapped around to a negative one
// that every later save would pass.
func TestStoreRefusesAGenerationAboveBigint(t *testing.T) {
	s := newTestStore(t, pgtest.Pool(t))
	err := s.Save(t.Context(), fullMetadata("news"), carousel.Generation(math.MaxInt64)+1)
	require.Error(t, err)
	assert.NotErrorIs(t, err, carousel.ErrFenced)
	assert.ErrorContains(t, err, "bigint")
	require.NoError(t, s.Save(t.Context(), fullMetadata("news"), math.MaxInt64))
}

// TablePrefix names the table; a bad one is refused naming the field.
func TestStoreOptions(t *testing.T) {
	pool := pgtest.Pool(t)
	s, err := NewStore(t.Context(), pool, StoreOptions{TablePrefix: "app1_"})
	require.NoError(t, err)
	require.NoError(t, s.Save(t.Context(), fullMetadata("news"), 1))
	var n int
	require.NoError(t, pool.QueryRow(t.Context(), "SELECT count(*) FROM app1_cycle_metadata").Scan(&n))
	assert.Equal(t, 1, n)

	for _, bad := range []string{"App_", "9x_", "a-b", "x234567890123456789012345678901234567890123456789_"} {
		_, err := NewStore(t.Context(), pool, StoreOptions{TablePrefix: bad})
		require.ErrorIs(t, err, ErrInvalidOptions, bad)
		assert.ErrorContains(t, err, `StoreOptions.TablePrefix "`+bad+`"`)
	}
	_, err = NewStore(t.Context(), nil, StoreOptions{})
	assert.ErrorIs(t, err, ErrInvalidOptions)
}
