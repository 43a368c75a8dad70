package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/feedkit/feedkit/internal/pgschema"
	"github.com/feedkit/feedkit/workflow"
)

// queryJSON is a workflow.Query as the jobs table keeps it (jsonb): a format of this
// package's own, so that renaming a field of workflow.Query does not lose stored jobs.
// Times are RFC 3339 in UTC, to the microsecond.
type queryJSON struct {
	Types       []string    `json:"types,omitempty"`
	States      []int       `json:"states,omitempty"` // not []ProcessState: a []uint8 would be base64
	CustomID    string      `json:"custom_id,omitempty"`
	ActorType   string      `json:"actor_type,omitempty"`
	StartedFrom *time.Time  `json:"started_from,omitempty"`
	StartedTo   *time.Time  `json:"started_to,omitempty"`
	Limit       int         `json:"limit,omitempty"`
	After       *cursorJSON `json:"after,omitempty"`
}

type cursorJSON struct {
	StartedAt time.Time `json:"started_at"`
	ID        string    `json:"id"`
}

func encodeQuery(q workflow.Query) ([]byte, error) {
	j := queryJSON{Types: q.Types, CustomID: q.CustomID, ActorType: q.ActorType,
		StartedFrom: pgschema.InNull(q.StartedFrom), StartedTo: pgschema.InNull(q.StartedTo), Limit: q.Limit}
	for _, st := range q.States {
		j.States = append(j.States, int(st))
	}
	if q.After != nil {
		j.After = &cursorJSON{StartedAt: pgschema.In(q.After.StartedAt), ID: q.After.ID}
	}
	return json.Marshal(j)
}

func decodeQuery(b []byte) (workflow.Query, error) {
	var j queryJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return workflow.Query{}, err
	}
	q := workflow.Query{Types: j.Types, CustomID: j.CustomID, ActorType: j.ActorType,
		StartedFrom: pgschema.OutNull(j.StartedFrom), StartedTo: pgschema.OutNull(j.StartedTo), Limit: j.Limit}
	for _, st := range j.States {
		q.States = append(q.States, workflow.ProcessState(st))
	}
	if j.After != nil {
		q.After = &workflow.Cursor{StartedAt: pgschema.Out(j.After.StartedAt), ID: j.After.ID}
	}
	return q, nil
}

// storedQuery returns q as a write stores it.
func storedQuery(q workflow.Query) workflow.Query {
	q.Types, q.States = slices.Clone(q.Types), slices.Clone(q.States)
	q.StartedFrom, q.StartedTo = pgschema.In(q.StartedFrom), pgschema.In(q.StartedTo)
	if q.After != nil {
		q.After = &workflow.Cursor{StartedAt: pgschema.In(q.After.StartedAt), ID: q.After.ID}
	}
	return q
}

// jobArgs returns j's columns as arguments, in the order of jobColumns.
func jobArgs(j workflow.Job) ([]any, error) {
	query, err := encodeQuery(j.Query)
	if err != nil {
		return nil, err
	}
	var cursorAt *time.Time
	var cursorID *string
	if j.Cursor != nil {
		at := pgschema.In(j.Cursor.StartedAt)
		cursorAt, cursorID = &at, &j.Cursor.ID
	}
	return []any{j.ID, string(query), j.Priority, j.Rate, int16(j.State), j.Stage, cursorAt, cursorID,
		j.Total, j.Done, j.Repaired, j.Errors, pgschema.In(j.CreatedAt), pgschema.In(j.UpdatedAt), pgschema.InNull(j.LeasedUntil), j.Batch, j.BatchBroken}, nil
}

// storedJob returns j as a write stores it, with version v.
func storedJob(j workflow.Job, v int64) workflow.Job {
	j.Query = storedQuery(j.Query)
	j.Priority = slices.Clone(j.Priority)
	j.Batch, j.BatchBroken = slices.Clone(j.Batch), slices.Clone(j.BatchBroken)
	if j.Cursor != nil {
		j.Cursor = &workflow.Cursor{StartedAt: pgschema.In(j.Cursor.StartedAt), ID: j.Cursor.ID}
	}
	j.CreatedAt, j.UpdatedAt, j.LeasedUntil = pgschema.In(j.CreatedAt), pgschema.In(j.UpdatedAt), pgschema.In(j.LeasedUntil)
	j.Version = v
	return j
}

