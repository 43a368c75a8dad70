package pgstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/feedkit/feedkit/internal/pgschema"
	"github.com/feedkit/feedkit/workflow"
)

// taskArgs returns t's columns as arguments, in the order of taskColumns.
func taskArgs(t workflow.Task) []any {
	var nextTypes []string
	var nextArgs [][]byte
	if len(t.NextSpecs) > 0 {
		nextTypes = make([]string, len(t.NextSpecs))
		nextArgs = make([][]byte, len(t.NextSpecs))
		for i, sp := range t.NextSpecs {
			nextTypes[i], nextArgs[i] = sp.ActorType, sp.Args
		}
	}
	return []any{t.ID, t.ProcessID, t.Run, t.Spec.ActorType, t.Spec.Args, int16(t.State), t.Pass, pgschema.In(t.ReadyAt),
		pgschema.InNull(t.RecoveryTime), pgschema.InNull(t.Deadline), t.Attempts, t.Result, []byte(t.Error), t.Next, nextTypes, nextArgs}
}

// storedTask returns t as a write stores it, with version v: times truncated, in UTC,
// slices of its own.
func storedTask(t workflow.Task, v int64) workflow.Task {
	t.Spec.Args = slices.Clone(t.Spec.Args)
	t.ReadyAt, t.RecoveryTime, t.Deadline = pgschema.In(t.ReadyAt), pgschema.In(t.RecoveryTime), pgschema.In(t.Deadline)
	t.Result = slices.Clone(t.Result)
	t.Next = slices.Clone(t.Next)
	if t.NextSpecs != nil {
		specs := make([]workflow.TaskSpec, len(t.NextSpecs))
		for i, sp := range t.NextSpecs {
			specs[i] = workflow.TaskSpec{ActorType: sp.ActorType, Args: slices.Clone(sp.Args)}
		}
		t.NextSpecs = specs
	}
	t.Version = v
	return t
}

// scanTask scans the columns of selectSQL(tasks).
func scanTask(row scanner) (workflow.Task, error) {
	var (
		t                  workflow.Task
		state              int16
		readyAt            time.Time
		recovery, deadline *time.Time
		nextTypes          []string
		nextArgs           [][]byte
		errText            []byte
	)
	err := row.Scan(&t.ID, &t.ProcessID, &t.Run, &t.Spec.ActorType, &t.Spec.Args, &state, &t.Pass, &readyAt,
		&recovery, &deadline, &t.Attempts, &t.Result, &errText, &t.Next, &nextTypes, &nextArgs, &t.Version)
	if err != nil {
		return workflow.Task{}, err
	}
	t.State, t.Error = workflow.TaskState(state), string(errText)
	t.ReadyAt, t.RecoveryTime, t.Deadline = pgschema.Out(readyAt), pgschema.OutNull(recovery), pgschema.OutNull(deadline)
	if len(nextTypes) > 0 {
		t.NextSpecs = make([]workflow.TaskSpec, len(nextTypes))
		for i, at := range nextTypes {
			t.NextSpecs[i].ActorType = at
			if i < len(nextArgs) {
				t.NextSpecs[i].Args = nextArgs[i]
			}
		}
	}
	return t, nil
}

func collectTasks(rows pgx.Rows, err error) ([]workflow.Task, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (workflow.Task, error) { return scanTask(r) })
}

// CreateTasks implements workflow.Store: it inserts the tasks with version 1, all or
// none, in one batch (one implicit transaction, one round trip); a task whose id exists
// is left as it is.
func (s *Store) CreateTasks(ctx context.Context, ts []workflow.Task) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("pgstore: create tasks: %w", err)
	}
	switch len(ts) {
	case 0:
		return nil
	case 1:
		if _, err := s.pool.Exec(ctx, s.sql.insertTask, taskArgs(ts[0])...); err != nil {
			return fmt.Errorf("pgstore: create task %s: %w", ts[0].ID, err)
		}
		return nil
	}
	b := &pgx.Batch{}
	for _, t := range ts {
		b.Queue(s.sql.insertTask, taskArgs(t)...)
	}
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("pgstore: create %d tasks: %w", len(ts), err)
	}
	return nil
}

// Task implements workflow.Store (workflow.ErrNotFound).
func (s *Store) Task(ctx context.Context, id string) (workflow.Task, error) {
	if err := ctx.Err(); err != nil {
		return workflow.Task{}, fmt.Errorf("pgstore: task %s: %w", id, err)
	}
	t, err := scanTask(s.pool.QueryRow(ctx, s.sql.selectTask, id))
	if err != nil {
		return workflow.Task{}, fmt.Errorf("pgstore: task %s: %w", id, notFound(err))
	}
	return t, nil
}

// UpdateTask implements workflow.Store: it writes t if the stored version is t.Version
// (workflow.ErrConflict otherwise, workflow.ErrNotFound if there is none) and returns it
// as stored, with the next version. A task written as queued is in its actor type's
// queue at its ReadyAt: the queue is the partial index.
func (s *Store) UpdateTask(ctx context.Context, t workflow.Task) (workflow.Task, error) {
	if err := ctx.Err(); err != nil {
		return workflow.Task{}, fmt.Errorf("pgstore: update task %s: %w", t.ID, err)
	}
	if err := s.update(ctx, "task", t.ID, t.Version, s.sql.updateTask, s.sql.existsTask, taskArgs(t)); err != nil {
		return workflow.Task{}, err
	}
	return storedTask(t, t.Version+1), nil
}

