package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/feedkit/feedkit/examples/locksensors/locks"
	"github.com/feedkit/feedkit/internal/pgschema"
)

// noteColumns are the columns scanNotification reads.
const noteColumns = `id, sensor_id, client_id, event, state, at, created_at, status, attempts,
	next_attempt_at, reason, last_error, finished_at, reading_at, sequence`

// attemptColumns are the columns scanAttempt reads.
const attemptColumns = `notification_id, n, at, duration, status_code, error`

// The history's pages are these, with the Range's conditions and the order added
// (page): each on the index (sensor_id, at, id) of its table.
const (
	readingsSQL      = `SELECT id, sensor_id, state, at, received_at, outcome FROM {readings} WHERE sensor_id = $1`
	notificationsSQL = `SELECT ` + noteColumns + ` FROM {notifications} WHERE sensor_id = $1`
	attemptsOfSQL    = `SELECT ` + attemptColumns + ` FROM {attempts} WHERE notification_id = ANY($1) ORDER BY notification_id, id`

	notificationSQL      = `SELECT ` + noteColumns + ` FROM {notifications} WHERE id = $1`
	attemptsOfOneSQL     = `SELECT ` + attemptColumns + ` FROM {attempts} WHERE notification_id = $1 ORDER BY id`
	deadNotificationsSQL = `SELECT ` + noteColumns + ` FROM {notifications} WHERE status = 'dead' AND id > $1 ORDER BY id LIMIT $2`
	deadLettersSQL       = `SELECT id, raw, reason, received_at FROM {dead_letters} WHERE id > $1 ORDER BY id LIMIT $2`
)

// page returns base (whose $1 is the sensor) with r's conditions, order and limit (a
// page size resolved already), and the arguments. Only the conditions r sets are written, rather than each as
// "$n IS NULL OR ...", so that every variant has a plan of its own on the index.
func page(base string, sensor locks.SensorID, r locks.Range) (string, []any) {
	var b strings.Builder
	b.WriteString(base)
	args := []any{string(sensor)}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if !r.From.IsZero() {
		b.WriteString(` AND at >= ` + arg(pgschema.CeilMicro(r.From)))
	}
	if !r.To.IsZero() {
		b.WriteString(` AND at < ` + arg(pgschema.CeilMicro(r.To)))
	}
	if !r.After.IsZero() {
		a := r.After.At.UTC()
		if c := pgschema.CeilMicro(a); !c.Equal(a) {
			// No stored time equals a: every entry from the next microsecond on is after
			// it, whatever its id.
			b.WriteString(` AND at >= ` + arg(c))
		} else {
			b.WriteString(` AND (at, id) > (` + arg(a) + `, ` + arg(r.After.ID) + `)`)
		}
	}
	b.WriteString(` ORDER BY at, id LIMIT ` + arg(r.Limit))
	return b.String(), args
}

// Readings implements locks.History: one round trip, which also tells an unknown
// sensor from one without readings in r.
func (s *Store) Readings(ctx context.Context, sensor locks.SensorID, r locks.Range) ([]locks.StoredReading, error) {
	var err error
	if r.Limit, err = locks.ResolveLimit("Range.Limit", r.Limit); err != nil {
		return nil, err
	}
	sql, args := page(s.q.readings, sensor, r)
	out := []locks.StoredReading{}
	var exists bool
	b := &pgx.Batch{}
	b.Queue(s.q.sensorExists, sensor).QueryRow(func(row pgx.Row) error { return row.Scan(&exists) })
	b.Queue(sql, args...).Query(func(rows pgx.Rows) error {
		var (
			x        locks.StoredReading
			state    int16
			at, recv time.Time
			outcome  string
		)
		_, err := pgx.ForEachRow(rows, []any{&x.ID, &x.SensorID, &state, &at, &recv, &outcome}, func() error {
			x.State, x.At, x.Received, x.Outcome = locks.State(state), at.UTC(), recv.UTC(), locks.Outcome(outcome)
			out = append(out, x)
			return nil
		})
		return err
	})
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, failed(fmt.Sprintf("readings of sensor %q", sensor), err)
	}
	if !exists {
		return nil, sensorNotFound(sensor)
	}
	return out, nil
}

// Notifications implements locks.History: the page and whether the sensor exists in
// one round trip, the page's attempts in a second.
func (s *Store) Notifications(ctx context.Context, sensor locks.SensorID, r locks.Range) ([]locks.Notification, error) {
	var err error
	if r.Limit, err = locks.ResolveLimit("Range.Limit", r.Limit); err != nil {
		return nil, err
	}
	sql, args := page(s.q.notifications, sensor, r)
	out := []locks.Notification{}
	var exists bool
	b := &pgx.Batch{}
	b.Queue(s.q.sensorExists, sensor).QueryRow(func(row pgx.Row) error { return row.Scan(&exists) })
	b.Queue(sql, args...).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			n, err := scanNotification(rows)
			if err != nil {
				return err
			}
			out = append(out, n)
		}
		return rows.Err()
	})
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, failed(fmt.Sprintf("notifications of sensor %q", sensor), err)
	}
	if !exists {
		return nil, sensorNotFound(sensor)
	}
	if len(out) == 0 {
		return out, nil
	}
	ids := make([]int64, len(out))
	at := make(map[locks.NotificationID]int, len(out))
	for i, n := range out {
		ids[i] = int64(n.ID)
		at[n.ID] = i
	}
	rows, err := s.pool.Query(ctx, s.q.attemptsOf, ids)
	if err != nil {
		return nil, failed(fmt.Sprintf("notifications of sensor %q", sensor), err)
	}
	err = forEachAttempt(rows, func(a locks.Attempt) {
		n := &out[at[a.Notification]]
		n.History = append(n.History, a)
	})
	if err != nil {
		return nil, failed(fmt.Sprintf("notifications of sensor %q", sensor), err)
	}
	return out, nil
}

