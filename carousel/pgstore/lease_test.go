package pgstore

import (
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/carousel"
	"github.com/feedkit/feedkit/internal/pgtest"
)

func newTestLease(t *testing.T, pool *pgxpool.Pool, name string, failover bool) *Lease {
	t.Helper()
	l, err := NewLease(pool, LeaseOptions{Name: name, Failover: failover})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, l.Close(background())) })
	return l
}

// active returns l.Active's answer, failing the test on an error.
func active(t *testing.T, l *Lease) bool {
	t.Helper()
	ok, err := l.Active(t.Context())
	require.NoError(t, err)
	return ok
}

// pid returns the server process id of l's connection, 0 when it has none.
func (l *Lease) pid() uint32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		return 0
	}
	return l.conn.PgConn().PID()
}

// terminate ends the server process of l's connection, as a crash of the network or of
// the server would, and waits until it is gone and its locks released.
func terminate(t *testing.T, pool *pgxpool.Pool, l *Lease) {
	t.Helper()
	pid := l.pid()
	require.NotZero(t, pid)
	var ok bool
	require.NoError(t, pool.QueryRow(t.Context(), "SELECT pg_terminate_backend($1, 10000)", int32(pid)).Scan(&ok))
	require.True(t, ok, "backend %d not terminated", pid)
}

// Of two instances, the first to ask is active; without Failover the second stays
// passive when the first lets go, until an operator promotes it.
func TestLeaseWithoutFailover(t *testing.T) {
	pool := pgtest.Pool(t)
	name := uniqueName(t)
	a, b := newTestLease(t, pool, name, false), newTestLease(t, pool, name, false)

	assert.True(t, active(t, a))
	assert.False(t, active(t, b))
	assert.True(t, active(t, a), "the holder stays active")
	assert.True(t, a.Held())
	assert.False(t, b.Held())

	require.NoError(t, a.Close(t.Context()))
	assert.False(t, active(t, a), "closed")
	assert.False(t, active(t, b), "a failover does not start a passive instance by itself")
	assert.Zero(t, b.pid(), "a passive instance without Failover keeps no connection")

	require.NoError(t, b.Promote(t.Context()))
	assert.True(t, active(t, b))
	assert.True(t, b.Held())
	require.NoError(t, b.Promote(t.Context()), "promoting the holder")
}

// With Failover, the passive instance takes over at its next Active.
func TestLeaseWithFailover(t *testing.T) {
	pool := pgtest.Pool(t)
	name := uniqueName(t)
	a, b := newTestLease(t, pool, name, true), newTestLease(t, pool, name, true)

	assert.True(t, active(t, a))
	assert.False(t, active(t, b))
	assert.False(t, active(t, b))
	require.NoError(t, a.Close(t.Context()))
	assert.True(t, active(t, b))
	assert.False(t, active(t, a))
}

// Promote fails with ErrLeaseHeld, naming the lease, while another instance holds it,
// and succeeds once it is free.
func TestLeasePromote(t *testing.T) {
	pool := pgtest.Pool(t)
	name := uniqueName(t)
	a, b := newTestLease(t, secondPool(t, pool), name, false), newTestLease(t, pool, name, false)

	require.NoError(t, a.Promote(t.Context()), "a free lease")
	err := b.Promote(t.Context())
	require.ErrorIs(t, err, carousel.ErrLeaseHeld)
	assert.ErrorContains(t, err, name)
	assert.False(t, active(t, b))
	assert.True(t, active(t, a))

	require.NoError(t, a.Close(t.Context()))
	require.NoError(t, b.Promote(t.Context()))
	assert.True(t, active(t, b))
	assert.ErrorContains(t, a.Promote(t.Context()), "closed")
}

