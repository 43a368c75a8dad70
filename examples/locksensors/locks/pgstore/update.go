package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/feedkit/feedkit/examples/locksensors/locks"
	"github.com/feedkit/feedkit/internal/pgschema"
)

const (
	// The ORDER BY is the order the rows are locked in: every Update takes its sensors'
	// locks in the same order, so two Updates of overlapping sensors wait for each other
	// rather than deadlock. NO KEY UPDATE, because the key does not change: it leaves
	// the row to the KEY SHARE locks of foreign key checks.
	lockStatesSQL = `SELECT ` + stateColumns + ` FROM {sensor_states}
		WHERE sensor_id = ANY($1) ORDER BY sensor_id FOR NO KEY UPDATE`
	// Keeps the sensors Update writes about without having locked their states from
	// being deleted until the commit, and says which exist. Taken before the writes,
	// which would otherwise lock a sensor's pending notifications (cancel) before its key
	// (the inserts' foreign key checks), the opposite order of a DeleteSensor's cascade.
	lockSensorsSQL = `SELECT id FROM {sensors} WHERE id = ANY($1) FOR KEY SHARE`

	writeStatesSQL = `UPDATE {sensor_states} AS st SET known = u.known, state = u.state,
			reading_at = u.reading_at, changed_at = u.changed_at, last_seen = u.last_seen, lost = u.lost
		FROM unnest($1::text[], $2::boolean[], $3::smallint[], $4::timestamptz[], $5::timestamptz[],
			$6::timestamptz[], $7::boolean[]) AS u(sensor_id, known, state, reading_at, changed_at, last_seen, lost)
		WHERE st.sensor_id = u.sensor_id`
	// ORDER BY ord: the ids are assigned in the order the rows are inserted, which is
	// the order of the Effects.
	insertReadingsSQL = `INSERT INTO {readings} (sensor_id, state, at, received_at, outcome)
		SELECT sensor_id, state, at, received_at, outcome
		FROM unnest($1::text[], $2::smallint[], $3::timestamptz[], $4::timestamptz[], $5::text[])
			WITH ORDINALITY AS r(sensor_id, state, at, received_at, outcome, ord)
		ORDER BY ord`
	insertDeadLettersSQL = `INSERT INTO {dead_letters} (raw, reason, received_at)
		SELECT raw, reason, received_at
		FROM unnest($1::bytea[], $2::bytea[], $3::timestamptz[]) WITH ORDINALITY AS d(raw, reason, received_at, ord)
		ORDER BY ord`
	// Joined with the sensors rather than filtered with sensor_id = ANY($1): under a
	// generic plan, where the array is a parameter, a filter would compare every pending
	// notification with every sensor of the batch in turn (measured: 15 ms a batch with
	// 10,000 pending). The join takes the partial index of pending notifications by
	// sensor, or hashes.
	cancelSQL = `UPDATE {notifications} AS n SET status = 'cancelled', reason = $2, finished_at = $3
		FROM (SELECT DISTINCT unnest($1::text[]) AS sensor_id) AS c
		WHERE n.sensor_id = c.sensor_id AND n.status = 'pending'`
	// Each change takes its sensor's next sequence: counted moves each sensor's count on
	// by its changes (under the lock of the state row, which an Update of the sensor
	// holds already), and numbered gives them the numbers it moved past, in their order.
	// A change of a sensor without a state (deleted) is dropped with it. Then one
	// notification per change and linked client, in the order of the changes, then of
	// the clients' ids, as MemoryStore numbers them.
	notifySQL = `WITH changes AS (
			SELECT * FROM unnest($1::text[], $2::text[], $3::smallint[], $4::timestamptz[], $5::timestamptz[])
				WITH ORDINALITY AS c(sensor_id, event, state, at, reading_at, ord)
		), counted AS (
			UPDATE {sensor_states} AS st SET sequence = st.sequence + k.n
			FROM (SELECT sensor_id, count(*) AS n FROM changes GROUP BY sensor_id) AS k
			WHERE st.sensor_id = k.sensor_id
			RETURNING st.sensor_id, st.sequence - k.n AS before
		), numbered AS (
			SELECT c.*, k.before + row_number() OVER (PARTITION BY c.sensor_id ORDER BY c.ord) AS sequence
			FROM changes c JOIN counted k ON k.sensor_id = c.sensor_id
		)
		INSERT INTO {notifications} (sensor_id, client_id, event, state, at, reading_at, sequence, created_at, status, next_attempt_at)
		SELECT c.sensor_id, l.client_id, c.event, c.state, c.at, c.reading_at, c.sequence, $6::timestamptz, 'pending', $6::timestamptz
		FROM numbered c JOIN {links} l ON l.sensor_id = c.sensor_id
		ORDER BY c.ord, l.client_id`

	livenessSQL = `SELECT ` + stateColumns + ` FROM {sensor_states} WHERE last_seen IS NOT NULL ORDER BY sensor_id`
)

