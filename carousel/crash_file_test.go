//go:build crash

package carousel_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/carousel"
	"github.com/feedkit/feedkit/internal/crashtest"
)

// The crash test of one instance on the FileStore, with the FileToggle that an operator
// switches.
const (
	crashDirVar             = "FEEDKIT_CRASH_CAROUSEL_DIR" // the directory of the metadata and toggle files
	crashMetadataFile       = "metadata.json"
	crashToggleFile         = "active"
	crashFileToggleInterval = 200 * time.Millisecond
)

// TestCrashCarouselFileStore runs one instance, a child process, whose two cycles
// republish collections of FEEDKIT_CRASH_CAROUSEL_ITEMS items (2,000) each every 5 ms,
// saving their progress in a FileStore every second, active as a FileToggle says.
// FEEDKIT_CRASH_KILLS times (8) the parent kills it with SIGKILL at a random share of
// the work and restarts it; before every other kill it switches the toggle to passive
// and back to active, a new activation of the living instance. When every cycle has
// completed two iterations it stops the instance and counts what it received, each
// count exact: one activation at the start, one per kill, one per switch; every
// iteration publishes every item at its position, none skipped; the publications
// received again are at most one checkpoint interval's items (201) per cycle per
// activation after the first, and the store holds where the record ends.
func TestCrashCarouselFileStore(t *testing.T) {
	n := crashtest.Int(t, crashItemsVar, crashItems)
	kills := crashtest.Kills(t, crashKills)
	rng := crashtest.Rand(t, "carousel-file")
	ctx, cancel := context.WithTimeout(t.Context(), crashDeadline)
	defer cancel()
	dir := t.TempDir()
	toggle := carousel.NewFileToggle(filepath.Join(dir, crashToggleFile))
	require.NoError(t, toggle.Set(true))
	rec := newCrashReceiver(t, n)
	p := crashtest.Start(t, crashtest.Spec{Name: "carousel", Test: "TestCrashChildCarouselFile",
		Env: append(rec.env(n), crashNameVar+"=carousel", crashDirVar+"="+dir)})
	procs := []*crashtest.Process{p}

	// Each kill waits for a share of the work drawn at random, so that every one lands
	// under load however fast the machine is. Before every other kill the toggle is
	// switched, at a share between the kill before and that one: passive for a pause
	// drawn up to three toggle intervals (the instance may shut its cycles down, or
	// only see the new activation), then active again.
	shares := crashShares(rng, kills)
	switchShares, pauses := make([]float64, kills), make([]time.Duration, kills)
	for i := 1; i < kills; i += 2 {
		switchShares[i] = shares[i-1] + rng.Float64()*(shares[i]-shares[i-1])
		pauses[i] = crashtest.Between(rng, 50*time.Millisecond, 3*crashFileToggleInterval)
	}
	switches := 0
	chaos := crashtest.Chaos{Kills: kills, MinDelay: 50 * time.Millisecond, MaxDelay: 500 * time.Millisecond,
		Await: func(ctx context.Context, kill int) error {
			if kill%2 == 1 {
				if err := rec.awaitWork(ctx, switchShares[kill], procs); err != nil {
					return err
				}
				if err := crashSwitch(ctx, rec, toggle, pauses[kill], procs); err != nil {
					return err
				}
				switches++
			}
			return rec.awaitWork(ctx, shares[kill], procs)
		},
		OnKill: func(victims []*crashtest.Process) {
			rec.mu.Lock()
			progress := rec.progress
			rec.mu.Unlock()
			t.Logf("kill: %s (start %d); %d publications", victims[0].Name(), victims[0].Starts(), progress)
		}}
	made, err := chaos.Run(ctx, rng, procs...)
	require.NoError(t, err)
	require.NoError(t, rec.awaitComplete(ctx, procs))
	require.NoError(t, p.Stop(ctx), "the instance stops cleanly")

	c := crashtest.NewCounts("carousel-file")
	defer c.Print() // what was counted, even when an assertion stops the test
	c.Set("kills", made)
	c.Set("switches", switches)
	assert.Equal(t, kills, made, "every kill made")
	assert.Equal(t, made+1, p.Starts(), "restarted after each kill")
	tally := crashAccount(t, rec, c)
	c.Set("activations", len(tally.activations))
	assert.Equal(t, 1+made+switches, len(tally.activations), "one activation at the start, one per kill, one per switch")
	// A restart reads the toggle file as it was: the generation of the activation
	// before; a switch writes it: a later one.
	var gens []carousel.Generation
	lives := map[crashLife]bool{}
	for _, a := range tally.activations {
		gens = append(gens, a.gen)
		lives[a.life] = true
	}
	assert.True(t, slices.IsSorted(gens), "generations in the order of the activations: %v", gens)
	assert.Len(t, slices.Compact(gens), 1+switches, "a generation per switch")
	assert.Len(t, lives, made+1, "every life activated")
	crashCheckSaved(t, rec, tally, carousel.NewFileStore(filepath.Join(dir, crashMetadataFile)))
}

// crashSwitch switches the toggle passive, and after pause active again, and waits
// until the instance has reported the new activation.
func crashSwitch(ctx context.Context, rec *crashReceiver, toggle *carousel.FileToggle, pause time.Duration,
	procs []*crashtest.Process) error {
	if err := toggle.Set(false); err != nil {
		return err
	}
	if err := crashtest.Pause(ctx, pause); err != nil {
		return err
	}
	if err := toggle.Set(true); err != nil {
		return err
	}
	_, gen, err := toggle.Active(ctx)
	if err != nil {
		return err
	}
	return rec.awaitActivation(ctx, gen, procs)
}

// TestCrashChildCarouselFile is the instance: the collections in memory, the same in
// every life, its progress in the metadata file, active as the toggle file says; until
// the parent stops it.
func TestCrashChildCarouselFile(t *testing.T) {
	ctx := crashtest.Child(t)
	n := crashChildItems(t)
	dir := os.Getenv(crashDirVar)
	src := carousel.NewMemorySource()
	for _, cy := range crashCycles {
		require.NoError(t, src.Put(cy.Collection, crashItemList(cy.Collection, n)...))
	}
	crashChildRun(ctx, t, src, carousel.NewFileStore(filepath.Join(dir, crashMetadataFile)),
		carousel.NewFileToggle(filepath.Join(dir, crashToggleFile)), crashFileToggleInterval)
}
