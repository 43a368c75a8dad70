package carousel

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// coreReviewStore is a MemoryStore whose Load, Save and Delete a test can make fail or block.
type coreReviewStore struct {
	*MemoryStore
	failLoads   atomic.Int32 // this many Loads fail
	loads       atomic.Int32
	failDelete  atomic.Bool
	blockSave   atomic.Bool
	saveEntered chan struct{}
	release     chan struct{}
	releaseOnce sync.Once
}

func newCoreReviewStore() *coreReviewStore {
	return &coreReviewStore{MemoryStore: NewMemoryStore(), saveEntered: make(chan struct{}, 1), release: make(chan struct{})}
}

func (s *coreReviewStore) unblock() { s.releaseOnce.Do(func() { close(s.release) }) }

func (s *coreReviewStore) Load(ctx context.Context, id string) (CycleMetadata, bool, error) {
	s.loads.Add(1)
	if s.failLoads.Add(-1) >= 0 {
		return CycleMetadata{}, false, errors.New("store briefly unreachable")
	}
	return s.MemoryStore.Load(ctx, id)
}

func (s *coreReviewStore) Save(ctx context.Context, m CycleMetadata, gen Generation) error {
	if s.blockSave.Load() {
		select {
		case s.saveEntered <- struct{}{}:
		default:
		}
		select {
		case <-s.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return s.MemoryStore.Save(ctx, m, gen)
}

func (s *coreReviewStore) Delete(ctx context.Context, id string) error {
	if s.failDelete.Load() {
		return errors.New("store briefly unreachable")
	}
	return s.MemoryStore.Delete(ctx, id)
}

func coreDoneOf(c *cycle) chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.done
}

func coreWaitClosed(t *testing.T, ch chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(bound):
		t.Fatalf("%s did not happen within %v", what, bound)
	}
}

// A Shutdown whose ctx ends while a cycle is still on its way out (its exit save is slow)
// returns an error; a Start after it must still run the cycle once the old goroutine has
// gone, not take the exiting goroutine for a running one.
func TestStartAfterATimedOutShutdownRunsTheCycle(t *testing.T) {
	st := newCoreReviewStore()
	r := newRig(t, func(c *rigSetup) { c.Store = st })
	t.Cleanup(st.unblock)
	r.put("c", items("i", 10, nil)...)
	cfg := wholeCfg
	cfg.Throttle = time.Minute
	r.add(cfg)
	r.start()
	r.publishes(1, nil)
	r.nextWait()

	st.blockSave.Store(true)
	expired, cancel := context.WithCancel(context.Background())
	cancel()
	require.Error(t, r.s.Shutdown(expired), "the exit save is slow: the shutdown times out")
	coreWaitClosed(t, st.saveEntered, "the exit save")

	c := r.s.cycles["whole"]
	old := coreDoneOf(c)
	require.NoError(t, r.s.Start(context.Background()))
	st.blockSave.Store(false)
	st.unblock()
	coreWaitClosed(t, old, "the old goroutine's exit")

	status := r.s.Status()
	require.True(t, status.Started)
	assert.True(t, c.running(), "Start returned nil and the scheduler is started, yet the cycle never runs again")
	assert.NotEqual(t, []State{Stopped}, status.Cycles[0].Metadata.States)
}

// A cycle that stops because its source failed (StopWhenUnhealthy) shows Stopped before
// its exit save is done; a ResumeCycle in that moment must not be lost.
func TestResumeWhileAFailedCycleIsExiting(t *testing.T) {
	src := &flakySource{Source: NewMemorySource()}
	st := newCoreReviewStore()
	r := newRig(t, func(c *rigSetup) { c.Source = src; c.Store = st; c.StopWhenUnhealthy = true })
	t.Cleanup(st.unblock)
	src.Source = r.src
	r.put("c", Item{ID: "only"})
	r.add(wholeCfg)
	r.start()
	r.publishes(1, nil)
	w := r.nextWait() // the pace after the iteration's last item

	src.down.Store(true)
	st.blockSave.Store(true)
	r.clk.Set(w.until) // the next iteration's Count fails: the cycle stops
	coreWaitClosed(t, st.saveEntered, "the exit save")
	status, _ := r.s.Cycle("whole")
	require.Equal(t, []State{Stopped, Unhealthy}, status.Metadata.States, "the operator sees it stopped")

	src.down.Store(false)
	c := r.s.cycles["whole"]
	old := coreDoneOf(c)
	require.NoError(t, r.s.ResumeCycle(context.Background(), "whole"))
	st.blockSave.Store(false)
	st.unblock()
	coreWaitClosed(t, old, "the old goroutine's exit")
	assert.True(t, c.running(), "ResumeCycle returned nil, yet the cycle stays stopped")
}

// SetThrottle wakes a cycle in its cool-down; the cool-down must end when it would have.
func TestSetThrottleDuringCoolDownKeepsItsEnd(t *testing.T) {
	r := newRig(t, nil)
	cfg := wholeCfg
	cfg.CoolDown = 5 * time.Minute
	r.add(cfg) // an empty collection: it cools down
	r.start()
	w := r.nextWait()
	require.Equal(t, t0.Add(5*time.Minute), w.until)

	r.clk.Advance(4 * time.Minute)
	require.NoError(t, r.s.SetThrottle("whole", 2*time.Second))
	w = r.nextWait()
	assert.Equal(t, t0.Add(5*time.Minute), w.until, "the cool-down still ends 5 minutes after it began, not 9")
}

