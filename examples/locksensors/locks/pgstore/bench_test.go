package pgstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/examples/locksensors/locks"
	"github.com/feedkit/feedkit/internal/pgtest"
)

// BenchmarkUpdate measures the ingest path's writes: one op is one Update of a batch of
// 500 readings of sensors drawn at random from 10,000, a quarter of them changing their
// sensor's state, each change cancelling the sensor's pending notifications and notifying
// its 2 linked clients; every sensor read gets its state written. The Updates come from
// several consumers at once, as the service's queue consumers send them. The metric
// readings/s is the rate.
func BenchmarkUpdate(b *testing.B) {
	const nSensors = 10_000
	s := newStore(b, pgtest.Pool(b))
	ids := make([]locks.SensorID, nSensors)
	for i := range ids {
		ids[i] = locks.SensorID(fmt.Sprintf("sensor%05d", i))
	}
	clients := []locks.Client{client(b, s, "a"), client(b, s, "b")}
	var wg sync.WaitGroup
	const setupWorkers = 8
	for w := range setupWorkers {
		wg.Go(func() {
			sensors(b, s, ids[w*nSensors/setupWorkers:(w+1)*nSensors/setupWorkers], clients...)
		})
	}
	wg.Wait()
	// Every sensor has a known state, so that only the quarter of the readings meant to
	// change one do.
	n, err := s.Update(b.Context(), ids, func(cur map[locks.SensorID]locks.Current) (locks.Effects, error) {
		e := locks.Effects{Now: t0}
		for _, c := range cur {
			c.Known, c.ReadingAt, c.ChangedAt, c.LastSeen = true, t0, t0, t0
			e.States = append(e.States, c)
		}
		return e, nil
	})
	require.NoError(b, err)
	require.Zero(b, n)
	for _, consumers := range []int{1, 4} {
		b.Run(fmt.Sprintf("consumers=%d", consumers), func(b *testing.B) {
			benchmarkUpdate(b, s, ids, consumers)
		})
	}
}

// batchSize is the number of readings of an Update in BenchmarkUpdate.
const batchSize = 500

func benchmarkUpdate(b *testing.B, s locks.Store, all []locks.SensorID, consumers int) {
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	b.ResetTimer()
	start := time.Now()
	for c := range consumers {
		rng := rand.New(rand.NewPCG(uint64(c), uint64(time.Now().UnixNano())))
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				if err := ingest(b.Context(), s, randomBatch(rng, all)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N*batchSize)/elapsed.Seconds(), "readings/s")
}

// randomBatch returns batchSize readings of random sensors, every fourth a change.
func randomBatch(rng *rand.Rand, all []locks.SensorID) []benchReading {
	out := make([]benchReading, batchSize)
	for i := range out {
		out[i] = benchReading{id: all[rng.IntN(len(all))], change: i%4 == 0}
	}
	return out
}

// benchReading is a reading of the benchmark: it changes its sensor's state or repeats
// it.
type benchReading struct {
	id     locks.SensorID
	change bool
}

// ingest stores a batch as the service's Ingester would, with the effects it would
// decide.
func ingest(ctx context.Context, s locks.Store, batch []benchReading) error {
	now := time.Now().UTC().Truncate(time.Microsecond)
	ids := make([]locks.SensorID, 0, len(batch))
	for _, r := range batch {
		ids = append(ids, r.id)
	}
	_, err := s.Update(ctx, ids, func(cur map[locks.SensorID]locks.Current) (locks.Effects, error) {
		e := locks.Effects{Now: now, Readings: make([]locks.StoredReading, 0, len(batch))}
		for _, r := range batch {
			c := cur[r.id]
			state, outcome := c.State, locks.Same
			if r.change {
				state, outcome = 1-c.State, locks.Changed
				c.Known, c.State, c.ChangedAt = true, state, now
				e.Cancel = append(e.Cancel, r.id)
				e.Notify = append(e.Notify, locks.Change{SensorID: r.id, Event: locks.EventChanged, State: state, At: now})
			}
			c.ReadingAt, c.LastSeen = now, now
			cur[r.id] = c
			e.Readings = append(e.Readings, locks.StoredReading{SensorID: r.id, State: state, At: now, Received: now, Outcome: outcome})
		}
		for _, c := range cur {
			e.States = append(e.States, c)
		}
		return e, nil
	})
	return err
}
