// Package recoverytest holds the conformance suites that every implementation of
// recovery.Ledger and recovery.Store passes: the in-memory and file ones of package
// recovery, and the PostgreSQL ones of recovery/pgstore. A new implementation calls them
// from a test:
//
//	func TestLedgerConformance(t *testing.T) {
//		recoverytest.TestLedger(t, func(t *testing.T) recovery.Ledger { return newLedger(t) })
//	}
//
// The suites use whole microseconds and UTC times only, which every implementation keeps
// exactly (PostgreSQL stores no finer time).
package recoverytest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/recovery"
)

// t0 is the start of every scenario; its date does not matter.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// Recovery lengths of each tier of recovery.DefaultLimits.
const (
	short = 10 * time.Minute // under 30 min: 60 per hour, 20 per 10 min
	mid   = 2 * time.Hour    // 30 min – 24 h: 10 per hour, 4 per 10 min
	long  = 30 * time.Hour   // 24 h – 60 h: 4 per 2 h, 2 per 30 min
)

// TestLedger runs the conformance suite of recovery.Ledger. newLedger must return an
// empty ledger of its own on every call, and release what it holds when t ends.
func TestLedger(t *testing.T, newLedger func(t *testing.T) recovery.Ledger) {
	t.Run("ShortTierTenMinuteWindow", func(t *testing.T) {
		l := newLedger(t)
		ids := make(map[int64]bool)
		for i := range 20 {
			res := allow(t, l, request("acc", short, t0.Add(time.Duration(i)*time.Second)))
			assert.Equal(t, 0, res.Class)
			ids[res.ID] = true
		}
		assert.Len(t, ids, 20, "every reservation has an id of its own")
		refuse(t, l, request("acc", short, t0.Add(20*time.Second)), t0.Add(10*time.Minute))
		refuse(t, l, request("acc", short, t0.Add(10*time.Minute-time.Microsecond)), t0.Add(10*time.Minute))
		allow(t, l, request("acc", short, t0.Add(10*time.Minute)))
		refuse(t, l, request("acc", short, t0.Add(10*time.Minute)), t0.Add(10*time.Minute+time.Second))
	})

	t.Run("ShortTierHourWindow", func(t *testing.T) {
		l := newLedger(t)
		// Every 30 s: never more than 20 in 10 minutes, 60 in the half hour.
		for i := range 60 {
			allow(t, l, request("acc", short, t0.Add(time.Duration(i)*30*time.Second)))
		}
		refuse(t, l, request("acc", short, t0.Add(30*time.Minute)), t0.Add(time.Hour))
		refuse(t, l, request("acc", short, t0.Add(time.Hour-time.Microsecond)), t0.Add(time.Hour))
		allow(t, l, request("acc", short, t0.Add(time.Hour)))
		refuse(t, l, request("acc", short, t0.Add(time.Hour)), t0.Add(time.Hour+30*time.Second))
	})

	t.Run("MiddleTier", func(t *testing.T) {
		l := newLedger(t)
		// 30 minutes exactly is the middle tier's lower bound.
		for j := range 4 {
			res := allow(t, l, request("acc", 30*time.Minute, t0.Add(time.Duration(j)*time.Second)))
			assert.Equal(t, 1, res.Class)
		}
		res := refuse(t, l, request("acc", mid, t0.Add(5*time.Second)), t0.Add(10*time.Minute))
		assert.Equal(t, 1, res.Class)
		for j := range 4 {
			allow(t, l, request("acc", mid, t0.Add(10*time.Minute+time.Duration(j)*time.Second)))
		}
		// Ten in the hour: the 11th waits for the first to leave the hour.
		allow(t, l, request("acc", mid, t0.Add(20*time.Minute)))
		allow(t, l, request("acc", mid, t0.Add(20*time.Minute+time.Second)))
		refuse(t, l, request("acc", mid, t0.Add(20*time.Minute+2*time.Second)), t0.Add(time.Hour))
		allow(t, l, request("acc", mid, t0.Add(time.Hour)))
	})

	t.Run("LongTier", func(t *testing.T) {
		l := newLedger(t)
		// 24 hours exactly is the long tier's lower bound; it has no upper one.
		res := allow(t, l, request("acc", 24*time.Hour, t0))
		assert.Equal(t, 2, res.Class)
		allow(t, l, request("acc", long, t0.Add(time.Minute)))
		res = refuse(t, l, request("acc", long, t0.Add(2*time.Minute)), t0.Add(30*time.Minute))
		assert.Equal(t, 2, res.Class)
		allow(t, l, request("acc", long, t0.Add(30*time.Minute)))
		allow(t, l, request("acc", long, t0.Add(31*time.Minute)))
		// The half hour is free again, the two hours are not.
		refuse(t, l, request("acc", long, t0.Add(61*time.Minute)), t0.Add(2*time.Hour))
		refuse(t, l, request("acc", long, t0.Add(2*time.Hour-time.Microsecond)), t0.Add(2*time.Hour))
		allow(t, l, request("acc", 60*time.Hour, t0.Add(2*time.Hour)))
		refuse(t, l, request("acc", long, t0.Add(2*time.Hour)), t0.Add(2*time.Hour+time.Minute))
		allow(t, l, request("acc", long, t0.Add(2*time.Hour+time.Minute)))
		// Both windows full now, and both free again at t0+2h30m.
		refuse(t, l, request("acc", long, t0.Add(2*time.Hour+2*time.Minute)), t0.Add(2*time.Hour+30*time.Minute))
		allow(t, l, request("acc", long, t0.Add(2*time.Hour+30*time.Minute)))
	})

	t.Run("TierBoundaries", func(t *testing.T) {
		l := newLedger(t)
		for i, c := range []struct {
			length time.Duration
			class  int
		}{
			{0, 0}, {30*time.Minute - time.Microsecond, 0}, {30 * time.Minute, 1},
			{24*time.Hour - time.Microsecond, 1}, {24 * time.Hour, 2}, {100 * time.Hour, 2},
		} {
			res := allow(t, l, request(fmt.Sprint("acc", i), c.length, t0))
			assert.Equal(t, c.class, res.Class, "length %v", c.length)
		}
	})

	t.Run("ClassesCountedSeparately", func(t *testing.T) {
		l := newLedger(t)
		for i := range 20 {
			allow(t, l, request("acc", short, t0.Add(time.Duration(i)*time.Second)))
		}
		refuse(t, l, request("acc", short, t0.Add(30*time.Second)), t0.Add(10*time.Minute))
		for i := range 4 {
			allow(t, l, request("acc", mid, t0.Add(30*time.Second+time.Duration(i)*time.Second)))
		}
		refuse(t, l, request("acc", mid, t0.Add(time.Minute)), t0.Add(10*time.Minute+30*time.Second))
		allow(t, l, request("acc", long, t0.Add(time.Minute)))
		allow(t, l, request("acc", long, t0.Add(time.Minute)))
		refuse(t, l, request("acc", long, t0.Add(time.Minute)), t0.Add(31*time.Minute))
		refuse(t, l, request("acc", short, t0.Add(time.Minute)), t0.Add(10*time.Minute))
	})

	t.Run("AccountsSeparate", func(t *testing.T) {
		l := newLedger(t)
		for _, account := range []string{"a", "b"} {
			for i := range 20 {
				allow(t, l, request(account, short, t0.Add(time.Duration(i)*time.Second)))
			}
		}
		refuse(t, l, request("a", short, t0.Add(time.Minute)), t0.Add(10*time.Minute))
		refuse(t, l, request("b", short, t0.Add(time.Minute)), t0.Add(10*time.Minute))
		allow(t, l, request("c", short, t0.Add(time.Minute)))
	})

	t.Run("NodesOfAnAccountSummed", func(t *testing.T) {
		l := newLedger(t)
		nodes := []feed.NodeID{feed.Node(1), feed.Node(2), feed.Node(-3), feed.Node(0), {}}
		for i := range 20 {
			r := request("acc", short, t0.Add(time.Duration(i)*time.Second))
			r.Node = nodes[i%len(nodes)]
			r.Producer = 1 + i%3
			allow(t, l, r)
		}
		for _, n := range append(nodes, feed.Node(9)) {
			r := request("acc", short, t0.Add(time.Minute))
			r.Node = n
			refuse(t, l, r, t0.Add(10*time.Minute))
		}
	})

	t.Run("OutOfOrderTimes", func(t *testing.T) {
		l := newLedger(t)
		// A node whose clock is behind: its request counts where it belongs.
		for range 19 {
			allow(t, l, request("behind", short, t0.Add(5*time.Minute)))
		}
		allow(t, l, request("behind", short, t0))
		refuse(t, l, request("behind", short, t0.Add(5*time.Minute)), t0.Add(10*time.Minute))
		allow(t, l, request("behind", short, t0.Add(10*time.Minute)))
		refuse(t, l, request("behind", short, t0.Add(10*time.Minute)), t0.Add(15*time.Minute))

		// A node whose clock is ahead: its requests count already.
		for range 20 {
			allow(t, l, request("ahead", short, t0.Add(time.Minute)))
		}
		refuse(t, l, request("ahead", short, t0), t0.Add(11*time.Minute))
	})

	t.Run("OldRequestsForgotten", func(t *testing.T) {
		l := newLedger(t)
		for i := range 20 {
			allow(t, l, request("acc", short, t0.Add(time.Duration(i)*time.Second)))
		}
		later := t0.Add(61 * time.Hour)
		for i := range 20 {
			allow(t, l, request("acc", short, later.Add(time.Duration(i)*time.Second)))
		}
		refuse(t, l, request("acc", short, later.Add(time.Minute)), later.Add(10*time.Minute))
	})

	t.Run("UnlimitedClass", func(t *testing.T) {
		l := newLedger(t)
		// Only recoveries of an hour or more are limited, to one an hour.
		limits := recovery.Limits{{MinLength: time.Hour, Windows: []recovery.Window{{Length: time.Hour, Max: 1}}}}
		ids := make(map[int64]bool)
		for range 30 {
			r := request("acc", 10*time.Minute, t0)
			r.Limits = limits
			res := allow(t, l, r)
			assert.Equal(t, -1, res.Class)
			ids[res.ID] = true
		}
		assert.Len(t, ids, 30, "every reservation has an id of its own")
		r := request("acc", time.Hour, t0)
		r.Limits = limits
		assert.Equal(t, 0, allow(t, l, r).Class, "unlimited requests count in no tier")
		refuse(t, l, r, t0.Add(time.Hour))
		for id := range ids {
			require.NoError(t, l.Release(t.Context(), id))
		}
	})

	t.Run("ReleaseFreesThePlace", func(t *testing.T) {
		l := newLedger(t)
		ids := make([]int64, 20)
		for i := range ids {
			ids[i] = allow(t, l, request("acc", short, t0.Add(time.Duration(i)*time.Second))).ID
		}
		refuse(t, l, request("acc", short, t0.Add(5*time.Minute)), t0.Add(10*time.Minute))
		require.NoError(t, l.Release(t.Context(), ids[0]))
		allow(t, l, request("acc", short, t0.Add(5*time.Minute)))
		// The first has gone: the second is now the one to leave.
		refuse(t, l, request("acc", short, t0.Add(5*time.Minute)), t0.Add(10*time.Minute+time.Second))
		require.NoError(t, l.Release(t.Context(), ids[5]))
		allow(t, l, request("acc", short, t0.Add(5*time.Minute)))
		refuse(t, l, request("acc", short, t0.Add(5*time.Minute)), t0.Add(10*time.Minute+time.Second))
	})

	t.Run("ReleaseOfAnUnknownIDIsNoError", func(t *testing.T) {
		l := newLedger(t)
		id := allow(t, l, request("acc", short, t0)).ID
		require.NoError(t, l.Release(t.Context(), id))
		require.NoError(t, l.Release(t.Context(), id), "twice")
		for _, id := range []int64{0, -1, 1 << 62} {
			require.NoError(t, l.Release(t.Context(), id), "id %d", id)
		}
	})

	t.Run("ConcurrentReserves", func(t *testing.T) {
		l := newLedger(t)
		const goroutines, each = 8, 5
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			allowed = make(map[int64]bool)
			refused int
		)
		start := make(chan struct{})
		for g := range goroutines {
			wg.Go(func() {
				<-start
				for range each {
					r := request("acc", short, t0)
					r.Node = feed.Node(g)
					res, err := l.Reserve(t.Context(), r)
					if !assert.NoError(t, err) {
						return
					}
					mu.Lock()
					if res.Allowed {
						allowed[res.ID] = true
					} else {
						refused++
						assert.True(t, res.RetryAt.Equal(t0.Add(10*time.Minute)), "RetryAt %v", res.RetryAt)
					}
					mu.Unlock()
				}
			})
		}
		close(start)
		wg.Wait()
		assert.Len(t, allowed, 20, "exactly the window's maximum, each with an id of its own")
		assert.Equal(t, goroutines*each-20, refused)
	})
}

