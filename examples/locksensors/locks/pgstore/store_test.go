package pgstore_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/examples/locksensors/locks"
	"github.com/feedkit/feedkit/examples/locksensors/locks/pgstore"
	"github.com/feedkit/feedkit/internal/pgtest"
)

// versions returns the schema versions recorded in the table of prefix.
func versions(t *testing.T, pool *pgxpool.Pool, prefix string) []int {
	t.Helper()
	rows, err := pool.Query(t.Context(), `SELECT version FROM `+prefix+`schema_migrations ORDER BY version`)
	require.NoError(t, err)
	var out []int
	for rows.Next() {
		var v int
		require.NoError(t, rows.Scan(&v))
		out = append(out, v)
	}
	require.NoError(t, rows.Err())
	return out
}

// New a second time finds the schema up to date and keeps the data.
func TestNewTwice(t *testing.T) {
	pool := pgtest.Pool(t)
	s1 := newStore(t, pool)
	require.NoError(t, s1.CreateSensor(t.Context(), locks.Sensor{ID: "a1", Address: "here"}))
	s2 := newStore(t, pool)
	got, err := s2.GetSensor(t.Context(), "a1")
	require.NoError(t, err)
	assert.Equal(t, locks.Sensor{ID: "a1", Address: "here"}, got)
	assert.Equal(t, []int{1, 2}, versions(t, pool, pgstore.DefaultTablePrefix))
}

// Processes starting at once, on pools of their own, migrate the schema once and none
// fails.
func TestNewConcurrently(t *testing.T) {
	pool := pgtest.Pool(t)
	pools := []*pgxpool.Pool{pool, pgtest.SecondPool(t, pool), pgtest.SecondPool(t, pool)}
	pgtest.Together(t, pools, 9, func(_ int, p *pgxpool.Pool) error {
		_, err := pgstore.New(t.Context(), p, pgstore.Options{})
		return err
	})
	assert.Equal(t, []int{1, 2}, versions(t, pool, pgstore.DefaultTablePrefix))
}

// A database migrated by a newer program is refused, and left as it is.
func TestNewRefusesNewerSchema(t *testing.T) {
	pool := pgtest.Pool(t)
	newStore(t, pool)
	_, err := pool.Exec(t.Context(), `INSERT INTO locksensors_schema_migrations (version) VALUES (3)`)
	require.NoError(t, err)
	_, err = pgstore.New(t.Context(), pool, pgstore.Options{})
	require.ErrorIs(t, err, pgstore.ErrNewerSchema)
	assert.ErrorContains(t, err, "version 3")
	assert.Equal(t, []int{1, 2, 3}, versions(t, pool, pgstore.DefaultTablePrefix))
}

func TestNewOptions(t *testing.T) {
	_, err := pgstore.New(t.Context(), nil, pgstore.Options{})
	require.ErrorIs(t, err, pgstore.ErrInvalidOptions)

	pool := pgtest.Pool(t)
	for _, bad := range []string{"Locks_", "9x_", "a-b", "x234567890123456789012345678901234567890123"} {
		_, err := pgstore.New(t.Context(), pool, pgstore.Options{TablePrefix: bad})
		require.ErrorIs(t, err, pgstore.ErrInvalidOptions, bad)
		assert.ErrorContains(t, err, "TablePrefix", bad)
	}

	// Stores of two prefixes keep their data apart in one schema.
	a, err := pgstore.New(t.Context(), pool, pgstore.Options{TablePrefix: "site_a_"})
	require.NoError(t, err)
	b, err := pgstore.New(t.Context(), pool, pgstore.Options{TablePrefix: "x23456789012345678901234567890123456789012"})
	require.NoError(t, err)
	require.NoError(t, a.CreateSensor(t.Context(), locks.Sensor{ID: "s1", Address: "a"}))
	require.NoError(t, b.CreateSensor(t.Context(), locks.Sensor{ID: "s1", Address: "b"}))
	got, err := a.GetSensor(t.Context(), "s1")
	require.NoError(t, err)
	assert.Equal(t, "a", got.Address)
	assert.Equal(t, []int{1, 2}, versions(t, pool, "site_a_"))
}

