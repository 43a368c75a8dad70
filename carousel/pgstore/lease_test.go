package pgstore

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

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
	ok, _ := activeGen(t, l)
	return ok
}

// activeGen returns l.Active's answer and generation, failing the test on an error.
func activeGen(t *testing.T, l *Lease) (bool, carousel.Generation) {
	t.Helper()
	ok, gen, err := l.Active(t.Context())
	require.NoError(t, err)
	if !ok {
		assert.Zero(t, gen, "a passive answer has no generation")
	}
	return ok, gen
}

// promote promotes l, failing the test on an error, and returns the generation.
func promote(t *testing.T, l *Lease) carousel.Generation {
	t.Helper()
	gen, err := l.Promote(t.Context())
	require.NoError(t, err)
	require.NotZero(t, gen)
	return gen
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

	promote(t, b)
	assert.True(t, active(t, b))
	assert.True(t, b.Held())
	promote(t, b)
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
	a, b := newTestLease(t, pgtest.SecondPool(t, pool), name, false), newTestLease(t, pool, name, false)

	promote(t, a)
	_, err := b.Promote(t.Context())
	require.ErrorIs(t, err, carousel.ErrLeaseHeld)
	assert.ErrorContains(t, err, name)
	assert.False(t, active(t, b))
	assert.True(t, active(t, a))

	require.NoError(t, a.Close(t.Context()))
	promote(t, b)
	assert.True(t, active(t, b))
	_, err = a.Promote(t.Context())
	assert.ErrorContains(t, err, "closed")
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
	ok, _, err := a.Active(t.Context())
	require.Error(t, err)
	assert.ErrorContains(t, err, name)
	assert.False(t, ok)
	assert.False(t, a.Held())

	assert.True(t, active(t, b), "the Failover instance takes over")
	assert.False(t, active(t, a), "the lost holder tries again, and finds b")
	require.NoError(t, b.Close(t.Context()))
	assert.False(t, active(t, a), "having seen b, a waits for an operator")
	promote(t, a)
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
	ok, _, err := a.Active(t.Context())
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
	promote(t, a)
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
	ok, _, err := a.Active(ctx)
	assert.ErrorIs(t, err, ctx.Err())
	assert.False(t, ok)
	assert.True(t, a.Held())
	_, err = a.Promote(ctx)
	assert.ErrorIs(t, err, ctx.Err())
	assert.True(t, a.Held())
	assert.True(t, active(t, a))
}

// Every taking of the lease, by any instance, is a new activation, numbered above every
// one before: the holder's generation holds while it keeps the lease, the next holder's
// is greater, and so is the one of a holder that lost its connection and took the lease
// back.
func TestLeaseGenerations(t *testing.T) {
	pool := pgtest.Pool(t)
	name := uniqueName(t)
	a, b := newTestLease(t, pgtest.SecondPool(t, pool), name, false), newTestLease(t, pool, name, true)

	ok, g1 := activeGen(t, a)
	require.True(t, ok)
	require.NotZero(t, g1)
	_, again := activeGen(t, a)
	assert.Equal(t, g1, again, "the same activation while it holds the lease")
	assert.Equal(t, g1, promote(t, a), "promoting the holder is no new activation")
	assert.False(t, active(t, b))

	require.NoError(t, a.Close(t.Context()))
	ok, g2 := activeGen(t, b)
	require.True(t, ok, "b fails over")
	assert.Greater(t, g2, g1, "b's activation comes after a's")

	terminate(t, pool, b)
	_, _, err := b.Active(t.Context())
	require.Error(t, err, "b finds its connection lost")
	ok, g3 := activeGen(t, b)
	require.True(t, ok, "b takes the free lease back")
	assert.Greater(t, g3, g2, "taken back is a new activation")

	require.NoError(t, b.Close(t.Context()))
	c := newTestLease(t, pool, name, false) // a third instance, as after a restart
	assert.Greater(t, promote(t, c), g3)

	other := newTestLease(t, pool, uniqueName(t), false)
	ok, g := activeGen(t, other)
	require.True(t, ok)
	assert.Equal(t, carousel.Generation(1), g, "each name counts its own activations")
}

