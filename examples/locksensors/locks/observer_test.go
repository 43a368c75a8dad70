package locks_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/examples/locksensors/locks"
)

// observed is a locks.Observer that sums what it is told.
type observed struct {
	mu              sync.Mutex
	batches         int
	batch           locks.BatchCounts // summed
	attempts        map[locks.AttemptOutcome]int
	took            []time.Duration
	cancelled       int
	lost, lostNotes int
	falseAlarms     int
	storeFailed     map[locks.Part]int
}

func newObserved() *observed {
	return &observed{attempts: map[locks.AttemptOutcome]int{}, storeFailed: map[locks.Part]int{}}
}

func (o *observed) LockBatchStored(b locks.BatchCounts) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.batches++
	o.batch.Changed += b.Changed
	o.batch.Same += b.Same
	o.batch.Stale += b.Stale
	o.batch.Rejected += b.Rejected
	o.batch.Restored += b.Restored
	o.batch.Notifications += b.Notifications
}

func (o *observed) LockNotificationAttempted(outcome locks.AttemptOutcome, took time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.attempts[outcome]++
	o.took = append(o.took, took)
}

func (o *observed) LockNotificationCancelled() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.cancelled++
}

func (o *observed) LockSensorLost(notifications int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.lost++
	o.lostNotes += notifications
}

func (o *observed) LockFalseAlarm() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.falseAlarms++
}

func (o *observed) LockStoreFailed(part locks.Part) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.storeFailed[part]++
}

// ingestStats is IngestStats as the observer's sums make it.
func (o *observed) ingestStats() locks.IngestStats {
	o.mu.Lock()
	defer o.mu.Unlock()
	b := o.batch
	return locks.IngestStats{Batches: uint64(o.batches), Readings: uint64(b.Changed + b.Same + b.Stale),
		Changed: uint64(b.Changed), Same: uint64(b.Same), Stale: uint64(b.Stale), Rejected: uint64(b.Rejected),
		Restored: uint64(b.Restored), Notifications: uint64(b.Notifications),
		StoreErrors: uint64(o.storeFailed[locks.PartIngester])}
}

// notifierStats is NotifierStats as the observer's sums make it.
func (o *observed) notifierStats() locks.NotifierStats {
	o.mu.Lock()
	defer o.mu.Unlock()
	a := o.attempts
	return locks.NotifierStats{
		Attempts:  uint64(a[locks.AttemptDelivered] + a[locks.AttemptFailed] + a[locks.AttemptDead]),
		Delivered: uint64(a[locks.AttemptDelivered]), Failed: uint64(a[locks.AttemptFailed]), Dead: uint64(a[locks.AttemptDead]),
		Cancelled: uint64(o.cancelled), Errors: uint64(o.storeFailed[locks.PartNotifier])}
}

// livenessStats is LivenessStats as the observer's sums make it, with the monitor's
// tracked sensors, a level the observer is not told.
func (o *observed) livenessStats(tracked int) locks.LivenessStats {
	o.mu.Lock()
	defer o.mu.Unlock()
	return locks.LivenessStats{Tracked: tracked, Lost: uint64(o.lost), FalseAlarms: uint64(o.falseAlarms),
		Errors: uint64(o.storeFailed[locks.PartLiveness])}
}

// faultyStore fails the next calls of some methods, as many as it is told, and says so
// on failed.
type faultyStore struct {
	locks.Store
	failUpdate, failLiveness, failClaim atomic.Int32
	failed                              chan string
}

var errStoreDown = errors.New("store down")

func (f *faultyStore) fail(n *atomic.Int32, method string) error {
	for {
		left := n.Load()
		if left == 0 {
			return nil
		}
		if n.CompareAndSwap(left, left-1) {
			f.failed <- method
			return errStoreDown
		}
	}
}

func (f *faultyStore) Update(ctx context.Context, ids []locks.SensorID, fn func(map[locks.SensorID]locks.Current) (locks.Effects, error)) (int, error) {
	if err := f.fail(&f.failUpdate, "update"); err != nil {
		return 0, err
	}
	return f.Store.Update(ctx, ids, fn)
}