// Errors name what is missing, and wrap the contract's errors.
func TestErrorsNameWhatIsMissing(t *testing.T) {
	s := newStore(t, pgtest.Pool(t))
	ctx := t.Context()
	sensors(t, s, []locks.SensorID{"s1"})
	c := client(t, s, "alice")

	err := s.CreateSensor(ctx, locks.Sensor{ID: "s1", Address: "again"})
	require.ErrorIs(t, err, locks.ErrExists)
	assert.EqualError(t, err, `sensor "s1": already exists`)

	err = s.Link(ctx, "nope", c.ID)
	require.ErrorIs(t, err, locks.ErrNotFound)
	assert.EqualError(t, err, `sensor "nope": not found`)
	err = s.Link(ctx, "s1", c.ID+100)
	require.ErrorIs(t, err, locks.ErrNotFound)
	assert.EqualError(t, err, fmt.Sprintf("client %d: not found", c.ID+100))
	err = s.Link(ctx, "nope", c.ID+100)
	assert.EqualError(t, err, `sensor "nope": not found`, "the sensor is named first")

	err = s.Unlink(ctx, "s1", c.ID)
	require.ErrorIs(t, err, locks.ErrNotFound)
	assert.EqualError(t, err, fmt.Sprintf(`link of sensor "s1" and client %d: not found`, c.ID))

	_, err = s.Readings(ctx, "nope", locks.Range{Limit: 10})
	assert.EqualError(t, err, `sensor "nope": not found`)
	_, err = s.Notification(ctx, 42)
	assert.EqualError(t, err, `notification 42: not found`)
	err = s.Finish(ctx, locks.Result{Notification: 42, N: 1, Status: locks.Delivered})
	assert.EqualError(t, err, `notification 42: not found`)
	err = s.Replay(ctx, 42, t0)
	assert.EqualError(t, err, `notification 42: not found`)
}

// Update refuses, before writing anything, a state of a sensor it did not lock and a
// reading of a sensor that does not exist; a reading of a sensor it did not lock but
// that exists is written.
func TestUpdateChecksBeforeWriting(t *testing.T) {
	s := newStore(t, pgtest.Pool(t))
	ctx := t.Context()
	sensors(t, s, []locks.SensorID{"s1", "s2"})
	reading := func(id locks.SensorID) locks.StoredReading {
		return locks.StoredReading{SensorID: id, State: 1, At: t0, Received: t0, Outcome: locks.Changed}
	}
	letter := locks.DeadLetter{Raw: []byte("x"), Reason: "bad", Received: t0}

	_, err := s.Update(ctx, []locks.SensorID{"s1"}, func(map[locks.SensorID]locks.Current) (locks.Effects, error) {
		return locks.Effects{States: []locks.Current{{SensorID: "s2", Known: true}},
			Readings: []locks.StoredReading{reading("s1")}, DeadLetters: []locks.DeadLetter{letter}}, nil
	})
	require.ErrorContains(t, err, `"s2"`)

	_, err = s.Update(ctx, []locks.SensorID{"s1"}, func(map[locks.SensorID]locks.Current) (locks.Effects, error) {
		return locks.Effects{Readings: []locks.StoredReading{reading("s1"), reading("s2"), reading("gone")},
			DeadLetters: []locks.DeadLetter{letter}}, nil
	})
	require.ErrorIs(t, err, locks.ErrNotFound)
	assert.EqualError(t, err, `sensor "gone": not found`)

	boom := errors.New("boom")
	_, err = s.Update(ctx, []locks.SensorID{"s1"}, func(map[locks.SensorID]locks.Current) (locks.Effects, error) {
		return locks.Effects{}, boom
	})
	assert.Same(t, boom, err, "fn's error is returned as it is")

	for _, id := range []locks.SensorID{"s1", "s2"} {
		rs, err := s.Readings(ctx, id, locks.Range{Limit: 10})
		require.NoError(t, err)
		assert.Empty(t, rs, id)
	}
	ds, err := s.DeadLetters(ctx, 0, 10)
	require.NoError(t, err)
	assert.Empty(t, ds)

	write(t, s, []locks.SensorID{"s1"}, locks.Effects{Readings: []locks.StoredReading{reading("s1"), reading("s2")}})
	rs, err := s.Readings(ctx, "s2", locks.Range{Limit: 10})
	require.NoError(t, err)
	assert.Len(t, rs, 1)
}

