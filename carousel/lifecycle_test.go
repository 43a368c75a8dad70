package carousel

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var wholeCfg = CycleConfig{Name: "whole", Type: ThrottledWholeCollection, Origin: "o", Collection: "c", CoolDown: time.Minute, Throttle: time.Second}

func TestRestartSkipsTheItemsCompleted(t *testing.T) {
	for _, typ := range []Type{ThrottledWholeCollection, FixedWindow, ScalingWindow} {
		t.Run(string(typ), func(t *testing.T) {
			r := newRig(t, nil)
			r.put("c", items("i", 10, func(i int) time.Time { return t0.Add(-time.Duration(10-i) * time.Minute) })...)
			cfg := CycleConfig{Name: "cyc", Type: typ, Origin: "o", Collection: "c", CoolDown: time.Minute,
				Throttle: time.Second, TimeWindow: time.Hour, MinimumThrottle: time.Second, MaximumThrottle: time.Minute}
			r.add(cfg)
			r.start()
			first := r.publishes(4, nil)
			r.nextWait() // the fourth is recorded before the next wait begins
			require.NoError(t, r.s.Shutdown(context.Background()))

			saved, ok, err := r.store.Load(context.Background(), "cyc")
			require.NoError(t, err)
			require.True(t, ok, "saved on shutdown")
			assert.Equal(t, 4, saved.Completed)
			assert.Equal(t, 10, saved.Total)
			assert.Equal(t, first[3].id, saved.Last.ID)
			assert.Equal(t, []State{Stopped}, saved.States)

			// A new process: the same store, a later time.
			r.clk.Advance(time.Hour)
			r.s = r.scheduler(nil)
			r.add(cfg)
			r.start()
			rest := r.publishes(6, nil)
			assert.Equal(t, []string{"iae", "iaf", "iag", "iah", "iai", "iaj"}, ids(rest), "after the fourth, in order")
			st, _ := r.s.Cycle("cyc")
			assert.Equal(t, 1, st.Metadata.Iteration, "the same iteration, resumed")
			if typ.Windowed() {
				assert.Equal(t, saved.WindowStart, st.Metadata.WindowStart, "the same window")
				assert.Equal(t, saved.WindowEnd, st.Metadata.WindowEnd)
			}
		})
	}
}

func TestRestoreIgnoresMetadataThatNoLongerFits(t *testing.T) {
	for name, change := range map[string]func(*CycleConfig){
		"collection": func(c *CycleConfig) { c.Collection = "other" },
		"type": func(c *CycleConfig) {
			c.Type, c.TimeWindow, c.MinimumThrottle = FixedWindow, time.Hour, time.Second
		},
	} {
		t.Run(name, func(t *testing.T) {
			r := newRig(t, nil)
			old := wholeCfg
			change(&old)
			require.NoError(t, r.store.Save(context.Background(), CycleMetadata{CycleID: "whole", Config: old,
				Iteration: 7, Total: 3, Completed: 2, Last: Item{ID: "iab"}, IterationStart: t0.Add(-time.Hour), InProgress: true}, 0))
			r.put("c", items("i", 3, nil)...)
			r.add(wholeCfg)
			r.start()
			got := r.publishes(1, nil)
			assert.Equal(t, "iaa", got[0].id, "from the beginning")
			st, _ := r.s.Cycle("whole")
			assert.Equal(t, 1, st.Metadata.Iteration)
		})
	}
	t.Run("a changed throttle keeps the progress", func(t *testing.T) {
		r := newRig(t, nil)
		old := wholeCfg
		old.Throttle = time.Hour
		require.NoError(t, r.store.Save(context.Background(), CycleMetadata{CycleID: "whole", Config: old,
			Iteration: 7, Total: 3, Completed: 2, Last: Item{ID: "iab"}, IterationStart: t0.Add(-time.Hour), InProgress: true}, 0))
		r.put("c", items("i", 3, nil)...)
		r.add(wholeCfg)
		r.start()
		got := r.publishes(1, nil)
		assert.Equal(t, "iac", got[0].id)
		st, _ := r.s.Cycle("whole")
		assert.Equal(t, 7, st.Metadata.Iteration)
		assert.Equal(t, time.Second, st.Metadata.Throttle, "the config's throttle")
	})
}

func TestCheckpointSavesWhileRunning(t *testing.T) {
	r := newRig(t, func(c *rigSetup) { c.CheckpointInterval = 10 * time.Second })
	r.put("c", items("i", 100, nil)...)
	r.add(wholeCfg)
	r.start()
	r.publishes(25, nil)
	r.nextWait()
	saved, ok, err := r.store.Load(context.Background(), "whole")
	require.NoError(t, err)
	require.True(t, ok)
	// Saved at the first publish and every 10 s after: the 21st publish (20 s in) was
	// the last checkpoint, none since the 25th.
	assert.Equal(t, 21, saved.Completed)
	assert.Equal(t, []State{Running}, saved.States)
}

