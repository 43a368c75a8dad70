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

// killableStore is a store one instance writes through: once killed, nothing it saves
// reaches the store, as nothing reaches it from a process killed with SIGKILL.
type killableStore struct {
	MetadataStore
	dead atomic.Bool
}

var errKilled = errors.New("the process is dead")

func (s *killableStore) Save(ctx context.Context, m CycleMetadata, gen Generation) error {
	if s.dead.Load() {
		return errKilled
	}
	return s.MetadataStore.Save(ctx, m, gen)
}

// Two instances on one store: A publishes, goes passive; B takes over from A's saved
// progress and publishes; B goes away (shut down, or killed); A takes over again. A must
// resume from what B saved, not from where it had itself stopped.
func TestFailBackResumesFromTheProgressTheOtherInstanceSaved(t *testing.T) {
	for _, kill := range []bool{false, true} {
		name := "B shut down"
		if kill {
			name = "B killed"
		}
		t.Run(name, func(t *testing.T) {
			r := newRig(t, nil)
			r.put("c", numbered(0, 100)...)
			a := r.s
			bStore := &killableStore{MetadataStore: r.store}
			b := r.scheduler(func(c *rigSetup) { c.Store = bStore; c.CheckpointInterval = 5 * time.Second })
			ctx := context.Background()
			require.NoError(t, a.Add(ctx, wholeCfg))
			require.NoError(t, b.Add(ctx, wholeCfg))

			require.NoError(t, a.Start(ctx))
			got := r.publishes(10, nil)
			requireSameIDs(t, idsOfItems(numbered(0, 10)), ids(got), "A's publishes")
			r.nextWait()
			require.NoError(t, a.Shutdown(ctx))
			r.held = nil

			require.NoError(t, b.Start(ctx))
			got = r.publishes(17, nil)
			requireSameIDs(t, idsOfItems(numbered(10, 27)), ids(got), "B resumes after A's last")
			r.nextWait()
			bStore.dead.Store(kill)
			require.NoError(t, b.Shutdown(ctx))
			r.held = nil
			saved, ok, err := r.store.Load(ctx, wholeCfg.Name)
			require.NoError(t, err)
			require.True(t, ok)
			if kill {
				// B's last checkpoint: every 5 s from its start, at its 6th, 11th and
				// 16th publish; the 17th died with it.
				require.Equal(t, "item-0025", saved.Last.ID, "B's last checkpoint")
			} else {
				require.Equal(t, "item-0026", saved.Last.ID, "B's exit save")
			}

			require.NoError(t, a.Start(ctx))
			got = r.publishes(3, nil)
			next := saved.Completed
			requireSameIDs(t, idsOfItems(numbered(next, next+3)), ids(got), "A resumes after the progress B saved")
			r.nextWait()
			require.NoError(t, a.Shutdown(ctx))
			again, _, err := r.store.Load(ctx, wholeCfg.Name)
			require.NoError(t, err)
			assert.Equal(t, numbered(next+2, next+3)[0], again.Last, "A's save continues B's progress")
			assert.Equal(t, 1, again.Iteration)
		})
	}
}

// progressOf returns metadata of wholeCfg's cycle that is in iteration 1 of 100 items,
// completed up to item-NNNN (completed-1), as another instance would have saved it.
func progressOf(completed int) CycleMetadata {
	return CycleMetadata{CycleID: wholeCfg.Name, Config: wholeCfg, Iteration: 1, Total: 100, Completed: completed,
		Last: numbered(completed-1, completed)[0], InProgress: true, IterationStart: t0, States: []State{Running}}
}

// runToggled runs r's scheduler under Run until the test ends.
func runToggled(t *testing.T, r *rig) {
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
}

func (tg *recordingToggle) await(t *testing.T) {
	t.Helper()
	select {
	case <-tg.asked:
	case <-time.After(bound):
		t.Fatal("the toggle was not asked")
	}
}

