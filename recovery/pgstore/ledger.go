package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/feedkit/feedkit/internal/pgschema"
	"github.com/feedkit/feedkit/recovery"
)

var _ recovery.Ledger = (*Ledger)(nil)

// Ledger is a recovery.Ledger in a PostgreSQL table, shared by every process whose pool
// reaches the table: the rate limits of an account then hold over all of its nodes. It
// is safe for concurrent use.
type Ledger struct {
	pool *pgxpool.Pool
	lock string // the advisory lock's key, but for the account that follows

	pruneSQL, pastSQL, insertSQL, releaseSQL string
}

// NewLedger returns a ledger on pool, creating its table (and index) when missing. The
// pool stays the caller's to close.
func NewLedger(ctx context.Context, pool *pgxpool.Pool, opts Options) (*Ledger, error) {
	prefix, err := opts.prefix()
	if err != nil {
		return nil, err
	}
	name := prefix + "requests"
	table := pgx.Identifier{name}.Sanitize()
	err = migrate(ctx, pool, name,
		`CREATE TABLE IF NOT EXISTS `+table+` (
			id       bigserial   PRIMARY KEY,
			account  text        NOT NULL,
			class    integer     NOT NULL,
			at       timestamptz NOT NULL,
			node     bigint,
			producer bigint      NOT NULL,
			length   interval    NOT NULL
		)`,
		`CREATE INDEX IF NOT EXISTS `+pgx.Identifier{name + "_account_class_at"}.Sanitize()+` ON `+table+` (account, class, at)`,
	)
	if err != nil {
		return nil, err
	}
	return &Ledger{
		pool:       pool,
		lock:       "feedkit/recovery/pgstore: " + name + " ",
		pruneSQL:   `DELETE FROM ` + table + ` WHERE account = $1 AND at <= $2`,
		pastSQL:    `SELECT at FROM ` + table + ` WHERE account = $1 AND class = $2 AND at > $3 ORDER BY at`,
		insertSQL:  `INSERT INTO ` + table + ` (account, class, at, node, producer, length) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
		releaseSQL: `DELETE FROM ` + table + ` WHERE id = $1`,
	}, nil
}

// Reserve implements recovery.Ledger: in one transaction, under an advisory lock on the
// account, it reads the account's requests of the class of r.Length that r.Limits still
// count, decides with recovery.Allow, and inserts r when allowed. A request that no tier
// limits (class -1) is allowed and recorded too.
//
// r.At is truncated to the microsecond first, PostgreSQL's precision, so a RetryAt is
// whole microseconds. The account's requests that no window of r.Limits counts any more
// (older than twice the longest window of all tiers) are deleted on the way, so the table
// stays as small as the limits.
func (l *Ledger) Reserve(ctx context.Context, r recovery.LedgerRequest) (recovery.Reservation, error) {
	at := pgschema.In(r.At)
	class := r.Limits.Class(r.Length)
	var longest time.Duration
	for i := range r.Limits {
		longest = max(longest, r.Limits.Horizon(i))
	}
	res := recovery.Reservation{Class: class}
	err := pgx.BeginTxFunc(ctx, l.pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, func(tx pgx.Tx) error {
		// The lock comes first: in READ COMMITTED every later statement then sees what
		// the previous holder committed.
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", l.lock+r.Account); err != nil {
			return err
		}
		// Pruning keeps twice the longest window: a node whose clock runs ahead must not
		// delete what a node running behind still counts.
		if _, err := tx.Exec(ctx, l.pruneSQL, r.Account, at.Add(-2*longest)); err != nil {
			return err
		}
		if class >= 0 {
			rows, _ := tx.Query(ctx, l.pastSQL, r.Account, class, at.Add(-r.Limits.Horizon(class)))
			past, err := pgx.CollectRows(rows, pgx.RowTo[time.Time])
			if err != nil {
				return err
			}
			ok, retryAt := recovery.Allow(past, at, r.Limits[class].Windows)
			if !ok {
				res.RetryAt = retryAt.UTC()
				return nil
			}
		}
		res.Allowed = true
		return tx.QueryRow(ctx, l.insertSQL, r.Account, class, at, nodeToDB(r.Node), int64(r.Producer), r.Length).Scan(&res.ID)
	})
	if err != nil {
		return recovery.Reservation{}, fmt.Errorf("pgstore: reserve: %w", err)
	}
	return res, nil
}

// Release implements recovery.Ledger: it deletes the reservation. An id that is not in
// the ledger (never given, released already, or pruned as too old to count) is no error.
func (l *Ledger) Release(ctx context.Context, id int64) error {
	if _, err := l.pool.Exec(ctx, l.releaseSQL, id); err != nil {
		return fmt.Errorf("pgstore: release %d: %w", id, err)
	}
	return nil
}