// Notification implements locks.History, in one round trip.
func (s *Store) Notification(ctx context.Context, id locks.NotificationID) (locks.Notification, error) {
	var n locks.Notification
	var history []locks.Attempt
	b := &pgx.Batch{}
	b.Queue(s.q.notification, id).QueryRow(func(row pgx.Row) error {
		var err error
		n, err = scanNotification(row)
		return err
	})
	b.Queue(s.q.attemptsOfOne, id).Query(func(rows pgx.Rows) error {
		return forEachAttempt(rows, func(a locks.Attempt) { history = append(history, a) })
	})
	err := s.pool.SendBatch(ctx, b).Close()
	if errors.Is(err, pgx.ErrNoRows) {
		return locks.Notification{}, notificationNotFound(id)
	}
	if err != nil {
		return locks.Notification{}, failed(fmt.Sprintf("notification %d", id), err)
	}
	n.History = history
	return n, nil
}

// DeadNotifications implements locks.History, on the partial index of the dead.
func (s *Store) DeadNotifications(ctx context.Context, after locks.NotificationID, limit int) ([]locks.Notification, error) {
	limit, err := locks.ResolveLimit("limit", limit)
	if err != nil {
		return nil, err
	}
	out := []locks.Notification{}
	rows, err := s.pool.Query(ctx, s.q.deadNotifications, after, limit)
	if err != nil {
		return nil, failed("dead notifications", err)
	}
	defer rows.Close()
	for rows.Next() {
		n, err := scanNotification(rows)
		if err != nil {
			return nil, failed("dead notifications", err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, failed("dead notifications", err)
	}
	return out, nil
}

// DeadLetters implements locks.History.
func (s *Store) DeadLetters(ctx context.Context, after int64, limit int) ([]locks.DeadLetter, error) {
	limit, err := locks.ResolveLimit("limit", limit)
	if err != nil {
		return nil, err
	}
	out := []locks.DeadLetter{}
	rows, err := s.pool.Query(ctx, s.q.deadLetters, after, limit)
	if err != nil {
		return nil, failed("dead letters", err)
	}
	var (
		d      locks.DeadLetter
		reason []byte
		recv   time.Time
	)
	_, err = pgx.ForEachRow(rows, []any{&d.ID, &d.Raw, &reason, &recv}, func() error {
		d.Reason, d.Received = string(reason), recv.UTC()
		out = append(out, d)
		return nil
	})
	if err != nil {
		return nil, failed("dead letters", err)
	}
	return out, nil
}

// scanNotification reads the noteColumns of a row.
func scanNotification(r pgx.Row) (locks.Notification, error) {
	var (
		n                 locks.Notification
		event, status     string
		state             int16
		at, created, next time.Time
		reason, lastError []byte
		finished, reading *time.Time
		attempts          int32
		id, client        int64
	)
	err := r.Scan(&id, &n.SensorID, &client, &event, &state, &at, &created, &status, &attempts,
		&next, &reason, &lastError, &finished, &reading, &n.Sequence)
	if err != nil {
		return locks.Notification{}, err
	}
	n.ReadingAt = pgschema.OutNull(reading)
	n.ID, n.ClientID, n.Event, n.State = locks.NotificationID(id), locks.ClientID(client), locks.Event(event), locks.State(state)
	n.At, n.Created, n.Status, n.Attempts = at.UTC(), created.UTC(), locks.Status(status), int(attempts)
	n.NextAttempt, n.Reason, n.LastError, n.Finished = next.UTC(), string(reason), string(lastError), pgschema.OutNull(finished)
	return n, nil
}

// forEachAttempt calls fn with each row of attemptColumns.
func forEachAttempt(rows pgx.Rows, fn func(locks.Attempt)) error {
	var (
		a             locks.Attempt
		id            int64
		n, statusCode int32
		at            time.Time
		duration      int64
		errText       []byte
	)
	_, err := pgx.ForEachRow(rows, []any{&id, &n, &at, &duration, &statusCode, &errText}, func() error {
		a = locks.Attempt{Notification: locks.NotificationID(id), N: int(n), At: at.UTC(),
			Duration: time.Duration(duration), StatusCode: int(statusCode), Error: string(errText)}
		fn(a)
		return nil
	})
	return err
}
