package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/feedkit/feedkit/examples/locksensors/locks"
	"github.com/feedkit/feedkit/internal/pgschema"
)

const (
	// Due notifications, oldest due first, on the partial index of the pending, with
	// what their attempts need. SKIP LOCKED: concurrent claims, in any process, take
	// different notifications and never wait for each other. NO KEY UPDATE leaves the
	// rows to Finish's inserts of attempts, whose foreign key check takes KEY SHARE.
	// $3 are the ids this claim has already taken, when it selects again.
	claimSQL = `SELECT n.id, n.sensor_id, n.client_id, n.event, n.state, n.at, n.created_at, n.status, n.attempts,
			n.next_attempt_at, n.reason, n.last_error, n.finished_at, n.reading_at, n.sequence,
			s.address, c.id, c.name, c.url,
			EXISTS (SELECT FROM {links} l WHERE l.sensor_id = n.sensor_id AND l.client_id = n.client_id)
		FROM {notifications} n
		JOIN {sensors} s ON s.id = n.sensor_id
		LEFT JOIN {clients} c ON c.id = n.client_id
		WHERE n.status = 'pending' AND n.next_attempt_at <= $1 AND n.id <> ALL($3)
		ORDER BY n.next_attempt_at, n.id
		LIMIT $2
		FOR NO KEY UPDATE OF n SKIP LOCKED`
	claimedSQL = `UPDATE {notifications} AS n SET attempts = u.attempts, next_attempt_at = u.next
		FROM unnest($1::bigint[], $2::integer[], $3::timestamptz[]) AS u(id, attempts, next)
		WHERE n.id = u.id`
	killedSQL = `UPDATE {notifications} AS n SET status = 'dead', reason = u.reason, finished_at = $3
		FROM unnest($1::bigint[], $2::bytea[]) AS u(id, reason)
		WHERE n.id = u.id`

	// Finish's write of the notification: the last error whatever its status, the
	// result only while it is pending at the attempt. The row is updated even when
	// nothing changes, so that RowsAffected tells whether it exists.
	finishSQL = `UPDATE {notifications} SET
			last_error  = coalesce($6, last_error),
			status      = CASE WHEN status = 'pending' AND attempts = $2 THEN $3 ELSE status END,
			reason      = CASE WHEN status = 'pending' AND attempts = $2 THEN $4 ELSE reason END,
			finished_at = CASE WHEN status = 'pending' AND attempts = $2 THEN $5 ELSE finished_at END
		WHERE id = $1`
	// Selected from the notification, which finishSQL has locked just before in the
	// same transaction: a missing one adds nothing rather than failing the key check.
	addAttemptSQL = `INSERT INTO {attempts} (notification_id, n, at, duration, status_code, error)
		SELECT id, $2::integer, $3::timestamptz, $4::bigint, $5::integer, $6::bytea FROM {notifications} WHERE id = $1`

	// The status before the replay, which happens only if it was dead; no row for a
	// notification that does not exist.
	replaySQL = `WITH old AS (
			SELECT id, status FROM {notifications} WHERE id = $1 FOR NO KEY UPDATE
		), replayed AS (
			UPDATE {notifications} AS n SET status = 'pending', attempts = 0, next_attempt_at = $2,
				reason = '', finished_at = NULL
			FROM old WHERE n.id = old.id AND old.status = 'dead'
		)
		SELECT status FROM old`

	pendingSQL = `SELECT count(*), min(next_attempt_at) FROM {notifications} WHERE status = 'pending'`

	// The first entry of the partial due index: no scan of the backlog.
	nextDueSQL = `SELECT next_attempt_at FROM {notifications} WHERE status = 'pending'
		ORDER BY next_attempt_at LIMIT 1`
)

// Claim implements locks.Outbox in one transaction of two round trips: the first
// begins it and selects (and locks) the due notifications with their sensor's address,
// their client and whether they are still linked; the second writes each one's attempt
// count and next attempt, or its death, and commits. A notification found at its last
// attempt is made dead and does not count toward c.Limit, as in MemoryStore: when some
// of a full page are, Claim selects again for the rest, a round trip each time.
func (s *Store) Claim(ctx context.Context, c locks.ClaimRequest) ([]locks.Delivery, error) {
	if err := ctx.Err(); err != nil {
		return nil, failed("claim", err)
	}
	var err error
	if c.Limit, err = locks.ResolveLimit("ClaimRequest.Limit", c.Limit); err != nil {
		return nil, err
	}
	var out []locks.Delivery
	err = s.inTx(ctx, func(conn *pgx.Conn) error {
		var err error
		out, err = s.claim(ctx, conn, c)
		return err
	})
	if err != nil {
		return nil, failed("claim", err)
	}
	return out, nil
}