// superseded is the reason of a notification an Update cancels.
var superseded = []byte("superseded")

// Update implements locks.Store in one transaction of two round trips: the first
// begins it and locks the states of ids; fn runs; the second writes every effect with
// one set-based statement per table and commits. The number of round trips does not
// grow with the batch. Effects about sensors outside the locked ones (which the
// Ingester never writes) cost one more, which locks those sensors against deletion and
// finds any that does not exist: ErrNotFound for a reading's, nothing for a cancel's or
// a notification's, as in MemoryStore.
//
// fn runs while the connection holds the locks, so it should be quick. Its error is
// returned as it is.
func (s *Store) Update(ctx context.Context, ids []locks.SensorID, fn func(map[locks.SensorID]locks.Current) (locks.Effects, error)) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, failed("update", err)
	}
	// fn's error is returned as it is: it is the caller's own.
	var fnErr error
	call := func(cur map[locks.SensorID]locks.Current) (locks.Effects, error) {
		e, err := fn(cur)
		fnErr = err
		return e, err
	}
	var n int
	err := s.inTx(ctx, func(c *pgx.Conn) error {
		var err error
		n, err = s.update(ctx, c, ids, call)
		return err
	})
	switch {
	case fnErr != nil:
		return 0, fnErr
	case err != nil:
		return 0, failed("update", err)
	}
	return n, nil
}

// update runs Update's transaction on c. On an error it may leave c in the
// transaction, for inTx to roll back.
func (s *Store) update(ctx context.Context, c *pgx.Conn, ids []locks.SensorID, fn func(map[locks.SensorID]locks.Current) (locks.Effects, error)) (int, error) {
	cur := make(map[locks.SensorID]locks.Current, len(ids))
	begun := false
	if len(ids) > 0 {
		keys := make([]string, len(ids))
		for i, id := range ids {
			keys[i] = string(id)
		}
		b := &pgx.Batch{}
		b.Queue("begin")
		b.Queue(s.q.lockStates, keys).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				st, err := scanState(rows)
				if err != nil {
					return err
				}
				cur[st.SensorID] = st
			}
			return rows.Err()
		})
		if err := c.SendBatch(ctx, b).Close(); err != nil {
			return 0, err
		}
		begun = true
	}

	e, err := fn(cur)
	if err != nil {
		return 0, err
	}
	for _, st := range e.States {
		if _, ok := cur[st.SensorID]; !ok {
			return 0, fmt.Errorf("writes the state of sensor %q it did not lock", st.SensorID)
		}
	}
	if extra := unlockedSensors(cur, e); len(extra) > 0 {
		b := &pgx.Batch{}
		if !begun {
			b.Queue("begin")
			begun = true
		}
		found := make(map[locks.SensorID]bool, len(extra))
		b.Queue(s.q.lockSensors, extra).Query(func(rows pgx.Rows) error {
			var id locks.SensorID
			_, err := pgx.ForEachRow(rows, []any{&id}, func() error {
				found[id] = true
				return nil
			})
			return err
		})
		if err := c.SendBatch(ctx, b).Close(); err != nil {
			return 0, err
		}
		for _, r := range e.Readings {
			if _, ok := cur[r.SensorID]; !ok && !found[r.SensorID] {
				return 0, sensorNotFound(r.SensorID)
			}
		}
	}

	if !begun && len(e.States)+len(e.Readings)+len(e.DeadLetters)+len(e.Cancel)+len(e.Notify) == 0 {
		return 0, nil // nothing locked, nothing to write
	}
	// Checked: the statements below fail only if the database does, and then together.
	b := &pgx.Batch{}
	if !begun {
		b.Queue("begin")
	}
	if len(e.States) > 0 {
		b.Queue(s.q.writeStates, statesArgs(e.States)...)
	}
	if len(e.Readings) > 0 {
		b.Queue(s.q.insertReadings, readingsArgs(e.Readings)...)
	}
	if len(e.DeadLetters) > 0 {
		b.Queue(s.q.insertDeadLetters, deadLettersArgs(e.DeadLetters)...)
	}
	now := pgschema.In(e.Now)
	if len(e.Cancel) > 0 {
		keys := make([]string, len(e.Cancel))
		for i, id := range e.Cancel {
			keys[i] = string(id)
		}
		b.Queue(s.q.cancel, keys, superseded, now)
	}
	created := 0
	if len(e.Notify) > 0 {
		b.Queue(s.q.notify, append(changesArgs(e.Notify), now)...).Exec(func(tag pgconn.CommandTag) error {
			created = int(tag.RowsAffected())
			return nil
		})
	}
	var commitErr error
	b.Queue("commit").Exec(func(tag pgconn.CommandTag) error {
		commitErr = committed(tag, nil)
		return nil
	})
	if err := c.SendBatch(ctx, b).Close(); err != nil {
		return 0, err
	}
	if commitErr != nil {
		return 0, commitErr
	}
	return created, nil
}

