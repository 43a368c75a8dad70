package lockstest

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/examples/locksensors/locks"
)

var concurrencyTests = []subtest{
	{"UpdatesLoseNoUpdate", testConcurrentUpdates},
	{"UpdatesInOppositeOrdersDoNotDeadlock", testOppositeOrders},
	{"ClaimsHandOutEachNotificationOnce", testConcurrentClaims},
}

// concurrencyTimeout bounds a concurrency test: one that deadlocks fails instead of
// hanging.
const concurrencyTimeout = 2 * time.Minute

// wait waits for wg, failing the test when ctx ends first.
func wait(e *env, ctx context.Context, wg *sync.WaitGroup, what string) {
	e.t.Helper()
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		e.t.Fatalf("%s did not finish within %v: deadlock?", what, concurrencyTimeout)
	}
}

// flipped is the state an Update of counter writes over cur: the count of Updates that
// came before (ReadingAt's microseconds after base) plus one, and the state flipped.
func flipped(cur locks.Current) (locks.Current, error) {
	k := 0
	if cur.Known {
		k = int(cur.ReadingAt.Sub(base) / time.Microsecond)
		if want := locks.State(k % 2); cur.State != want {
			return locks.Current{}, fmt.Errorf("sensor %q: state %d after %d flips", cur.SensorID, cur.State, k)
		}
	} else if !cur.ReadingAt.IsZero() {
		return locks.Current{}, fmt.Errorf("sensor %q: unknown with a reading time", cur.SensorID)
	}
	k++
	ts := base.Add(time.Duration(k) * time.Microsecond)
	return locks.Current{SensorID: cur.SensorID, Known: true, State: 1 - cur.State, ReadingAt: ts, ChangedAt: ts, LastSeen: ts}, nil
}

// exclusive tells when two fns of Updates of the same sensors run at once.
type exclusive struct {
	running atomic.Int32
	overlap atomic.Bool
}

// run runs fn, noting whether another run is under way, and yields meanwhile so that a
// store that does not keep them apart is likely to let another one in.
func (x *exclusive) run(fn func() (locks.Effects, error)) (locks.Effects, error) {
	if x.running.Add(1) != 1 {
		x.overlap.Store(true)
	}
	defer x.running.Add(-1)
	for range 20 {
		runtime.Gosched()
	}
	return fn()
}

func testConcurrentUpdates(e *env) {
	t := e.t
	const workers, rounds = 8, 25
	s := e.sensor("flip")
	ctx, cancel := context.WithTimeout(e.ctx, concurrencyTimeout)
	defer cancel()

	var flips atomic.Int64
	var x exclusive
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range workers {
		wg.Go(func() {
			<-start
			for range rounds {
				_, err := e.s.Update(ctx, []locks.SensorID{s.ID}, func(cur map[locks.SensorID]locks.Current) (locks.Effects, error) {
					return x.run(func() (locks.Effects, error) {
						next, err := flipped(cur[s.ID])
						if err != nil {
							return locks.Effects{}, err
						}
						return locks.Effects{
							States:   []locks.Current{next},
							Readings: []locks.StoredReading{{SensorID: s.ID, State: next.State, At: next.ReadingAt, Received: next.LastSeen, Outcome: locks.Changed}},
							Now:      next.LastSeen,
						}, nil
					})
				})
				if !assert.NoError(t, err, "Update") {
					return
				}
				flips.Add(1)
			}
		})
	}
	close(start)
	wait(e, ctx, &wg, "the concurrent Updates")

	assert.False(t, x.overlap.Load(), "the fns of two Updates of one sensor ran at once")
	total := int(flips.Load())
	require.Equal(t, workers*rounds, total, "Updates that succeeded")
	rs := e.allReadings(s.ID)
	require.Len(t, rs, total, "one reading per flip")
	for i, r := range rs {
		// Each Update saw the one before: reading k is at k µs with state k mod 2.
		k := i + 1
		assert.Equal(t, base.Add(time.Duration(k)*time.Microsecond), r.At, "reading %d", k)
		assert.Equal(t, locks.State(k%2), r.State, "reading %d", k)
	}
	end := base.Add(time.Duration(total) * time.Microsecond)
	assert.Equal(t, locks.Current{SensorID: s.ID, Known: true, State: locks.State(total % 2), ReadingAt: end, ChangedAt: end, LastSeen: end},
		e.current(s.ID), "the state after %d flips", total)
}

