package locks_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/examples/locksensors/locks"
)

// livenessRig runs a Liveness and an Ingester feeding it, on one store and fake clock.
type livenessRig struct {
	t       *testing.T
	store   locks.Store
	clk     *clocktest.Fake
	live    *locks.Liveness
	in      *locks.Ingester
	checked chan check
	stop    func()
}

type check struct {
	id   locks.SensorID
	lost bool
}

func newLivenessRig(t *testing.T, store locks.Store, clk *clocktest.Fake) *livenessRig {
	r := &livenessRig{t: t, store: store, clk: clk, checked: make(chan check, 100)}
	var err error
	r.live, err = locks.NewLiveness(store, locks.LivenessConfig{Clock: clk, Silence: time.Hour,
		Resync: 24 * time.Hour, Checked: func(id locks.SensorID, lost bool) { r.checked <- check{id, lost} }})
	require.NoError(t, err)
	r.in, err = locks.NewIngester(store, locks.IngesterConfig{Clock: clk, Seen: r.live.Seen})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.live.Run(ctx) }()
	r.stop = func() {
		cancel()
		require.NoError(t, <-done)
	}
	t.Cleanup(func() {
		if ctx.Err() == nil {
			r.stop()
		}
	})
	clk.BlockUntil(2) // the monitor's tick and the resync ticker: Run has loaded the store
	return r
}

// advance moves the clock by d and has the silences due by then found and checked:
// Run's monitor, woken by the clock on its way, may read the time before the clock has
// got there and wait for a later tick; Flush does not depend on when it wakes.
func (r *livenessRig) advance(d time.Duration) {
	r.t.Helper()
	r.clk.Advance(d)
	ctx, cancel := context.WithTimeout(r.t.Context(), time.Minute) // a guard against a hang
	defer cancel()
	require.NoError(r.t, r.live.Flush(ctx))
}

// next waits for the next silence the monitor finds to be checked.
func (r *livenessRig) next(t *testing.T) check {
	t.Helper()
	select {
	case c := <-r.checked:
		return c
	case <-time.After(time.Minute):
		t.Fatal("no silence checked within a minute")
		return check{}
	}
}

func TestLivenessLostAndRestored(t *testing.T) {
	store := locks.NewMemoryStore(0)
	registry(t, store, []string{"s1", "s2"}, "http://a.example/hook")
	clk := clocktest.NewFake(t0)
	rig := newLivenessRig(t, store, clk)
	ctx := t.Context()
	require.NoError(t, rig.in.HandleBatch(ctx, msgs(t0, reading("s1", 1, t0), reading("s2", 0, t0))))

	rig.advance(59 * time.Minute)
	require.NoError(t, rig.in.HandleBatch(ctx, msgs(clk.Now(), reading("s2", 0, clk.Now()))))
	rig.advance(time.Minute + time.Second) // s1 silent for an hour; s2 heard a minute ago
	assert.Equal(t, check{"s1", true}, rig.next(t))
	assert.Equal(t, []string{"changed 1 pending client1", "lost 1 pending client1"}, summary(notes(t, store, "s1")))
	assert.Equal(t, []string{"changed 0 pending client1"}, summary(notes(t, store, "s2")))
	cur, err := store.Current(ctx, "s1")
	require.NoError(t, err)
	assert.True(t, cur.Lost)
	lost := notes(t, store, "s1")[1]
	assert.True(t, lost.At.Equal(t0.Add(time.Hour+time.Second)), "the loss is dated when it was found: %v", lost.At)
	assert.Equal(t, t0, lost.ReadingAt, "the loss carries the time of the last reading")
	assert.Equal(t, int64(2), lost.Sequence, "the loss is the sensor's second event")

	back := clk.Now()
	require.NoError(t, rig.in.HandleBatch(ctx, msgs(back, reading("s1", 1, back))))
	assert.Equal(t, []string{"changed 1 pending client1", "lost 1 pending client1", "restored 1 pending client1"},
		summary(notes(t, store, "s1")), "restored by the next reading")
	restored := notes(t, store, "s1")[2]
	assert.Equal(t, int64(3), restored.Sequence, "the restoration is the sensor's third event")
	assert.Equal(t, back, restored.ReadingAt)
	assert.Equal(t, uint64(1), rig.live.Stats().Lost)
}

func TestLivenessChecksTheStoreBeforeALoss(t *testing.T) {
	store := locks.NewMemoryStore(0)
	registry(t, store, []string{"s1"}, "http://a.example/hook")
	clk := clocktest.NewFake(t0)
	rig := newLivenessRig(t, store, clk)
	ctx := t.Context()
	require.NoError(t, rig.in.HandleBatch(ctx, msgs(t0, reading("s1", 1, t0))))

	// Another process hears s1: its Ingester is not wired to this Liveness.
	other, err := locks.NewIngester(store, locks.IngesterConfig{Clock: clk})
	require.NoError(t, err)
	rig.advance(30 * time.Minute)
	require.NoError(t, other.HandleBatch(ctx, msgs(clk.Now(), reading("s1", 1, clk.Now()))))

	rig.advance(30*time.Minute + time.Second)
	// The monitor found s1 silent, the store knew better: no loss, s1 watched again.
	assert.Equal(t, check{"s1", false}, rig.next(t))
	assert.Len(t, notes(t, store, "s1"), 1)
	assert.Equal(t, uint64(1), rig.live.Stats().FalseAlarms)

	rig.advance(30*time.Minute + time.Second) // an hour after the other process heard it
	assert.Equal(t, check{"s1", true}, rig.next(t))
	assert.Equal(t, []string{"changed 1 pending client1", "lost 1 pending client1"}, summary(notes(t, store, "s1")))
}

