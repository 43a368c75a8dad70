package pgstore_test

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/examples/locksensors/locks"
	"github.com/feedkit/feedkit/examples/locksensors/locks/pgstore"
)

// t0 is the time the tests happen around: whole microseconds, as PostgreSQL keeps.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 250_000_000, time.UTC)

// at returns t0 plus d.
func at(d time.Duration) time.Time { return t0.Add(d) }

// newStore returns a Store with the default options on pool.
func newStore(tb testing.TB, pool *pgxpool.Pool) *pgstore.Store {
	tb.Helper()
	s, err := pgstore.New(tb.Context(), pool, pgstore.Options{})
	require.NoError(tb, err)
	return s
}

// sensors registers sensors with the ids, each linked to the clients.
func sensors(tb testing.TB, s locks.Store, ids []locks.SensorID, clients ...locks.Client) {
	tb.Helper()
	for _, id := range ids {
		require.NoError(tb, s.CreateSensor(tb.Context(), locks.Sensor{ID: id, Address: "room " + string(id)}))
		for _, c := range clients {
			require.NoError(tb, s.Link(tb.Context(), id, c.ID))
		}
	}
}

// client registers a client named name.
func client(tb testing.TB, s locks.Store, name string) locks.Client {
	tb.Helper()
	c, err := s.CreateClient(tb.Context(), locks.Client{Name: name, URL: "https://" + name + ".example.com/hook"})
	require.NoError(tb, err)
	return c
}

// write runs an Update of ids that writes e.
func write(tb testing.TB, s locks.Store, ids []locks.SensorID, e locks.Effects) int {
	tb.Helper()
	n, err := s.Update(tb.Context(), ids, func(map[locks.SensorID]locks.Current) (locks.Effects, error) { return e, nil })
	require.NoError(tb, err)
	return n
}
