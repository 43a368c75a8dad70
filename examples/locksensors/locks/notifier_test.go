package locks_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
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

// webhook is a client's endpoint that fails its first failFirst requests with 503.
type webhook struct {
	*httptest.Server
	failFirst int
	mu        sync.Mutex
	calls     int
	raw       [][]byte // the body of every request, refused or not
	got       []locks.Body
	keys      []string
}

func newWebhook(t *testing.T, failFirst int) *webhook {
	w := &webhook{failFirst: failFirst}
	w.Server = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.mu.Lock()
		defer w.mu.Unlock()
		w.calls++
		w.raw = append(w.raw, b)
		if w.calls <= w.failFirst {
			rw.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
		w.got = append(w.got, decode(t, b))
		w.keys = append(w.keys, r.Header.Get(locks.IdempotencyKeyHeader))
	}))
	t.Cleanup(w.Close)
	return w
}

func (w *webhook) received() ([]locks.Body, []string, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]locks.Body(nil), w.got...), append([]string(nil), w.keys...), w.calls
}

// notifierRig runs a Notifier on a MemoryStore with a fake clock.
type notifierRig struct {
	store *finishes
	clk   *clocktest.Fake
	n     *locks.Notifier
	in    *locks.Ingester
}

func newNotifierRig(t *testing.T, cfg locks.NotifierConfig) *notifierRig {
	r := &notifierRig{store: watchFinish(locks.NewMemoryStore(0)), clk: clocktest.NewFake(t0)}
	cfg.Clock = r.clk
	if cfg.Schedule == nil {
		cfg.Schedule = locks.Logarithmic{Unit: time.Minute}
	}
	if cfg.AttemptTimeout == 0 {
		cfg.AttemptTimeout = 5 * time.Second
	}
	// Only the retries' due times wake the notifier: the clock moves to exactly those.
	cfg.PollInterval = 24 * time.Hour
	var err error
	r.n, err = locks.NewNotifier(r.store, cfg)
	require.NoError(t, err)
	r.in, err = locks.NewIngester(r.store, locks.IngesterConfig{Clock: r.clk, Notified: r.n.Wake})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.n.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	return r
}

// retry moves the clock past the next attempt's due time once the notifier waits.
func (r *notifierRig) retry(after time.Duration) {
	r.clk.BlockUntil(1)
	r.clk.Advance(after)
}

func TestNotifierDelivers(t *testing.T) {
	rig := newNotifierRig(t, locks.NotifierConfig{})
	hook := newWebhook(t, 0)
	registry(t, rig.store, []string{"xa7v9Dfadr7H"}, hook.URL)
	at := t0.Add(-time.Second + 250*time.Microsecond)
	require.NoError(t, rig.in.HandleBatch(t.Context(), msgs(t0, reading("xa7v9Dfadr7H", 1, at))))

	r := rig.store.next(t)
	assert.Equal(t, locks.Delivered, r.Status)
	got, keys, _ := hook.received()
	require.Len(t, got, 1)
	n := notes(t, rig.store, "xa7v9Dfadr7H")[0]
	assert.Equal(t, locks.Body{NotificationID: n.ID, SensorID: "xa7v9Dfadr7H", Address: "Svobody st. 23, room xa7v9Dfadr7H",
		Event: locks.EventChanged, State: 1, Time: at, ReadingAt: at, Sequence: 1}, got[0])
	hook.mu.Lock()
	raw := string(hook.raw[0])
	hook.mu.Unlock()
	assert.JSONEq(t, `{"notification_id":1,"sensor_id":"xa7v9Dfadr7H","address":"Svobody st. 23, room xa7v9Dfadr7H",
		"event":"changed","state":1,"time":"2026-11-21T11:59:59.00025Z","reading_at":"2026-11-21T11:59:59.00025Z","sequence":1}`, raw)
	assert.Equal(t, []string{"notification-1"}, keys)
	assert.Equal(t, locks.Delivered, n.Status)
	require.Len(t, n.History, 1)
	assert.Equal(t, http.StatusOK, n.History[0].StatusCode)
	assert.True(t, n.History[0].Delivered())
}

