// Package pgstore keeps a workflow.Store in PostgreSQL, so that several engines, in as
// many processes, share processes, tasks, graphs and queues. It runs on a
// *pgxpool.Pool (pgx v5) that the caller owns and closes.
//
// # Schema
//
// New creates the tables if they do not exist, in the schema the pool's search_path
// selects, with the table and index names prefixed by Options.TablePrefix (default
// "feedkit_workflow_"):
//
//	CREATE TABLE IF NOT EXISTS feedkit_workflow_processes (
//	    id               text        PRIMARY KEY,
//	    type             text        NOT NULL,
//	    custom_id        text        NOT NULL,
//	    state            smallint    NOT NULL,  -- workflow.ProcessState
//	    start_actor_type text        NOT NULL,  -- Start, the start task's spec
//	    start_args       bytea,
//	    start_task       text        NOT NULL,
//	    started_at       timestamptz NOT NULL,
//	    recovery_time    timestamptz,           -- NULL for the zero time: never
//	    reason           bytea       NOT NULL,  -- free text, any bytes (see Strings)
//	    run              integer     NOT NULL,
//	    idempotency_key  text,                  -- NULL for none
//	    request_digest   text        NOT NULL DEFAULT '',
//	    version          bigint      NOT NULL
//	);
//	-- UNIQUE processes (type, idempotency_key) WHERE idempotency_key IS NOT NULL
//	--                                                                 CreateOrGetProcess
//	-- processes (recovery_time, id) WHERE recovery_time IS NOT NULL  DueProcesses
//	-- processes (started_at, id)                                      SearchProcesses
//	-- processes (type, started_at, id)                                by type, paged
//	-- processes (custom_id)                                           by custom id
//
//	CREATE TABLE IF NOT EXISTS feedkit_workflow_tasks (
//	    id               text        PRIMARY KEY,
//	    process_id       text        NOT NULL,
//	    run              integer     NOT NULL,
//	    actor_type       text        NOT NULL,  -- Spec
//	    args             bytea,
//	    state            smallint    NOT NULL,  -- workflow.TaskState
//	    pass             text        NOT NULL,
//	    ready_at         timestamptz NOT NULL,
//	    recovery_time    timestamptz,           -- NULL for the zero time: never
//	    deadline         timestamptz,           -- NULL for the zero time: none
//	    attempts         integer     NOT NULL,
//	    result           bytea,
//	    error            bytea       NOT NULL,  -- free text, any bytes (see Strings)
//	    next             text[],                -- Next
//	    next_actor_types text[],                -- NextSpecs, one array per field
//	    next_args        bytea[],
//	    version          bigint      NOT NULL
//	);
//	-- tasks (actor_type, ready_at, id) WHERE state = 1 (queued)  Claim: the queues
//	-- tasks (recovery_time, id) WHERE recovery_time IS NOT NULL    DueTasks
//	-- tasks (process_id)                                           ProcessTasks, search by actor type
//
//	CREATE TABLE IF NOT EXISTS feedkit_workflow_graphs (
//	    process_id    text        PRIMARY KEY,
//	    run           integer     NOT NULL,
//	    not_finished  text[],
//	    finished      text[],
//	    changed_at    timestamptz NOT NULL,
//	    recovery_time timestamptz,
//	    version       bigint      NOT NULL
//	);
//	-- graphs (recovery_time, process_id) WHERE recovery_time IS NOT NULL  DueGraphs
//
//	CREATE TABLE IF NOT EXISTS feedkit_workflow_queues (
//	    actor_type  text        PRIMARY KEY,
//	    last_polled timestamptz NOT NULL
//	);
//
//	CREATE TABLE IF NOT EXISTS feedkit_workflow_jobs (
//	    id                text             PRIMARY KEY,
//	    query             jsonb            NOT NULL,  -- workflow.Query
//	    priority          text[],
//	    rate              double precision NOT NULL,
//	    state             smallint         NOT NULL,  -- workflow.JobState
//	    stage             integer          NOT NULL,
//	    cursor_started_at timestamptz,                -- Cursor; both NULL for none
//	    cursor_id         text,
//	    total             bigint           NOT NULL,
//	    done              bigint           NOT NULL,
//	    repaired          bigint           NOT NULL,
//	    errors            bigint           NOT NULL,
//	    created_at        timestamptz      NOT NULL,
//	    updated_at        timestamptz      NOT NULL,
//	    leased_until      timestamptz,                -- LeasedUntil; NULL for none
//	    batch             text[],                     -- Batch
//	    batch_broken      text[],                     -- BatchBroken
//	    version           bigint           NOT NULL
//	);
//	-- jobs (created_at, id)  Jobs
//
// The columns a later version added to a table are added to one an earlier version
// created (ALTER TABLE ... ADD COLUMN IF NOT EXISTS), and its indexes created (CREATE
// [UNIQUE] INDEX IF NOT EXISTS), so that an upgrade keeps its data: the processes of a
// table from before idempotency keys have none. The unique index is built in the
// migration's transaction, which reads the processes table once and holds its writes
// meanwhile: on a table of millions of processes, expect New to take seconds once.
//
// The statements run in one transaction under a transaction-level advisory lock, so
// that processes starting at the same moment do not trip over each other:
// PostgreSQL's CREATE TABLE IF NOT EXISTS is not safe against a concurrent creation of
// the same table. There are no foreign keys: the engine creates a process before its
// graph and tasks, and a store that refused an orphan would only turn a bug of the
// caller into a failed write that the recovery service retries for ever.
//
// # Writes
//
// Every update is one conditional statement, UPDATE ... SET ..., version = version + 1
// WHERE id = $1 AND version = $2; when it changes no row, a second read tells
// workflow.ErrNotFound from workflow.ErrConflict; an update that the unique index of
// keys refuses is workflow.ErrExists. A Create is an INSERT ... ON CONFLICT DO NOTHING:
// no row inserted is workflow.ErrExists (CreateTasks ignores it, as the contract says,
// and inserts all its tasks in one implicit transaction).
//
// CreateOrGetProcess sends the insert and a select of the key's process in one batch:
// one round trip, one implicit transaction. An insert that meets the key waits for the
// transaction that holds it to end; the select, under a snapshot of its own (READ
// COMMITTED, PostgreSQL's default isolation, which the store expects), then reads the
// process that holds the key, or the one just inserted. The unique index, not the
// store's code, makes two creations of one key impossible, from any number of
// processes, and from any other writer.
//
// Claim is one transaction of two round trips: the begin travels with a select of the
// first ready queued task of the actor type, on the partial index, FOR UPDATE SKIP
// LOCKED (so that concurrent claims, in any process, take different tasks and never
// wait for each other), which also moves the queue's last poll forward (GREATEST) when
// it finds none; take is applied in Go; the write of the task with the next version, the
// move of the last poll and the commit travel together. A queued task that a concurrent
// write holds locked is skipped, as if another claim had it.
//
// # Strings
//
// PostgreSQL's text holds valid UTF-8 without NUL bytes only. The free texts, a task's
// Error (an actor's words) and a process's Reason (which quotes it), are kept as bytea,
// so that any string round-trips and a decision is never refused for its wording. The
// ids, types, custom ids and passes are text, for the operator's psql: one that is not
// valid UTF-8, or holds a NUL, is refused with the database's error (SQLSTATE 22021).
//
// # Times
//
// PostgreSQL keeps timestamps to the microsecond: times are truncated to the
// microsecond on the way in (an update returns the entity as stored, so truncated), and
// come back in UTC. A zero RecoveryTime, Deadline or cursor time is stored as NULL; the
// other times are never NULL, a zero one being stored as 0001-01-01 UTC, which comes back
// as the zero time (a task with a zero ReadyAt is ready at once).
package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/feedkit/feedkit/internal/pgschema"
	"github.com/feedkit/feedkit/workflow"
)

