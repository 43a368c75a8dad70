package rabbitmq_test

import (
	"context"
	"errors"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/examples/locksensors/locks"
	"github.com/feedkit/feedkit/examples/locksensors/locks/rabbitmq"
	"github.com/feedkit/feedkit/internal/testenv"
)

func TestNewConsumerRefusesABadConfigNamingTheField(t *testing.T) {
	h := locks.BatchHandlerFunc(func(context.Context, []locks.Message) error { return nil })
	const u = "amqp://guest:guest@localhost:5672/"
	cases := map[string]rabbitmq.Config{
		"rabbitmq.Config.URL ":              {},
		"rabbitmq.Config.URL: ":             {URL: "http://localhost/"},
		"rabbitmq.Config.Queue ":            {URL: u, Queue: strings.Repeat("q", 256)},
		"rabbitmq.Config.Consumers ":        {URL: u, Consumers: -1},
		"rabbitmq.Config.Prefetch ":         {URL: u, Prefetch: 70000},
		"rabbitmq.Config.BatchSize ":        {URL: u, BatchSize: -1},
		"rabbitmq.Config.BatchSize 501 ":    {URL: u, BatchSize: 501},
		"rabbitmq.Config.Reconnect.Max ":    {URL: u, Reconnect: locks.Backoff{Initial: time.Second, Max: time.Millisecond}},
		"rabbitmq.Config.Reconnect.Jitter ": {URL: u, Reconnect: locks.Backoff{Initial: time.Second, Max: time.Second, Jitter: 2}},
	}
	for prefix, cfg := range cases {
		_, err := rabbitmq.NewConsumer(cfg, h)
		if assert.Error(t, err, prefix) {
			assert.True(t, strings.HasPrefix(err.Error(), prefix), "%q should start with %q", err, prefix)
		}
	}

	_, err := rabbitmq.NewConsumer(rabbitmq.Config{URL: "amqp://user:se/cret@host/"}, h)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "cret", "a password never shows in an error")

	_, err = rabbitmq.NewConsumer(rabbitmq.Config{URL: u}, nil)
	assert.Error(t, err, "a nil handler")

	_, err = rabbitmq.NewConsumer(rabbitmq.Config{URL: u, Prefetch: 10}, h)
	assert.NoError(t, err, "the default BatchSize shrinks to a small Prefetch")
}

func TestEveryMessageReachesTheHandlerOnceInOrder(t *testing.T) {
	t.Parallel()
	u := testenv.AMQPVhost(t)
	msgs := bodies(0, 1000)
	publish(t, u, "", msgs[:500]) // a backlog, and then a stream
	rec := newRecorder(len(msgs))
	c := start(t, rabbitmq.Config{URL: u, Consumers: 1}, rec)
	publish(t, u, "", msgs[500:])
	await(t, rec.all, "every message")
	c.stop(t)

	stored, _, _ := rec.snapshot()
	assert.Equal(t, strs(msgs), stored, "each once, in publish order")
	st := c.Stats()
	assert.Equal(t, rabbitmq.Stats{Delivered: 1000, Batches: st.Batches, Acked: 1000, Connects: 1}, st)
	assert.Zero(t, depth(t, u, rabbitmq.DefaultQueue))
}

func TestBatchesFillUnderABacklogAndALoneReadingGoesAtOnce(t *testing.T) {
	t.Parallel()
	u := testenv.AMQPVhost(t)
	const queue = "batching"
	msgs := bodies(0, 1000)
	publish(t, u, queue, msgs)
	rec := newRecorder(len(msgs) + 1)
	var calls atomic.Int64
	lone := make(chan []locks.Message, 1)
	rec.before = func(_ context.Context, m []locks.Message) error {
		if calls.Add(1) > 1 && string(m[0].Body) == "lone" {
			lone <- m
		}
		return nil
	}
	c := start(t, rabbitmq.Config{URL: u, Queue: queue, Consumers: 1, Prefetch: 100, BatchSize: 25}, rec)
	eventually(t, "the backlog handled", func() bool { return c.Stats().Acked == int64(len(msgs)) })
	_, batches, _ := rec.snapshot()
	assert.LessOrEqual(t, maxOf(batches), 25, "no batch exceeds BatchSize")
	assert.Greater(t, maxOf(batches), 1, "a backlog fills batches")

	publish(t, u, queue, [][]byte{[]byte("lone")})
	assert.Equal(t, []string{"lone"}, msgBodies(await(t, lone, "the lone reading")), "nothing waits for company")
}