func TestLivenessResumesFromTheStore(t *testing.T) {
	store := locks.NewMemoryStore(0)
	registry(t, store, []string{"quiet", "gone", "fine"}, "http://a.example/hook")
	clk := clocktest.NewFake(t0)
	rig := newLivenessRig(t, store, clk)
	ctx := t.Context()
	require.NoError(t, rig.in.HandleBatch(ctx, msgs(t0, reading("quiet", 1, t0), reading("gone", 1, t0))))
	rig.advance(time.Hour + time.Second)
	got := []check{rig.next(t), rig.next(t)}
	assert.ElementsMatch(t, []check{{"quiet", true}, {"gone", true}}, got)
	require.NoError(t, rig.in.HandleBatch(ctx, msgs(clk.Now(), reading("fine", 1, clk.Now()))))
	rig.stop() // the process stops

	clk.Advance(2 * time.Hour) // and is down for two hours
	rig2 := newLivenessRig(t, store, clk)
	rig2.advance(time.Second)
	assert.Equal(t, check{"fine", true}, rig2.next(t), "fell silent while the process was down")
	assert.Len(t, notes(t, store, "quiet"), 2, "a sensor lost before the restart is not lost again")
	assert.Equal(t, []string{"changed 1 pending client1", "lost 1 pending client1"}, summary(notes(t, store, "fine")))
	assert.Equal(t, 3, rig2.live.Stats().Tracked)
}

func TestLivenessForgetsDeletedSensors(t *testing.T) {
	store := locks.NewMemoryStore(0)
	registry(t, store, []string{"s1"}, "http://a.example/hook")
	clk := clocktest.NewFake(t0)
	rig := newLivenessRig(t, store, clk)
	require.NoError(t, rig.in.HandleBatch(t.Context(), msgs(t0, reading("s1", 1, t0))))
	require.NoError(t, store.DeleteSensor(t.Context(), "s1"))
	rig.advance(time.Hour + time.Second)
	assert.Equal(t, check{"s1", false}, rig.next(t))
	assert.Zero(t, rig.live.Stats().Tracked)
	assert.Zero(t, rig.live.Stats().Lost)
}

// TestLivenessFlushRecordsWhatRunSleptThrough runs a Liveness whose timers never fire, as
// if its goroutines were slow to wake on a busy machine: Flush alone has the losses due
// by the clock's time found and recorded before it returns.
func TestLivenessFlushRecordsWhatRunSleptThrough(t *testing.T) {
	store := locks.NewMemoryStore(0)
	registry(t, store, []string{"s1", "s2"}, "http://a.example/hook")
	clk := clocktest.NewFake(t0)
	live, err := locks.NewLiveness(store, locks.LivenessConfig{Clock: sleepyClock{clk}, Silence: time.Hour})
	require.NoError(t, err)
	in, err := locks.NewIngester(store, locks.IngesterConfig{Clock: clk, Seen: live.Seen})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a guard against a hang
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- live.Run(ctx) }()
	require.NoError(t, in.HandleBatch(ctx, msgs(t0, reading("s1", 1, t0), reading("s2", 0, t0))))

	clk.Advance(time.Hour - time.Second)
	require.NoError(t, live.Flush(ctx))
	assert.Zero(t, live.Stats().Lost, "silent for less than an hour")

	clk.Advance(2 * time.Second)
	require.NoError(t, live.Flush(ctx))
	for _, id := range []locks.SensorID{"s1", "s2"} {
		cur, err := store.Current(ctx, id)
		require.NoError(t, err)
		assert.True(t, cur.Lost, "sensor %s", id)
	}
	assert.Equal(t, uint64(2), live.Stats().Lost)
	cancel()
	require.NoError(t, <-done)
}

// sleepyClock is a fake clock whose timers and tickers never fire.
type sleepyClock struct{ *clocktest.Fake }

func (sleepyClock) NewTimer(time.Duration) clock.Timer   { return sleepyTimer{} }
func (sleepyClock) NewTicker(time.Duration) clock.Ticker { return sleepyTicker{} }

type sleepyTimer struct{}

func (sleepyTimer) C() <-chan time.Time      { return nil }
func (sleepyTimer) Stop() bool               { return true }
func (sleepyTimer) Reset(time.Duration) bool { return true }

type sleepyTicker struct{}

func (sleepyTicker) C() <-chan time.Time { return nil }
func (sleepyTicker) Stop()               {}
func (sleepyTicker) Reset(time.Duration) {}