// DefaultTablePrefix is the prefix of the table names when Options.TablePrefix is empty.
const DefaultTablePrefix = "feedkit_workflow_"

// Options configure a Store. The zero value is ready to use.
type Options struct {
	// TablePrefix is prepended to the table and index names: lower-case ASCII letters,
	// digits and underscores, not starting with a digit, at most 44 bytes (so that
	// every name stays within PostgreSQL's 63).
	// Empty means DefaultTablePrefix.
	TablePrefix string
}

// longestName is the longest name built from the prefix.
const longestName = "processes_custom_id"

// ErrInvalidOptions is returned, wrapped, by New for options that cannot be used.
var ErrInvalidOptions = pgschema.ErrInvalidOptions

// prefix validates o and returns the table prefix to use.
func (o Options) prefix() (string, error) {
	return pgschema.Prefix(o.TablePrefix, DefaultTablePrefix, longestName)
}

var _ workflow.Store = (*Store)(nil)

// Store is a workflow.Store in PostgreSQL tables. It is safe for concurrent use, and
// any number of Stores, in any number of processes, may share the tables.
type Store struct {
	pool *pgxpool.Pool
	sql  statements
}

// statements are the SQL texts of a Store, built once with its table names.
type statements struct {
	processes, tasks string // the tables' sanitized names, for the search

	insertProcess, selectProcess, updateProcess, existsProcess, dueProcesses string
	selectProcessByKey                                                       string
	insertTask, selectTask, updateTask, existsTask, dueTasks, processTasks   string
	claimTask, upsertQueue, lastPolled                                       string
	insertGraph, selectGraph, updateGraph, existsGraph, dueGraphs            string
	insertJob, selectJob, updateJob, existsJob, allJobs                      string
	processColumns                                                           string // prefixed with p., for the search
}