// LeaseOptions.TablePrefix names the generations' table; a bad one is refused naming
// the field.
func TestLeaseTablePrefix(t *testing.T) {
	pool := pgtest.Pool(t)
	l, err := NewLease(pool, LeaseOptions{Name: uniqueName(t), TablePrefix: "app1_"})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, l.Close(background())) })
	ok, gen := activeGen(t, l)
	require.True(t, ok)
	var n int64
	require.NoError(t, pool.QueryRow(t.Context(), "SELECT generation FROM app1_lease WHERE name = $1", l.name).Scan(&n))
	assert.Equal(t, int64(gen), n)

	for _, bad := range []string{"App_", "9x_", "a-b"} {
		_, err := NewLease(pool, LeaseOptions{TablePrefix: bad})
		require.ErrorIs(t, err, ErrInvalidOptions, bad)
		assert.ErrorContains(t, err, `LeaseOptions.TablePrefix "`+bad+`"`)
	}
}

// Many goroutines asking several Failover instances at once, as schedulers and an
// operator would, leave exactly one of them holding the lease, and no two instances are
// ever given the same generation.
func TestLeaseConcurrent(t *testing.T) {
	pool := pgtest.Pool(t)
	name := uniqueName(t)
	leases := make([]*Lease, 4)
	for i := range leases {
		leases[i] = newTestLease(t, pool, name, true)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	holderOf := map[carousel.Generation]int{} // generation → the lease given it
	saw := func(lease int, gen carousel.Generation) {
		mu.Lock()
		defer mu.Unlock()
		if h, ok := holderOf[gen]; ok && h != lease {
			t.Errorf("generation %d given to leases %d and %d", gen, h, lease)
		}
		holderOf[gen] = lease
	}
	start := make(chan struct{})
	for g := range 16 {
		i := g % len(leases)
		l := leases[i]
		wg.Go(func() {
			<-start
			for k := range 20 {
				if (g+k)%5 == 0 {
					gen, err := l.Promote(t.Context())
					if err == nil {
						saw(i, gen)
					} else if !assert.ErrorIs(t, err, carousel.ErrLeaseHeld) {
						return
					}
					continue
				}
				ok, gen, err := l.Active(t.Context())
				if !assert.NoError(t, err) {
					return
				}
				if ok {
					saw(i, gen)
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
	assert.NotEmpty(t, holderOf)
}

// cutProxy forwards TCP to the server; cut breaks the client side of every connection
// so far while the server side stays open, as a network failure the server has not
// noticed yet does (until its TCP keepalive gives up, by default after two hours).
type cutProxy struct {
	ln      net.Listener
	mu      sync.Mutex
	clients []net.Conn
	servers []net.Conn
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &cutProxy{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.clients, p.servers = append(p.clients, c), append(p.servers, s)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(s, c) }() // never closes s: the server must not notice
			go func() { _, _ = io.Copy(c, s) }()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, c := range append(p.clients, p.servers...) {
			c.Close()
		}
	})
	return p
}

func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.clients {
		c.Close()
	}
	p.clients = nil
}

// proxiedPool returns a pool on the schema of pool whose connections go through proxy.
func proxiedPool(t *testing.T, pool *pgxpool.Pool, proxy *cutProxy) *pgxpool.Pool {
	t.Helper()
	cfg := pool.Config()
	host, port, err := net.SplitHostPort(proxy.ln.Addr().String())
	require.NoError(t, err)
	p, err := strconv.Atoi(port)
	require.NoError(t, err)
	cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Fallbacks = host, uint16(p), nil
	proxied, err := pgxpool.NewWithConfig(t.Context(), cfg)
	require.NoError(t, err)
	t.Cleanup(proxied.Close)
	return proxied
}

// Without Failover, the holder that loses its connection while the server keeps its
// session (the usual case after a network failure) finds the lock held by that session
// of its own: it stays passive but, not taking it for another instance, keeps trying,
// and takes the lease back once the server drops the session. Another instance finding
// the same session holding the lock takes it for another instance, as it is.
func TestLeaseRetakesAfterItsOwnSessionDies(t *testing.T) {
	pool := pgtest.Pool(t)
	cc := pool.Config().ConnConfig
	proxy := newCutProxy(t, net.JoinHostPort(cc.Host, strconv.Itoa(int(cc.Port))))
	name := uniqueName(t)
	a, b := newTestLease(t, proxiedPool(t, pool, proxy), name, false), newTestLease(t, pool, name, false)

	require.True(t, active(t, a))
	require.False(t, active(t, b))
	oldPID := a.pid()

	proxy.cut()
	ok, _, err := a.Active(t.Context())
	require.Error(t, err, "the lost connection is noticed")
	require.False(t, ok)

	for range 3 {
		assert.False(t, active(t, a), "the old session still holds the lock")
	}
	assert.False(t, a.Held())
	_, err = a.Promote(t.Context())
	require.ErrorIs(t, err, carousel.ErrLeaseHeld)
	assert.ErrorContains(t, err, fmt.Sprintf("lost server session (pid %d)", oldPID))
	assert.False(t, active(t, b))

	// The server finally drops the dead session, releasing the lock.
	var terminated bool
	require.NoError(t, pool.QueryRow(t.Context(), "SELECT pg_terminate_backend($1, 10000)", int32(oldPID)).Scan(&terminated))
	require.True(t, terminated)

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	ok, _, err = a.Active(ctx)
	require.NoError(t, err)
	assert.True(t, ok, "the lease is free and nobody else ever held it: the instance that held it takes it back")
	assert.NotEqual(t, oldPID, a.pid())
	assert.False(t, active(t, b), "b found another session holding the lock, and waits for an operator")
}

// holderSQL finds the session holding the lock of a name, whatever the sign of the
// name's hash and of its halves, and recognises it by pid and backend start time only.
func TestLeaseHolderLookup(t *testing.T) {
	pool := pgtest.Pool(t)
	holder, err := pool.Acquire(t.Context())
	require.NoError(t, err)
	defer holder.Release()
	var s session
	require.NoError(t, holder.QueryRow(t.Context(), takeSQL, uniqueName(t)).Scan(new(bool), &s.pid, &s.start))
	require.NotNil(t, s.start)
	later := s.start.Add(time.Microsecond) // the same pid, reused by a later session

	lookup := func(name string, pid int32, start *time.Time) (holders int64, ours bool) {
		t.Helper()
		require.NoError(t, pool.QueryRow(t.Context(), holderSQL, name, pid, start).Scan(&holders, &ours))
		return holders, ours
	}
	signs := map[[2]bool]bool{}
	for i := range 32 {
		name := fmt.Sprintf("%s-%d", uniqueName(t), i)
		var key int64
		require.NoError(t, holder.QueryRow(t.Context(),
			"SELECT hashtextextended($1, 0), pg_advisory_lock(hashtextextended($1, 0))", name).Scan(&key, nil))
		signs[[2]bool{key < 0, int32(key) < 0}] = true

		holders, ours := lookup(name, s.pid, s.start)
		assert.Equal(t, int64(1), holders, name)
		assert.True(t, ours, name)
		_, ours = lookup(name, s.pid+1, s.start)
		assert.False(t, ours, "another pid")
		_, ours = lookup(name, s.pid, &later)
		assert.False(t, ours, "another backend start")
		_, ours = lookup(name, s.pid, nil)
		assert.False(t, ours, "an unknown backend start")

		var unlocked bool
		require.NoError(t, holder.QueryRow(t.Context(), "SELECT pg_advisory_unlock(hashtextextended($1, 0))", name).Scan(&unlocked))
		require.True(t, unlocked)
		holders, _ = lookup(name, s.pid, s.start)
		assert.Zero(t, holders, "released")
	}
	t.Logf("signs of (key, low half) seen: %v", signs)
}