// request returns a request of the account with the default limits, from node 1 for
// producer 1.
func request(account string, length time.Duration, at time.Time) recovery.LedgerRequest {
	return recovery.LedgerRequest{
		Account:  account,
		Node:     feed.Node(1),
		Producer: 1,
		At:       at,
		Length:   length,
		Limits:   recovery.DefaultLimits(),
	}
}

// allow reserves r and requires the ledger to allow it, with an id.
func allow(t *testing.T, l recovery.Ledger, r recovery.LedgerRequest) recovery.Reservation {
	t.Helper()
	res, err := l.Reserve(t.Context(), r)
	require.NoError(t, err)
	require.True(t, res.Allowed, "%s, length %v at t0+%v: refused, RetryAt t0+%v", r.Account, r.Length, r.At.Sub(t0), res.RetryAt.Sub(t0))
	require.NotZero(t, res.ID, "an allowed reservation has an id")
	assert.Equal(t, r.Limits.Class(r.Length), res.Class)
	assert.True(t, res.RetryAt.IsZero(), "RetryAt of an allowed reservation: %v", res.RetryAt)
	return res
}

// refuse reserves r and requires the ledger to refuse it until retryAt.
func refuse(t *testing.T, l recovery.Ledger, r recovery.LedgerRequest, retryAt time.Time) recovery.Reservation {
	t.Helper()
	res, err := l.Reserve(t.Context(), r)
	require.NoError(t, err)
	require.False(t, res.Allowed, "%s, length %v at t0+%v: allowed", r.Account, r.Length, r.At.Sub(t0))
	assert.Zero(t, res.ID, "a refused reservation has no id")
	assert.Equal(t, r.Limits.Class(r.Length), res.Class)
	assert.True(t, res.RetryAt.Equal(retryAt), "%s, length %v at t0+%v: RetryAt t0+%v, want t0+%v",
		r.Account, r.Length, r.At.Sub(t0), res.RetryAt.Sub(t0), retryAt.Sub(t0))
	return res
}

