package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/internal/pgtest"
	"github.com/feedkit/feedkit/recovery"
	"github.com/feedkit/feedkit/recovery/pgstore"
	"github.com/feedkit/feedkit/recovery/recoverytest"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func newLedger(t *testing.T, pool *pgxpool.Pool) *pgstore.Ledger {
	t.Helper()
	l, err := pgstore.NewLedger(t.Context(), pool, pgstore.Options{})
	require.NoError(t, err)
	return l
}

func newStore(t *testing.T, pool *pgxpool.Pool) *pgstore.Store {
	t.Helper()
	s, err := pgstore.NewStore(t.Context(), pool, pgstore.Options{})
	require.NoError(t, err)
	return s
}

func TestLedgerConformance(t *testing.T) {
	recoverytest.TestLedger(t, func(t *testing.T) recovery.Ledger { return newLedger(t, pgtest.Pool(t)) })
}

func TestStoreConformance(t *testing.T) {
	recoverytest.TestStore(t, func(t *testing.T) recovery.Store { return newStore(t, pgtest.Pool(t)) })
}

func shortRequest(account string, node int, at time.Time) recovery.LedgerRequest {
	return recovery.LedgerRequest{
		Account: account, Node: feed.Node(node), Producer: 1, At: at,
		Length: 10 * time.Minute, Limits: recovery.DefaultLimits(),
	}
}

// TestLedgerTwoProcessesSameInstant has two ledgers on pools of their own, as two
// processes of one account with different node ids, reserve at the same instant from
// many goroutines: exactly the window's maximum gets through.
func TestLedgerTwoProcessesSameInstant(t *testing.T) {
	p1 := pgtest.Pool(t)
	p2 := pgtest.SecondPool(t, p1)
	ledgers := []*pgstore.Ledger{newLedger(t, p1), newLedger(t, p2)}
	const perLedger, each = 8, 5

	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		allowed []int64
		refused int
	)
	start := make(chan struct{})
	for i, l := range ledgers {
		for range perLedger {
			wg.Go(func() {
				<-start
				for range each {
					res, err := l.Reserve(t.Context(), shortRequest("acc", i+1, t0))
					if !assert.NoError(t, err) {
						return
					}
					mu.Lock()
					if res.Allowed {
						allowed = append(allowed, res.ID)
					} else {
						refused++
						assert.True(t, res.RetryAt.Equal(t0.Add(10*time.Minute)), "RetryAt %v", res.RetryAt)
					}
					mu.Unlock()
				}
			})
		}
	}
	close(start)
	wg.Wait()
	assert.Len(t, allowed, 20, "the 10-minute window's maximum, never more")
	assert.Len(t, slices.Compact(slices.Sorted(slices.Values(allowed))), 20, "ids are distinct")
	assert.Equal(t, len(ledgers)*perLedger*each-20, refused)

	// Which process gets how many of the places is the scheduler's business (on a busy
	// machine one may take them all); that the two together never exceed the window is
	// what the shared ledger promises.
	var rows int
	require.NoError(t, p1.QueryRow(t.Context(), "SELECT count(*) FROM feedkit_recovery_requests WHERE account = 'acc'").Scan(&rows))
	assert.Equal(t, 20, rows)
}

