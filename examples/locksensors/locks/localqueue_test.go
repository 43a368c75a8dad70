package locks_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/examples/locksensors/locks"
)

// lqAwait waits for ch to deliver or be closed, failing the test after ten seconds.
func lqAwait[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	select {
	case v := <-ch:
		return v
	case <-ctx.Done():
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// lqBodies returns n distinct bodies numbered from first.
func lqBodies(first, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(`{"n":%d}`, first+i)
	}
	return out
}

func lqPublish(t *testing.T, q *locks.LocalQueue, bodies []string) {
	t.Helper()
	for _, b := range bodies {
		require.NoError(t, q.Publish(t.Context(), []byte(b)))
	}
}

// lqRecorder is a handler that keeps the batches it stored and signals once it has
// stored want messages. Until fails calls have failed, it refuses batches.
type lqRecorder struct {
	mu      sync.Mutex
	calls   [][]locks.Message // every call's batch, refused ones included
	stored  []locks.Message
	batches []int
	want    int
	fails   int
	failed  chan struct{} // receives at every refusal
	all     chan struct{} // closed once want messages are stored
}

func newLQRecorder(want, fails int) *lqRecorder {
	return &lqRecorder{want: want, fails: fails, failed: make(chan struct{}, fails), all: make(chan struct{})}
}

func (r *lqRecorder) HandleBatch(_ context.Context, msgs []locks.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, msgs)
	if len(r.calls) <= r.fails {
		r.failed <- struct{}{}
		return errors.New("the store is down")
	}
	r.stored = append(r.stored, msgs...)
	r.batches = append(r.batches, len(msgs))
	if len(r.stored) == r.want {
		close(r.all)
	}
	return nil
}

func (r *lqRecorder) storedBodies() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, len(r.stored))
	for i, m := range r.stored {
		out[i] = string(m.Body)
	}
	return out
}

// lqRun runs q.Run(ctx, h) and returns a channel that receives its result.
func lqRun(ctx context.Context, q *locks.LocalQueue, h locks.BatchHandler) <-chan error {
	done := make(chan error, 1)
	go func() { done <- q.Run(ctx, h) }()
	return done
}

func TestLocalQueueRefusesBadConfig(t *testing.T) {
	for field, cfg := range map[string]locks.LocalQueueConfig{
		"LocalQueueConfig.Capacity":  {Capacity: -1},
		"LocalQueueConfig.Consumers": {Consumers: -1},
		"LocalQueueConfig.BatchSize": {BatchSize: -1},
	} {
		_, err := locks.NewLocalQueue(cfg)
		var fe *locks.FieldError
		if assert.ErrorAs(t, err, &fe, field) {
			assert.Equal(t, field, fe.Field)
		}
	}
	_, err := locks.NewLocalQueue(locks.LocalQueueConfig{Retry: locks.Backoff{Initial: time.Second, Max: time.Millisecond}})
	if assert.Error(t, err) {
		assert.True(t, strings.HasPrefix(err.Error(), "LocalQueueConfig.Retry.Max "), "%q names the field", err)
	}
	q, err := locks.NewLocalQueue(locks.LocalQueueConfig{})
	require.NoError(t, err)
	assert.Error(t, q.Run(t.Context(), nil), "Run needs a handler")
}

func TestLocalQueueKeepsOrderWithOneConsumerAndStampsAtPublish(t *testing.T) {
	clk := clocktest.NewFake(t0)
	q, err := locks.NewLocalQueue(locks.LocalQueueConfig{Consumers: 1, BatchSize: 7, Clock: clk})
	require.NoError(t, err)
	bodies := lqBodies(0, 200)
	lqPublish(t, q, bodies[:100]) // a backlog, and then a stream
	rec := newLQRecorder(len(bodies), 0)
	ctx, cancel := context.WithCancel(t.Context())
	done := lqRun(ctx, q, rec)
	clk.Advance(time.Second)
	buf := []byte(bodies[100])
	require.NoError(t, q.Publish(t.Context(), buf))
	copy(buf, "garbage!") // the queue kept a copy
	lqPublish(t, q, bodies[101:])
	lqAwait(t, rec.all, "every message")
	cancel()
	require.NoError(t, lqAwait(t, done, "Run to return"))

	assert.Equal(t, bodies, rec.storedBodies(), "each once, in publish order")
	for i, m := range rec.stored {
		want := t0
		if i >= 100 {
			want = t0.Add(time.Second)
		}
		assert.Equal(t, want, m.Received, "message %d is stamped when published", i)
	}
	assert.Zero(t, q.Len())
}

func TestLocalQueueBatchesWhatWaitsAndALoneMessageGoesAtOnce(t *testing.T) {
	q, err := locks.NewLocalQueue(locks.LocalQueueConfig{Consumers: 1, BatchSize: 10})
	require.NoError(t, err)
	lqPublish(t, q, lqBodies(0, 95))
	rec := newLQRecorder(95, 0)
	lone := make(chan []locks.Message, 1)
	h := locks.BatchHandlerFunc(func(ctx context.Context, m []locks.Message) error {
		if string(m[0].Body) == "lone" {
			lone <- m
			return nil
		}
		return rec.HandleBatch(ctx, m)
	})
	ctx, cancel := context.WithCancel(t.Context())
	done := lqRun(ctx, q, h)
	lqAwait(t, rec.all, "the backlog")
	rec.mu.Lock()
	assert.Equal(t, []int{10, 10, 10, 10, 10, 10, 10, 10, 10, 5}, rec.batches, "full batches from a backlog")
	rec.mu.Unlock()

	require.NoError(t, q.Publish(t.Context(), []byte("lone")))
	assert.Len(t, lqAwait(t, lone, "the lone message"), 1, "nothing waits for company")
	cancel()
	require.NoError(t, lqAwait(t, done, "Run to return"))
}