// TestStore runs the conformance suite of recovery.Store. newStore must return an empty
// store of its own on every call, and release what it holds when t ends.
func TestStore(t *testing.T, newStore func(t *testing.T) recovery.Store) {
	// full has every field set; the times are UTC and whole microseconds.
	full := recovery.Record{
		Producer:            1,
		State:               recovery.Healthy,
		LastSubscribedAt:    t0.Add(123456 * time.Microsecond),
		RecoveryRequestedAt: t0.Add(-time.Hour),
		RecoverySnapshotID:  1<<40 + 3,
		RecoveryNodeID:      feed.Node(7),
		LastDisconnectedAt:  t0.Add(-2*time.Hour + time.Microsecond),
	}
	// bare has every field but the producer zero: zero times, no node.
	bare := recovery.Record{Producer: 2}

	t.Run("EmptyLoad", func(t *testing.T) {
		s := newStore(t)
		rs, err := s.Load(t.Context())
		require.NoError(t, err)
		assert.Empty(t, rs)
	})

	t.Run("RoundTrip", func(t *testing.T) {
		s := newStore(t)
		recovering := recovery.Record{
			Producer:            3,
			State:               recovery.Recovering,
			RecoveryRequestedAt: t0,
			RecoverySnapshotID:  -5,
			RecoveryNodeID:      feed.Node(0), // node 0 is a node, not the absence of one
		}
		negative := recovery.Record{Producer: -4, State: recovery.Disconnected, RecoveryNodeID: feed.Node(-2), LastDisconnectedAt: t0}
		want := []recovery.Record{full, bare, recovering, negative}
		for _, r := range want {
			require.NoError(t, s.Save(t.Context(), r))
		}
		got, err := s.Load(t.Context())
		require.NoError(t, err)
		assert.ElementsMatch(t, want, got)
		for _, r := range got {
			if r.Producer == 3 {
				n, ok := r.RecoveryNodeID.Int()
				assert.True(t, ok, "node 0 must come back set")
				assert.Equal(t, 0, n)
			}
		}
	})

	t.Run("UpsertReplaces", func(t *testing.T) {
		s := newStore(t)
		require.NoError(t, s.Save(t.Context(), full))
		require.NoError(t, s.Save(t.Context(), bare))
		emptied := recovery.Record{Producer: full.Producer, State: recovery.Disconnected}
		require.NoError(t, s.Save(t.Context(), emptied))
		got, err := s.Load(t.Context())
		require.NoError(t, err)
		assert.ElementsMatch(t, []recovery.Record{emptied, bare}, got, "every field replaced, the other producer untouched")

		refilled := full
		refilled.State = recovery.Recovering
		refilled.RecoverySnapshotID++
		require.NoError(t, s.Save(t.Context(), refilled))
		got, err = s.Load(t.Context())
		require.NoError(t, err)
		assert.ElementsMatch(t, []recovery.Record{refilled, bare}, got)
	})

	t.Run("EveryState", func(t *testing.T) {
		s := newStore(t)
		var want []recovery.Record
		for i, st := range []recovery.State{recovery.Disconnected, recovery.Recovering, recovery.Healthy} {
			r := recovery.Record{Producer: 10 + i, State: st}
			want = append(want, r)
			require.NoError(t, s.Save(t.Context(), r))
		}
		got, err := s.Load(t.Context())
		require.NoError(t, err)
		assert.ElementsMatch(t, want, got)
	})
}