func (f *faultyStore) Liveness(ctx context.Context) ([]locks.Current, error) {
	if err := f.fail(&f.failLiveness, "liveness"); err != nil {
		return nil, err
	}
	return f.Store.Liveness(ctx)
}

func (f *faultyStore) Claim(ctx context.Context, req locks.ClaimRequest) ([]locks.Delivery, error) {
	if err := f.fail(&f.failClaim, "claim"); err != nil {
		return nil, err
	}
	return f.Store.Claim(ctx, req)
}

func (f *faultyStore) nextFailure(t *testing.T) string {
	t.Helper()
	select {
	case m := <-f.failed:
		return m
	case <-time.After(time.Minute): // a guard against a hang
		t.Fatal("no store failure within a minute")
		return ""
	}
}

// An Ingester and a Liveness on one store and fake clock, told to one observer: readings
// of every outcome, rejected messages, losses, a false alarm, a restoration and store
// errors. What the observer was told sums to the Stats, which are what the story makes.
func TestObserverIsToldWhatIngesterAndLivenessDid(t *testing.T) {
	store := &faultyStore{Store: locks.NewMemoryStore(0), failed: make(chan string, 10)}
	registry(t, store, []string{"s1", "s2", "s3"}, "http://a.example/hook")
	clk := clocktest.NewFake(t0)
	obs := newObserved()
	live, err := locks.NewLiveness(store, locks.LivenessConfig{Clock: clk, Silence: time.Hour, Resync: 24 * time.Hour,
		Retry: locks.Backoff{Initial: time.Second, Max: time.Second}, Observer: obs})
	require.NoError(t, err)
	in, err := locks.NewIngester(store, locks.IngesterConfig{Clock: clk, Seen: live.Seen, Observer: obs})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	store.failLiveness.Store(1)
	go func() { done <- live.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	flush := func() {
		t.Helper()
		fctx, fcancel := context.WithTimeout(ctx, time.Minute) // a guard against a hang
		defer fcancel()
		require.NoError(t, live.Flush(fctx))
	}

	// Run's first load of the last-seen times fails; its retry, a second later, loads.
	require.Equal(t, "liveness", store.nextFailure(t))
	clk.BlockUntil(1) // the retry's timer
	clk.Advance(time.Second)
	clk.BlockUntil(2) // the monitor's tick and the resync ticker: Run has loaded the store
	start := clk.Now()

	// Three changes, two messages rejected (not a reading; an unregistered sensor).
	require.NoError(t, in.HandleBatch(ctx, msgs(start, reading("s1", 1, start), reading("s2", 0, start),
		reading("s3", 1, start), []byte("not json"), reading("zz", 1, start))))
	// A repeat and a stale reading.
	require.NoError(t, in.HandleBatch(ctx, msgs(start, reading("s1", 1, start), reading("s2", 1, start.Add(-time.Minute)))))
	// A batch the store fails: handed again later, counted as an error and nothing else.
	store.failUpdate.Store(1)
	require.Error(t, in.HandleBatch(ctx, msgs(start, reading("s3", 0, start))))
	require.Equal(t, "update", store.nextFailure(t))

	// Another process hears s2 59 minutes in; this Liveness does not know.
	clk.Advance(59 * time.Minute)
	flush()
	other, err := locks.NewIngester(store.Store, locks.IngesterConfig{Clock: clk})
	require.NoError(t, err)
	require.NoError(t, other.HandleBatch(ctx, msgs(clk.Now(), reading("s2", 0, clk.Now()))))

	// An hour and a second after start: s1 and s3 are lost, s2's silence a false alarm.
	clk.Advance(time.Minute + time.Second)
	flush()
	// s1 heard again: restored, its state the same.
	require.NoError(t, in.HandleBatch(ctx, msgs(clk.Now(), reading("s1", 1, clk.Now()))))

	assert.Equal(t, locks.IngestStats{Batches: 3, Readings: 6, Changed: 3, Same: 2, Stale: 1, Rejected: 2,
		Restored: 1, Notifications: 4, StoreErrors: 1}, in.Stats())
	assert.Equal(t, in.Stats(), obs.ingestStats(), "the observer was told what the Ingester counted")
	assert.Equal(t, locks.LivenessStats{Tracked: 3, Lost: 2, FalseAlarms: 1, Errors: 1}, live.Stats())
	assert.Equal(t, live.Stats(), obs.livenessStats(live.Stats().Tracked), "the observer was told what the Liveness counted")
	obs.mu.Lock()
	assert.Equal(t, 2, obs.lostNotes, "one lost notification for each lost sensor's one client")
	obs.mu.Unlock()
	var lost int
	for _, id := range []string{"s1", "s2", "s3"} {
		for _, n := range notes(t, store, id) {
			if n.Event == locks.EventLost {
				lost++
			}
		}
	}
	assert.Equal(t, 2, lost, "the lost notifications in the store")
}

// A Notifier told to an observer: attempts of every outcome, a cancellation and a
// failed claim. What the observer was told sums to the Stats, which are what the story
// makes, and each attempt's duration is the one the store recorded.
func TestObserverIsToldWhatTheNotifierDid(t *testing.T) {
	faulty := &faultyStore{Store: locks.NewMemoryStore(0), failed: make(chan string, 10)}
	store := watchFinish(faulty)
	clk := clocktest.NewFake(t0)
	obs := newObserved()
	sched := locks.Logarithmic{Unit: time.Minute}
	n, err := locks.NewNotifier(store, locks.NotifierConfig{Clock: clk, Schedule: sched, MaxAttempts: 3,
		AttemptTimeout: 5 * time.Second, PollInterval: 24 * time.Hour, Observer: obs})
	require.NoError(t, err)
	in, err := locks.NewIngester(store, locks.IngesterConfig{Clock: clk, Notified: n.Wake, Observer: obs})
	require.NoError(t, err)
	flaky, refusing := newWebhook(t, 3), newWebhook(t, 100)
	clients := registry(t, store, []string{"s1"}, flaky.URL, refusing.URL)

	// The Notifier's first claim fails.
	faulty.failClaim.Store(1)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	require.Equal(t, "claim", faulty.nextFailure(t))

	// One change, one notification for each client; both first attempts fail.
	require.NoError(t, in.HandleBatch(ctx, msgs(t0, reading("s1", 1, t0))))
	statuses := func() []locks.Status {
		s := []locks.Status{store.next(t).Status, store.next(t).Status}
		slices.Sort(s)
		return s
	}
	assert.Equal(t, []locks.Status{locks.Pending, locks.Pending}, statuses())
	// The refusing client is unlinked: its retry is cancelled, not attempted. The flaky
	// client's second attempt fails, its third is its last: dead.
	require.NoError(t, store.Unlink(ctx, "s1", clients[1]))
	clk.BlockUntil(1)
	clk.Advance(sched.After(1).Truncate(time.Microsecond))
	assert.Equal(t, []locks.Status{locks.Cancelled, locks.Pending}, statuses())
	clk.BlockUntil(1)
	clk.Advance(sched.After(2).Truncate(time.Microsecond))
	assert.Equal(t, locks.Dead, store.next(t).Status)
	// Replayed, it is delivered.
	dead, err := store.DeadNotifications(ctx, 0, 10)
	require.NoError(t, err)
	require.Len(t, dead, 1)
	require.NoError(t, store.Replay(ctx, dead[0].ID, clk.Now()))
	n.Wake()
	assert.Equal(t, locks.Delivered, store.next(t).Status)

	assert.Equal(t, locks.NotifierStats{Attempts: 5, Delivered: 1, Failed: 3, Dead: 1, Cancelled: 1, Errors: 1}, n.Stats())
	assert.Equal(t, n.Stats(), obs.notifierStats(), "the observer was told what the Notifier counted")
	var recorded []time.Duration
	for _, note := range notes(t, store, "s1") {
		for _, a := range note.History {
			recorded = append(recorded, a.Duration)
		}
	}
	obs.mu.Lock()
	told := slices.Clone(obs.took)
	obs.mu.Unlock()
	slices.Sort(recorded)
	slices.Sort(told)
	assert.Equal(t, recorded, told, "each attempt's duration, as the store recorded it")
	assert.Len(t, told, 5)
	assert.Equal(t, locks.IngestStats{Batches: 1, Readings: 1, Changed: 1, Notifications: 2}, obs.ingestStats())
}