// flakySource fails while down is set.
type flakySource struct {
	Source
	down  atomic.Bool
	calls atomic.Int32
}

var errUnreachable = errors.New("source unreachable")

func (f *flakySource) Count(ctx context.Context, q Query) (int, error) {
	f.calls.Add(1)
	if f.down.Load() {
		return 0, errUnreachable
	}
	return f.Source.Count(ctx, q)
}

func (f *flakySource) List(ctx context.Context, q Query, after Item, limit int) ([]Item, error) {
	f.calls.Add(1)
	if f.down.Load() {
		return nil, errUnreachable
	}
	return f.Source.List(ctx, q, after, limit)
}

func TestUnreachableSourceMakesTheCycleUnhealthyAndItRetries(t *testing.T) {
	src := &flakySource{Source: NewMemorySource()}
	r := newRig(t, func(c *rigSetup) { c.Source = src; c.RetryInitial, c.RetryMax = time.Second, 4*time.Second })
	r.put("c", items("i", 3, nil)...)
	src.Source = r.src
	src.down.Store(true)
	r.add(wholeCfg)
	r.start()

	var waits []time.Duration
	for i := range 4 {
		w := r.nextWait()
		st, _ := r.s.Cycle("whole")
		assert.Equal(t, []State{Starting, Unhealthy}, st.Metadata.States)
		assert.Contains(t, st.Metadata.LastError, "source unreachable")
		waits = append(waits, w.until.Sub(r.clk.Now()))
		if i == 3 {
			src.down.Store(false)
		}
		r.clk.Set(w.until)
	}
	for i, d := range waits {
		nominal := min(time.Second<<i, 4*time.Second)
		assert.True(t, d >= nominal/2 && d <= nominal, "retry %d after %v, want within [%v, %v]", i, d, nominal/2, nominal)
	}

	got := r.publishes(1, nil)
	assert.Equal(t, "iaa", got[0].id)
	st, _ := r.s.Cycle("whole")
	assert.Equal(t, []State{Running}, st.Metadata.States, "healthy again")
}

func TestStopWhenUnhealthyStopsOnlyThatCycle(t *testing.T) {
	src := &flakySource{Source: NewMemorySource()}
	r := newRig(t, func(c *rigSetup) { c.Source = src; c.StopWhenUnhealthy = true })
	src.Source = r.src
	r.put("good", items("g", 2, nil)...)
	bad := wholeCfg
	bad.Name = "bad"
	good := wholeCfg
	good.Name, good.Collection = "good", "good"
	src.down.Store(true)
	r.add(bad)
	// The bad cycle stops on its first failure.
	r.start()
	select {
	case <-r.s.cycles["bad"].done:
	case <-time.After(bound):
		t.Fatal("the unhealthy cycle did not stop")
	}
	st, _ := r.s.Cycle("bad")
	assert.Equal(t, []State{Stopped, Unhealthy}, st.Metadata.States)

	// Another cycle, added after, runs.
	src.down.Store(false)
	r.add(good)
	got := r.publishes(3, nil)
	assert.Equal(t, []string{"gaa", "gab", "gaa"}, ids(got))
}

func TestPublishErrorsAreCountedAndTheCycleGoesOn(t *testing.T) {
	r := newRig(t, nil)
	r.put("c", items("i", 3, nil)...)
	r.failPublish("iab", errors.New("notifier said 500"))
	r.add(wholeCfg)
	r.start()
	got := r.publishes(3, nil)
	assert.Equal(t, []string{"iaa", "iab", "iac"}, ids(got))
	r.nextWait()
	st, _ := r.s.Cycle("whole")
	assert.Equal(t, 3, st.Metadata.Completed)
	assert.Equal(t, 1, st.Metadata.Errors)
	assert.Equal(t, "notifier said 500", st.Metadata.LastError)
	assert.Equal(t, []State{Running}, st.Metadata.States, "a publish error does not make the cycle unhealthy")
}

