//go:build crash

package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/feedkit/feedkit/examples/locksensors/locks"
	"github.com/feedkit/feedkit/examples/locksensors/locks/pgstore"
	"github.com/feedkit/feedkit/examples/locksensors/locks/rabbitmq"
	"github.com/feedkit/feedkit/internal/crashtest"
	"github.com/feedkit/feedkit/internal/pgtest"
	"github.com/feedkit/feedkit/internal/testenv"
)

// The crash test of the lock-sensor service: two processes of its ingest and notify
// side, each the service as newService wires it (RabbitMQ consumers on one durable
// queue, the PostgreSQL store, the notifier, the liveness monitor), share the queue and
// the database while the parent publishes readings at about 1,000 a second, and are
// killed with SIGKILL at random moments and restarted. The clients are webhooks the
// parent serves, so that their record outlives every kill. At the end every reading
// and every notification is accounted for (crash_account_test.go).
//
// The environment the parent gives its children.
const (
	crashPGVar   = "FEEDKIT_CRASH_LOCKS_PG"   // the database, with the test's schema
	crashAMQPVar = "FEEDKIT_CRASH_LOCKS_AMQP" // the broker, with the test's vhost
)

// What the parent's environment may change of a run.
const (
	crashReadingsVar = "FEEDKIT_CRASH_LOCKS_READINGS" // readings published (default crashReadings)
	crashSensorsVar  = "FEEDKIT_CRASH_LOCKS_SENSORS"  // sensors they come from (default crashSensors)
)

const (
	crashReadings = 40000
	crashSensors  = 300
	crashKills    = 8
	// The load: crashPerTick readings every crashTick, about 1,000 a second.
	crashTick    = 20 * time.Millisecond
	crashPerTick = 20
	// crashChangeShare is the chance that a sensor's reading changes its state, as in
	// the simulation.
	crashChangeShare = 0.25
	// crashRetryUnit is the children's first retry delay (-retry-unit): it also bounds a
	// first attempt (to between half of it and all of it, with the jitter), long enough
	// that a busy machine's slow local POST is not cut short and made again.
	crashRetryUnit = 2 * time.Second
	// crashDeadline bounds the run: only a hang comes near it.
	crashDeadline = 10 * time.Minute
)

// crashT0 is the ts of the first reading; reading k of the run has ts crashT0 + k ms, so
// that every reading of a sensor has a ts of its own and the last published is the
// newest.
var crashT0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// crashClients are the clients: webhooks the parent serves, each linked to some of the
// sensors (by the sensor's index).
var crashClients = []struct {
	name  string
	links func(i int) bool
}{
	{"security-desk", func(int) bool { return true }},
	{"facility-app", func(i int) bool { return i%2 == 1 }},
	{"insurer", func(i int) bool { return i%3 == 0 }},
}

// crashReading is a reading the parent publishes.
type crashReading struct {
	sensor locks.SensorID
	state  locks.State
	at     time.Time
}

func (r crashReading) body() []byte {
	return fmt.Appendf(nil, `{"sensor_id":%q,"data":%d,"ts":%q}`, r.sensor, r.state, r.at.Format(time.RFC3339Nano))
}

// crashSensorID names sensor i.
func crashSensorID(i int) locks.SensorID { return locks.SensorID(fmt.Sprintf("Door%04d", i)) }

// crashLoad draws n readings of the sensors in turn: each sensor's first state at
// random, then each next one changed with crashChangeShare.
func crashLoad(r *rand.Rand, sensors []locks.SensorID, n int) []crashReading {
	state := make([]locks.State, len(sensors))
	out := make([]crashReading, n)
	for k := range out {
		i := k % len(sensors)
		switch {
		case k < len(sensors):
			state[i] = locks.State(r.IntN(2))
		case r.Float64() < crashChangeShare:
			state[i] = 1 - state[i]
		}
		out[k] = crashReading{sensor: sensors[i], state: state[i], at: crashT0.Add(time.Duration(k) * time.Millisecond)}
	}
	return out
}