// claim runs Claim's transaction on conn. On an error it may leave conn in the
// transaction, for inTx to roll back.
func (s *Store) claim(ctx context.Context, conn *pgx.Conn, c locks.ClaimRequest) ([]locks.Delivery, error) {
	now := pgschema.In(c.Now)
	retryAfter := c.RetryAfter
	if retryAfter == nil {
		// Rather than panic holding the locks: the next attempt is due at once.
		retryAfter = func(int) time.Duration { return 0 }
	}
	var (
		out []locks.Delivery
		// Not nil: pgx sends a nil slice as NULL, for which claimSQL's
		// n.id <> ALL($3) is NULL and selects nothing.
		taken           = []int64{}
		ids, deadIDs    []int64
		attempts        []int32
		next            []time.Time
		deadReasons     [][]byte
		want, got, dead int
		begun           bool
	)
	for {
		want, got, dead = c.Limit-len(out), 0, 0
		b := &pgx.Batch{}
		if !begun {
			b.Queue("begin")
			begun = true
		}
		b.Queue(s.q.claim, now, want, taken).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				d, err := scanDelivery(rows)
				if err != nil {
					return err
				}
				got++
				taken = append(taken, int64(d.ID))
				if d.Attempts >= c.MaxAttempts {
					dead++
					deadIDs = append(deadIDs, int64(d.ID))
					deadReasons = append(deadReasons, fmt.Appendf(nil, "no answer to attempt %d of %d", d.Attempts, c.MaxAttempts))
					continue
				}
				d.Attempts++
				d.NextAttempt = pgschema.In(now.Add(retryAfter(d.Attempts)))
				ids, attempts, next = append(ids, int64(d.ID)), append(attempts, int32(d.Attempts)), append(next, d.NextAttempt)
				out = append(out, d)
			}
			return rows.Err()
		})
		if err := conn.SendBatch(ctx, b).Close(); err != nil {
			return nil, err
		}
		// A short page means nothing more is due (or free); a full one without deaths
		// filled the limit.
		if got < want || dead == 0 {
			break
		}
	}

	var commitErr error
	b := &pgx.Batch{}
	if len(ids) > 0 {
		b.Queue(s.q.claimed, ids, attempts, next)
	}
	if len(deadIDs) > 0 {
		b.Queue(s.q.killed, deadIDs, deadReasons, now)
	}
	b.Queue("commit").Exec(func(tag pgconn.CommandTag) error {
		commitErr = committed(tag, nil)
		return nil
	})
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		return nil, err
	}
	if commitErr != nil {
		return nil, commitErr
	}
	return out, nil
}

// scanDelivery reads a row of claimSQL.
func scanDelivery(r pgx.Row) (locks.Delivery, error) {
	var (
		d                 locks.Delivery
		event, status     string
		state             int16
		at, created, next time.Time
		reason, lastError []byte
		finished, reading *time.Time
		attempts          int32
		id, clientRef     int64
		clientID          *int64
		name, url         *string
	)
	err := r.Scan(&id, &d.SensorID, &clientRef, &event, &state, &at, &created, &status, &attempts,
		&next, &reason, &lastError, &finished, &reading, &d.Sequence, &d.Address, &clientID, &name, &url, &d.Linked)
	if err != nil {
		return locks.Delivery{}, err
	}
	d.ReadingAt = pgschema.OutNull(reading)
	d.ID, d.ClientID, d.Event, d.State = locks.NotificationID(id), locks.ClientID(clientRef), locks.Event(event), locks.State(state)
	d.At, d.Created, d.Status, d.Attempts = at.UTC(), created.UTC(), locks.Status(status), int(attempts)
	d.NextAttempt, d.Reason, d.LastError, d.Finished = next.UTC(), string(reason), string(lastError), pgschema.OutNull(finished)
	if clientID != nil {
		d.Client = locks.Client{ID: locks.ClientID(*clientID), Name: *name, URL: *url}
	} else {
		d.Linked = false // the links went with the client; said for clarity
	}
	return d, nil
}

// Finish implements locks.Outbox in one round trip: the write of the notification and
// the insert of the attempt travel in one batch, which the server runs as one
// transaction.
func (s *Store) Finish(ctx context.Context, r locks.Result) error {
	var finished *time.Time
	if r.Status != locks.Pending {
		t := pgschema.In(r.At)
		finished = &t
	}
	var lastError []byte
	if r.Attempt != nil && r.Attempt.Error != "" {
		lastError = []byte(r.Attempt.Error)
	}
	var found bool
	b := &pgx.Batch{}
	b.Queue(s.q.finish, int64(r.Notification), r.N, string(r.Status), bytesOf(r.Reason), finished, lastError).
		Exec(func(tag pgconn.CommandTag) error {
			found = tag.RowsAffected() > 0
			return nil
		})
	if a := r.Attempt; a != nil {
		b.Queue(s.q.addAttempt, int64(r.Notification), a.N, pgschema.In(a.At), int64(a.Duration), a.StatusCode, bytesOf(a.Error))
	}
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return failed(fmt.Sprintf("finish notification %d", r.Notification), err)
	}
	if !found {
		return notificationNotFound(r.Notification)
	}
	return nil
}

// Replay implements locks.Outbox in one statement.
func (s *Store) Replay(ctx context.Context, id locks.NotificationID, now time.Time) error {
	var status string
	err := s.pool.QueryRow(ctx, s.q.replay, int64(id), pgschema.In(now)).Scan(&status)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return notificationNotFound(id)
	case err != nil:
		return failed(fmt.Sprintf("replay notification %d", id), err)
	case locks.Status(status) != locks.Dead:
		return fmt.Errorf("notification %d is %s, not dead: %w", id, status, locks.ErrConflict)
	}
	return nil
}

// NextDue implements locks.Outbox.
func (s *Store) NextDue(ctx context.Context) (time.Time, error) {
	var next time.Time
	err := s.pool.QueryRow(ctx, s.q.nextDue).Scan(&next)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, failed("next due", err)
	}
	return next.UTC(), nil
}

// Pending implements locks.Outbox, on the partial index of the pending.
func (s *Store) Pending(ctx context.Context) (int, time.Time, error) {
	var (
		n    int64
		next *time.Time
	)
	if err := s.pool.QueryRow(ctx, s.q.pending).Scan(&n, &next); err != nil {
		return 0, time.Time{}, failed("pending", err)
	}
	return int(n), pgschema.OutNull(next), nil
}