// ProcessTasks implements workflow.Store: every task of the process, by id.
func (s *Store) ProcessTasks(ctx context.Context, processID string) ([]workflow.Task, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("pgstore: tasks of process %s: %w", processID, err)
	}
	ts, err := collectTasks(s.pool.Query(ctx, s.sql.processTasks, processID))
	if err != nil {
		return nil, fmt.Errorf("pgstore: tasks of process %s: %w", processID, err)
	}
	return ts, nil
}

// DueTasks implements workflow.Store, on the partial index of recovery_time.
func (s *Store) DueTasks(ctx context.Context, now time.Time, limit int) ([]workflow.Task, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("pgstore: due tasks: %w", err)
	}
	limit, err := workflow.ResolveLimit("limit", limit)
	if err != nil {
		return nil, fmt.Errorf("pgstore: due tasks: %w", err)
	}
	ts, err := collectTasks(s.pool.Query(ctx, s.sql.dueTasks, pgschema.In(now), limit))
	if err != nil {
		return nil, fmt.Errorf("pgstore: due tasks: %w", err)
	}
	return ts, nil
}

// Claim implements workflow.Store in one transaction of two round trips. The first
// begins it and selects the first ready queued task of actorType, on the partial index,
// FOR UPDATE SKIP LOCKED, moving the queue's last poll to now (never back) in the same
// statement when there is none. The second, take applied, writes the task with the next
// version, moves the queue's last poll, and commits; or, when there was no task, only
// commits. Concurrent claims, from any process, lock different tasks and never wait for
// each other but on the queue's row, which a claim that found a task holds only from its
// last write to its commit, in one message. Changes take makes to ID or Version are
// ignored; take may be nil.
//
// now is truncated to the microsecond, as the times stored.
func (s *Store) Claim(ctx context.Context, actorType string, now time.Time, take func(*workflow.Task)) (workflow.Task, bool, error) {
	if err := ctx.Err(); err != nil {
		return workflow.Task{}, false, fmt.Errorf("pgstore: claim %s: %w", actorType, err)
	}
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return workflow.Task{}, false, fmt.Errorf("pgstore: claim %s: %w", actorType, err)
	}
	defer c.Release() // a connection left in a transaction is closed, not reused
	t, ok, err := s.claim(ctx, c.Conn(), actorType, pgschema.In(now), take)
	if err != nil {
		if c.Conn().PgConn().TxStatus() != 'I' && ctx.Err() == nil {
			_, _ = c.Exec(ctx, "rollback")
		}
		return workflow.Task{}, false, fmt.Errorf("pgstore: claim %s: %w", actorType, err)
	}
	return t, ok, nil
}

// claim runs Claim's transaction on c with explicit begin and commit, so that each
// travels in the batch of the statements before or after it; pgx.Tx would spend a round
// trip on each. On an error it may leave c in the transaction, for the caller to roll
// back.
func (s *Store) claim(ctx context.Context, c *pgx.Conn, actorType string, now time.Time, take func(*workflow.Task)) (workflow.Task, bool, error) {
	b := &pgx.Batch{}
	b.Queue("begin")
	b.Queue(s.sql.claimTask, actorType, now)
	br := c.SendBatch(ctx, b)
	_, err := br.Exec()
	var t workflow.Task
	if err == nil {
		t, err = scanTask(br.QueryRow())
	}
	if cerr := br.Close(); err == nil || (errors.Is(err, pgx.ErrNoRows) && cerr != nil) {
		err = cerr
	}
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		// The statement moved the last poll; the commit keeps it.
		return workflow.Task{}, false, committed(c.Exec(ctx, "commit"))
	case err != nil:
		return workflow.Task{}, false, err
	}

	id, version := t.ID, t.Version
	if take != nil {
		take(&t)
	}
	t.ID, t.Version = id, version
	w := &pgx.Batch{}
	w.Queue(s.sql.updateTask, append(taskArgs(t), version)...)
	w.Queue(s.sql.upsertQueue, actorType, now)
	w.Queue("commit")
	wr := c.SendBatch(ctx, w)
	tag, err := wr.Exec()
	if err == nil && tag.RowsAffected() != 1 {
		// Impossible while the row lock is held; a guard against a broken invariant.
		err = fmt.Errorf("task %s: version %d: %w", id, version, workflow.ErrConflict)
	}
	if err == nil {
		_, err = wr.Exec()
	}
	if err == nil {
		err = committed(wr.Exec())
	}
	if cerr := wr.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return workflow.Task{}, false, err
	}
	return storedTask(t, version+1), true, nil
}

// committed returns the error of a commit, or one if the server rolled back instead (a
// transaction already failed).
func committed(tag pgconn.CommandTag, err error) error {
	if err == nil && tag.String() != "COMMIT" {
		err = fmt.Errorf("commit: %s", tag)
	}
	return err
}

// LastPolled implements workflow.Store (the zero time: never).
func (s *Store) LastPolled(ctx context.Context, actorType string) (time.Time, error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, fmt.Errorf("pgstore: last poll of %s: %w", actorType, err)
	}
	var last time.Time
	err := s.pool.QueryRow(ctx, s.sql.lastPolled, actorType).Scan(&last)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return time.Time{}, nil
	case err != nil:
		return time.Time{}, fmt.Errorf("pgstore: last poll of %s: %w", actorType, err)
	}
	return pgschema.Out(last), nil
}