func TestSetThrottleTakesEffectAtOnce(t *testing.T) {
	r := newRig(t, nil)
	r.put("c", items("i", 10, nil)...)
	cfg := wholeCfg
	cfg.Throttle = time.Hour
	r.add(cfg)
	r.start()
	r.publishes(1, nil)
	w := r.nextWait()
	assert.Equal(t, t0.Add(time.Hour), w.until)

	// Slower to faster, while waiting: the next publish comes the new throttle after the
	// last one began.
	r.clk.Advance(2 * time.Minute)
	require.NoError(t, r.s.SetThrottle("whole", 5*time.Minute))
	w = r.nextWait()
	assert.Equal(t, t0.Add(5*time.Minute), w.until, "five minutes after the last publish began")
	d, err := r.s.Throttle("whole")
	require.NoError(t, err)
	assert.Equal(t, 5*time.Minute, d)
	r.clk.Set(w.until)
	got := r.publishes(1, nil)
	assert.Equal(t, 5*time.Minute, got[0].at.Sub(t0))
	assert.Equal(t, t0.Add(10*time.Minute), r.nextWait().until)

	// Faster to slower.
	require.NoError(t, r.s.SetThrottle("whole", time.Hour))
	assert.Equal(t, t0.Add(65*time.Minute), r.nextWait().until)

	// More than the new throttle has passed since the last publish: at once.
	r.clk.Advance(15 * time.Minute)
	require.NoError(t, r.s.SetThrottle("whole", 10*time.Minute))
	got = r.publishes(1, func(waiting) bool { t.Error("waited"); return false })
	assert.Equal(t, 20*time.Minute, got[0].at.Sub(t0))
	assert.Equal(t, t0.Add(30*time.Minute), r.nextWait().until)

	var fe *FieldError
	assert.ErrorAs(t, r.s.SetThrottle("whole", 0), &fe)
	assert.ErrorIs(t, r.s.SetThrottle("nope", time.Second), ErrNotFound)
	r.add(CycleConfig{Name: "fixed", Type: FixedWindow, Origin: "o", Collection: "c", CoolDown: time.Minute, TimeWindow: time.Hour, MinimumThrottle: time.Second})
	assert.ErrorIs(t, r.s.SetThrottle("fixed", time.Second), ErrNotAdjustable)
}

func TestOperatorStopResumeResetDelete(t *testing.T) {
	r := newRig(t, nil)
	r.put("c", items("i", 5, nil)...)
	r.add(wholeCfg)
	ctx := context.Background()
	assert.ErrorIs(t, r.s.ResumeCycle(ctx, "whole"), ErrPassive, "not started")
	r.start()
	r.publishes(2, nil)
	r.nextWait()

	require.NoError(t, r.s.StopCycle(ctx, "whole"))
	st, _ := r.s.Cycle("whole")
	assert.Equal(t, []State{Stopped}, st.Metadata.States)
	assert.Equal(t, 2, st.Metadata.Completed)

	// Stopped by hand, it stays stopped through the scheduler's own restart.
	require.NoError(t, r.s.Shutdown(ctx))
	r.start()
	assert.False(t, r.s.cycles["whole"].running())

	require.NoError(t, r.s.ResumeCycle(ctx, "whole"))
	got := r.publishes(1, nil)
	assert.Equal(t, "iac", got[0].id, "where it stopped")

	require.NoError(t, r.s.ResetCycle(ctx, "whole"))
	got = r.publishes(1, nil)
	assert.Equal(t, "iaa", got[0].id, "from the beginning")
	st, _ = r.s.Cycle("whole")
	assert.Equal(t, 1, st.Metadata.Iteration)

	require.NoError(t, r.s.Delete(ctx, "whole"))
	_, ok, err := r.store.Load(ctx, "whole")
	require.NoError(t, err)
	assert.False(t, ok, "metadata deleted")
	assert.ErrorIs(t, r.s.Delete(ctx, "whole"), ErrNotFound)
	_, err = r.s.Cycle("whole")
	assert.ErrorIs(t, err, ErrNotFound)
	assert.Empty(t, r.s.Cycles())
}

func TestAddRefusesBadAndDuplicateCycles(t *testing.T) {
	r := newRig(t, nil)
	r.add(wholeCfg)
	assert.ErrorIs(t, r.s.Add(context.Background(), wholeCfg), ErrExists)
	bad := wholeCfg
	bad.Name, bad.Throttle = "bad", 0
	err := r.s.Add(context.Background(), bad)
	assert.ErrorIs(t, err, ErrInvalidConfig)
	assert.ErrorContains(t, err, "throttle is required")
}

// recordingToggle is a toggle whose answer the test sets; it tells the test of every
// question, so the test knows the scheduler acted on the previous answer.
type recordingToggle struct {
	active atomic.Bool
	gen    atomic.Uint64 // the generation it says when active
	asked  chan bool
}

func (tg *recordingToggle) Active(context.Context) (bool, Generation, error) {
	a := tg.active.Load()
	tg.asked <- a
	if !a {
		return false, 0, nil
	}
	return a, Generation(tg.gen.Load()), nil
}

