package pgstore_test

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/examples/locksensors/locks"
	"github.com/feedkit/feedkit/examples/locksensors/locks/pgstore"
	"github.com/feedkit/feedkit/internal/pgtest"
)

// twoProcesses returns two stores on pools of their own on one schema, as two
// processes of the service would have.
func twoProcesses(t *testing.T) ([]*pgstore.Store, *pgxpool.Pool) {
	t.Helper()
	p1 := pgtest.Pool(t)
	return []*pgstore.Store{newStore(t, p1), newStore(t, pgtest.SecondPool(t, p1))}, p1
}

// TestClaimTwoProcesses has two processes claim 300 due notifications from 8
// goroutines, a few at a time: each is handed out exactly once, with its attempt
// counted once.
func TestClaimTwoProcesses(t *testing.T) {
	stores, _ := twoProcesses(t)
	ctx := t.Context()
	clients := []locks.Client{client(t, stores[0], "a"), client(t, stores[0], "b"), client(t, stores[0], "c")}
	ids := make([]locks.SensorID, 10)
	for i := range ids {
		ids[i] = locks.SensorID(fmt.Sprintf("s%d", i))
	}
	sensors(t, stores[0], ids, clients...)
	var changes []locks.Change
	for i := range 100 {
		changes = append(changes, locks.Change{SensorID: ids[i%10], Event: locks.EventChanged, State: locks.State(i % 2), At: at(time.Duration(i) * time.Second)})
	}
	const n = 300
	require.Equal(t, n, write(t, stores[1], ids, locks.Effects{Notify: changes, Now: t0}))

	const workers = 8
	now := at(time.Hour)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		taken = map[locks.NotificationID][]int{}
	)
	start := make(chan struct{})
	for w := range workers {
		s := stores[w%2]
		wg.Go(func() {
			<-start
			for {
				ds, err := s.Claim(ctx, locks.ClaimRequest{Now: now, Limit: 7, MaxAttempts: 5,
					RetryAfter: func(int) time.Duration { return time.Hour }})
				if err != nil {
					t.Errorf("worker %d: %v", w, err)
					return
				}
				if len(ds) == 0 {
					return
				}
				mu.Lock()
				for _, d := range ds {
					taken[d.ID] = append(taken[d.ID], w)
					if d.Attempts != 1 || !d.NextAttempt.Equal(now.Add(time.Hour)) || !d.Linked || d.Address == "" {
						t.Errorf("delivery %+v", d)
					}
				}
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	require.Len(t, taken, n, "every notification handed out")
	for id, by := range taken {
		require.Len(t, by, 1, "notification %d handed out to workers %v", id, by)
	}
	// Which process claims how many is the scheduler's business: one may take them
	// all on a busy machine. Exactly once each, between them, is what matters.

	pending, next, err := stores[0].Pending(ctx)
	require.NoError(t, err)
	assert.Equal(t, n, pending)
	assert.Equal(t, now.Add(time.Hour), next)
}

// TestUpdateTwoProcesses has two processes run Updates of overlapping sets of sensors,
// each listing its sensors in an order of its own: none deadlocks, and none loses
// another's write (every Update moves each of its sensors' ReadingAt one second on from
// what it found, and adds a reading).
func TestUpdateTwoProcesses(t *testing.T) {
	stores, _ := twoProcesses(t)
	ctx := t.Context()
	const nSensors, workers, rounds, width = 12, 8, 25, 6
	all := make([]locks.SensorID, nSensors)
	for i := range all {
		all[i] = locks.SensorID(fmt.Sprintf("S%02d", i))
	}
	sensors(t, stores[0], all)

	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		counts = map[locks.SensorID]int{}
	)
	start := make(chan struct{})
	for w := range workers {
		s := stores[w%2]
		rng := rand.New(rand.NewPCG(uint64(w), 1))
		wg.Go(func() {
			<-start
			for r := range rounds {
				ids := make([]locks.SensorID, width)
				for i := range ids {
					ids[i] = all[(w*3+r+i)%nSensors]
				}
				rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
				_, err := s.Update(ctx, ids, func(cur map[locks.SensorID]locks.Current) (locks.Effects, error) {
					var e locks.Effects
					for _, id := range ids {
						c := cur[id]
						if c.ReadingAt.IsZero() {
							c.ReadingAt = t0
						}
						c.ReadingAt = c.ReadingAt.Add(time.Second)
						c.Known, c.LastSeen = true, c.ReadingAt
						e.States = append(e.States, c)
						e.Readings = append(e.Readings, locks.StoredReading{SensorID: id, At: c.ReadingAt, Received: c.ReadingAt, Outcome: locks.Same})
					}
					return e, nil
				})
				if err != nil {
					t.Errorf("worker %d, round %d: %v", w, r, err)
					return
				}
				mu.Lock()
				for _, id := range ids {
					counts[id]++
				}
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	require.False(t, t.Failed())
	total := 0
	for _, id := range all {
		c, err := stores[1].Current(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, t0.Add(time.Duration(counts[id])*time.Second), c.ReadingAt, id)
		rs, err := stores[1].Readings(ctx, id, locks.Range{Limit: 1000})
		require.NoError(t, err)
		assert.Len(t, rs, counts[id], id)
		total += counts[id]
	}
	assert.Equal(t, workers*rounds*width, total)
}

// TestIngestAndDeliver runs, in two processes at once, Updates that cancel and notify
// and notifiers that claim and finish: nothing deadlocks, and once everything is
// delivered only the notifications of each sensor's last change were, every earlier
// one having been cancelled or delivered before its successor came. The changes of a
// sensor are numbered 1, 2, 3, ... in the order they were recorded, whichever process
// recorded them, and both clients are told each change with the same number.
func TestIngestAndDeliver(t *testing.T) {
	stores, _ := twoProcesses(t)
	ctx := t.Context()
	clients := []locks.Client{client(t, stores[0], "a"), client(t, stores[0], "b")}
	all := []locks.SensorID{"A", "B", "C", "D", "E", "F"}
	sensors(t, stores[0], all, clients...)

	var wg sync.WaitGroup
	ingested := make(chan struct{})
	var ingesters sync.WaitGroup
	var mu sync.Mutex
	changes := map[locks.SensorID]int64{}
	for w := range 4 {
		s := stores[w%2]
		ingesters.Go(func() {
			for r := range 20 {
				ids := []locks.SensorID{all[(w+r)%6], all[(w+r+1)%6], all[(w+r+3)%6]}
				_, err := s.Update(ctx, ids, func(cur map[locks.SensorID]locks.Current) (locks.Effects, error) {
					e := locks.Effects{Cancel: ids, Now: t0}
					for _, id := range ids {
						c := cur[id]
						c.Known, c.State = true, 1-c.State
						c.ReadingAt = c.ReadingAt.Add(time.Second)
						e.States = append(e.States, c)
						e.Notify = append(e.Notify, locks.Change{SensorID: id, Event: locks.EventChanged, State: c.State, At: c.ReadingAt, ReadingAt: c.ReadingAt})
					}
					return e, nil
				})
				if err != nil {
					t.Errorf("ingester %d: %v", w, err)
					return
				}
				mu.Lock()
				for _, id := range ids {
					changes[id]++
				}
				mu.Unlock()
			}
		})
	}
	go func() { ingesters.Wait(); close(ingested) }()
	for w := range 4 {
		s := stores[w%2]
		wg.Go(func() {
			for {
				ds, err := s.Claim(ctx, locks.ClaimRequest{Now: t0, Limit: 5, MaxAttempts: 100,
					RetryAfter: func(int) time.Duration { return time.Hour }})
				if err != nil {
					t.Errorf("notifier %d: %v", w, err)
					return
				}
				if len(ds) == 0 {
					select {
					case <-ingested:
						n, _, err := s.Pending(ctx)
						if err != nil || n == 0 {
							return
						}
					default:
					}
					continue
				}
				for _, d := range ds {
					if err := s.Finish(ctx, locks.Result{Notification: d.ID, N: d.Attempts, At: t0, Status: locks.Delivered,
						Attempt: &locks.Attempt{Notification: d.ID, N: d.Attempts, At: t0, StatusCode: 200}}); err != nil {
						t.Errorf("notifier %d: %v", w, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	require.False(t, t.Failed())

	for _, id := range all {
		c, err := stores[0].Current(ctx, id)
		require.NoError(t, err)
		ns, err := stores[0].Notifications(ctx, id, locks.Range{Limit: locks.MaxLimit})
		require.NoError(t, err)
		require.Less(t, len(ns), locks.MaxLimit, "every notification of %s in one page", id)
		require.NotEmpty(t, ns)
		var last []locks.Notification
		for _, n := range ns {
			require.Contains(t, []locks.Status{locks.Delivered, locks.Cancelled}, n.Status, "notification %+v", n)
			if n.At.Equal(c.ReadingAt) {
				last = append(last, n)
			}
		}
		require.Len(t, last, len(clients), "sensor %s: the notifications of the last change", id)
		byID := slices.Clone(ns)
		slices.SortFunc(byID, func(a, b locks.Notification) int { return cmp.Compare(a.ID, b.ID) })
		var want, got []int64
		for k := range changes[id] {
			want = append(want, k+1, k+1)
		}
		for _, n := range byID {
			got = append(got, n.Sequence)
		}
		assert.Equal(t, want, got, "sensor %s: the sequences of its notifications, by ID", id)
		assert.Equal(t, changes[id], c.Sequence, "sensor %s: its changes", id)
		for _, n := range last {
			assert.Equal(t, locks.Delivered, n.Status, "sensor %s: the last change's notification %+v", id, n)
			assert.Equal(t, c.State, n.State)
			assert.Len(t, n.History, 1)
		}
	}
}

// TestDeleteSensorDuringUpdate deletes a sensor while an Update holds its state and is
// about to add its readings: the delete waits for the Update, and neither deadlocks
// (the Update's inserts check the sensor's key, which a delete that took the sensor's
// row first would hold).
func TestDeleteSensorDuringUpdate(t *testing.T) {
	p1 := pgtest.Pool(t)
	s1 := newStore(t, p1)
	ctx := t.Context()
	sensors(t, s1, []locks.SensorID{"s1"}, client(t, s1, "a"))

	cfg := p1.Config()
	app := fmt.Sprintf("pgstore-delete-%d", rand.Uint64())
	cfg.ConnConfig.RuntimeParams["application_name"] = app
	p2, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(p2.Close)
	s2 := newStore(t, p2)

	deleted := make(chan error, 1)
	n, err := s1.Update(ctx, []locks.SensorID{"s1"}, func(cur map[locks.SensorID]locks.Current) (locks.Effects, error) {
		go func() { deleted <- s2.DeleteSensor(ctx, "s1") }()
		require.Eventually(t, func() bool {
			var waiting bool
			err := p1.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_stat_activity
				WHERE application_name = $1 AND wait_event_type = 'Lock')`, app).Scan(&waiting)
			return err == nil && waiting
		}, time.Minute, 10*time.Millisecond, "the delete waits for the Update's lock")
		c := cur["s1"]
		c.Known, c.State, c.ReadingAt = true, 1, t0
		return locks.Effects{States: []locks.Current{c}, Now: t0,
			Readings: []locks.StoredReading{{SensorID: "s1", State: 1, At: t0, Received: t0, Outcome: locks.Changed}},
			Notify:   []locks.Change{{SensorID: "s1", Event: locks.EventChanged, State: 1, At: t0}}}, nil
	})
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	require.NoError(t, <-deleted)
	_, err = s1.GetSensor(ctx, "s1")
	require.ErrorIs(t, err, locks.ErrNotFound)
	var left int
	require.NoError(t, p1.QueryRow(ctx, `SELECT (SELECT count(*) FROM locksensors_readings) + (SELECT count(*) FROM locksensors_notifications)
		+ (SELECT count(*) FROM locksensors_sensor_states) + (SELECT count(*) FROM locksensors_links)`).Scan(&left))
	assert.Zero(t, left, "the sensor's state, links, readings and notifications go with it")
}
