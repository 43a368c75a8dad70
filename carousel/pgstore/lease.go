package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/feedkit/feedkit/carousel"
	"github.com/feedkit/feedkit/internal/pgschema"
)

// DefaultLeaseName is the lease's name when LeaseOptions.Name is empty.
const DefaultLeaseName = "feedkit-carousel"

// leaseTable is the table of the leases' generations, after the prefix.
const leaseTable = "lease"

// closeTimeout bounds the closing of a lease's connection, which may be unreachable.
const closeTimeout = 5 * time.Second

// lockAttempts bounds the tries of one Active or Promote that each find the lock held
// and then released before its holder could be identified.
const lockAttempts = 3

// takeSQL tries to take the lock, and says which server session the connection is on.
// The backend start time makes the identity exact: the server reuses the pid of a
// session that has ended for later ones.
const takeSQL = `SELECT pg_try_advisory_lock(hashtextextended($1, 0)), pg_backend_pid(),
	(SELECT backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid())`

// holderSQL counts the server sessions holding the lock, and says whether the one
// holding it is the session $2 started at $3. An advisory lock on a bigint key shows in
// pg_locks with the key's high 32 bits as classid, its low 32 bits as objid, and
// objsubid 1. The backend start time of a session of another role is null in
// pg_stat_activity to a role without pg_read_all_stats, so that it never matches.
const holderSQL = `SELECT count(*), coalesce(bool_and(coalesce(l.pid = $2 AND a.backend_start = $3, false)), false)
	FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
	WHERE l.locktype = 'advisory' AND l.granted
		AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND l.classid::int8 = (hashtextextended($1, 0) >> 32) & 4294967295
		AND l.objid::int8 = hashtextextended($1, 0) & 4294967295
		AND l.objsubid = 1`

// LeaseOptions configure a Lease. The zero value is ready to use.
type LeaseOptions struct {
	// Name names the lease: the instances of one deployment use the same name, and
	// exactly one of them is active; "" is DefaultLeaseName.
	Name string
	// Failover makes a passive instance take the lease by itself, on its next Active,
	// once the active one lets it go (closes it, or dies). Without it, an instance that
	// found the lease held stays passive until an operator promotes it.
	Failover bool
	// TablePrefix is prepended to the name of the table that numbers the lease's
	// activations, "lease": the same rules as StoreOptions.TablePrefix. Empty means
	// DefaultTablePrefix.
	TablePrefix string
}

var _ carousel.Promoter = (*Lease)(nil)

// Lease is a carousel.Toggle and carousel.Promoter that makes exactly one of the
// instances sharing a database and a lease name active: the one holding a session-level
// advisory lock on the name. Every taking of the lock is an activation with a
// carousel.Generation greater than every earlier one, counted in a table (see the
// package doc). It is safe for concurrent use.
//
// The lock belongs to a database session, so the Lease keeps a connection of its own,
// taken out of the pool (pgxpool.Conn.Hijack): returned to the pool, the connection
// would carry the lock to whatever borrows it next, and the pool's health checks and
// lifetime limits would close it, releasing the lock, behind the lease's back. Taken
// from the pool rather than dialled, it is made with the pool's config and hooks. For
// the same reason the database must be reached directly or through session pooling: a
// transaction-pooling proxy moves the session under the lock.
//
// A lost connection does not always release the lock at once: after a network failure
// the server keeps the old session, and the lock with it, until it notices (through its
// TCP keepalive or tcp_user_timeout settings, by default after about two hours) or an
// operator ends it (pg_terminate_backend). The Lease remembers the server session
// (pid and backend start time) that last held the lock, and when a try finds the lock
// held looks its holder up in pg_locks: held by that session of its own, the lock is not
// taken as held by another instance. The Lease stays passive meanwhile but tries again
// at every Active, and takes the lock back once the server has dropped the session. It
// does not end that session itself (pg_terminate_backend): ending server sessions is
// left to the server and to operators. Shorter keepalive settings on the server
// (tcp_keepalives_idle, tcp_keepalives_interval, tcp_keepalives_count) shorten the wait.
type Lease struct {
	pool     *pgxpool.Pool
	name     string
	failover bool
	table    string // the generations' table, its name as the SQL has it
	bumpSQL  string

	mu       sync.Mutex
	migrated bool                // the generations' table exists
	conn     *pgx.Conn           // the dedicated connection; nil when there is none
	held     bool                // conn holds the lock
	gen      carousel.Generation // the generation of the activation that took the lock, while held
	others   bool                // since it last held the lock, this instance found another holding it
	last     session             // the server session that last held the lock; zero before the first
	closed   bool
}

