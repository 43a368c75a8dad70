package pgstore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/examples/locksensors/locks"
	"github.com/feedkit/feedkit/internal/pgtest"
)

// A database of version 1 holds notifications without sequences: migration 2 numbers
// each sensor's events in the order they were recorded (the notifications of one event,
// one per client, share a number), counts them in the sensor's state so that the next
// event goes on from there, and gives a change its reading's time.
func TestMigrationNumbersTheEventsOfAVersion1Database(t *testing.T) {
	pool := pgtest.Pool(t)
	ctx := t.Context()
	require.NoError(t, migrateUpTo(ctx, pool, DefaultTablePrefix, migrations[:1]))
	x := expander(DefaultTablePrefix)
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 250_000, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	exec := func(sql string, args ...any) {
		t.Helper()
		_, err := pool.Exec(ctx, x(sql), args...)
		require.NoError(t, err, sql)
	}
	for _, id := range []string{"a", "b", "quiet"} {
		exec(`INSERT INTO {sensors} (id, address) VALUES ($1, 'room')`, id)
		exec(`INSERT INTO {sensor_states} (sensor_id, known, state) VALUES ($1, true, 0)`, id)
	}
	exec(`INSERT INTO {clients} (name, url) VALUES ('one', 'https://one.example.com'), ('two', 'https://two.example.com')`)
	exec(`INSERT INTO {links} (sensor_id, client_id) VALUES ('a', 1), ('a', 2), ('b', 2)`)
	note := func(sensor, event string, state int, when, created time.Time, clients ...int) {
		t.Helper()
		for _, c := range clients {
			exec(`INSERT INTO {notifications} (sensor_id, client_id, event, state, at, created_at, status, next_attempt_at)
				VALUES ($1, $2, $3, $4, $5, $6, 'pending', $6)`, sensor, c, event, state, when, created)
		}
	}
	// a: a change, a loss, then a change and a restoration found in one batch; b: one
	// change, recorded between a's, to one client of the two.
	note("a", "changed", 1, at(-1), at(0), 1, 2)
	note("b", "changed", 1, at(-1), at(0), 2)
	note("a", "lost", 1, at(3600), at(3600), 1, 2)
	note("a", "changed", 0, at(3700), at(3701), 1, 2)
	note("a", "restored", 0, at(3701), at(3701), 1, 2)

	s, err := New(ctx, pool, Options{})
	require.NoError(t, err)
	type row struct {
		Event     locks.Event
		Client    locks.ClientID
		Sequence  int64
		ReadingAt time.Time
	}
	rows := func(sensor locks.SensorID) []row {
		t.Helper()
		ns, err := s.Notifications(ctx, sensor, locks.Range{})
		require.NoError(t, err)
		var out []row
		for _, n := range ns {
			out = append(out, row{n.Event, n.ClientID, n.Sequence, n.ReadingAt})
		}
		return out
	}
	var zero time.Time
	assert.Equal(t, []row{
		{locks.EventChanged, 1, 1, at(-1)}, {locks.EventChanged, 2, 1, at(-1)},
		{locks.EventLost, 1, 2, zero}, {locks.EventLost, 2, 2, zero},
		{locks.EventChanged, 1, 3, at(3700)}, {locks.EventChanged, 2, 3, at(3700)},
		{locks.EventRestored, 1, 4, zero}, {locks.EventRestored, 2, 4, zero},
	}, rows("a"))
	assert.Equal(t, []row{{locks.EventChanged, 2, 1, at(-1)}}, rows("b"))
	for id, want := range map[locks.SensorID]int64{"a": 4, "b": 1, "quiet": 0} {
		c, err := s.Current(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, want, c.Sequence, "the sequence of %q's latest event", id)
	}

	// The next event of a goes on from its count.
	_, err = s.Update(ctx, []locks.SensorID{"a"}, func(map[locks.SensorID]locks.Current) (locks.Effects, error) {
		return locks.Effects{Notify: []locks.Change{{SensorID: "a", Event: locks.EventChanged, State: 1, At: at(4000), ReadingAt: at(4000)}},
			Now: at(4000)}, nil
	})
	require.NoError(t, err)
	got := rows("a")
	require.Len(t, got, 10)
	assert.Equal(t, []row{{locks.EventChanged, 1, 5, at(4000)}, {locks.EventChanged, 2, 5, at(4000)}}, got[8:])
}
