package locks_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/examples/locksensors/locks"
)

// cancelOnClaim cancels the notifier's context right after a Claim that took
// something: the process is told to stop just as attempts start.
type cancelOnClaim struct {
	*finishes
	cancel context.CancelFunc
}

func (c cancelOnClaim) Claim(ctx context.Context, r locks.ClaimRequest) ([]locks.Delivery, error) {
	ds, err := c.finishes.Claim(ctx, r)
	if len(ds) > 0 {
		c.cancel()
	}
	return ds, err
}

// TestShutdownDoesNotKillTheLastAttempt: a notification at its last attempt must
// not be made dead because the notifier itself was stopping: the client did not fail.
func TestShutdownDoesNotKillTheLastAttempt(t *testing.T) {
	hook := newWebhook(t, 0) // accepts everything
	store := watchFinish(locks.NewMemoryStore(0))
	registry(t, store, []string{"s1"}, hook.URL)
	clk := clocktest.NewFake(t0)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	n, err := locks.NewNotifier(cancelOnClaim{store, cancel}, locks.NotifierConfig{Clock: clk,
		MaxAttempts: 1, PollInterval: 24 * time.Hour})
	require.NoError(t, err)
	in, err := locks.NewIngester(store, locks.IngesterConfig{Clock: clk})
	require.NoError(t, err)
	require.NoError(t, in.HandleBatch(t.Context(), msgs(t0, reading("s1", 1, t0))))

	require.NoError(t, n.Run(ctx)) // claims, is told to stop, returns once recorded
	r := store.next(t)
	assert.NotEqual(t, locks.Dead, r.Status, "dead for its own shutdown: %s", r.Reason)
	note := notes(t, store, "s1")[0]
	assert.Equal(t, locks.Delivered, note.Status, "the attempt under way at shutdown is completed")
	got, _, _ := hook.received()
	assert.Len(t, got, 1)
}

// TestReplayIsDueAtOnce: a notification replayed through the API (the wall
// clock: nanoseconds) is claimed at once by a notifier, whose claims compare
// microseconds as a Store keeps them.
func TestReplayIsDueAtOnce(t *testing.T) {
	start := t0.Add(1500 * time.Nanosecond) // a wall clock is rarely on a microsecond
	store := watchFinish(locks.NewMemoryStore(0))
	hook := newWebhook(t, 1)
	registry(t, store, []string{"s1"}, hook.URL)
	clk := clocktest.NewFake(start)
	n, err := locks.NewNotifier(store, locks.NotifierConfig{Clock: clk, MaxAttempts: 1,
		Schedule: locks.Logarithmic{Unit: time.Minute}, PollInterval: 24 * time.Hour})
	require.NoError(t, err)
	in, err := locks.NewIngester(store, locks.IngesterConfig{Clock: clk, Notified: n.Wake})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	defer func() { cancel(); require.NoError(t, <-done) }()

	require.NoError(t, in.HandleBatch(t.Context(), msgs(start, reading("s1", 1, t0))))
	require.Equal(t, locks.Dead, store.next(t).Status)
	id := notes(t, store, "s1")[0].ID
	require.NoError(t, store.Replay(t.Context(), id, clk.Now()))
	n.Wake()
	select {
	case r := <-store.done:
		assert.Equal(t, locks.Delivered, r.Status)
	case <-time.After(time.Minute):
		t.Fatal("the replayed notification, due now, was not attempted")
	}
}

// pendingCalls reports every Outbox.NextDue call: the notifier is about to idle.
type pendingCalls struct {
	*finishes
	calls chan struct{}
}

func (p pendingCalls) NextDue(ctx context.Context) (time.Time, error) {
	next, err := p.finishes.NextDue(ctx)
	p.calls <- struct{}{}
	return next, err
}

// TestRetryDueSoonIsNotLate: a notifier woken shortly before a retry is due must
// still attempt it when it falls due, not 50ms later.
func TestRetryDueSoonIsNotLate(t *testing.T) {
	store := pendingCalls{watchFinish(locks.NewMemoryStore(0)), make(chan struct{}, 100)}
	hook := newWebhook(t, 1)
	registry(t, store, []string{"s1"}, hook.URL)
	clk := clocktest.NewFake(t0)
	n, err := locks.NewNotifier(store, locks.NotifierConfig{Clock: clk, AttemptTimeout: 5 * time.Second,
		Schedule: locks.Logarithmic{Unit: time.Minute}, PollInterval: 24 * time.Hour})
	require.NoError(t, err)
	in, err := locks.NewIngester(store, locks.IngesterConfig{Clock: clk, Notified: n.Wake})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	defer func() { cancel(); require.NoError(t, <-done) }()

	require.NoError(t, in.HandleBatch(t.Context(), msgs(t0, reading("s1", 1, t0))))
	require.Equal(t, locks.Pending, store.next(t).Status, "the first attempt fails")
	clk.BlockUntil(1) // idle until the retry, a minute later
	clk.Advance(time.Minute - 10*time.Millisecond)
	for len(store.calls) > 0 {
		<-store.calls
	}
	n.Wake() // something else wakes it, 10ms before the retry is due
	<-store.calls
	clk.BlockUntil(1)
	clk.Advance(10 * time.Millisecond)
	select {
	case r := <-store.done:
		assert.Equal(t, locks.Delivered, r.Status)
	case <-time.After(time.Minute):
		t.Fatal("the retry due now was not attempted")
	}
}

// TestDeadLetterTimeAsStored: a dead letter's time is kept as every other time
// the Store keeps: UTC, on a microsecond (what PostgreSQL stores).
func TestDeadLetterTimeAsStored(t *testing.T) {
	s := locks.NewMemoryStore(0)
	registry(t, s, []string{"s1"}, "http://a.example/hook")
	in := newIngester(t, s, clocktest.NewFake(t0))
	at := t0.Add(1500 * time.Nanosecond).In(time.FixedZone("MSK", 3*3600))
	require.NoError(t, in.HandleBatch(t.Context(), []locks.Message{
		{Body: []byte(`{"sensor_id":"s1"`), Received: at},
		{Body: reading("NoSuchSensor", 1, t0), Received: at},
	}))
	dls, err := s.DeadLetters(t.Context(), 0, 10)
	require.NoError(t, err)
	require.Len(t, dls, 2)
	for _, d := range dls {
		assert.Equal(t, at.UTC().Truncate(time.Microsecond), d.Received, "dead letter %q", d.Raw)
	}
}