// The toggle says active both times it is asked, with another generation the second
// time: in between, this instance lost the role, another ran the cycle on, and this one
// took the role back. The cycle restarts from what the other saved; the run it replaces
// cannot save over that on its way out.
func TestANewGenerationRestartsTheCyclesFromTheStore(t *testing.T) {
	tg := &recordingToggle{asked: make(chan bool, 16)}
	tg.active.Store(true)
	tg.gen.Store(1)
	r := newRig(t, func(c *rigSetup) { c.Toggle = tg; c.ToggleInterval = time.Minute })
	r.put("c", numbered(0, 100)...)
	cfg := wholeCfg
	cfg.Throttle = time.Hour // no publish falls between the toggle's ticks
	r.add(cfg)
	runToggled(t, r)
	tg.await(t)
	got := r.publishes(1, nil)
	require.Equal(t, "item-0000", got[0].id)
	r.nextWait()
	assert.Equal(t, Generation(1), r.s.Status().Generation)

	ctx := context.Background()
	other := progressOf(50)
	other.Config = cfg
	require.NoError(t, r.store.Save(ctx, other, 2), "the other instance's save")
	tg.gen.Store(3)
	r.clk.Advance(time.Minute)
	tg.await(t)
	got = r.publishes(1, nil)
	assert.Equal(t, "item-0050", got[0].id, "resumed after the other instance's progress")
	assert.Equal(t, time.Hour, got[0].at.Sub(t0), "an hour after this instance's last publish")
	r.nextWait() // the publish is recorded, and saved: the last save was 59 minutes ago
	assert.Equal(t, Generation(3), r.s.Status().Generation)
	saved, _, err := r.store.Load(ctx, wholeCfg.Name)
	require.NoError(t, err)
	assert.Equal(t, 51, saved.Completed, "the progress of the other instance and of the restarted run")
}

// A cycle whose checkpoint the store refuses, because another instance saved under a
// later generation, stops there and says why; it is not held: the next activation
// starts it again, from the store.
func TestARefusedCheckpointStopsTheCycleUntilTheNextActivation(t *testing.T) {
	tg := &recordingToggle{asked: make(chan bool, 64)}
	tg.active.Store(true)
	tg.gen.Store(1)
	r := newRig(t, func(c *rigSetup) {
		c.Toggle, c.ToggleInterval, c.CheckpointInterval = tg, time.Hour, 5*time.Second
	})
	r.put("c", numbered(0, 100)...)
	r.add(wholeCfg)
	runToggled(t, r)
	tg.await(t)
	got := r.publishes(3, nil)
	requireSameIDs(t, idsOfItems(numbered(0, 3)), ids(got), "the first publishes")

	ctx := context.Background()
	require.NoError(t, r.store.Save(ctx, progressOf(40), 2), "the other instance's save")
	// The 4th to 6th publishes; after the 6th, 5 s after the claim, the checkpoint.
	got = r.publishes(3, nil)
	requireSameIDs(t, idsOfItems(numbered(3, 6)), ids(got), "publishes until the checkpoint")
	c := r.s.cycles[wholeCfg.Name]
	coreWaitClosed(t, coreDoneOf(c), "the cycle's stop")
	st, err := r.s.Cycle(wholeCfg.Name)
	require.NoError(t, err)
	assert.Equal(t, []State{Stopped}, st.Metadata.States)
	assert.ErrorContains(t, errors.New(st.Metadata.LastError), "later activation")
	saved, _, err := r.store.Load(ctx, wholeCfg.Name)
	require.NoError(t, err)
	assert.Equal(t, 40, saved.Completed, "the other instance's progress stands")
	assert.Empty(t, r.drain(nil), "nothing published after the refusal")

	tg.gen.Store(3)
	r.clk.Advance(time.Hour) // the toggle's next tick
	tg.await(t)
	got = r.publishes(1, nil)
	assert.Equal(t, "item-0040", got[0].id, "the next activation resumes from the store")
}

// A reset on an instance that another has taken over from would erase that one's
// progress: the store refuses it, and the operator is told.
func TestResetOnAStaleInstanceIsRefused(t *testing.T) {
	r := newRig(t, func(c *rigSetup) {
		c.Toggle = ToggleFunc(func(context.Context) (bool, Generation, error) { return true, 1, nil })
	})
	r.put("c", numbered(0, 100)...)
	r.add(wholeCfg)
	r.start()
	r.publishes(2, nil)
	r.nextWait()
	ctx := context.Background()
	require.NoError(t, r.s.StopCycle(ctx, wholeCfg.Name))
	require.NoError(t, r.store.Save(ctx, progressOf(40), 2), "the other instance's save")

	err := r.s.ResetCycle(ctx, wholeCfg.Name)
	require.ErrorIs(t, err, ErrFenced)
	saved, _, err := r.store.Load(ctx, wholeCfg.Name)
	require.NoError(t, err)
	assert.Equal(t, 40, saved.Completed, "the other instance's progress stands")
}