// TestCrashLockSensors publishes FEEDKIT_CRASH_LOCKS_READINGS readings (40,000) of
// FEEDKIT_CRASH_LOCKS_SENSORS sensors (300) at about 1,000 a second to the queue two
// service processes consume, each sensor linked to one to three of three clients;
// FEEDKIT_CRASH_KILLS times (8) it kills one of the processes, or both, with SIGKILL
// once a share of the readings drawn at random is stored, and restarts it. When every
// reading is stored and no notification is pending it accounts, exactly: every
// reading stored, none lost, one stored twice only as a redelivery that changed
// nothing; every sensor's state is its last reading's; every event numbered and
// notified to each linked client; every notification the store says delivered was
// received, and every one received is the store's, to its client; what each client
// keeps under the receiver's rule (locks.Latest) is its sensors' final state; and a
// notification received more than once came again with the same key and the same body,
// each time after an attempt a kill cut short (or one the store recorded as failed).
func TestCrashLockSensors(t *testing.T) {
	n := crashtest.Int(t, crashReadingsVar, crashReadings)
	nSensors := crashtest.Int(t, crashSensorsVar, crashSensors)
	kills := crashtest.Kills(t, crashKills)
	rng := crashtest.Rand(t, "locksensors")
	load := rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64())) // drawn first: the seed replays both
	pgURL, amqpURL := pgtest.URL(t), testenv.AMQPVhost(t)
	ctx, cancel := context.WithTimeout(t.Context(), crashDeadline)
	defer cancel()

	pool, err := pgxpool.New(ctx, pgURL)
	require.NoError(t, err)
	t.Cleanup(pool.Close) // before pgtest drops the schema
	store, err := pgstore.New(ctx, pool, pgstore.Options{})
	require.NoError(t, err)
	sensors := make([]locks.SensorID, nSensors)
	addresses := map[locks.SensorID]string{}
	for i := range sensors {
		sensors[i] = crashSensorID(i)
		addresses[sensors[i]] = fmt.Sprintf("Moscow, Russia, Svobody st. 23 fl 1 room %d", i)
		require.NoError(t, store.CreateSensor(ctx, locks.Sensor{ID: sensors[i], Address: addresses[sensors[i]]}))
	}
	var hooks []*crashHook
	for _, c := range crashClients {
		h := startCrashHook(t, c.name)
		cl, err := store.CreateClient(ctx, locks.Client{Name: c.name, URL: h.url})
		require.NoError(t, err)
		h.client = cl.ID
		for i, id := range sensors {
			if c.links(i) {
				require.NoError(t, store.Link(ctx, id, cl.ID))
				h.linked[id] = true
			}
		}
		hooks = append(hooks, h)
	}
	readings := crashLoad(load, sensors, n)

	env := []string{crashPGVar + "=" + pgURL, crashAMQPVar + "=" + amqpURL}
	var procs []*crashtest.Process
	for _, name := range []string{"service-1", "service-2"} {
		procs = append(procs, crashtest.Start(t, crashtest.Spec{Name: name, Test: "TestCrashChildLockService", Env: env}))
	}
	for _, p := range procs {
		select {
		case <-p.Ready():
		case <-p.Done():
			t.Fatalf("%s exited before it was consuming: %v", p.Name(), p.Err())
		case <-ctx.Done():
			t.Fatalf("%s not consuming: %v", p.Name(), ctx.Err())
		}
	}

	// The load runs beside the kills: the parent publishes, as the sensors' gateway does.
	g, gctx := errgroup.WithContext(ctx)
	var published atomic.Int64
	began := time.Now()
	var publishTime time.Duration
	g.Go(func() error {
		err := crashPublish(gctx, amqpURL, readings, &published)
		publishTime = time.Since(began)
		return err
	})

	// Each kill waits for a share of the readings stored, drawn at random within its
	// own stretch of 5 % to 90 % (so that the kills are spread over the load and each
	// lands under it, however fast the machine); the pause before it spaces kills that
	// come due together, so that a restarted process works before the next.
	shares := make([]float64, kills)
	for i := range shares {
		shares[i] = 0.05 + 0.85*(float64(i)+rng.Float64())/float64(kills)
	}
	underLoad := 0 // kills made while some reading had not been stored
	chaos := crashtest.Chaos{Kills: kills, MinDelay: 200 * time.Millisecond, MaxDelay: 1500 * time.Millisecond, AllAtOnce: 0.25,
		Await: func(ctx context.Context, kill int) error {
			return crashAwaitStored(ctx, pool, int(shares[kill]*float64(n)))
		},
		OnKill: func(victims []*crashtest.Process) {
			rows, distinct, err := crashStored(ctx, pool)
			require.NoError(t, err)
			if distinct < n {
				underLoad++
			}
			pending, _, err := store.Pending(ctx)
			require.NoError(t, err)
			names := make([]string, len(victims))
			for i, v := range victims {
				names[i] = fmt.Sprintf("%s (start %d)", v.Name(), v.Starts())
			}
			t.Logf("kill: %s; %d readings published, %d stored (%d rows), %d notifications pending",
				strings.Join(names, ", "), published.Load(), distinct, rows, pending)
		}}
	made, err := chaos.Run(ctx, rng, procs...)
	require.NoError(t, err)
	require.NoError(t, g.Wait(), "publish the readings")
	require.NoError(t, crashSettle(ctx, t, pool, store, n), "every reading stored, no notification pending")
	for _, p := range procs {
		require.NoError(t, p.Stop(ctx), "%s stops cleanly", p.Name())
	}

	c := crashtest.NewCounts("locksensors")
	defer c.Print() // what was counted, even when an assertion stops the test
	c.Set("kills", made)
	c.Set("kills_under_load", underLoad)
	victims := 0
	for _, p := range procs {
		c.Set(p.Name()+"_kills", p.Kills())
		assert.Equal(t, p.Kills()+1, p.Starts(), "%s restarted after each kill", p.Name())
		victims += p.Kills()
	}
	c.Set("victims", victims)
	assert.Equal(t, kills, made, "every kill made")
	assert.Positive(t, underLoad, "the first kill, due at %.0f %% of the readings stored, under load", 100*shares[0])
	assert.GreaterOrEqual(t, victims, made)
	assert.LessOrEqual(t, victims, made*len(procs))
	c.Set("sensors", nSensors)
	c.Set("readings_per_s", int(float64(n)/publishTime.Seconds()))
	crashAccount(t, store, crashRun{sensors: sensors, addresses: addresses, readings: readings, hooks: hooks, victims: victims}, c)
}