// TestLedgerTwoProcessesSlidingTimes has two processes hammer the ledger, with requests
// of every tier, at a sequence of instants 20 s apart over 70 minutes. At every instant
// each class must get exactly as many places as a MemoryLedger, the reference, gives the
// same attempts, and the places taken must respect every window.
func TestLedgerTwoProcessesSlidingTimes(t *testing.T) {
	p1 := pgtest.Pool(t)
	p2 := pgtest.SecondPool(t, p1)
	ledgers := []*pgstore.Ledger{newLedger(t, p1), newLedger(t, p2)}
	reference := recovery.NewMemoryLedger()
	lengths := []time.Duration{10 * time.Minute, 2 * time.Hour, 30 * time.Hour} // one per tier
	const perLedger = 6                                                         // goroutines per ledger, 2 per tier
	limits := recovery.DefaultLimits()

	taken := make([][]time.Time, len(lengths)) // per class, the instants of the places taken
	for step := range 70 * 3 {
		at := t0.Add(time.Duration(step) * 20 * time.Second)
		var (
			wg  sync.WaitGroup
			mu  sync.Mutex
			got = make([]int, len(lengths))
		)
		for i, l := range ledgers {
			for g := range perLedger {
				wg.Go(func() {
					r := shortRequest("acc", i+1, at)
					r.Length = lengths[g%len(lengths)]
					res, err := l.Reserve(t.Context(), r)
					if !assert.NoError(t, err) {
						return
					}
					if res.Allowed {
						mu.Lock()
						got[res.Class]++
						mu.Unlock()
					}
				})
			}
		}
		wg.Wait()
		if t.Failed() {
			return
		}
		for class, length := range lengths {
			want := 0
			for range len(ledgers) * perLedger / len(lengths) {
				r := shortRequest("acc", 1, at)
				r.Length = length
				res, err := reference.Reserve(t.Context(), r)
				require.NoError(t, err)
				if res.Allowed {
					want++
				}
			}
			require.Equal(t, want, got[class], "class %d at t0+%v", class, at.Sub(t0))
			for range got[class] {
				taken[class] = append(taken[class], at)
			}
		}
	}
	for class, times := range taken {
		require.NotEmpty(t, times)
		for _, w := range limits[class].Windows {
			for i, end := range times {
				inside := 0
				for _, x := range times[:i+1] {
					if end.Sub(x) < w.Length {
						inside++
					}
				}
				require.LessOrEqual(t, inside, w.Max, "class %d, window %v ending t0+%v", class, w.Length, end.Sub(t0))
			}
		}
	}
}

func TestNewIsIdempotent(t *testing.T) {
	pool := pgtest.Pool(t)
	l := newLedger(t, pool)
	s := newStore(t, pool)
	res, err := l.Reserve(t.Context(), shortRequest("acc", 1, t0))
	require.NoError(t, err)
	require.True(t, res.Allowed)
	require.NoError(t, s.Save(t.Context(), recovery.Record{Producer: 1, State: recovery.Healthy}))

	// Again on the same tables: they are kept, with their rows.
	l = newLedger(t, pool)
	s = newStore(t, pool)
	var rows int
	require.NoError(t, pool.QueryRow(t.Context(), "SELECT count(*) FROM feedkit_recovery_requests").Scan(&rows))
	assert.Equal(t, 1, rows)
	records, err := s.Load(t.Context())
	require.NoError(t, err)
	assert.Len(t, records, 1)
	res, err = l.Reserve(t.Context(), shortRequest("acc", 1, t0))
	require.NoError(t, err)
	assert.True(t, res.Allowed)
}

// TestNewConcurrently has processes start together on an empty schema: each creates the
// tables or finds them, and none fails.
func TestNewConcurrently(t *testing.T) {
	p1 := pgtest.Pool(t)
	pools := []*pgxpool.Pool{p1, pgtest.SecondPool(t, p1), pgtest.SecondPool(t, p1)}
	pgtest.Together(t, pools, 12, func(_ int, p *pgxpool.Pool) error {
		_, lerr := pgstore.NewLedger(t.Context(), p, pgstore.Options{})
		_, serr := pgstore.NewStore(t.Context(), p, pgstore.Options{})
		return errors.Join(lerr, serr)
	})
	var tables int
	require.NoError(t, p1.QueryRow(t.Context(),
		"SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE 'feedkit_recovery_%'").Scan(&tables))
	assert.Equal(t, 2, tables)
}

func TestOptionsTablePrefix(t *testing.T) {
	pool := pgtest.Pool(t)
	for _, bad := range []string{"Feedkit_", "9lives_", "my-app_", "my app", `x"; DROP TABLE y; --`, "a.b_", "é_", "x_234567890123456789012345678901234567890"} {
		_, err := pgstore.NewLedger(t.Context(), pool, pgstore.Options{TablePrefix: bad})
		require.ErrorIs(t, err, pgstore.ErrInvalidOptions, "%q", bad)
		assert.Contains(t, err.Error(), "Options.TablePrefix")
		assert.Contains(t, err.Error(), fmt.Sprintf("%q", bad))
		_, err = pgstore.NewStore(t.Context(), pool, pgstore.Options{TablePrefix: bad})
		require.ErrorIs(t, err, pgstore.ErrInvalidOptions, "%q", bad)
	}

	longest := "x_23456789012345678901234567890123456_" // 38 bytes
	for _, prefix := range []string{"myapp_", "_x9", longest} {
		opts := pgstore.Options{TablePrefix: prefix}
		l, err := pgstore.NewLedger(t.Context(), pool, opts)
		require.NoError(t, err, prefix)
		s, err := pgstore.NewStore(t.Context(), pool, opts)
		require.NoError(t, err, prefix)
		for _, table := range []string{prefix + "requests", prefix + "producers", prefix + "requests_account_class_at"} {
			var exists bool
			require.NoError(t, pool.QueryRow(t.Context(), "SELECT to_regclass($1) IS NOT NULL", table).Scan(&exists))
			assert.True(t, exists, table)
		}
		_, err = l.Reserve(t.Context(), shortRequest("acc", 1, t0))
		require.NoError(t, err)
		require.NoError(t, s.Save(t.Context(), recovery.Record{Producer: 1}))
	}
	var exists bool
	require.NoError(t, pool.QueryRow(t.Context(), "SELECT to_regclass('feedkit_recovery_requests') IS NOT NULL").Scan(&exists))
	assert.False(t, exists, "a prefix replaces the default")
}