func TestNotifierRetriesOnTheScheduleUntilDelivered(t *testing.T) {
	rig := newNotifierRig(t, locks.NotifierConfig{})
	hook := newWebhook(t, 3)
	registry(t, rig.store, []string{"s1"}, hook.URL)
	require.NoError(t, rig.in.HandleBatch(t.Context(), msgs(t0, reading("s1", 1, t0))))

	sched := locks.Logarithmic{Unit: time.Minute}
	for k := 1; k <= 3; k++ {
		r := rig.store.next(t)
		assert.Equal(t, locks.Pending, r.Status, "attempt %d failed", k)
		n := notes(t, rig.store, "s1")[0]
		due := sched.After(k).Truncate(time.Microsecond)
		assert.Equal(t, rig.clk.Now().Add(due), n.NextAttempt, "attempt %d's successor is due on the schedule", k)
		rig.retry(due)
	}
	r := rig.store.next(t)
	assert.Equal(t, locks.Delivered, r.Status)
	n := notes(t, rig.store, "s1")[0]
	assert.Equal(t, 4, n.Attempts)
	require.Len(t, n.History, 4)
	assert.Equal(t, http.StatusServiceUnavailable, n.History[0].StatusCode)
	assert.Contains(t, n.History[0].Error, "503")
	got, keys, calls := hook.received()
	assert.Len(t, got, 1)
	assert.Equal(t, 4, calls)
	assert.Equal(t, []string{"notification-1"}, keys, "every attempt carries the same idempotency key")
	hook.mu.Lock()
	raw := slices.Clone(hook.raw)
	hook.mu.Unlock()
	require.Len(t, raw, 4)
	for k, b := range raw {
		assert.Equal(t, string(raw[3]), string(b), "attempt %d sends what the delivered one did", k+1)
	}
	assert.Equal(t, int64(1), got[0].Sequence, "the sequence of the sensor's first event")
}

func TestNotifierGivesUpThenReplays(t *testing.T) {
	rig := newNotifierRig(t, locks.NotifierConfig{MaxAttempts: 3})
	hook := newWebhook(t, 3)
	registry(t, rig.store, []string{"s1"}, hook.URL)
	require.NoError(t, rig.in.HandleBatch(t.Context(), msgs(t0, reading("s1", 1, t0))))
	sched := locks.Logarithmic{Unit: time.Minute}
	for k := 1; k < 3; k++ {
		require.Equal(t, locks.Pending, rig.store.next(t).Status)
		rig.retry(sched.After(k).Truncate(time.Microsecond))
	}
	r := rig.store.next(t)
	require.Equal(t, locks.Dead, r.Status)
	assert.Contains(t, r.Reason, "gave up after 3 attempts")
	dead, err := rig.store.DeadNotifications(t.Context(), 0, 10)
	require.NoError(t, err)
	require.Len(t, dead, 1)

	require.NoError(t, rig.store.Replay(t.Context(), dead[0].ID, rig.clk.Now()))
	rig.n.Wake()
	assert.Equal(t, locks.Delivered, rig.store.next(t).Status)
	assert.Equal(t, locks.NotifierStats{Attempts: 4, Delivered: 1, Failed: 2, Dead: 1}, rig.n.Stats())
}

func TestNotifierReadsTheClientAtEveryAttempt(t *testing.T) {
	rig := newNotifierRig(t, locks.NotifierConfig{})
	old, moved := newWebhook(t, 100), newWebhook(t, 0)
	clients := registry(t, rig.store, []string{"s1"}, old.URL)
	require.NoError(t, rig.in.HandleBatch(t.Context(), msgs(t0, reading("s1", 1, t0))))
	require.Equal(t, locks.Pending, rig.store.next(t).Status)

	require.NoError(t, rig.store.UpdateClient(t.Context(), locks.Client{ID: clients[0], Name: "moved", URL: moved.URL}))
	rig.retry(time.Minute)
	require.Equal(t, locks.Delivered, rig.store.next(t).Status)
	got, _, _ := moved.received()
	assert.Len(t, got, 1, "the retry went to the client's new URL")
}

func TestNotifierCancelsForAnUnlinkedClient(t *testing.T) {
	rig := newNotifierRig(t, locks.NotifierConfig{})
	hook := newWebhook(t, 100)
	clients := registry(t, rig.store, []string{"s1"}, hook.URL)
	require.NoError(t, rig.in.HandleBatch(t.Context(), msgs(t0, reading("s1", 1, t0))))
	require.Equal(t, locks.Pending, rig.store.next(t).Status)
	require.NoError(t, rig.store.Unlink(t.Context(), "s1", clients[0]))
	rig.retry(time.Minute)
	r := rig.store.next(t)
	assert.Equal(t, locks.Cancelled, r.Status)
	assert.Nil(t, r.Attempt, "nothing is sent to a client no longer linked")
	_, _, calls := hook.received()
	assert.Equal(t, 1, calls)
}

