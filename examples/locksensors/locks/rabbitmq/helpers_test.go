package rabbitmq_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/examples/locksensors/locks"
	"github.com/feedkit/feedkit/examples/locksensors/locks/rabbitmq"
)

// waitTimeout bounds every wait of these tests: a broken consumer fails a test instead
// of hanging it.
const waitTimeout = 30 * time.Second

// fastRetry keeps reconnections and retries quick on the wall clock.
var fastRetry = locks.Backoff{Initial: 5 * time.Millisecond, Max: 50 * time.Millisecond}

// waitCtx is a context that ends after waitTimeout.
func waitCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	t.Cleanup(cancel)
	return ctx
}

// await waits for ch to be closed or to deliver, failing the test after waitTimeout.
func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-waitCtx(t).Done():
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// eventually polls cond until it holds, failing the test after waitTimeout. It is for
// state only the broker holds (queue depths) and counters, which nothing signals.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	ctx := waitCtx(t)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// uniqueName is a connection name no other test uses, so that closing a test's
// connections leaves the others alone.
func uniqueName(t *testing.T) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "locksensors-test-" + hex.EncodeToString(b[:])
}

// bodies returns n distinct reading bodies, numbered from first.
func bodies(first, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = fmt.Appendf(nil, `{"n":%d}`, first+i)
	}
	return out
}

// publish puts msgs on queue at url and waits for the broker's confirmations.
func publish(t *testing.T, url, queue string, msgs [][]byte) {
	t.Helper()
	p, err := rabbitmq.NewPublisher(waitCtx(t), url, queue)
	require.NoError(t, err)
	defer func() { require.NoError(t, p.Close()) }()
	require.NoError(t, p.PublishBatch(waitCtx(t), msgs))
}

// depth returns how many messages of queue at url are ready for delivery (not counting
// those delivered and not yet acknowledged), by a passive declaration.
func depth(t *testing.T, url, queue string) int {
	t.Helper()
	conn, err := amqp.Dial(url)
	require.NoError(t, err)
	defer conn.Close()
	ch, err := conn.Channel()
	require.NoError(t, err)
	q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
	require.NoError(t, err)
	return q.Messages
}

// running is a Consumer whose Run is under way.
type running struct {
	*rabbitmq.Consumer
	cancel context.CancelFunc
	done   chan error // receives Run's result
}

// start makes a Consumer of cfg and h, runs it until the test ends, and waits until it
// is ready (or Run has failed).
func start(t *testing.T, cfg rabbitmq.Config, h locks.BatchHandler) *running {
	t.Helper()
	c, err := rabbitmq.NewConsumer(cfg, h)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{Consumer: c, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-r.done
	})
	select {
	case <-c.Ready():
	case err := <-r.done:
		t.Fatalf("Run returned before the consumer was ready: %v", err)
	case <-waitCtx(t).Done():
		t.Fatal("timed out waiting for the consumer to be ready")
	}
	return r
}

// stop cancels Run and requires it to return nil within waitTimeout.
func (r *running) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	select {
	case err := <-r.done:
		require.NoError(t, err)
		r.done <- err // for the cleanup's receive
	case <-waitCtx(t).Done():
		t.Fatal("Run did not return after its context was cancelled")
	}
}

// recorder is a handler that keeps what it stored, and signals when it has seen every
// one of the bodies it expects.
type recorder struct {
	mu      sync.Mutex
	stored  []string // bodies of the batches it accepted, in the order it accepted them
	batches []int    // sizes of those batches
	seen    map[string]int
	want    int
	all     chan struct{} // closed once want distinct bodies are stored
	// before, when set, runs first in each call; a non-nil error is returned without
	// storing the batch.
	before func(ctx context.Context, msgs []locks.Message) error
}

func newRecorder(want int) *recorder {
	return &recorder{seen: map[string]int{}, want: want, all: make(chan struct{})}
}

func (r *recorder) HandleBatch(ctx context.Context, msgs []locks.Message) error {
	if r.before != nil {
		if err := r.before(ctx, msgs); err != nil {
			return err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range msgs {
		r.stored = append(r.stored, string(m.Body))
		r.seen[string(m.Body)]++
	}
	r.batches = append(r.batches, len(msgs))
	if len(r.seen) == r.want {
		close(r.all)
	}
	return nil
}

func (r *recorder) snapshot() (stored []string, batches []int, seen map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen = make(map[string]int, len(r.seen))
	for k, v := range r.seen {
		seen[k] = v
	}
	return append([]string(nil), r.stored...), append([]int(nil), r.batches...), seen
}

// strs returns bodies as strings.
func strs(bs [][]byte) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = string(b)
	}
	return out
}

// msgBodies returns the bodies of msgs as strings.
func msgBodies(msgs []locks.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = string(m.Body)
	}
	return out
}