// Free texts are kept as bytes: a reason quoting a message that is not UTF-8, or an
// error holding a NUL, round-trips and never fails a batch.
func TestTextsRoundTrip(t *testing.T) {
	s := newStore(t, pgtest.Pool(t))
	ctx := t.Context()
	sensors(t, s, []locks.SensorID{"s1"}, client(t, s, "alice"))
	raw := []byte("{\"sensor_id\": \"\xff\x00\"}")
	reason := "sensor_id: \"\xff\" has \x00"
	write(t, s, nil, locks.Effects{DeadLetters: []locks.DeadLetter{{Raw: raw, Reason: reason, Received: t0}, {Raw: nil, Reason: "empty", Received: t0}}})
	ds, err := s.DeadLetters(ctx, 0, 10)
	require.NoError(t, err)
	require.Len(t, ds, 2)
	assert.Equal(t, raw, ds[0].Raw)
	assert.Equal(t, reason, ds[0].Reason)
	assert.Empty(t, ds[1].Raw)

	require.Equal(t, 1, write(t, s, []locks.SensorID{"s1"}, locks.Effects{Now: t0,
		Notify: []locks.Change{{SensorID: "s1", Event: locks.EventChanged, State: 1, At: t0}}}))
	d, err := s.Claim(ctx, locks.ClaimRequest{Now: t0, Limit: 1, MaxAttempts: 3, RetryAfter: func(int) time.Duration { return time.Minute }})
	require.NoError(t, err)
	require.Len(t, d, 1)
	errText := "read: \xfe\x00 garbage"
	require.NoError(t, s.Finish(ctx, locks.Result{Notification: d[0].ID, N: 1, At: at(time.Second), Status: locks.Dead,
		Reason: "gave up on \xff", Attempt: &locks.Attempt{Notification: d[0].ID, N: 1, At: t0, Duration: 1234567, Error: errText}}))
	n, err := s.Notification(ctx, d[0].ID)
	require.NoError(t, err)
	assert.Equal(t, errText, n.LastError)
	assert.Equal(t, "gave up on \xff", n.Reason)
	require.Len(t, n.History, 1)
	assert.Equal(t, errText, n.History[0].Error)
	assert.Equal(t, time.Duration(1234567), n.History[0].Duration)
}

// Times come back in UTC whatever the location they went in with.
func TestTimesInUTC(t *testing.T) {
	s := newStore(t, pgtest.Pool(t))
	ctx := t.Context()
	sensors(t, s, []locks.SensorID{"s1"})
	zone := time.FixedZone("UTC+3", 3*3600)
	ts := t0.In(zone)
	write(t, s, []locks.SensorID{"s1"}, locks.Effects{
		States:   []locks.Current{{SensorID: "s1", Known: true, State: 1, ReadingAt: ts, ChangedAt: ts, LastSeen: ts}},
		Readings: []locks.StoredReading{{SensorID: "s1", State: 1, At: ts, Received: ts, Outcome: locks.Changed}},
	})
	c, err := s.Current(ctx, "s1")
	require.NoError(t, err)
	assert.Equal(t, locks.Current{SensorID: "s1", Known: true, State: 1, ReadingAt: t0, ChangedAt: t0, LastSeen: t0}, c)
	rs, err := s.Readings(ctx, "s1", locks.Range{Limit: 1})
	require.NoError(t, err)
	require.Len(t, rs, 1)
	assert.Equal(t, time.UTC, rs[0].At.Location())
	assert.Equal(t, t0, rs[0].Received)
}

// Cancels and notifications of a sensor Update did not lock are written, of one that
// does not exist skipped, as in MemoryStore.
func TestUpdateAboutUnlockedSensors(t *testing.T) {
	s := newStore(t, pgtest.Pool(t))
	ctx := t.Context()
	sensors(t, s, []locks.SensorID{"s1", "s2"}, client(t, s, "alice"))
	change := func(id locks.SensorID) locks.Change {
		return locks.Change{SensorID: id, Event: locks.EventChanged, State: 1, At: t0}
	}
	require.Equal(t, 1, write(t, s, []locks.SensorID{"s1"}, locks.Effects{Now: t0, Notify: []locks.Change{change("s2")}}))
	n, err := s.Update(ctx, nil, func(cur map[locks.SensorID]locks.Current) (locks.Effects, error) {
		assert.Empty(t, cur)
		return locks.Effects{Now: at(time.Second), Cancel: []locks.SensorID{"s2", "gone"},
			Notify: []locks.Change{change("gone"), change("s2"), change("s1")}}, nil
	})
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	ns, err := s.Notifications(ctx, "s2", locks.Range{Limit: 10})
	require.NoError(t, err)
	require.Len(t, ns, 2)
	assert.Equal(t, locks.Cancelled, ns[0].Status)
	assert.Equal(t, "superseded", ns[0].Reason)
	assert.Equal(t, at(time.Second), ns[0].Finished)
	assert.Equal(t, locks.Pending, ns[1].Status)
}
