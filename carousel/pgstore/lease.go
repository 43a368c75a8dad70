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
)

// DefaultLeaseName is the lease's name when LeaseOptions.Name is empty.
const DefaultLeaseName = "feedkit-carousel"

// closeTimeout bounds the closing of a lease's connection, which may be unreachable.
const closeTimeout = 5 * time.Second

// LeaseOptions configure a Lease. The zero value is ready to use.
type LeaseOptions struct {
	// Name names the lease: the instances of one deployment use the same name, and
	// exactly one of them is active; "" is DefaultLeaseName.
	Name string
	// Failover makes a passive instance take the lease by itself, on its next Active,
	// once the active one lets it go (closes it, or dies). Without it, an instance that
	// found the lease held stays passive until an operator promotes it.
	Failover bool
}

var _ carousel.Promoter = (*Lease)(nil)

// Lease is a carousel.Toggle and carousel.Promoter that makes exactly one of the
// instances sharing a database and a lease name active: the one holding a session-level
// advisory lock on the name. It is safe for concurrent use.
//
// The lock belongs to a database session, so the Lease keeps a connection of its own,
// taken out of the pool (pgxpool.Conn.Hijack): returned to the pool, the connection
// would carry the lock to whatever borrows it next, and the pool's health checks and
// lifetime limits would close it, releasing the lock, behind the lease's back. Taken
// from the pool rather than dialled, it is made with the pool's config and hooks. For
// the same reason the database must be reached directly or through session pooling: a
// transaction-pooling proxy moves the session under the lock.
type Lease struct {
	pool     *pgxpool.Pool
	name     string
	failover bool

	mu     sync.Mutex
	conn   *pgx.Conn // the dedicated connection; nil when there is none
	held   bool      // conn holds the lock
	others bool      // since it last held the lock, this instance found another holding it
	closed bool
}

// NewLease returns a Lease on pool, which must outlive it. It does not connect: the
// first Active or Promote does.
func NewLease(pool *pgxpool.Pool, opts LeaseOptions) (*Lease, error) {
	if pool == nil {
		return nil, fmt.Errorf("pgstore: NewLease: pool is nil: %w", ErrInvalidOptions)
	}
	if opts.Name == "" {
		opts.Name = DefaultLeaseName
	}
	return &Lease{pool: pool, name: opts.Name, failover: opts.Failover}, nil
}

// Active implements carousel.Toggle. Holding the lock, it checks that the connection is
// alive: when it is not, the lock is lost, and Active says false with the error, so that
// the scheduler shuts its cycles down at once. Not holding it, it tries to take it when
// this instance has not found another holding it since it last held it (at startup, or
// after losing its connection) or when LeaseOptions.Failover is set; otherwise it stays
// passive. A ctx done before the call fails it without touching the lease; one that
// ends during the check closes the connection, and so releases the lock: pgx cannot
// tell a slow server from a dead one.
func (l *Lease) Active(ctx context.Context) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return false, nil
	case l.held:
		if err := ctx.Err(); err != nil {
			return false, fmt.Errorf("pgstore: lease %q: %w", l.name, err)
		}
		if err := l.conn.Ping(ctx); err != nil {
			l.drop(ctx)
			return false, fmt.Errorf("pgstore: lease %q: lost the connection holding it: %w", l.name, err)
		}
		return true, nil
	case l.others && !l.failover:
		return false, nil
	}
	return l.try(ctx)
}

// Promote implements carousel.Promoter: it takes the lock if it is free, whatever this
// instance found before, and fails with carousel.ErrLeaseHeld if another instance
// holds it.
func (l *Lease) Promote(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return fmt.Errorf("pgstore: lease %q is closed", l.name)
	}
	if err := ctx.Err(); err != nil { // before a check that it would fail, dropping the lock
		return fmt.Errorf("pgstore: lease %q: %w", l.name, err)
	}
	if l.held {
		if err := l.conn.Ping(ctx); err == nil {
			return nil
		}
		l.drop(ctx) // lost: take it again if it is free
	}
	ok, err := l.try(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("pgstore: lease %q: %w", l.name, carousel.ErrLeaseHeld)
	}
	return nil
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
// none. It keeps the connection for the next try only when there will be one without
// an operator: with Failover.
func (l *Lease) try(ctx context.Context) (bool, error) {
	if l.conn == nil {
		c, err := l.pool.Acquire(ctx)
		if err != nil {
			return false, fmt.Errorf("pgstore: lease %q: connect: %w", l.name, err)
		}
		l.conn = c.Hijack()
	}
	var ok bool
	err := l.conn.QueryRow(ctx, "SELECT pg_try_advisory_lock(hashtextextended($1, 0))", l.name).Scan(&ok)
	switch {
	case err != nil:
		l.drop(ctx)
		return false, fmt.Errorf("pgstore: lease %q: take the lock: %w", l.name, err)
	case ok:
		l.held, l.others = true, false
		return true, nil
	}
	l.others = true
	if !l.failover {
		l.drop(ctx)
	}
	return false, nil
}

// drop closes the dedicated connection, which releases the lock if the server still
// has the session.
func (l *Lease) drop(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
	defer cancel()
	_ = l.conn.Close(ctx) // a dead connection has nothing to tell
	l.conn, l.held = nil, false
}