// TestReserveTruncatesToMicroseconds: the decision is made on the time as stored.
func TestReserveTruncatesToMicroseconds(t *testing.T) {
	pool := pgtest.Pool(t)
	l := newLedger(t, pool)
	for range 20 {
		res, err := l.Reserve(t.Context(), shortRequest("acc", 1, t0.Add(1999*time.Nanosecond)))
		require.NoError(t, err)
		require.True(t, res.Allowed)
	}
	res, err := l.Reserve(t.Context(), shortRequest("acc", 1, t0.Add(time.Minute+999*time.Nanosecond)))
	require.NoError(t, err)
	require.False(t, res.Allowed)
	assert.Equal(t, t0.Add(10*time.Minute+time.Microsecond), res.RetryAt, "whole microseconds, in UTC")

	// t0+10min+1µs+999ns is t0+10min+1µs to the ledger: the first 20 have left.
	res, err = l.Reserve(t.Context(), shortRequest("acc", 1, t0.Add(10*time.Minute+time.Microsecond+999*time.Nanosecond)))
	require.NoError(t, err)
	assert.True(t, res.Allowed)

	var stored time.Time
	require.NoError(t, pool.QueryRow(t.Context(), "SELECT min(at) FROM feedkit_recovery_requests").Scan(&stored))
	assert.True(t, stored.Equal(t0.Add(time.Microsecond)), "stored %v", stored)
}

func TestReserveRecordsTheRequest(t *testing.T) {
	pool := pgtest.Pool(t)
	l := newLedger(t, pool)
	limits := recovery.Limits{{MinLength: time.Hour, Windows: []recovery.Window{{Length: time.Hour, Max: 1}}}}
	reqs := []recovery.LedgerRequest{
		{Account: "acc", Node: feed.Node(-7), Producer: 3, At: t0, Length: 90 * time.Minute, Limits: limits},
		{Account: "acc", Producer: 4, At: t0.Add(time.Second), Length: 5 * time.Minute, Limits: limits}, // no node, no tier
	}
	for _, r := range reqs {
		res, err := l.Reserve(t.Context(), r)
		require.NoError(t, err)
		require.True(t, res.Allowed)
		var (
			account  string
			class    int
			at       time.Time
			node     *int64
			producer int64
			length   time.Duration
		)
		require.NoError(t, pool.QueryRow(t.Context(),
			"SELECT account, class, at, node, producer, length FROM feedkit_recovery_requests WHERE id = $1", res.ID).
			Scan(&account, &class, &at, &node, &producer, &length))
		assert.Equal(t, r.Account, account)
		assert.Equal(t, res.Class, class)
		assert.True(t, r.At.Equal(at))
		if n, ok := r.Node.Int(); ok {
			require.NotNil(t, node)
			assert.Equal(t, int64(n), *node)
		} else {
			assert.Nil(t, node)
		}
		assert.Equal(t, int64(r.Producer), producer)
		assert.Equal(t, r.Length, length)
	}
}

// TestReservePrunesOldRows: the rows no window counts any more go, those of the account
// only.
func TestReservePrunesOldRows(t *testing.T) {
	pool := pgtest.Pool(t)
	l := newLedger(t, pool)
	count := func(account string) int {
		var n int
		require.NoError(t, pool.QueryRow(t.Context(), "SELECT count(*) FROM feedkit_recovery_requests WHERE account = $1", account).Scan(&n))
		return n
	}
	long := shortRequest("a", 1, t0)
	long.Length = 30 * time.Hour
	for _, r := range []recovery.LedgerRequest{long, shortRequest("a", 1, t0), shortRequest("b", 1, t0)} {
		res, err := l.Reserve(t.Context(), r)
		require.NoError(t, err)
		require.True(t, res.Allowed)
	}
	// The longest window of the default limits is 2 hours (the long tier's); rows are kept
	// twice that, for nodes whose clocks disagree.
	_, err := l.Reserve(t.Context(), shortRequest("a", 1, t0.Add(4*time.Hour-time.Microsecond)))
	require.NoError(t, err)
	assert.Equal(t, 3, count("a"), "still inside twice the longest window")
	_, err = l.Reserve(t.Context(), shortRequest("a", 1, t0.Add(4*time.Hour)))
	require.NoError(t, err)
	assert.Equal(t, 2, count("a"), "both requests at t0 are gone")
	assert.Equal(t, 1, count("b"), "another account's rows are its own")
}

