package pgstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/feedkit/feedkit/internal/pgschema"
	"github.com/feedkit/feedkit/workflow"
)

// processArgs returns p's columns as arguments, in the order of processColumns.
func processArgs(p workflow.Process) []any {
	return []any{p.ID, p.Type, p.CustomID, int16(p.State), p.Start.ActorType, p.Start.Args,
		p.StartTask, pgschema.In(p.StartedAt), pgschema.InNull(p.RecoveryTime), []byte(p.Reason), p.Run,
		keyArg(p.IdempotencyKey), p.RequestDigest}
}

// keyArg is an idempotency key as stored: NULL for none, so that the unique index of
// (type, idempotency_key) holds only the keys given.
func keyArg(key string) *string {
	if key == "" {
		return nil
	}
	return &key
}

// storedProcess returns p as a write stores it, with version v: times truncated, in UTC,
// slices of its own.
func storedProcess(p workflow.Process, v int64) workflow.Process {
	p.Start.Args = slices.Clone(p.Start.Args)
	p.StartedAt, p.RecoveryTime = pgschema.In(p.StartedAt), pgschema.In(p.RecoveryTime)
	p.Version = v
	return p
}

// scanProcess scans the columns of selectSQL(processes).
func scanProcess(row scanner) (workflow.Process, error) {
	var (
		p         workflow.Process
		state     int16
		startedAt time.Time
		recovery  *time.Time
		reason    []byte
		key       *string
	)
	err := row.Scan(&p.ID, &p.Type, &p.CustomID, &state, &p.Start.ActorType, &p.Start.Args,
		&p.StartTask, &startedAt, &recovery, &reason, &p.Run, &key, &p.RequestDigest, &p.Version)
	if err != nil {
		return workflow.Process{}, err
	}
	if key != nil {
		p.IdempotencyKey = *key
	}
	p.Reason = string(reason)
	p.State = workflow.ProcessState(state)
	p.StartedAt, p.RecoveryTime = pgschema.Out(startedAt), pgschema.OutNull(recovery)
	return p, nil
}

// CreateProcess implements workflow.Store: it inserts p with version 1
// (workflow.ErrExists if its id is taken, or its idempotency key within its type).
func (s *Store) CreateProcess(ctx context.Context, p workflow.Process) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("pgstore: create process %s: %w", p.ID, err)
	}
	return s.insert(ctx, "process", p.ID, s.sql.insertProcess, processArgs(p))
}

// CreateOrGetProcess implements workflow.Store. With a key, the insert (ON CONFLICT DO
// NOTHING) and a select of the key's process travel in one batch, one round trip and
// one implicit transaction: when the insert meets the key, held by a process another
// transaction is saving, it waits for that transaction's end, and the select, under a
// snapshot of its own (READ COMMITTED, PostgreSQL's default), then reads that process.
// When the insert saved p, the select reads p as stored. Without a key it is
// CreateProcess.
func (s *Store) CreateOrGetProcess(ctx context.Context, p workflow.Process) (workflow.Process, bool, error) {
	if err := ctx.Err(); err != nil {
		return workflow.Process{}, false, fmt.Errorf("pgstore: create process %s: %w", p.ID, err)
	}
	if p.IdempotencyKey == "" {
		if err := s.CreateProcess(ctx, p); err != nil {
			return workflow.Process{}, false, err
		}
		return storedProcess(p, 1), true, nil
	}
	b := &pgx.Batch{}
	b.Queue(s.sql.insertProcess, processArgs(p)...)
	b.Queue(s.sql.selectProcessByKey, p.Type, p.IdempotencyKey)
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	tag, err := br.Exec()
	if err != nil {
		return workflow.Process{}, false, fmt.Errorf("pgstore: create process %s: %w", p.ID, err)
	}
	got, err := scanProcess(br.QueryRow())
	switch {
	case errors.Is(err, pgx.ErrNoRows) && tag.RowsAffected() == 0:
		// Not saved, and no process holds the key: the id is taken.
		return workflow.Process{}, false, fmt.Errorf("pgstore: create process %s: %w", p.ID, workflow.ErrExists)
	case err != nil:
		return workflow.Process{}, false, fmt.Errorf("pgstore: create process %s: %w", p.ID, err)
	}
	if err := br.Close(); err != nil {
		return workflow.Process{}, false, fmt.Errorf("pgstore: create process %s: %w", p.ID, err)
	}
	return got, tag.RowsAffected() == 1, nil
}

// Process implements workflow.Store (workflow.ErrNotFound).
func (s *Store) Process(ctx context.Context, id string) (workflow.Process, error) {
	if err := ctx.Err(); err != nil {
		return workflow.Process{}, fmt.Errorf("pgstore: process %s: %w", id, err)
	}
	p, err := scanProcess(s.pool.QueryRow(ctx, s.sql.selectProcess, id))
	if err != nil {
		return workflow.Process{}, fmt.Errorf("pgstore: process %s: %w", id, notFound(err))
	}
	return p, nil
}