// session identifies a server session. The pid alone does not: the server reuses the
// pid of a session that has ended.
type session struct {
	pid   int32
	start *time.Time // backend_start; nil if pg_stat_activity did not say
}

// outcome is the result of a try.
type outcome int

const (
	taken       outcome = iota // this instance holds the lock now
	heldByUs                   // the lock is held by this instance's lost session
	heldByOther                // another instance holds the lock
	unsettled                  // the lock kept changing hands while the try looked
)

// NewLease returns a Lease on pool, which must outlive it. It does not connect: the
// first Active or Promote does.
func NewLease(pool *pgxpool.Pool, opts LeaseOptions) (*Lease, error) {
	if pool == nil {
		return nil, fmt.Errorf("pgstore: NewLease: pool is nil: %w", ErrInvalidOptions)
	}
	if opts.Name == "" {
		opts.Name = DefaultLeaseName
	}
	prefix := opts.TablePrefix
	if prefix == "" {
		prefix = DefaultTablePrefix
	}
	if err := pgschema.CheckPrefix(prefix, leaseTable); err != nil {
		return nil, fmt.Errorf("pgstore: LeaseOptions.TablePrefix %q: %v: %w", prefix, err, ErrInvalidOptions)
	}
	table := pgx.Identifier{prefix + leaseTable}.Sanitize()
	return &Lease{pool: pool, name: opts.Name, failover: opts.Failover, table: table,
		bumpSQL: `INSERT INTO ` + table + ` AS l (name, generation) VALUES ($1, 1)
			ON CONFLICT (name) DO UPDATE SET generation = l.generation + 1
			RETURNING generation`}, nil
}

// Active implements carousel.Toggle, with the generation of the activation that took
// the lock while it holds it. Holding the lock, it checks that the connection is
// alive: when it is not, the lock is lost, and Active says false with the error, so that
// the scheduler shuts its cycles down at once. Not holding it, it tries to take it when
// this instance has not found another holding it since it last held it (at startup, or
// after losing its connection) or when LeaseOptions.Failover is set; otherwise it stays
// passive. Finding the lock held by its own lost session, which the server has not
// dropped yet, does not count as finding another instance: Active says false, and tries
// again at the next call. A ctx done before the call fails it without touching the
// lease; one that ends during the check closes the connection, and so releases the lock
// (once the server notices): pgx cannot tell a slow server from a dead one.
func (l *Lease) Active(ctx context.Context) (bool, carousel.Generation, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return false, 0, nil
	case l.held:
		if err := ctx.Err(); err != nil {
			return false, 0, fmt.Errorf("pgstore: lease %q: %w", l.name, err)
		}
		if err := l.conn.Ping(ctx); err != nil {
			l.drop(ctx)
			return false, 0, fmt.Errorf("pgstore: lease %q: lost the connection holding it: %w", l.name, err)
		}
		return true, l.gen, nil
	case l.others && !l.failover:
		return false, 0, nil
	}
	got, err := l.try(ctx)
	if got != taken {
		return false, 0, err
	}
	return true, l.gen, err
}

// Promote implements carousel.Promoter: it takes the lock if it is free, whatever this
// instance found before, and returns the activation's generation (the same as before
// when it held the lock already); it fails with carousel.ErrLeaseHeld if another instance
// holds it, or if this instance's own lost session still does (the error says so; a
// later Active or Promote takes the lock once the server has dropped that session).
func (l *Lease) Promote(ctx context.Context) (carousel.Generation, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return 0, fmt.Errorf("pgstore: lease %q is closed", l.name)
	}
	if err := ctx.Err(); err != nil { // before a check that it would fail, dropping the lock
		return 0, fmt.Errorf("pgstore: lease %q: %w", l.name, err)
	}
	if l.held {
		if err := l.conn.Ping(ctx); err == nil {
			return l.gen, nil
		}
		l.drop(ctx) // lost: take it again if it is free
	}
	got, err := l.try(ctx)
	switch {
	case err != nil:
		return 0, err
	case got == heldByUs:
		return 0, fmt.Errorf("pgstore: lease %q: held by this instance's lost server session (pid %d), "+
			"until the server drops it: %w", l.name, l.last.pid, carousel.ErrLeaseHeld)
	case got != taken:
		return 0, fmt.Errorf("pgstore: lease %q: %w", l.name, carousel.ErrLeaseHeld)
	}
	return l.gen, nil
}

