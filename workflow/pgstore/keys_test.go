package pgstore_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/internal/pgtest"
	"github.com/feedkit/feedkit/workflow"
	"github.com/feedkit/feedkit/workflow/pgstore"
)

// TestNewUpgradesProcesses: a processes table of the version before idempotency keys,
// with a process in it, gets the key's columns and unique index from New, and keeps the
// process, which has no key.
func TestNewUpgradesProcesses(t *testing.T) {
	pool := pgtest.Pool(t)
	ctx := t.Context()
	_, err := pool.Exec(ctx, `CREATE TABLE feedkit_workflow_processes (
		id text PRIMARY KEY, type text NOT NULL, custom_id text NOT NULL, state smallint NOT NULL,
		start_actor_type text NOT NULL, start_args bytea, start_task text NOT NULL,
		started_at timestamptz NOT NULL, recovery_time timestamptz, reason bytea NOT NULL,
		run integer NOT NULL, version bigint NOT NULL)`)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO feedkit_workflow_processes VALUES ('old', 'order', 'c', 2, 'check', NULL,
		'old-start', $1, NULL, '', 0, 4)`, t0)
	require.NoError(t, err)

	s := newStore(t, pool)
	old, err := s.Process(ctx, "old")
	require.NoError(t, err)
	assert.Equal(t, workflow.Process{ID: "old", Type: "order", CustomID: "c", State: workflow.ProcessFinished,
		Start: workflow.TaskSpec{ActorType: "check"}, StartTask: "old-start", StartedAt: t0, Version: 4}, old)

	e, err := workflow.New(s, workflow.Config{})
	require.NoError(t, err)
	req := workflow.StartRequest{Type: "order", CustomID: "c", IdempotencyKey: "order-1", Start: workflow.TaskSpec{ActorType: "check"}}
	p, created, err := e.Start(ctx, req)
	require.NoError(t, err)
	require.True(t, created)
	again, created, err := e.Start(ctx, req)
	require.NoError(t, err)
	assert.False(t, created)
	assert.Equal(t, p.ID, again.ID)

	var unique bool
	require.NoError(t, pool.QueryRow(ctx, `SELECT indisunique FROM pg_index
		WHERE indexrelid = to_regclass('feedkit_workflow_processes_key')`).Scan(&unique))
	assert.True(t, unique, "the key's index is unique")
}

// TestKeyUniqueInTheDatabase: the (type, idempotency_key) constraint is the database's,
// so that a writer other than the store (an operator's psql, a migration script) cannot
// give two processes of a type one key either; a NULL key, no key, is not constrained.
func TestKeyUniqueInTheDatabase(t *testing.T) {
	pool := pgtest.Pool(t)
	ctx := t.Context()
	s := newStore(t, pool)
	require.NoError(t, s.CreateProcess(ctx, workflow.Process{ID: "p1", Type: "order", IdempotencyKey: "k", StartedAt: t0}))
	insert := func(id, typ string, key any) error {
		_, err := pool.Exec(ctx, `INSERT INTO feedkit_workflow_processes (id, type, custom_id, state, start_actor_type,
			start_task, started_at, reason, run, idempotency_key, request_digest, version)
			VALUES ($1, $2, '', 1, 'check', 's', $3, '', 0, $4, '', 1)`, id, typ, t0, key)
		return err
	}
	var pgErr *pgconn.PgError
	require.True(t, errors.As(insert("p2", "order", "k"), &pgErr), "a second process of the key")
	assert.Equal(t, "23505", pgErr.Code, "unique_violation")
	assert.NoError(t, insert("p3", "refund", "k"), "another type")
	assert.NoError(t, insert("p4", "order", nil))
	assert.NoError(t, insert("p5", "order", nil), "no key twice")

	var stored any
	require.NoError(t, s.CreateProcess(ctx, workflow.Process{ID: "p6", Type: "order", StartedAt: t0}))
	require.NoError(t, pool.QueryRow(ctx, `SELECT idempotency_key FROM feedkit_workflow_processes WHERE id = 'p6'`).Scan(&stored))
	assert.Nil(t, stored, "an empty key is stored as NULL, outside the index")
}

// TestIdempotentStartTwoEngines has two engines, each on a store of its own pool, as two
// processes on one PostgreSQL, start the same 50 orders from 8 goroutines each, every
// goroutine every order in its own order: each order is one process, created by exactly
// one start and returned to every other, with one start task.
func TestIdempotentStartTwoEngines(t *testing.T) {
	p1 := pgtest.Pool(t)
	stores := []*pgstore.Store{newStore(t, p1), newStore(t, pgtest.SecondPool(t, p1))}
	engines := make([]*workflow.Engine, len(stores))
	for i, s := range stores {
		e, err := workflow.New(s, workflow.Config{OnError: func(err error) { t.Error(err) }})
		require.NoError(t, err)
		engines[i] = e
	}
	const orders, starters = 50, 8
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		created = make(map[string]int)      // order key → starts that created its process
		got     = make(map[string][]string) // order key → the process ids its starts returned
	)
	start := make(chan struct{})
	for i, e := range engines {
		for w := range starters {
			wg.Go(func() {
				<-start
				for n := range orders {
					n = (n + w*7 + i*3) % orders // each goroutine in an order of its own
					key := fmt.Sprint("order-", n)
					p, ok, err := e.Start(t.Context(), workflow.StartRequest{Type: "order", CustomID: key, IdempotencyKey: key,
						Start: workflow.TaskSpec{ActorType: "check", Args: []byte(key)}})
					if err != nil {
						t.Errorf("engine %d starter %d, %s: %v", i, w, key, err)
						return
					}
					mu.Lock()
					got[key] = append(got[key], p.ID)
					if ok {
						created[key]++
					}
					mu.Unlock()
				}
			})
		}
	}
	close(start)
	wg.Wait()
	require.Len(t, got, orders)
	for key, ids := range got {
		assert.Equal(t, 1, created[key], "%s created once", key)
		assert.Len(t, ids, len(engines)*starters, key)
		for _, id := range ids {
			assert.Equal(t, ids[0], id, "%s: every start gets the one process", key)
		}
	}
	var processes, tasks, keys int
	require.NoError(t, p1.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM feedkit_workflow_processes),
		(SELECT count(*) FROM feedkit_workflow_tasks), (SELECT count(DISTINCT idempotency_key) FROM feedkit_workflow_processes)`).
		Scan(&processes, &tasks, &keys))
	assert.Equal(t, orders, processes)
	assert.Equal(t, orders, tasks, "one start task each")
	assert.Equal(t, orders, keys)
}