func testOppositeOrders(e *env) {
	t := e.t
	const workers, rounds = 8, 25
	a, b := e.sensor("a"), e.sensor("b")
	ctx, cancel := context.WithTimeout(e.ctx, concurrencyTimeout)
	defer cancel()

	var x exclusive
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := range workers {
		ids := []locks.SensorID{a.ID, b.ID}
		if w%2 == 1 {
			ids = []locks.SensorID{b.ID, a.ID}
		}
		wg.Go(func() {
			<-start
			for range rounds {
				_, err := e.s.Update(ctx, ids, func(cur map[locks.SensorID]locks.Current) (locks.Effects, error) {
					return x.run(func() (locks.Effects, error) {
						if len(cur) != 2 {
							return locks.Effects{}, fmt.Errorf("fn got %d sensors, want 2", len(cur))
						}
						na, err := flipped(cur[a.ID])
						if err != nil {
							return locks.Effects{}, err
						}
						nb, err := flipped(cur[b.ID])
						if err != nil {
							return locks.Effects{}, err
						}
						return locks.Effects{States: []locks.Current{na, nb}, Now: na.LastSeen}, nil
					})
				})
				if !assert.NoError(t, err, "Update of %q", ids) {
					return
				}
			}
		})
	}
	close(start)
	wait(e, ctx, &wg, "the Updates in opposite orders")

	assert.False(t, x.overlap.Load(), "the fns of two Updates of the same sensors ran at once")
	end := base.Add(workers * rounds * time.Microsecond)
	for _, id := range []locks.SensorID{a.ID, b.ID} {
		assert.Equal(t, locks.Current{SensorID: id, Known: true, State: 0, ReadingAt: end, ChangedAt: end, LastSeen: end},
			e.current(id), "the state of %q after %d flips", id, workers*rounds)
	}
}

func testConcurrentClaims(e *env) {
	t := e.t
	const notes, workers, limit = 200, 8, 7
	s := e.sensor("door")
	c := e.client("alice")
	e.link(s.ID, c)
	changes := make([]locks.Change, notes)
	for i := range changes {
		changes[i] = change(s.ID, locks.State(i%2), base.Add(time.Duration(i)*time.Millisecond))
	}
	require.Equal(t, notes, e.update([]locks.SensorID{s.ID}, locks.Effects{Notify: changes, Now: at(0)}))
	ctx, cancel := context.WithTimeout(e.ctx, concurrencyTimeout)
	defer cancel()

	req := locks.ClaimRequest{Now: at(0), Limit: limit, MaxAttempts: 5, RetryAfter: hours}
	handed := make([][]locks.NotificationID, workers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := range workers {
		wg.Go(func() {
			<-start
			for range notes { // at most one claim per notification before one comes back empty
				ds, err := e.s.Claim(ctx, req)
				if !assert.NoError(t, err, "Claim") {
					return
				}
				assert.LessOrEqual(t, len(ds), limit, "Claim returned more than its limit")
				if len(ds) == 0 {
					return
				}
				for _, d := range ds {
					assert.Equal(t, 1, d.Attempts, "notification %d", d.ID)
					handed[w] = append(handed[w], d.ID)
				}
			}
		})
	}
	close(start)
	wait(e, ctx, &wg, "the concurrent Claims")

	times := map[locks.NotificationID]int{}
	for _, ids := range handed {
		for _, id := range ids {
			times[id]++
		}
	}
	for id, n := range times {
		assert.Equal(t, 1, n, "notification %d handed out %d times", id, n)
	}
	assert.Len(t, times, notes, "notifications handed out")
	assert.Empty(t, e.claimWith(req), "a notification left unclaimed")
	n, next := e.pending()
	assert.Equal(t, notes, n)
	assert.Equal(t, at(0).Add(time.Hour), next)
}