// Held reports whether this instance held the lease at the last Active or Promote.
func (l *Lease) Held() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held
}

// Close releases the lease and its connection; Active then reports false and Promote
// fails. Closing a closed lease does nothing.
func (l *Lease) Close(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	if l.conn == nil {
		return nil
	}
	var err error
	if l.held {
		// Unlocked explicitly because closing the connection releases the lock only
		// when the server notices, a moment later: an instance taking over right after
		// Close would find it still held.
		_, err = l.conn.Exec(ctx, "SELECT pg_advisory_unlock(hashtextextended($1, 0))", l.name)
	}
	err = errors.Join(err, l.conn.Close(ctx))
	l.conn, l.held = nil, false
	if err != nil {
		return fmt.Errorf("pgstore: close lease %q: %w", l.name, err)
	}
	return nil
}

// try tries to take the lock on the dedicated connection, making one when there is
// none, and numbers the activation when it takes it (l.gen). Finding the lock held, it
// looks up the holder: this instance's lost session (l.last) leaves l.others alone, any
// other session sets it. A holder gone before it could be looked up makes it try again,
// as a call a moment later would have, up to lockAttempts times. It keeps the connection
// for the next try only when there will be one without an operator: with Failover, or
// while l.others is unset.
func (l *Lease) try(ctx context.Context) (outcome, error) {
	if !l.migrated {
		err := pgschema.Migrate(ctx, l.pool, "feedkit/carousel/pgstore: migrate "+l.table,
			`CREATE TABLE IF NOT EXISTS `+l.table+` (
				name       text   PRIMARY KEY,
				generation bigint NOT NULL
			)`)
		if err != nil {
			return unsettled, fmt.Errorf("pgstore: lease %q: create table %s: %w", l.name, l.table, err)
		}
		l.migrated = true
	}
	if l.conn == nil {
		c, err := l.pool.Acquire(ctx)
		if err != nil {
			return unsettled, fmt.Errorf("pgstore: lease %q: connect: %w", l.name, err)
		}
		l.conn = c.Hijack()
	}
	for range lockAttempts {
		var ok bool
		var s session
		if err := l.conn.QueryRow(ctx, takeSQL, l.name).Scan(&ok, &s.pid, &s.start); err != nil {
			l.drop(ctx)
			return unsettled, fmt.Errorf("pgstore: lease %q: take the lock: %w", l.name, err)
		}
		if ok {
			return l.number(ctx, s)
		}
		var holders int64
		var ours bool
		if err := l.conn.QueryRow(ctx, holderSQL, l.name, l.last.pid, l.last.start).Scan(&holders, &ours); err != nil {
			l.drop(ctx)
			return unsettled, fmt.Errorf("pgstore: lease %q: look up the lock's holder: %w", l.name, err)
		}
		switch {
		case holders == 0: // released in between
			continue
		case ours:
			return heldByUs, nil
		}
		l.others = true
		if !l.failover {
			l.drop(ctx)
		}
		return heldByOther, nil
	}
	return unsettled, nil
}

// number bumps the lease's generation, on the connection that has just taken the lock:
// only the holder bumps it, each bump is committed before the lock can pass to another
// instance (the session holds it until it ends), and so every holder's generation is
// greater than every earlier holder's. A failed bump gives the lock up: an activation
// without a generation could not fence its saves.
func (l *Lease) number(ctx context.Context, s session) (outcome, error) {
	var gen int64
	if err := l.conn.QueryRow(ctx, l.bumpSQL, l.name).Scan(&gen); err != nil {
		l.drop(ctx)
		return unsettled, fmt.Errorf("pgstore: lease %q: number the activation: %w", l.name, err)
	}
	l.held, l.others, l.last, l.gen = true, false, s, carousel.Generation(gen)
	return taken, nil
}

// drop closes the dedicated connection, which releases the lock if the server still
// has the session.
func (l *Lease) drop(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
	defer cancel()
	_ = l.conn.Close(ctx) // a dead connection has nothing to tell
	l.conn, l.held = nil, false
}