// Under Run, a cycle whose restore fails when the toggle turns active (a store that is
// briefly unreachable) retries it and starts, although the toggle's answer does not
// change again.
func TestRunRetriesACycleWhoseRestoreFailed(t *testing.T) {
	tg := &recordingToggle{asked: make(chan bool, 16)}
	tg.active.Store(true)
	st := newCoreReviewStore()
	st.failLoads.Store(1)
	r := newRig(t, func(c *rigSetup) { c.Toggle = tg; c.ToggleInterval = time.Minute; c.Store = st })
	r.put("c", items("i", 3, nil)...)
	cfg := wholeCfg
	cfg.Throttle = time.Hour
	r.add(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	runErr := make(chan error, 1)
	go func() { runErr <- r.s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-runErr:
		case <-time.After(bound):
			t.Error("Run did not return")
		}
	})
	ask := func() {
		t.Helper()
		select {
		case <-tg.asked:
		case <-time.After(bound):
			t.Fatal("the toggle was not asked")
		}
	}
	ask() // active: the cycle starts, and its restore fails
	w := r.nextWait()
	cs, _ := r.s.Cycle("whole")
	assert.Equal(t, []State{Starting, Unhealthy}, cs.Metadata.States, "unhealthy while the store fails")
	assert.Contains(t, cs.Metadata.LastError, "loading metadata")
	r.clk.Set(w.until) // the retry, which succeeds
	got := r.publishes(1, nil)
	assert.Equal(t, "iaa", got[0].id)
	status := r.s.Status()
	assert.True(t, status.Started)
	assert.True(t, status.Active)
	assert.Equal(t, int32(2), st.loads.Load(), "tried again, once")
	assert.True(t, r.s.cycles["whole"].running())
}

// StopCycle then ResumeCycle (or a toggle flap: Shutdown then Start) keeps the throttle:
// with a 1h throttle, the next publish comes an hour after the last, not at once.
func TestStopResumeKeepsTheThrottle(t *testing.T) {
	r := newRig(t, nil)
	r.put("c", items("i", 10, nil)...)
	cfg := wholeCfg
	cfg.Throttle = time.Hour
	r.add(cfg)
	r.start()
	got := r.publishes(1, nil)
	require.Equal(t, time.Duration(0), got[0].at.Sub(t0))
	require.Equal(t, t0.Add(time.Hour), r.nextWait().until)

	ctx := context.Background()
	require.NoError(t, r.s.StopCycle(ctx, "whole"))
	r.held = nil
	require.NoError(t, r.s.ResumeCycle(ctx, "whole"))
	got = r.publishes(1, nil)
	assert.Equal(t, "iab", got[0].id)
	assert.GreaterOrEqual(t, got[0].at.Sub(t0), time.Hour, "the second publish must come a throttle after the first")
}

// When a slow publish leaves the final pace nothing to wait, the next iteration starts
// at the very instant the previous ended; an interruption of that iteration is still
// resumed, not restarted with a new iteration number (or window).
func TestInterruptedIterationStartingAtThePreviousEndIsResumed(t *testing.T) {
	var r *rig
	var slowOnce atomic.Bool
	r = newRig(t, func(c *rigSetup) {
		inner := c.Publisher
		c.Publisher = PublisherFunc(func(ctx context.Context, p Publication) error {
			err := inner.Publish(ctx, p)
			if p.Item.ID == "b" && slowOnce.CompareAndSwap(false, true) {
				r.clk.Advance(2 * time.Minute) // the notifier took two minutes
			}
			return err
		})
	})
	r.put("c", Item{ID: "a"}, Item{ID: "b"})
	cfg := wholeCfg
	cfg.Throttle = time.Minute
	r.add(cfg)
	r.start()
	got := r.publishes(3, nil) // a, b (slow), then a of iteration 2 at once
	require.Equal(t, []string{"a", "b", "a"}, ids(got))
	r.nextWait() // the pace after iteration 2's first item: its publish is recorded
	st, _ := r.s.Cycle("whole")
	require.Equal(t, 2, st.Metadata.Iteration)
	require.Equal(t, 1, st.Metadata.Completed)

	ctx := context.Background()
	require.NoError(t, r.s.StopCycle(ctx, "whole"))
	r.held = nil
	require.NoError(t, r.s.ResumeCycle(ctx, "whole"))
	got = r.publishes(1, nil)
	assert.Equal(t, "b", got[0].id, "iteration 2 resumed after a")
	st, _ = r.s.Cycle("whole")
	assert.Equal(t, 2, st.Metadata.Iteration, "still iteration 2")
}

// When the store's Delete fails, Scheduler.Delete returns the error and keeps the cycle,
// so that the operator can retry it and a re-Add of the name cannot find stale progress.
func TestFailedDeleteCanBeRetried(t *testing.T) {
	st := newCoreReviewStore()
	r := newRig(t, func(c *rigSetup) { c.Store = st })
	r.put("c", items("i", 5, nil)...)
	r.add(wholeCfg)
	r.start()
	r.publishes(2, nil)
	r.nextWait()

	ctx := context.Background()
	st.failDelete.Store(true)
	require.Error(t, r.s.Delete(ctx, "whole"))
	st.failDelete.Store(false)
	if _, err := r.s.Cycle("whole"); errors.Is(err, ErrNotFound) {
		// Forgotten: re-adding must start afresh, as after a successful Delete.
		r.held = nil
		require.NoError(t, r.s.Add(ctx, wholeCfg))
		got := r.publishes(1, nil)
		assert.Equal(t, "iaa", got[0].id, "a deleted and re-added cycle starts from the beginning")
		return
	}
	assert.NoError(t, r.s.Delete(ctx, "whole"), "a retry of the Delete works")
}