// A claim is a page of at most MaxLimit: a notifier with more workers than that claims
// a page, and delivers, rather than have every claim refused.
func TestNotifierWithMoreWorkersThanAPageClaimsAPage(t *testing.T) {
	rig := newNotifierRig(t, locks.NotifierConfig{Workers: locks.MaxLimit + 500})
	hook := newWebhook(t, 0)
	registry(t, rig.store, []string{"door"}, hook.URL)
	require.NoError(t, rig.in.HandleBatch(t.Context(), msgs(t0, reading("door", 1, t0.Add(-time.Second)))))
	assert.Equal(t, locks.Delivered, rig.store.next(t).Status)
	assert.Zero(t, rig.n.Stats().Errors)
}

func TestNotifiersShareAStoreWithoutDuplicates(t *testing.T) {
	store := watchFinish(locks.NewMemoryStore(0))
	clk := clocktest.NewFake(t0)
	var sent sync.Map
	var dup atomic.Int32
	var done atomic.Int32
	all := make(chan struct{})
	const sensors = 100
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, loaded := sent.LoadOrStore(r.Header.Get(locks.IdempotencyKeyHeader), true); loaded {
			dup.Add(1)
		}
		if done.Add(1) == sensors {
			close(all)
		}
	}))
	defer srv.Close()
	var ids []string
	for i := range sensors {
		ids = append(ids, "s"+string(rune('A'+i/26))+string(rune('a'+i%26)))
	}
	registry(t, store, ids, srv.URL)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	var notifiers []*locks.Notifier
	for range 4 {
		n, err := locks.NewNotifier(store, locks.NotifierConfig{Clock: clk, Workers: 3})
		require.NoError(t, err)
		notifiers = append(notifiers, n)
		wg.Go(func() { assert.NoError(t, n.Run(ctx)) })
	}
	in, err := locks.NewIngester(store, locks.IngesterConfig{Clock: clk, Notified: func() {
		for _, n := range notifiers {
			n.Wake()
		}
	}})
	require.NoError(t, err)
	var batch [][]byte
	for _, id := range ids {
		batch = append(batch, reading(id, 1, t0))
	}
	require.NoError(t, in.HandleBatch(t.Context(), msgs(t0, batch...)))
	select {
	case <-all:
	case <-time.After(time.Minute):
		t.Fatalf("%d of %d delivered", done.Load(), sensors)
	}
	for range sensors {
		require.Equal(t, locks.Delivered, store.next(t).Status)
	}
	cancel()
	wg.Wait()
	assert.Zero(t, dup.Load(), "no notification was sent twice")
	var delivered uint64
	for _, n := range notifiers {
		delivered += n.Stats().Delivered
	}
	assert.Equal(t, uint64(sensors), delivered)
}

func TestNewNotifierRefusesBadConfig(t *testing.T) {
	s := locks.NewMemoryStore(0)
	for field, cfg := range map[string]locks.NotifierConfig{
		"NotifierConfig.MaxAttempts": {MaxAttempts: -1},
		"Logarithmic.Unit":           {Schedule: locks.Logarithmic{}},
		"Exponential.Policy":         {Schedule: locks.Exponential{}},
	} {
		_, err := locks.NewNotifier(s, cfg)
		require.Error(t, err, field)
		assert.Contains(t, err.Error(), field)
	}
	_, err := locks.NewNotifier(nil, locks.NotifierConfig{})
	assert.ErrorContains(t, err, "store is nil")
}

func TestSchedules(t *testing.T) {
	l := locks.Logarithmic{Unit: 10 * time.Second, Max: 30 * time.Second}
	assert.Equal(t, 10*time.Second, l.After(1))
	assert.InDelta(t, float64(16931*time.Millisecond), float64(l.After(2)), float64(time.Millisecond))
	assert.Equal(t, 30*time.Second, l.After(10), "capped")
	prev := time.Duration(0)
	for k := 1; k <= 10; k++ {
		d := locks.Logarithmic{Unit: time.Second}.After(k)
		assert.Greater(t, d, prev, "the delay grows with every attempt")
		prev = d
	}
	e := locks.DefaultSchedule
	for k := 1; k <= 12; k++ {
		d := e.After(k)
		nominal := e.Policy.Nominal(k - 1)
		assert.LessOrEqual(t, d, nominal)
		assert.GreaterOrEqual(t, d, nominal/2, "jitter takes at most half")
	}
	assert.Equal(t, 10*time.Minute, e.Policy.Nominal(20), "capped")
}