// unlockedSensors returns the sensors whose states Update did not lock but which e
// writes about (readings, cancels, notifications), once each. The Ingester writes only
// about the sensors it locked, so this is normally empty.
func unlockedSensors(cur map[locks.SensorID]locks.Current, e locks.Effects) []string {
	var out []string
	seen := map[locks.SensorID]bool{}
	add := func(id locks.SensorID) {
		if _, ok := cur[id]; !ok && !seen[id] {
			seen[id] = true
			out = append(out, string(id))
		}
	}
	for _, r := range e.Readings {
		add(r.SensorID)
	}
	for _, id := range e.Cancel {
		add(id)
	}
	for _, c := range e.Notify {
		add(c.SensorID)
	}
	return out
}

// statesArgs returns the arrays of writeStatesSQL. Of several states of one sensor the
// last is written, as if each replaced the one before.
func statesArgs(states []locks.Current) []any {
	last := make(map[locks.SensorID]int, len(states))
	for i, st := range states {
		last[st.SensorID] = i
	}
	n := len(last)
	var (
		ids                            = make([]string, 0, n)
		known, lost                    = make([]bool, 0, n), make([]bool, 0, n)
		state                          = make([]int16, 0, n)
		readingAt, changedAt, lastSeen = make([]*time.Time, 0, n), make([]*time.Time, 0, n), make([]*time.Time, 0, n)
	)
	for i, st := range states {
		if last[st.SensorID] != i {
			continue
		}
		ids = append(ids, string(st.SensorID))
		known = append(known, st.Known)
		state = append(state, int16(st.State))
		readingAt = append(readingAt, pgschema.InNull(st.ReadingAt))
		changedAt = append(changedAt, pgschema.InNull(st.ChangedAt))
		lastSeen = append(lastSeen, pgschema.InNull(st.LastSeen))
		lost = append(lost, st.Lost)
	}
	return []any{ids, known, state, readingAt, changedAt, lastSeen, lost}
}

// readingsArgs returns the arrays of insertReadingsSQL.
func readingsArgs(rs []locks.StoredReading) []any {
	var (
		ids      = make([]string, len(rs))
		state    = make([]int16, len(rs))
		at, recv = make([]time.Time, len(rs)), make([]time.Time, len(rs))
		outcome  = make([]string, len(rs))
	)
	for i, r := range rs {
		ids[i], state[i], at[i], recv[i], outcome[i] = string(r.SensorID), int16(r.State), pgschema.In(r.At), pgschema.In(r.Received), string(r.Outcome)
	}
	return []any{ids, state, at, recv, outcome}
}

// deadLettersArgs returns the arrays of insertDeadLettersSQL.
func deadLettersArgs(ds []locks.DeadLetter) []any {
	var (
		raw, reason = make([][]byte, len(ds)), make([][]byte, len(ds))
		recv        = make([]time.Time, len(ds))
	)
	for i, d := range ds {
		raw[i], reason[i], recv[i] = d.Raw, bytesOf(d.Reason), pgschema.In(d.Received)
		if raw[i] == nil {
			raw[i] = []byte{} // an empty message, not a missing one
		}
	}
	return []any{raw, reason, recv}
}

// changesArgs returns the arrays of notifySQL but the last, the time of the Update.
func changesArgs(cs []locks.Change) []any {
	var (
		ids, event = make([]string, len(cs)), make([]string, len(cs))
		state      = make([]int16, len(cs))
		at         = make([]time.Time, len(cs))
		readingAt  = make([]*time.Time, len(cs))
	)
	for i, c := range cs {
		ids[i], event[i], state[i], at[i] = string(c.SensorID), string(c.Event), int16(c.State), pgschema.In(c.At)
		readingAt[i] = pgschema.InNull(c.ReadingAt)
	}
	return []any{ids, event, state, at, readingAt}
}

// Liveness implements locks.Store.
func (s *Store) Liveness(ctx context.Context) ([]locks.Current, error) {
	rows, err := s.pool.Query(ctx, s.q.liveness)
	if err != nil {
		return nil, failed("liveness", err)
	}
	defer rows.Close()
	var out []locks.Current
	for rows.Next() {
		st, err := scanState(rows)
		if err != nil {
			return nil, failed("liveness", err)
		}
		out = append(out, st)
	}
	if err := rows.Err(); err != nil {
		return nil, failed("liveness", err)
	}
	return out, nil
}