// crashPublish publishes readings in order, crashPerTick every crashTick, each batch
// confirmed by the broker, and counts them in published.
func crashPublish(ctx context.Context, url string, readings []crashReading, published *atomic.Int64) error {
	pub, err := rabbitmq.NewPublisher(ctx, url, rabbitmq.DefaultQueue)
	if err != nil {
		return err
	}
	defer pub.Close()
	tick := time.NewTicker(crashTick)
	defer tick.Stop()
	batch := make([][]byte, 0, crashPerTick)
	for k := 0; k < len(readings); k += crashPerTick {
		batch = batch[:0]
		for _, r := range readings[k:min(k+crashPerTick, len(readings))] {
			batch = append(batch, r.body())
		}
		if err := pub.PublishBatch(ctx, batch); err != nil {
			return fmt.Errorf("publish readings %d to %d: %w", k, k+len(batch), err)
		}
		published.Add(int64(len(batch)))
		select {
		case <-tick.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// crashReadingsTable is the store's table of readings, which the parent counts.
var crashReadingsTable = pgx.Identifier{pgstore.DefaultTablePrefix + "readings"}.Sanitize()

// crashStored returns the rows of the readings table and the distinct readings in it
// (by sensor and ts: every reading published has a ts of its own, and a reading stored
// twice is one redelivered).
func crashStored(ctx context.Context, pool *pgxpool.Pool) (rows, distinct int, err error) {
	err = pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT (sensor_id, at)) FROM `+crashReadingsTable).Scan(&rows, &distinct)
	return rows, distinct, err
}

// crashAwaitStored waits until at least stored rows are in the readings table: the
// store is the only signal across the processes, so it is read every 100 ms.
func crashAwaitStored(ctx context.Context, pool *pgxpool.Pool, stored int) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		var got int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM `+crashReadingsTable).Scan(&got); err != nil {
			return err
		}
		if got >= stored {
			return nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return fmt.Errorf("%d readings stored, awaiting %d: %w", got, stored, ctx.Err())
		}
	}
}

// crashSettle waits until the store holds all n readings and then no notification is
// pending (every notification exists once its reading is stored), reading the store
// every 250 ms, until ctx ends or the test has failed (a child died).
func crashSettle(ctx context.Context, t *testing.T, pool *pgxpool.Pool, store *pgstore.Store, n int) error {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		if t.Failed() {
			return errors.New("the test failed meanwhile")
		}
		_, distinct, err := crashStored(ctx, pool)
		if err != nil {
			return err
		}
		pending := -1
		if distinct == n {
			if pending, _, err = store.Pending(ctx); err != nil {
				return err
			}
			if pending == 0 {
				return nil
			}
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return fmt.Errorf("%d of %d readings stored, %d notifications pending (-1: not counted): %w", distinct, n, pending, ctx.Err())
		}
	}
}

// TestCrashChildLockService is a service child: the service's ingest and notify side,
// as newService wires it on PostgreSQL and RabbitMQ, without the operator API or the
// simulation, until the parent stops it.
func TestCrashChildLockService(t *testing.T) {
	ctx := crashtest.Child(t)
	schedule, err := retrySchedule("exp", crashRetryUnit)
	require.NoError(t, err)
	svc, err := newService(ctx, serviceConfig{pgURL: os.Getenv(crashPGVar), amqpURL: os.Getenv(crashAMQPVar),
		schedule: schedule, logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil && ctx.Err() != nil {
		return // stopped while connecting
	}
	require.NoError(t, err)
	defer svc.close()
	done := make(chan error, 1)
	go func() { done <- svc.run(ctx, nil) }()
	select {
	case <-svc.ready():
		crashtest.Ready()
	case err := <-done:
		require.NoError(t, err, "the service stopped before it was consuming")
		return // stopped
	}
	require.NoError(t, <-done)
	st := svc.stats()
	fmt.Printf("stopped (start %d): %d readings stored in %d batches, %d notifications created; %d attempts, %d delivered, %d failed\n",
		crashtest.StartNumber(), st.Ingest.Readings, st.Ingest.Batches, st.Ingest.Notifications,
		st.Notify.Attempts, st.Notify.Delivered, st.Notify.Failed)
}