func maxOf(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

func TestNothingIsAcknowledgedBeforeTheHandlerSucceeds(t *testing.T) {
	t.Parallel()
	u := testenv.AMQPVhost(t)
	msgs := bodies(0, 5)
	publish(t, u, "", msgs)
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktest.NewFake(t0)
	rec := newRecorder(len(msgs))
	var (
		mu       sync.Mutex
		calls    [][]string
		received []time.Time
	)
	failed := make(chan struct{}, 3)
	rec.before = func(_ context.Context, m []locks.Message) error {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, msgBodies(m))
		for _, msg := range m {
			received = append(received, msg.Received)
		}
		if len(calls) <= 3 {
			failed <- struct{}{}
			return errors.New("the store is down")
		}
		return nil
	}
	policy := locks.Backoff{Initial: time.Second, Max: 4 * time.Second}
	c := start(t, rabbitmq.Config{URL: u, Consumers: 1, Prefetch: 10, BatchSize: 10, Reconnect: policy, Clock: clk}, rec)
	for i := range 3 {
		await(t, failed, "a failed call")
		clk.BlockUntil(1) // the consumer waits out its backoff
		assert.Zero(t, c.Stats().Acked, "nothing acknowledged after failure %d", i+1)
		assert.Equal(t, int64(i+1), c.Stats().HandlerErrors)
		// Exactly the delay due (no jitter): a longer step would also fire the next
		// attempt's timer, made while the clock passes this one.
		clk.Advance(policy.Nominal(i))
	}
	await(t, rec.all, "every message")
	c.stop(t)

	mu.Lock()
	defer mu.Unlock()
	for i := 1; i <= 3; i++ {
		assert.Equal(t, calls[0], calls[i], "call %d hands the same batch", i+1)
	}
	st := c.Stats()
	assert.Equal(t, int64(5), st.Acked)
	assert.Equal(t, int64(3), st.HandlerErrors)
	assert.Zero(t, depth(t, u, rabbitmq.DefaultQueue), "the acknowledged batch left the queue")
	for _, r := range received {
		assert.False(t, r.Before(t0), "Received %v comes from the fake clock", r)
	}
}

func TestABatchNotStoredReturnsToTheQueueWhenRunEnds(t *testing.T) {
	t.Parallel()
	u := testenv.AMQPVhost(t)
	msgs := bodies(0, 5)
	publish(t, u, "", msgs)
	failed := make(chan struct{}, 1)
	h := locks.BatchHandlerFunc(func(context.Context, []locks.Message) error {
		select {
		case failed <- struct{}{}:
		default:
		}
		return errors.New("the store is down")
	})
	c := start(t, rabbitmq.Config{URL: u, Consumers: 1, Reconnect: fastRetry}, h)
	await(t, failed, "a failed call")
	c.stop(t)
	assert.Zero(t, c.Stats().Acked)
	// The broker requeues on its own time once the connection is gone.
	eventually(t, "the batch back in the queue", func() bool { return depth(t, u, rabbitmq.DefaultQueue) == len(msgs) })
}

// Not parallel: testenv.CloseAMQPConnections fails when another connection of the broker
// is mid-handshake (it has no client properties yet), as the parallel tests' often are.
func TestReconnectsAfterTheBrokerClosesTheConnection(t *testing.T) {
	u := testenv.AMQPVhost(t)
	msgs := bodies(0, 100)
	publish(t, u, "", msgs)
	name := uniqueName(t)
	var closed atomic.Bool
	blocked := make(chan struct{}, 2)
	rec := newRecorder(len(msgs))
	rec.before = func(ctx context.Context, _ []locks.Message) error {
		if closed.Load() {
			return nil
		}
		// Held until the session ends: the broker closing the connection ends it.
		blocked <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	}
	c := start(t, rabbitmq.Config{URL: u, Consumers: 2, Prefetch: 50, BatchSize: 10, Reconnect: fastRetry, ConnectionName: name}, rec)
	await(t, blocked, "a handler holding a batch")
	closed.Store(true)
	require.Equal(t, 1, testenv.CloseAMQPConnections(t, name, "test: broker closes the connection"))
	await(t, rec.all, "every message, after the reconnection")
	eventually(t, "every message acknowledged", func() bool { return c.Stats().Acked >= int64(len(msgs)) })
	c.stop(t)

	st := c.Stats()
	assert.Equal(t, int64(2), st.Connects)
	assert.Equal(t, int64(1), st.Drops)
	assert.Positive(t, st.Redelivered, "the held batch came again")
	assert.Zero(t, depth(t, u, rabbitmq.DefaultQueue))
}

