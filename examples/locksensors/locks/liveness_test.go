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

// livenessRig runs a Liveness and an Ingester feeding it, on one store and fake clock.
type livenessRig struct {
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
	r := &livenessRig{store: store, clk: clk, checked: make(chan check, 100)}
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

// advance moves the clock by d and makes sure the monitor has looked at the time it
// reached: the fake clock fires the monitor's tick on the way, and the monitor may read
// the time before the clock has got there, then wait for a tick that is already due.
func (r *livenessRig) advance(d time.Duration) {
	r.clk.Advance(d)
	r.clk.BlockUntil(2) // the monitor's tick again, and the resync ticker
	r.clk.Advance(0)
}

// next waits for the next silence the monitor finds to be checked.
func (r *livenessRig) next(t *testing.T) check {
	t.Helper()
	select {
	case c := <-r.checked:
		return c
	case <-time.After(time.Minute):
		t.Fatal("no silence checked within 10s")
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
