package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/feedkit/feedkit/examples/locksensors/locks"
	"github.com/feedkit/feedkit/examples/locksensors/locks/rabbitmq"
	"github.com/feedkit/feedkit/internal/pgtest"
	"github.com/feedkit/feedkit/internal/testenv"
)

// benchSensors is how many sensors the benchmark's readings come from.
const benchSensors = 2000

// BenchmarkEndToEnd measures the service's throughput: b.N readings, a quarter of them
// changing their sensor's state (each change notifying a client), are put on a durable
// RabbitMQ queue, then the service consumes them, stores them in PostgreSQL with their
// state changes and notifications, and acknowledges them. readings/s is b.N over the
// time from the start of consumption to the last acknowledged batch; raw-msgs/s is the
// same messages consumed and acknowledged, and nothing else, by bare amqp091-go
// consumers with the same consumers, prefetch and batches, in the same run: the
// ceiling the broker sets.
//
//	./scripts/test.sh go test -run '^$' -bench EndToEnd -benchtime 48000x ./examples/locksensors
func BenchmarkEndToEnd(b *testing.B) {
	pgURL, amqpURL := pgtest.URL(b), testenv.AMQPVhost(b)
	ctx := b.Context()
	bodies := benchReadings(b.N)
	const consumers, prefetch, batch = 4, 1000, 500

	raw := rawConsume(b, amqpURL, bodies, consumers, prefetch, batch)

	sink := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer sink.Close()
	handled := make(chan int, 1<<16)
	svc, err := newService(ctx, serviceConfig{pgURL: pgURL, amqpURL: amqpURL, consumers: consumers,
		prefetch: prefetch, batchSize: batch, afterBatch: func(msgs []locks.Message, err error) {
			if err == nil {
				handled <- len(msgs)
			}
		}})
	require.NoError(b, err)
	defer svc.close()
	c, err := svc.store.CreateClient(ctx, locks.Client{Name: "sink", URL: sink.URL})
	require.NoError(b, err)
	for i := range benchSensors {
		id := benchSensorID(i)
		require.NoError(b, svc.store.CreateSensor(ctx, locks.Sensor{ID: id, Address: "bench"}))
		require.NoError(b, svc.store.Link(ctx, id, c.ID))
	}
	seedStates(b, svc.store)
	pub, err := rabbitmq.NewPublisher(ctx, amqpURL, rabbitmq.DefaultQueue)
	require.NoError(b, err)
	defer pub.Close()
	publishAll(b, pub.PublishBatch, bodies)

	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	b.ResetTimer()
	start := time.Now()
	go func() { done <- svc.run(runCtx, nil) }()
	for n := 0; n < b.N; {
		select {
		case k := <-handled:
			n += k
		case err := <-done:
			b.Fatalf("the service stopped: %v", err)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	stop()
	require.NoError(b, <-done)

	st := svc.stats()
	require.Equal(b, uint64(b.N), st.Ingest.Readings, "every reading stored once")
	readings, rawRate := float64(b.N)/elapsed.Seconds(), float64(b.N)/raw.Seconds()
	b.ReportMetric(readings, "readings/s")
	b.ReportMetric(rawRate, "raw-msgs/s")
	b.ReportMetric(readings/rawRate, "x-of-raw")
	b.ReportMetric(float64(st.Ingest.Changed)/float64(b.N), "changed-share")
}

// benchSensorID names sensor i.
func benchSensorID(i int) locks.SensorID { return locks.SensorID(fmt.Sprintf("bench%05d", i)) }

// benchStart is the ts of the benchmark's first readings.
var benchStart = time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)

// seedStates gives every sensor state 0, as if it had been heard before, so that the
// readings' first round changes a quarter of the states like every other.
func seedStates(b *testing.B, s locks.Store) {
	ids := make([]locks.SensorID, benchSensors)
	for i := range ids {
		ids[i] = benchSensorID(i)
	}
	_, err := s.Update(b.Context(), ids, func(cur map[locks.SensorID]locks.Current) (locks.Effects, error) {
		e := locks.Effects{Now: time.Now().UTC().Truncate(time.Microsecond)}
		for _, id := range ids {
			c := cur[id]
			c.Known, c.State, c.ReadingAt, c.ChangedAt = true, 0, benchStart.Add(-time.Second), benchStart.Add(-time.Second)
			e.States = append(e.States, c)
		}
		return e, nil
	})
	require.NoError(b, err)
}

// benchReadings returns n readings from benchSensors sensors in turn, every fourth
// round of them a change of state: a quarter of all readings change something (exactly
// when n is a multiple of 4 × benchSensors).
func benchReadings(n int) [][]byte {
	ts := benchStart
	out := make([][]byte, n)
	for i := range out {
		round := i / benchSensors
		state := (round/4 + 1) % 2 // rounds 0, 4, 8, … flip the seeded 0
		out[i] = fmt.Appendf(nil, `{"sensor_id":%q,"data":%d,"ts":%d}`, benchSensorID(i%benchSensors), state, ts.Unix()+int64(round))
	}
	return out
}

// publishAll publishes bodies in confirmed batches.
func publishAll(b *testing.B, publish func(context.Context, [][]byte) error, bodies [][]byte) {
	for i := 0; i < len(bodies); i += 5000 {
		require.NoError(b, publish(b.Context(), bodies[i:min(i+5000, len(bodies))]))
	}
}

// rawConsume puts bodies on a queue of their own and returns how long bare consumers
// take to receive and acknowledge them all: the broker's share of the service's work.
func rawConsume(b *testing.B, url string, bodies [][]byte, consumers, prefetch, batch int) time.Duration {
	const queue = "raw-baseline"
	pub, err := rabbitmq.NewPublisher(b.Context(), url, queue)
	require.NoError(b, err)
	publishAll(b, pub.PublishBatch, bodies)
	require.NoError(b, pub.Close())

	conn, err := amqp.Dial(url)
	require.NoError(b, err)
	defer conn.Close()
	var deliveries []<-chan amqp.Delivery
	var channels []*amqp.Channel
	for range consumers {
		ch, err := conn.Channel()
		require.NoError(b, err)
		require.NoError(b, ch.Qos(prefetch, 0, false))
		channels = append(channels, ch)
	}
	start := time.Now()
	for _, ch := range channels {
		d, err := ch.Consume(queue, "", false, false, false, false, nil)
		require.NoError(b, err)
		deliveries = append(deliveries, d)
	}
	total := make(chan int, len(bodies))
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	var g errgroup.Group
	for i, d := range deliveries {
		g.Go(func() error {
			for {
				// As the service's consumers do: wait for one, take what is waiting, ack.
				var last amqp.Delivery
				select {
				case <-ctx.Done():
					return nil
				case last = <-d:
				}
				n := 1
			more:
				for n < batch {
					select {
					case m := <-d:
						last, n = m, n+1
					default:
						break more
					}
				}
				if err := channels[i].Ack(last.DeliveryTag, true); err != nil {
					return err
				}
				total <- n
			}
		})
	}
	for n := 0; n < len(bodies); n += <-total {
	}
	elapsed := time.Since(start)
	cancel()
	require.NoError(b, g.Wait())
	return elapsed
}