func TestLocalQueuePublishWaitsWhileFull(t *testing.T) {
	q, err := locks.NewLocalQueue(locks.LocalQueueConfig{Capacity: 4, Consumers: 1, BatchSize: 2})
	require.NoError(t, err)
	lqPublish(t, q, lqBodies(0, 4))
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	rec := newLQRecorder(5, 0)
	var first sync.Once
	h := locks.BatchHandlerFunc(func(ctx context.Context, m []locks.Message) error {
		first.Do(func() {
			entered <- struct{}{}
			<-release
		})
		return rec.HandleBatch(ctx, m)
	})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := lqRun(ctx, q, h)
	lqAwait(t, entered, "the first batch in the handler")
	assert.Equal(t, 2, q.Len(), "two wait, two are being handled")

	// The batch being handled still holds its room: the queue is full.
	expired, stop := context.WithCancel(t.Context())
	stop()
	assert.ErrorIs(t, q.Publish(expired, []byte("probe")), context.Canceled, "a full queue makes Publish wait")
	published := make(chan error, 1)
	go func() { published <- q.Publish(t.Context(), []byte(`{"n":4}`)) }()
	select {
	case err := <-published:
		t.Fatalf("Publish returned while the queue was full: %v", err)
	default:
	}

	close(release) // the handled batch gives its room back
	require.NoError(t, lqAwait(t, published, "the waiting Publish"))
	lqAwait(t, rec.all, "every message")
	cancel()
	require.NoError(t, lqAwait(t, done, "Run to return"))
	assert.Equal(t, lqBodies(0, 5), rec.storedBodies())
}

func TestLocalQueueHandsARefusedBatchAgainAfterTheBackoff(t *testing.T) {
	clk := clocktest.NewFake(t0)
	policy := locks.Backoff{Initial: time.Second, Max: 8 * time.Second}
	q, err := locks.NewLocalQueue(locks.LocalQueueConfig{Consumers: 1, Retry: policy, Clock: clk})
	require.NoError(t, err)
	lqPublish(t, q, lqBodies(0, 3))
	rec := newLQRecorder(3, 3)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := lqRun(ctx, q, rec)
	for i := range 3 {
		lqAwait(t, rec.failed, "a refused batch")
		clk.BlockUntil(1) // the consumer waits out its backoff
		// Exactly the delay due (no jitter): a longer step would also fire the next
		// attempt's timer, made while the clock passes this one.
		clk.Advance(policy.Nominal(i))
	}
	lqAwait(t, rec.all, "the batch stored")
	cancel()
	require.NoError(t, lqAwait(t, done, "Run to return"))

	rec.mu.Lock()
	defer rec.mu.Unlock()
	require.Len(t, rec.calls, 4)
	for _, c := range rec.calls {
		assert.Equal(t, rec.calls[0], c, "the same batch every time")
	}
	assert.Equal(t, t0.Add(7*time.Second), clk.Now(), "1s, 2s and 4s of backoff")
}

func TestLocalQueueCloseDrains(t *testing.T) {
	q, err := locks.NewLocalQueue(locks.LocalQueueConfig{Capacity: 50, BatchSize: 7})
	require.NoError(t, err)
	lqPublish(t, q, lqBodies(0, 50))
	waiting := make(chan error, 1)
	go func() { waiting <- q.Publish(t.Context(), []byte("one too many")) }()
	q.Close()
	q.Close()
	assert.ErrorIs(t, lqAwait(t, waiting, "the Publish waiting on a full queue"), locks.ErrQueueClosed)
	assert.ErrorIs(t, q.Publish(t.Context(), []byte("late")), locks.ErrQueueClosed)

	rec := newLQRecorder(50, 0)
	require.NoError(t, lqAwait(t, lqRun(t.Context(), q, rec), "Run to return once the queue is drained"))
	assert.ElementsMatch(t, lqBodies(0, 50), rec.storedBodies())
	assert.Zero(t, q.Len())
}

func TestLocalQueueRunEndingKeepsWhatIsQueued(t *testing.T) {
	q, err := locks.NewLocalQueue(locks.LocalQueueConfig{Consumers: 2})
	require.NoError(t, err)
	bodies := lqBodies(0, 10)
	lqPublish(t, q, bodies)
	entered := make(chan struct{}, 2)
	h := locks.BatchHandlerFunc(func(ctx context.Context, _ []locks.Message) error {
		entered <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	})
	ctx, cancel := context.WithCancel(t.Context())
	done := lqRun(ctx, q, h)
	lqAwait(t, entered, "a batch in the handler")
	cancel()
	require.NoError(t, lqAwait(t, done, "Run to return"))
	assert.Equal(t, len(bodies), q.Len(), "the batch not stored went back")

	rec := newLQRecorder(len(bodies), 0)
	ctx, cancel = context.WithCancel(t.Context())
	done = lqRun(ctx, q, rec)
	lqAwait(t, rec.all, "every message, by a later Run")
	cancel()
	require.NoError(t, lqAwait(t, done, "Run to return"))
	assert.Equal(t, bodies, rec.storedBodies(), "in order: the batch went back to the head")
}