// TestFencedStore runs the conformance suite of recovery.FencedStore. newStore must
// return an empty store of its own on every call.
func TestFencedStore(t *testing.T, newStore func(t *testing.T) recovery.FencedStore) {
	t.Run("LaterGenerationFencesEarlier", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		rec := func(producer int, min int) recovery.Record {
			return recovery.Record{Producer: producer, LastSubscribedAt: t0.Add(time.Duration(min) * time.Minute)}
		}
		require.NoError(t, s.SaveGeneration(ctx, rec(1, 1), 1))
		require.NoError(t, s.SaveGeneration(ctx, rec(1, 2), 2), "a later generation")
		require.NoError(t, s.SaveGeneration(ctx, rec(1, 3), 2), "the same generation again")
		err := s.SaveGeneration(ctx, rec(1, 9), 1)
		require.ErrorIs(t, err, recovery.ErrFenced, "an earlier generation")
		require.ErrorIs(t, s.Save(ctx, rec(1, 9)), recovery.ErrFenced, "Save is generation 0")
		require.NoError(t, s.SaveGeneration(ctx, rec(2, 9), 1), "each record has its own generation")
		got, err := s.Load(ctx)
		require.NoError(t, err)
		byProducer := map[int]time.Time{}
		for _, r := range got {
			byProducer[r.Producer] = r.LastSubscribedAt
		}
		assert.Equal(t, map[int]time.Time{1: t0.Add(3 * time.Minute), 2: t0.Add(9 * time.Minute)}, byProducer,
			"the refused saves changed nothing")
	})
}