func TestErrors(t *testing.T) {
	pool := pgtest.Pool(t)
	l := newLedger(t, pool)
	s := newStore(t, pool)
	canceled, cancel := context.WithCancel(t.Context())
	cancel()

	_, err := l.Reserve(canceled, shortRequest("acc", 1, t0))
	require.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "pgstore: reserve")
	err = l.Release(canceled, 1)
	require.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "pgstore: release 1")
	_, err = s.Load(canceled)
	require.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "pgstore: load")
	err = s.Save(canceled, recovery.Record{Producer: 5})
	require.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "pgstore: save producer 5")
	_, err = pgstore.NewLedger(canceled, pool, pgstore.Options{})
	require.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "pgstore: create table feedkit_recovery_requests")

	err = s.Save(t.Context(), recovery.Record{Producer: 6, State: recovery.State(9)})
	require.Error(t, err, "a state with no name cannot be stored")
	assert.Contains(t, err.Error(), "pgstore: save producer 6")

	_, err = pool.Exec(t.Context(), "INSERT INTO feedkit_recovery_producers (producer, state, recovery_snapshot_id) VALUES (8, 'asleep', 0)")
	require.NoError(t, err)
	_, err = s.Load(t.Context())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "pgstore: load producer 8")
	assert.Contains(t, err.Error(), "asleep")
}

// TestStoreSharedAndNormalized: what one process saves another loads, in UTC and to the
// microsecond.
func TestStoreFencedConformance(t *testing.T) {
	recoverytest.TestFencedStore(t, func(t *testing.T) recovery.FencedStore { return newStore(t, pgtest.Pool(t)) })
}

// A table made before the generation column gets it, 0 for the rows it holds, and keeps
// them.
func TestStoreAddsTheGenerationToAnOlderTable(t *testing.T) {
	pool := pgtest.Pool(t)
	_, err := pool.Exec(t.Context(), `CREATE TABLE feedkit_recovery_producers (
		producer bigint PRIMARY KEY, state text NOT NULL, last_subscribed_at timestamptz,
		recovery_requested_at timestamptz, recovery_snapshot_id bigint NOT NULL,
		recovery_node_id bigint, last_disconnected_at timestamptz)`)
	require.NoError(t, err)
	_, err = pool.Exec(t.Context(), `INSERT INTO feedkit_recovery_producers (producer, state, recovery_snapshot_id) VALUES (1, 'healthy', 7)`)
	require.NoError(t, err)
	s := newStore(t, pool)
	got, err := s.Load(t.Context())
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, int64(7), got[0].RecoverySnapshotID)
	require.NoError(t, s.SaveGeneration(t.Context(), got[0], 1), "the old row is generation 0")
	assert.ErrorIs(t, s.Save(t.Context(), got[0]), recovery.ErrFenced)
}

func TestStoreSharedAndNormalized(t *testing.T) {
	p1 := pgtest.Pool(t)
	s1, s2 := newStore(t, p1), newStore(t, pgtest.SecondPool(t, p1))
	paris := time.FixedZone("CET", 3600)
	saved := recovery.Record{
		Producer:            1,
		State:               recovery.Recovering,
		LastSubscribedAt:    time.Date(2026, 3, 1, 13, 0, 0, 123456789, paris),
		RecoveryRequestedAt: time.Now(), // with a monotonic reading
		RecoverySnapshotID:  42,
		RecoveryNodeID:      feed.Node(3),
	}
	require.NoError(t, s1.Save(t.Context(), saved))
	got, err := s2.Load(t.Context())
	require.NoError(t, err)
	require.Len(t, got, 1)
	want := saved
	want.LastSubscribedAt = time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC)
	want.RecoveryRequestedAt = saved.RecoveryRequestedAt.Truncate(time.Microsecond).UTC()
	assert.Equal(t, want, got[0])
}