// UpdateProcess implements workflow.Store: it writes p if the stored version is
// p.Version (workflow.ErrConflict otherwise, workflow.ErrNotFound if there is none,
// workflow.ErrExists if another process of its type holds its idempotency key) and
// returns it as stored, with the next version.
func (s *Store) UpdateProcess(ctx context.Context, p workflow.Process) (workflow.Process, error) {
	if err := ctx.Err(); err != nil {
		return workflow.Process{}, fmt.Errorf("pgstore: update process %s: %w", p.ID, err)
	}
	if err := s.update(ctx, "process", p.ID, p.Version, s.sql.updateProcess, s.sql.existsProcess, processArgs(p)); err != nil {
		return workflow.Process{}, err
	}
	return storedProcess(p, p.Version+1), nil
}

// DueProcesses implements workflow.Store, on the partial index of recovery_time.
func (s *Store) DueProcesses(ctx context.Context, now time.Time, limit int) ([]workflow.Process, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("pgstore: due processes: %w", err)
	}
	limit, err := workflow.ResolveLimit("limit", limit)
	if err != nil {
		return nil, fmt.Errorf("pgstore: due processes: %w", err)
	}
	rows, _ := s.pool.Query(ctx, s.sql.dueProcesses, pgschema.In(now), limit)
	ps, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (workflow.Process, error) { return scanProcess(r) })
	if err != nil {
		return nil, fmt.Errorf("pgstore: due processes: %w", err)
	}
	return ps, nil
}

// SearchProcesses implements workflow.Store: one statement selects the page, in
// (started_at, id) order from the keyset q.After, and another counts what q selects,
// both with the same filter; they travel in one batch. An ActorType is a semi-join on
// the tasks' process_id index.
func (s *Store) SearchProcesses(ctx context.Context, q workflow.Query) ([]workflow.Process, int, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, fmt.Errorf("pgstore: search processes: %w", err)
	}
	limit, err := workflow.ResolveLimit("Query.Limit", q.Limit)
	if err != nil {
		return nil, 0, fmt.Errorf("pgstore: search processes: %w", err)
	}
	var (
		where []string
		args  []any
	)
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	if len(q.Types) > 0 {
		where = append(where, "p.type = ANY("+arg(q.Types)+"::text[])")
	}
	if len(q.States) > 0 {
		states := make([]int16, len(q.States))
		for i, st := range q.States {
			states[i] = int16(st)
		}
		where = append(where, "p.state = ANY("+arg(states)+"::smallint[])")
	}
	if q.CustomID != "" {
		where = append(where, "p.custom_id = "+arg(q.CustomID))
	}
	if q.ActorType != "" {
		where = append(where, "EXISTS (SELECT 1 FROM "+s.sql.tasks+" t WHERE t.process_id = p.id AND t.actor_type = "+arg(q.ActorType)+")")
	}
	if !q.StartedFrom.IsZero() {
		where = append(where, "p.started_at >= "+arg(pgschema.In(q.StartedFrom)))
	}
	if !q.StartedTo.IsZero() {
		where = append(where, "p.started_at < "+arg(pgschema.In(q.StartedTo)))
	}
	filter := ""
	if len(where) > 0 {
		filter = " WHERE " + strings.Join(where, " AND ")
	}
	countSQL, countArgs := `SELECT count(*) FROM `+s.sql.processes+` p`+filter, slices.Clone(args)

	page := where
	if q.After != nil {
		page = append(page, "(p.started_at, p.id) > ("+arg(pgschema.In(q.After.StartedAt))+"::timestamptz, "+arg(q.After.ID)+"::text)")
	}
	pageSQL := `SELECT ` + s.sql.processColumns + `, p.version FROM ` + s.sql.processes + ` p`
	if len(page) > 0 {
		pageSQL += " WHERE " + strings.Join(page, " AND ")
	}
	pageSQL += " ORDER BY p.started_at, p.id LIMIT " + arg(limit)

	b := &pgx.Batch{}
	b.Queue(pageSQL, args...)
	b.Queue(countSQL, countArgs...)
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	rows, _ := br.Query()
	ps, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (workflow.Process, error) { return scanProcess(r) })
	if err != nil {
		return nil, 0, fmt.Errorf("pgstore: search processes: %w", err)
	}
	var total int64
	if err := br.QueryRow().Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("pgstore: search processes: count: %w", err)
	}
	if err := br.Close(); err != nil {
		return nil, 0, fmt.Errorf("pgstore: search processes: %w", err)
	}
	return ps, int(total), nil
}