// The holder whose connection dies learns it at its next Active, which says false with
// an error; a Failover instance takes over; the old holder, having now seen another
// holder, stays passive.
func TestLeaseLostConnectionFailover(t *testing.T) {
	pool := pgtest.Pool(t)
	name := uniqueName(t)
	a, b := newTestLease(t, pool, name, false), newTestLease(t, pool, name, true)
	require.True(t, active(t, a))
	require.False(t, active(t, b))

	terminate(t, pool, a)
	ok, err := a.Active(t.Context())
	require.Error(t, err)
	assert.ErrorContains(t, err, name)
	assert.False(t, ok)
	assert.False(t, a.Held())

	assert.True(t, active(t, b), "the Failover instance takes over")
	assert.False(t, active(t, a), "the lost holder tries again, and finds b")
	require.NoError(t, b.Close(t.Context()))
	assert.False(t, active(t, a), "having seen b, a waits for an operator")
	require.NoError(t, a.Promote(t.Context()))
	assert.True(t, active(t, a))
}

// The holder whose connection dies, and which never saw another holder, takes the lease
// again at its next Active.
func TestLeaseLostConnectionRetaken(t *testing.T) {
	pool := pgtest.Pool(t)
	name := uniqueName(t)
	a, b := newTestLease(t, pool, name, false), newTestLease(t, pool, name, false)
	require.True(t, active(t, a))
	require.False(t, active(t, b))

	terminate(t, pool, a)
	ok, err := a.Active(t.Context())
	require.Error(t, err)
	assert.False(t, ok)
	assert.True(t, active(t, a), "free again: a takes it back")
	assert.False(t, active(t, b))
}

// A lost connection found by Promote is replaced: Promote takes the lease again.
func TestLeasePromoteAfterLostConnection(t *testing.T) {
	pool := pgtest.Pool(t)
	a := newTestLease(t, pool, uniqueName(t), false)
	require.True(t, active(t, a))
	terminate(t, pool, a)
	require.NoError(t, a.Promote(t.Context()))
	assert.True(t, active(t, a))
}

// Leases of other names do not exclude each other; Close is idempotent, also on a lease
// that never connected; the zero options name the lease DefaultLeaseName.
func TestLeaseNamesAndClose(t *testing.T) {
	pool := pgtest.Pool(t)
	a, b := newTestLease(t, pool, uniqueName(t), false), newTestLease(t, pool, uniqueName(t), false)
	assert.True(t, active(t, a))
	assert.True(t, active(t, b))
	require.NoError(t, a.Close(t.Context()))
	require.NoError(t, a.Close(t.Context()))

	unused, err := NewLease(pool, LeaseOptions{})
	require.NoError(t, err)
	assert.Equal(t, DefaultLeaseName, unused.name)
	require.NoError(t, unused.Close(t.Context()))
	assert.False(t, active(t, unused))

	_, err = NewLease(nil, LeaseOptions{})
	assert.ErrorIs(t, err, ErrInvalidOptions)
}

// Active and Promote on a canceled context fail without giving the lease up.
func TestLeaseCanceledContext(t *testing.T) {
	pool := pgtest.Pool(t)
	a := newTestLease(t, pool, uniqueName(t), false)
	require.True(t, active(t, a))
	ctx, cancel := contextCanceled(t)
	defer cancel()
	ok, err := a.Active(ctx)
	assert.ErrorIs(t, err, ctx.Err())
	assert.False(t, ok)
	assert.True(t, a.Held())
	assert.ErrorIs(t, a.Promote(ctx), ctx.Err())
	assert.True(t, a.Held())
	assert.True(t, active(t, a))
}

// Many goroutines asking several Failover instances at once, as schedulers and an
// operator would, leave exactly one of them holding the lease.
func TestLeaseConcurrent(t *testing.T) {
	pool := pgtest.Pool(t)
	name := uniqueName(t)
	leases := make([]*Lease, 4)
	for i := range leases {
		leases[i] = newTestLease(t, pool, name, true)
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := range 16 {
		l := leases[g%len(leases)]
		wg.Go(func() {
			<-start
			for i := range 20 {
				var err error
				if (g+i)%5 == 0 {
					err = l.Promote(t.Context())
					if err != nil && !assert.ErrorIs(t, err, carousel.ErrLeaseHeld) {
						return
					}
					continue
				}
				_, err = l.Active(t.Context())
				if !assert.NoError(t, err) {
					return
				}
			}
		})
	}
	close(start)
	wg.Wait()
	held := 0
	for _, l := range leases {
		if l.Held() {
			held++
		}
	}
	assert.Equal(t, 1, held)
}