func TestToggleStartsAndShutsDownTheCycles(t *testing.T) {
	tg := &recordingToggle{asked: make(chan bool, 16)}
	r := newRig(t, func(c *rigSetup) { c.Toggle = tg; c.ToggleInterval = time.Minute })
	r.put("c", items("i", 100, nil)...)
	cfg := wholeCfg
	cfg.Throttle = time.Hour // no publish falls between the toggle's ticks
	r.add(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	runErr := make(chan error, 1)
	go func() { runErr <- r.s.Run(ctx) }()
	ask := func() {
		t.Helper()
		select {
		case <-tg.asked:
		case <-time.After(bound):
			t.Fatal("the toggle was not asked")
		}
	}

	ask() // passive at first: nothing runs
	assert.False(t, r.s.Status().Active)
	assert.False(t, r.s.cycles["whole"].running())

	tg.active.Store(true)
	r.clk.Advance(time.Minute)
	ask()
	got := r.publishes(1, nil)
	assert.Equal(t, "iaa", got[0].id)
	r.nextWait()
	assert.True(t, r.s.Status().Active)

	tg.active.Store(false)
	r.clk.Advance(time.Minute)
	ask()
	r.clk.Advance(time.Minute)
	ask() // asked again: the shutdown before it is done
	st, _ := r.s.Cycle("whole")
	assert.Equal(t, []State{Stopped}, st.Metadata.States)
	assert.False(t, r.s.cycles["whole"].running())
	saved, _, _ := r.store.Load(context.Background(), "whole")
	assert.Equal(t, 1, saved.Completed, "saved on the way down")

	tg.active.Store(true)
	r.clk.Advance(time.Minute)
	ask()
	got = r.publishes(1, nil)
	assert.Equal(t, "iab", got[0].id, "resumed where it stopped")
	assert.Equal(t, time.Hour+time.Minute, got[0].at.Sub(t0), "the throttle holds across the flap: an hour after the last")

	cancel()
	select {
	case err := <-runErr:
		require.NoError(t, err)
	case <-time.After(bound):
		t.Fatal("Run did not return")
	}
	assert.False(t, r.s.cycles["whole"].running(), "Run shuts the cycles down when it returns")
}

// promotable is a passive toggle an operator can promote.
type promotable struct {
	active atomic.Bool
	err    error
}

func (p *promotable) Active(context.Context) (bool, Generation, error) {
	return p.active.Load(), 0, nil
}
func (p *promotable) Promote(context.Context) (Generation, error) {
	if p.err != nil {
		return 0, p.err
	}
	p.active.Store(true)
	return 0, nil
}

func TestStartOnAPassiveInstance(t *testing.T) {
	r := newRig(t, func(c *rigSetup) {
		c.Toggle = ToggleFunc(func(context.Context) (bool, Generation, error) { return false, 0, nil })
	})
	r.add(wholeCfg)
	assert.ErrorIs(t, r.s.Start(context.Background()), ErrPassive)
	assert.False(t, r.s.Status().Started)

	held := &promotable{err: ErrLeaseHeld}
	r2 := newRig(t, func(c *rigSetup) { c.Toggle = held })
	assert.ErrorIs(t, r2.s.Start(context.Background()), ErrLeaseHeld)

	free := &promotable{}
	r3 := newRig(t, func(c *rigSetup) { c.Toggle = free })
	r3.put("c", items("i", 1, nil)...)
	r3.add(wholeCfg)
	require.NoError(t, r3.s.Start(context.Background()))
	assert.True(t, free.active.Load(), "promoted")
	r3.publishes(1, nil)
}

func TestNewSchedulerRefusesBadConfig(t *testing.T) {
	src, pub := NewMemorySource(), PublisherFunc(func(context.Context, Publication) error { return nil })
	for _, tc := range []struct {
		src   Source
		pub   Publisher
		cfg   Config
		field string
	}{
		{nil, pub, Config{}, "the Source is nil"},
		{src, nil, Config{}, "the Publisher is nil"},
		{src, pub, Config{PageSize: -1}, "Config.PageSize"},
		{src, pub, Config{ToggleInterval: -1}, "Config.ToggleInterval"},
		{src, pub, Config{CheckpointInterval: -1}, "Config.CheckpointInterval"},
		{src, pub, Config{RetryInitial: time.Minute, RetryMax: time.Second}, "Config.RetryMax"},
		{src, pub, Config{PublishTimeout: -1}, "Config.PublishTimeout"},
	} {
		_, err := NewScheduler(tc.src, tc.pub, tc.cfg)
		assert.ErrorIs(t, err, ErrInvalidConfig)
		assert.ErrorContains(t, err, tc.field)
	}
}