// The columns of each table, in the order of the arguments and the scans; the first is
// the key, and version, last, is not among them.
var (
	processColumns = []string{"id", "type", "custom_id", "state", "start_actor_type", "start_args",
		"start_task", "started_at", "recovery_time", "reason", "run", "idempotency_key", "request_digest"}
	taskColumns = []string{"id", "process_id", "run", "actor_type", "args", "state", "pass", "ready_at",
		"recovery_time", "deadline", "attempts", "result", "error", "next", "next_actor_types", "next_args"}
	graphColumns = []string{"process_id", "run", "not_finished", "finished", "changed_at", "recovery_time"}
	jobColumns   = []string{"id", "query", "priority", "rate", "state", "stage", "cursor_started_at", "cursor_id",
		"total", "done", "repaired", "errors", "created_at", "updated_at", "leased_until", "batch", "batch_broken"}
)

// New returns a store on pool, creating its tables (and indexes) when missing. The pool
// stays the caller's to close.
func New(ctx context.Context, pool *pgxpool.Pool, opts Options) (*Store, error) {
	prefix, err := opts.prefix()
	if err != nil {
		return nil, err
	}
	ident := func(name string) string { return pgx.Identifier{prefix + name}.Sanitize() }
	processes, tasks, graphs, queues, jobs := ident("processes"), ident("tasks"), ident("graphs"), ident("queues"), ident("jobs")
	err = migrate(ctx, pool, prefix,
		`CREATE TABLE IF NOT EXISTS `+processes+` (
			id               text        PRIMARY KEY,
			type             text        NOT NULL,
			custom_id        text        NOT NULL,
			state            smallint    NOT NULL,
			start_actor_type text        NOT NULL,
			start_args       bytea,
			start_task       text        NOT NULL,
			started_at       timestamptz NOT NULL,
			recovery_time    timestamptz,
			reason           bytea       NOT NULL,
			run              integer     NOT NULL,
			idempotency_key  text,
			request_digest   text        NOT NULL DEFAULT '',
			version          bigint      NOT NULL
		)`,
		// Added after the table's first version: the idempotency key. Its index is built
		// under the migration's lock; a table of the earlier version has no key yet, so
		// the index is empty, but building it reads the table once.
		`ALTER TABLE `+processes+` ADD COLUMN IF NOT EXISTS idempotency_key text,
			ADD COLUMN IF NOT EXISTS request_digest text NOT NULL DEFAULT ''`,
		`CREATE UNIQUE INDEX IF NOT EXISTS `+ident("processes_key")+` ON `+processes+` (type, idempotency_key) WHERE idempotency_key IS NOT NULL`,
		`CREATE INDEX IF NOT EXISTS `+ident("processes_recovery")+` ON `+processes+` (recovery_time, id) WHERE recovery_time IS NOT NULL`,
		`CREATE INDEX IF NOT EXISTS `+ident("processes_started")+` ON `+processes+` (started_at, id)`,
		`CREATE INDEX IF NOT EXISTS `+ident("processes_type")+` ON `+processes+` (type, started_at, id)`,
		`CREATE INDEX IF NOT EXISTS `+ident("processes_custom_id")+` ON `+processes+` (custom_id)`,
		`CREATE TABLE IF NOT EXISTS `+tasks+` (
			id               text        PRIMARY KEY,
			process_id       text        NOT NULL,
			run              integer     NOT NULL,
			actor_type       text        NOT NULL,
			args             bytea,
			state            smallint    NOT NULL,
			pass             text        NOT NULL,
			ready_at         timestamptz NOT NULL,
			recovery_time    timestamptz,
			deadline         timestamptz,
			attempts         integer     NOT NULL,
			result           bytea,
			error            bytea       NOT NULL,
			next             text[],
			next_actor_types text[],
			next_args        bytea[],
			version          bigint      NOT NULL
		)`,
		fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON %s (actor_type, ready_at, id) WHERE state = %d`,
			ident("tasks_queued"), tasks, workflow.TaskQueued),
		`CREATE INDEX IF NOT EXISTS `+ident("tasks_recovery")+` ON `+tasks+` (recovery_time, id) WHERE recovery_time IS NOT NULL`,
		`CREATE INDEX IF NOT EXISTS `+ident("tasks_process")+` ON `+tasks+` (process_id)`,
		`CREATE TABLE IF NOT EXISTS `+graphs+` (
			process_id    text        PRIMARY KEY,
			run           integer     NOT NULL,
			not_finished  text[],
			finished      text[],
			changed_at    timestamptz NOT NULL,
			recovery_time timestamptz,
			version       bigint      NOT NULL
		)`,
		`CREATE INDEX IF NOT EXISTS `+ident("graphs_recovery")+` ON `+graphs+` (recovery_time, process_id) WHERE recovery_time IS NOT NULL`,
		`CREATE TABLE IF NOT EXISTS `+queues+` (
			actor_type  text        PRIMARY KEY,
			last_polled timestamptz NOT NULL
		)`,
		`CREATE TABLE IF NOT EXISTS `+jobs+` (
			id                text             PRIMARY KEY,
			query             jsonb            NOT NULL,
			priority          text[],
			rate              double precision NOT NULL,
			state             smallint         NOT NULL,
			stage             integer          NOT NULL,
			cursor_started_at timestamptz,
			cursor_id         text,
			total             bigint           NOT NULL,
			done              bigint           NOT NULL,
			repaired          bigint           NOT NULL,
			errors            bigint           NOT NULL,
			created_at        timestamptz      NOT NULL,
			updated_at        timestamptz      NOT NULL,
			leased_until      timestamptz,
			batch             text[],
			batch_broken      text[],
			version           bigint           NOT NULL
		)`,
		// Added after the table's first version: a job's batch in hand.
		`ALTER TABLE `+jobs+` ADD COLUMN IF NOT EXISTS batch text[], ADD COLUMN IF NOT EXISTS batch_broken text[]`,
		`CREATE INDEX IF NOT EXISTS `+ident("jobs_created")+` ON `+jobs+` (created_at, id)`,
	)
	if err != nil {
		return nil, err
	}

	taskCols := columns("", taskColumns)
	var q statements
	q.processes, q.tasks = processes, tasks
	q.processColumns = columns("p.", processColumns)

	q.insertProcess = insertSQL(processes, processColumns)
	q.selectProcess = selectSQL(processes, processColumns) + ` WHERE id = $1`
	q.updateProcess = updateSQL(processes, processColumns)
	q.existsProcess = `SELECT EXISTS (SELECT 1 FROM ` + processes + ` WHERE id = $1)`
	q.selectProcessByKey = selectSQL(processes, processColumns) + ` WHERE type = $1 AND idempotency_key = $2`
	q.dueProcesses = selectSQL(processes, processColumns) + ` WHERE recovery_time IS NOT NULL AND recovery_time <= $1 ORDER BY recovery_time, id LIMIT $2`

	q.insertTask = insertSQL(tasks, taskColumns)
	q.selectTask = selectSQL(tasks, taskColumns) + ` WHERE id = $1`
	q.updateTask = updateSQL(tasks, taskColumns)
	q.existsTask = `SELECT EXISTS (SELECT 1 FROM ` + tasks + ` WHERE id = $1)`
	q.dueTasks = selectSQL(tasks, taskColumns) + ` WHERE recovery_time IS NOT NULL AND recovery_time <= $1 ORDER BY recovery_time, id LIMIT $2`
	q.processTasks = selectSQL(tasks, taskColumns) + ` WHERE process_id = $1 ORDER BY id`
	q.upsertQueue = `INSERT INTO ` + queues + ` AS q (actor_type, last_polled) VALUES ($1, $2)
		ON CONFLICT (actor_type) DO UPDATE SET last_polled = GREATEST(q.last_polled, EXCLUDED.last_polled)`
	// The claim's select; when it finds no task it moves the queue's last poll itself,
	// sparing a claim of an empty queue a round trip.
	q.claimTask = fmt.Sprintf(`WITH claimed AS (
			SELECT %s, version FROM %s WHERE actor_type = $1 AND state = %d AND ready_at <= $2
			ORDER BY ready_at, id LIMIT 1 FOR UPDATE SKIP LOCKED
		), polled AS (
			INSERT INTO %s AS q (actor_type, last_polled) SELECT $1, $2 WHERE NOT EXISTS (SELECT 1 FROM claimed)
			ON CONFLICT (actor_type) DO UPDATE SET last_polled = GREATEST(q.last_polled, EXCLUDED.last_polled)
		)
		SELECT * FROM claimed`, taskCols, tasks, workflow.TaskQueued, queues)
	q.lastPolled = `SELECT last_polled FROM ` + queues + ` WHERE actor_type = $1`

	q.insertGraph = insertSQL(graphs, graphColumns)
	q.selectGraph = selectSQL(graphs, graphColumns) + ` WHERE process_id = $1`
	q.updateGraph = updateSQL(graphs, graphColumns)
	q.existsGraph = `SELECT EXISTS (SELECT 1 FROM ` + graphs + ` WHERE process_id = $1)`
	q.dueGraphs = selectSQL(graphs, graphColumns) + ` WHERE recovery_time IS NOT NULL AND recovery_time <= $1 ORDER BY recovery_time, process_id LIMIT $2`

	q.insertJob = insertSQL(jobs, jobColumns)
	q.selectJob = selectSQL(jobs, jobColumns) + ` WHERE id = $1`
	q.updateJob = updateSQL(jobs, jobColumns)
	q.existsJob = `SELECT EXISTS (SELECT 1 FROM ` + jobs + ` WHERE id = $1)`
	q.allJobs = selectSQL(jobs, jobColumns) + ` ORDER BY created_at, id`
	return &Store{pool: pool, sql: q}, nil
}

// migrate creates the tables of prefix once, however many processes start at once.
func migrate(ctx context.Context, pool *pgxpool.Pool, prefix string, stmts ...string) error {
	if err := pgschema.Migrate(ctx, pool, "feedkit/workflow/pgstore: migrate "+prefix, stmts...); err != nil {
		return fmt.Errorf("pgstore: create tables %s*: %w", prefix, err)
	}
	return nil
}

// columns joins cols, each prefixed with qualifier.
func columns(qualifier string, cols []string) string {
	s := ""
	for i, c := range cols {
		if i > 0 {
			s += ", "
		}
		s += qualifier + c
	}
	return s
}

// selectSQL selects cols and the version from table.
func selectSQL(table string, cols []string) string {
	return `SELECT ` + columns("", cols) + `, version FROM ` + table
}

// insertSQL inserts cols from $1... with version 1, unless a unique key exists: the
// first column, or (processes) the type's idempotency key.
func insertSQL(table string, cols []string) string {
	vals := ""
	for i := range cols {
		vals += fmt.Sprintf("$%d, ", i+1)
	}
	return `INSERT INTO ` + table + ` (` + columns("", cols) + `, version) VALUES (` + vals + `1) ON CONFLICT DO NOTHING`
}

// updateSQL sets every column but the key from $2... and the next version where the key
// is $1 and the version the argument after the columns.
func updateSQL(table string, cols []string) string {
	set := ""
	for i, c := range cols[1:] {
		set += fmt.Sprintf("%s = $%d, ", c, i+2)
	}
	return fmt.Sprintf(`UPDATE %s SET %sversion = version + 1 WHERE %s = $1 AND version = $%d`, table, set, cols[0], len(cols)+1)
}

// scanner is a row to scan: pgx.Row or pgx.CollectableRow.
type scanner interface {
	Scan(dest ...any) error
}

// update runs a conditional update (args: the columns, then the version read) and, when
// it changed no row, tells a missing entity (workflow.ErrNotFound) from one whose version
// moved (workflow.ErrConflict) with existsSQL. An update refused by a unique index (a
// process given an idempotency key another holds) is workflow.ErrExists. what names the
// entity in errors.
func (s *Store) update(ctx context.Context, what string, id string, version int64, updateSQL, existsSQL string, args []any) error {
	tag, err := s.pool.Exec(ctx, updateSQL, append(args, version)...)
	if isUniqueViolation(err) {
		return fmt.Errorf("pgstore: update %s %s: %w: %w", what, id, workflow.ErrExists, err)
	}
	if err != nil {
		return fmt.Errorf("pgstore: update %s %s: %w", what, id, err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	var exists bool
	if err := s.pool.QueryRow(ctx, existsSQL, id).Scan(&exists); err != nil {
		return fmt.Errorf("pgstore: update %s %s: %w", what, id, err)
	}
	if !exists {
		return fmt.Errorf("pgstore: update %s %s: %w", what, id, workflow.ErrNotFound)
	}
	return fmt.Errorf("pgstore: update %s %s: version %d: %w", what, id, version, workflow.ErrConflict)
}

// insert runs an insert of one entity; no row inserted (the key exists) is
// workflow.ErrExists.
func (s *Store) insert(ctx context.Context, what, id, insertSQL string, args []any) error {
	tag, err := s.pool.Exec(ctx, insertSQL, args...)
	if err != nil {
		return fmt.Errorf("pgstore: create %s %s: %w", what, id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("pgstore: create %s %s: %w", what, id, workflow.ErrExists)
	}
	return nil
}

// uniqueViolation is PostgreSQL's SQLSTATE of a write that a unique index refused.
const uniqueViolation = "23505"

// isUniqueViolation reports whether err is PostgreSQL's unique_violation.
func isUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == uniqueViolation
}

// notFound turns pgx.ErrNoRows into workflow.ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return workflow.ErrNotFound
	}
	return err
}
