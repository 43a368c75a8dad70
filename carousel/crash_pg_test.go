//go:build crash

package carousel_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/carousel"
	"github.com/feedkit/feedkit/carousel/pgstore"
	"github.com/feedkit/feedkit/internal/crashtest"
	"github.com/feedkit/feedkit/internal/pgtest"
)

// The crash test of two instances on PostgreSQL: the collections in tables read by a
// pgstore.Source, the progress in a pgstore.Store, the active instance the one holding
// a pgstore.Lease, which the other takes over by itself (Failover).
const (
	crashPGURLVar = "FEEDKIT_CRASH_CAROUSEL_PG"    // the database, with the test's schema
	crashLeaseVar = "FEEDKIT_CRASH_CAROUSEL_LEASE" // the lease's name, the test's own
	// crashPGToggleInterval is how often an instance asks the lease: a takeover comes
	// up to that long after the holder's death. It bounds the question too, a ping of
	// the lease's connection: shorter, a busy machine could make a living instance
	// drop the lease.
	crashPGToggleInterval = time.Second
)

// TestCrashCarouselTwoInstancesPG runs two instances, child processes, whose two
// cycles republish collections of FEEDKIT_CRASH_CAROUSEL_ITEMS items (2,000) each
// every 5 ms, saving their progress in PostgreSQL every second; the one holding the
// lease is active, the other takes the lease over when it is free.
// FEEDKIT_CRASH_KILLS times (8) the parent kills the active instance with SIGKILL, or
// both at once, at a random share of the work and restarts it: the other instance, or
// the restarted one, takes over. When every cycle has completed two iterations it
// stops them and counts what it received, each count exact: every kill took the
// active instance and was followed by an activation of another life, under a greater
// generation; every iteration publishes every item at its position, none skipped; the
// publications received again are at most one checkpoint interval's items (201) per
// cycle per activation after the first, and the store holds where the record ends,
// saved under the last activation's generation. After a kill of the active instance
// alone the other takes over before the victim restarts; after a kill of both, either
// does.
func TestCrashCarouselTwoInstancesPG(t *testing.T) {
	n := crashtest.Int(t, crashItemsVar, crashItems)
	kills := crashtest.Kills(t, crashKills)
	rng := crashtest.Rand(t, "carousel-pg")
	url := pgtest.URL(t)
	ctx, cancel := context.WithTimeout(t.Context(), crashDeadline)
	defer cancel()
	pool, err := pgxpool.New(ctx, url)
	require.NoError(t, err)
	t.Cleanup(pool.Close) // before pgtest drops the schema
	for _, cy := range crashCycles {
		_, err := pool.Exec(ctx, `CREATE TABLE `+pgx.Identifier{cy.Collection}.Sanitize()+
			` (id text PRIMARY KEY, last_modified timestamptz NOT NULL)`)
		require.NoError(t, err)
		var rows [][]any
		for _, it := range crashItemList(cy.Collection, n) {
			rows = append(rows, []any{it.ID, it.Modified})
		}
		copied, err := pool.CopyFrom(ctx, pgx.Identifier{cy.Collection}, []string{"id", "last_modified"}, pgx.CopyFromRows(rows))
		require.NoError(t, err)
		require.Equal(t, int64(n), copied)
	}
	store, err := pgstore.NewStore(ctx, pool, pgstore.StoreOptions{})
	require.NoError(t, err)
	rec := newCrashReceiver(t, n)
	// Advisory locks are per database: the lease's name is the test's own.
	var b [8]byte
	_, _ = rand.Read(b[:])
	env := append(rec.env(n), crashPGURLVar+"="+url, crashLeaseVar+"=crash-carousel-"+hex.EncodeToString(b[:]))
	var procs []*crashtest.Process
	for _, name := range []string{"a", "b"} {
		procs = append(procs, crashtest.Start(t, crashtest.Spec{Name: name, Test: "TestCrashChildCarouselPG",
			Env: slices.Concat(env, []string{crashNameVar + "=" + name})}))
	}

	// Each kill waits for a share of the work drawn at random, and for a publication of
	// a life running now: the instance that made the last is the active one, the victim.
	shares := crashShares(rng, kills)
	ofActive, single := 0, 0 // kills that took the active instance; that took one instance
	chaos := crashtest.Chaos{Kills: kills, MinDelay: 50 * time.Millisecond, MaxDelay: 500 * time.Millisecond, AllAtOnce: 0.25,
		Await: func(ctx context.Context, kill int) error { return rec.awaitWork(ctx, shares[kill], procs) },
		Pick: func(live []*crashtest.Process) *crashtest.Process {
			if p := rec.activePublisher(live); p != nil {
				return p
			}
			return live[0] // not the active one: OnKill tells
		},
		OnKill: func(victims []*crashtest.Process) {
			if rec.activePublisher(victims) != nil {
				ofActive++
			}
			names := make([]string, len(victims))
			for i, v := range victims {
				names[i] = fmt.Sprintf("%s (start %d)", v.Name(), v.Starts())
			}
			rec.mu.Lock()
			progress := rec.progress
			rec.mu.Unlock()
			t.Logf("kill: %s; %d publications", strings.Join(names, ", "), progress)
			if len(victims) == len(procs) {
				return // both restart and race for the lease
			}
			single++
			// The other instance takes over before the victim restarts: a restarted
			// instance asks the lease at once, the passive one every toggle interval,
			// and would mostly lose the race to the victim's next life.
			others := slices.DeleteFunc(slices.Clone(procs), func(p *crashtest.Process) bool { return p == victims[0] })
			if err := rec.awaitTakeover(ctx, others); err != nil {
				t.Errorf("after the kill of %s: %v", names[0], err)
			}
		}}
	made, err := chaos.Run(ctx, rng, procs...)
	require.NoError(t, err)
	require.NoError(t, rec.awaitComplete(ctx, procs))
	// The passive instance first: stopped first, the active one would hand it the lease.
	active := rec.activePublisher(procs)
	require.NotNil(t, active, "the last publication came from a running instance")
	for _, p := range procs {
		if p != active {
			require.NoError(t, p.Stop(ctx), "%s stops cleanly", p.Name())
		}
	}
	require.NoError(t, active.Stop(ctx), "%s stops cleanly", active.Name())

	c := crashtest.NewCounts("carousel-pg")
	defer c.Print() // what was counted, even when an assertion stops the test
	c.Set("kills", made)
	c.Set("kills_of_active", ofActive)
	victims := 0
	for _, p := range procs {
		c.Set(p.Name()+"_kills", p.Kills())
		assert.Equal(t, p.Kills()+1, p.Starts(), "%s restarted after each kill", p.Name())
		victims += p.Kills()
	}
	c.Set("victims", victims)
	assert.Equal(t, kills, made, "every kill made")
	assert.Equal(t, made, ofActive, "every kill took the active instance")
	tally := crashAccount(t, rec, c)

	// The activations: one at the start and one after each kill, of another life, each
	// under a greater generation than the one before. A living instance may lose the
	// lease too, on a machine too busy to answer its question in time: counted, and
	// within the bound like any activation, but not expected.
	acts := tally.activations
	c.Set("activations", len(acts))
	takeovers := 0
	lives := map[crashLife]bool{}
	for i, a := range acts {
		lives[a.life] = true
		if i == 0 {
			continue
		}
		assert.Greater(t, a.gen, acts[i-1].gen, "activation %d (%s) after %s", i+1, a.life, acts[i-1].life)
		if a.life.name != acts[i-1].life.name {
			takeovers++
		}
	}
	c.Set("takeovers", takeovers)
	c.Set("kills_of_one", single)
	assert.GreaterOrEqual(t, takeovers, single, "the other instance took over after each kill of one")
	c.Set("activations_without_kill", len(acts)-1-made)
	assert.GreaterOrEqual(t, len(acts), 1+made, "an activation after each kill")
	assert.GreaterOrEqual(t, len(lives), 1+made, "a life activated after each kill")
	crashCheckSaved(t, rec, tally, store)
	for _, cy := range crashCycles {
		var gen int64
		require.NoError(t, pool.QueryRow(ctx, `SELECT generation FROM feedkit_carousel_cycle_metadata WHERE id = $1`,
			cy.Name).Scan(&gen))
		assert.Equal(t, acts[len(acts)-1].gen, carousel.Generation(gen), "%s saved last under the last activation", cy.Name)
	}
}

// TestCrashChildCarouselPG is an instance: the collections in the parent's tables, its
// progress in the Store, active while it holds the lease, which it takes when it is
// free; until the parent stops it.
func TestCrashChildCarouselPG(t *testing.T) {
	ctx := crashtest.Child(t)
	pool, err := pgxpool.New(ctx, os.Getenv(crashPGURLVar))
	require.NoError(t, err, crashPGURLVar)
	t.Cleanup(pool.Close)
	src, err := pgstore.NewSource(pool, pgstore.SourceOptions{})
	require.NoError(t, err)
	store, err := pgstore.NewStore(ctx, pool, pgstore.StoreOptions{})
	if err != nil && ctx.Err() != nil {
		return // stopped meanwhile
	}
	require.NoError(t, err)
	lease, err := pgstore.NewLease(pool, pgstore.LeaseOptions{Name: os.Getenv(crashLeaseVar), Failover: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = lease.Close(context.Background()) }) // before the pool closes
	crashChildRun(ctx, t, src, store, lease, crashPGToggleInterval)
}
