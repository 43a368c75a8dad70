package main

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/recovery"
	"github.com/feedkit/feedkit/recovery/pgstore"
)

// stateStore is where the SDK keeps its producer records (-state): what a restarted
// process recovers each producer from.
type stateStore struct {
	store recovery.Store // nil: each process keeps its records in memory
	where string
	close func()
}

// openState opens the store -state names: nothing for memory, a PostgreSQL URL for a
// pgstore.Store, anything else for a recovery.FileStore at that path.
func openState(ctx context.Context, spec string) (stateStore, error) {
	switch {
	case spec == "":
		// nil, not a recovery.MemoryStore shared by the two processes of -restart: a
		// process's memory goes with it.
		return stateStore{where: "memory (gone when the process stops)", close: func() {}}, nil
	case strings.HasPrefix(spec, "postgres://"), strings.HasPrefix(spec, "postgresql://"):
		pool, err := pgxpool.New(ctx, spec)
		if err != nil {
			return stateStore{}, fmt.Errorf("-state: %w", err)
		}
		s, err := pgstore.NewStore(ctx, pool, pgstore.Options{})
		if err != nil {
			pool.Close()
			return stateStore{}, fmt.Errorf("-state: %w", err)
		}
		return stateStore{store: s, where: "PostgreSQL", close: pool.Close}, nil
	default:
		return stateStore{store: recovery.NewFileStore(spec), where: "file " + spec, close: func() {}}, nil
	}
}

// lastRecord describes the record of producer id that a restarted process will find,
// and the time it will recover the producer from, had it restarted at now.
func (s stateStore) lastRecord(ctx context.Context, id int, now time.Time) string {
	if s.store == nil {
		return fmt.Sprintf("no record: the process kept it in memory; the new one will recover the last %v only", recovery.DefaultAssumedDowntime)
	}
	recs, err := s.store.Load(ctx)
	if err != nil {
		return fmt.Sprintf("no record: %v", err)
	}
	for _, r := range recs {
		if r.Producer == id {
			from, rule := recovery.RecoveryFrom(r, now, recovery.DefaultMaxRecoveryLength, recovery.DefaultAssumedDowntime)
			return fmt.Sprintf("record of producer %d: %s, to recover from %s (%s)", id, r.State, stamp(from), rule)
		}
	}
	return fmt.Sprintf("no record of producer %d", id)
}

// stamp formats a time of the feed's clock (UTC) as the run prints it.
func stamp(t time.Time) string { return t.Format("15:04:05.000") }

// feedClock is the clock of the feed and of the SDK's recovery manager: the wall clock,
// moved ahead by -restart while the process is stopped, so that a stop of minutes takes
// a second to show. Timers run on the wall clock; only the time read moves.
type feedClock struct {
	clock.Clock
	ahead atomic.Int64 // nanoseconds
}

func newFeedClock() *feedClock { return &feedClock{Clock: clock.Real()} }

// Now implements clock.Clock. It reads UTC, as the feed stamps, so that every time the
// run prints is in one zone.
func (c *feedClock) Now() time.Time {
	return c.Clock.Now().Add(time.Duration(c.ahead.Load())).UTC()
}

// Since implements clock.Clock.
func (c *feedClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// jump moves the clock ahead by d.
func (c *feedClock) jump(d time.Duration) { c.ahead.Add(int64(d)) }