func TestPrefetchBoundsWhatEachConsumerHolds(t *testing.T) {
	t.Parallel()
	u := testenv.AMQPVhost(t)
	msgs := bodies(0, 100)
	publish(t, u, "", msgs)
	release := make(chan struct{})
	holding := make(chan struct{}, 2)
	rec := newRecorder(len(msgs))
	var held atomic.Int64
	rec.before = func(ctx context.Context, _ []locks.Message) error {
		if held.Add(1) <= 2 {
			holding <- struct{}{}
			select {
			case <-release:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
	c := start(t, rabbitmq.Config{URL: u, Consumers: 2, Prefetch: 10, BatchSize: 10}, rec)
	// A consumer calls the handler one batch at a time: two held calls are both consumers.
	await(t, holding, "the first consumer held")
	await(t, holding, "the second consumer held")
	eventually(t, "both prefetch windows delivered", func() bool { return c.Stats().Delivered == 20 })
	assert.Equal(t, 80, depth(t, u, rabbitmq.DefaultQueue), "the broker holds back what the windows do not take")
	assert.Equal(t, int64(20), c.Stats().Delivered)

	close(release)
	await(t, rec.all, "every message")
	_, _, seen := rec.snapshot()
	for _, m := range msgs {
		assert.Equal(t, 1, seen[string(m)], "%s once", m)
	}
}

func TestConsumersShareTheLoad(t *testing.T) {
	t.Parallel()
	u := testenv.AMQPVhost(t)
	msgs := bodies(0, 400)
	publish(t, u, "", msgs)
	const consumers = 4
	var (
		inFlight atomic.Int64
		together = make(chan struct{})
		once     sync.Once
	)
	rec := newRecorder(len(msgs))
	rec.before = func(ctx context.Context, _ []locks.Message) error {
		// Every consumer's first call waits until all of them are in a call at once.
		if n := inFlight.Add(1); n == consumers {
			once.Do(func() { close(together) })
		}
		select {
		case <-together:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	c := start(t, rabbitmq.Config{URL: u, Consumers: consumers, Prefetch: 20, BatchSize: 10}, rec)
	await(t, together, "every consumer handling a batch at once")
	await(t, rec.all, "every message")
	c.stop(t)
	_, _, seen := rec.snapshot()
	for _, m := range msgs {
		assert.Equal(t, 1, seen[string(m)], "%s once", m)
	}
}

// Not parallel: it looks for goroutines, and parallel tests would have some.
func TestRunReturnsPromptlyAndLeavesNoGoroutine(t *testing.T) {
	u := testenv.AMQPVhost(t)
	publish(t, u, "", bodies(0, 10))
	inCall := make(chan struct{}, 1)
	h := locks.BatchHandlerFunc(func(ctx context.Context, _ []locks.Message) error {
		select {
		case inCall <- struct{}{}:
		default:
		}
		<-ctx.Done()
		return ctx.Err()
	})
	c := start(t, rabbitmq.Config{URL: u, Consumers: 3}, h)
	await(t, inCall, "a handler call")
	c.stop(t)
	assert.Error(t, c.Run(t.Context()), "Run may be called once")

	// Run waits for its goroutines' WaitGroup; a goroutine that has called Done may still
	// be returning from its last frame for an instant (seen on a busy machine: "runnable"
	// at the closing brace), so the check allows it that instant, not a moment of work.
	buf := make([]byte, 1<<20)
	ours := func() string {
		for g := range strings.SplitSeq(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			// amqp091-go's reader may still be on its way out of the socket's Read (in
			// internal/amqpconn); the goroutines Run started are the session's.
			if strings.Contains(g, "locks/rabbitmq.(*session)") || strings.Contains(g, "locks/rabbitmq.(*Consumer)") ||
				strings.Contains(g, "created by github.com/feedkit/feedkit/examples/locksensors/locks/rabbitmq.") {
				return g
			}
		}
		return ""
	}
	ctx := waitCtx(t)
	for g := ours(); g != ""; g = ours() {
		select {
		case <-ctx.Done():
			t.Fatalf("Run has returned, yet one of its goroutines remains:\n%s", g)
		case <-time.After(5 * time.Millisecond):
		}
	}
	// amqp091-go's reader and heartbeater return on their own once the socket is
	// closed, which Run waits for; they may take a moment more to be gone.
	eventually(t, "amqp091-go's goroutines gone", func() bool {
		stacks := string(buf[:runtime.Stack(buf, true)])
		return !strings.Contains(stacks, "amqp091-go.(*Connection)")
	})
}

func TestRunFailsOnAWrongVhostOrCredentials(t *testing.T) {
	t.Parallel()
	base, err := url.Parse(testenv.AMQPURL(t))
	require.NoError(t, err)
	h := locks.BatchHandlerFunc(func(context.Context, []locks.Message) error { return nil })

	vhost := *base
	vhost.Path = "/" + uniqueName(t)
	creds := *base
	creds.User = url.UserPassword("nobody", "wrong")
	for what, u := range map[string]*url.URL{"vhost": &vhost, "credentials": &creds} {
		c, err := rabbitmq.NewConsumer(rabbitmq.Config{URL: u.String(), Reconnect: fastRetry}, h)
		require.NoError(t, err)
		err = c.Run(waitCtx(t))
		require.Error(t, err, "a wrong %s is not retried", what)
		assert.NotContains(t, err.Error(), "wrong", "no password in the error")
		select {
		case <-c.Ready():
			t.Errorf("ready with a wrong %s", what)
		default:
		}
	}
}