// scanJob scans the columns of selectSQL(jobs).
func scanJob(row scanner) (workflow.Job, error) {
	var (
		j                    workflow.Job
		query                []byte
		state                int16
		cursorAt             *time.Time
		cursorID             *string
		createdAt, updatedAt time.Time
		leasedUntil          *time.Time
	)
	err := row.Scan(&j.ID, &query, &j.Priority, &j.Rate, &state, &j.Stage, &cursorAt, &cursorID,
		&j.Total, &j.Done, &j.Repaired, &j.Errors, &createdAt, &updatedAt, &leasedUntil, &j.Batch, &j.BatchBroken, &j.Version)
	if err != nil {
		return workflow.Job{}, err
	}
	if j.Query, err = decodeQuery(query); err != nil {
		return workflow.Job{}, fmt.Errorf("job %s: query: %w", j.ID, err)
	}
	j.State = workflow.JobState(state)
	if cursorID != nil {
		j.Cursor = &workflow.Cursor{StartedAt: pgschema.OutNull(cursorAt), ID: *cursorID}
	}
	j.CreatedAt, j.UpdatedAt, j.LeasedUntil = pgschema.Out(createdAt), pgschema.Out(updatedAt), pgschema.OutNull(leasedUntil)
	return j, nil
}

// CreateJob implements workflow.Store: it inserts j with version 1 (workflow.ErrExists
// if its id is taken).
func (s *Store) CreateJob(ctx context.Context, j workflow.Job) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("pgstore: create job %s: %w", j.ID, err)
	}
	args, err := jobArgs(j)
	if err != nil {
		return fmt.Errorf("pgstore: create job %s: %w", j.ID, err)
	}
	return s.insert(ctx, "job", j.ID, s.sql.insertJob, args)
}

// Job implements workflow.Store (workflow.ErrNotFound).
func (s *Store) Job(ctx context.Context, id string) (workflow.Job, error) {
	if err := ctx.Err(); err != nil {
		return workflow.Job{}, fmt.Errorf("pgstore: job %s: %w", id, err)
	}
	j, err := scanJob(s.pool.QueryRow(ctx, s.sql.selectJob, id))
	if err != nil {
		return workflow.Job{}, fmt.Errorf("pgstore: job %s: %w", id, notFound(err))
	}
	return j, nil
}

// UpdateJob implements workflow.Store: it writes j if the stored version is j.Version
// (workflow.ErrConflict otherwise, workflow.ErrNotFound if there is none) and returns it
// as stored, with the next version.
func (s *Store) UpdateJob(ctx context.Context, j workflow.Job) (workflow.Job, error) {
	if err := ctx.Err(); err != nil {
		return workflow.Job{}, fmt.Errorf("pgstore: update job %s: %w", j.ID, err)
	}
	args, err := jobArgs(j)
	if err != nil {
		return workflow.Job{}, fmt.Errorf("pgstore: update job %s: %w", j.ID, err)
	}
	if err := s.update(ctx, "job", j.ID, j.Version, s.sql.updateJob, s.sql.existsJob, args); err != nil {
		return workflow.Job{}, err
	}
	return storedJob(j, j.Version+1), nil
}

// Jobs implements workflow.Store: every job, by CreatedAt (ties by id).
func (s *Store) Jobs(ctx context.Context) ([]workflow.Job, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("pgstore: jobs: %w", err)
	}
	rows, _ := s.pool.Query(ctx, s.sql.allJobs)
	js, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (workflow.Job, error) { return scanJob(r) })
	if err != nil {
		return nil, fmt.Errorf("pgstore: jobs: %w", err)
	}
	return js, nil
}
