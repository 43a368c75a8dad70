package workflow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/feedkit/feedkit/internal/pagesize"
)

// Errors of a Store, matched with errors.Is.
var (
	// ErrNotFound: no entity with that id.
	ErrNotFound = errors.New("workflow: not found")
	// ErrExists: an entity with that id exists already.
	ErrExists = errors.New("workflow: already exists")
	// ErrConflict: the entity changed since it was read (its version moved); read it
	// again and decide again.
	ErrConflict = errors.New("workflow: changed concurrently")
	// ErrInvalidLimit: a page size (Query.Limit, the limit of a Due method) below 0 or
	// above MaxLimit.
	ErrInvalidLimit = pagesize.ErrInvalid
)

// The page sizes, the same across feedkit: a Limit of 0 means DefaultLimit, one from 1
// to MaxLimit is taken as given, and any other is refused with ErrInvalidLimit. None
// means "all": a caller that needs everything pages through (a count comes with every
// page of SearchProcesses).
const (
	DefaultLimit = pagesize.Default
	MaxLimit     = pagesize.Max
)

// ResolveLimit returns the page size limit stands for (DefaultLimit for 0), or an error
// wrapping ErrInvalidLimit that names field (e.g. "Query.Limit") and the value: the rule
// every Store applies to SearchProcesses and the Due methods.
func ResolveLimit(field string, limit int) (int, error) {
	n, err := pagesize.Resolve(field, limit)
	if err != nil {
		return 0, fmt.Errorf("workflow: %w", err)
	}
	return n, nil
}

// Store keeps processes, tasks and graphs. Every change is one conditional write: an
// update carries the version it read, succeeds only if the stored entity still has it,
// and stores the next version; so two engines, or an engine and the recovery service,
// never both apply a change decided on the same state. The queue of an actor type is
// not a separate structure: it is the type's queued tasks in ReadyAt order, so a task is
// never "in the queue" and "not queued" at once.
//
// Versions: a Create stores version 1 whatever it is given; an update stores the given
// version plus one. Times are compared by wall clock (a database keeps no monotonic
// reading).
//
// Strings that name things (ids, types, custom ids, idempotency keys, request digests,
// passes, actor types) must be valid UTF-8 without NUL: a database keeps them as text.
// Under concurrency Claim may pass over a task another writer holds at that instant, so
// "earliest" holds among the tasks free to take; none is lost or taken twice.
//
// Implementations: NewMemoryStore and workflow/pgstore; workflowtest.TestStore checks
// any.
type Store interface {
	// CreateProcess saves a new process (ErrExists if its id is taken, or its
	// IdempotencyKey, not empty, by another process of its Type).
	CreateProcess(ctx context.Context, p Process) error
	// CreateOrGetProcess saves p, a new process, unless its IdempotencyKey is not empty
	// and a process of its Type holds that key: then it saves nothing and returns that
	// process, with created false. The look-up and the save are one atomic step, so of
	// calls racing on one key exactly one creates the process and every other gets it.
	// A key is held for ever, whatever the state of its process. ErrExists if p's id is
	// taken (by a process of another key, or of none).
	CreateOrGetProcess(ctx context.Context, p Process) (got Process, created bool, err error)
	// Process returns a process (ErrNotFound).
	Process(ctx context.Context, id string) (Process, error)
	// UpdateProcess writes p if the stored version is p.Version (ErrConflict otherwise)
	// and returns it with the next version; ErrExists, and nothing written, if that would
	// give it a (Type, IdempotencyKey) another process holds.
	UpdateProcess(ctx context.Context, p Process) (Process, error)

	// CreateTasks saves new tasks, all or none; one whose id exists is left as it is and
	// not an error, so that a release broken off half-way can be completed.
	CreateTasks(ctx context.Context, ts []Task) error
	// Task returns a task (ErrNotFound).
	Task(ctx context.Context, id string) (Task, error)
	// UpdateTask writes t if the stored version is t.Version (ErrConflict otherwise) and
	// returns it with the next version.
	UpdateTask(ctx context.Context, t Task) (Task, error)
	// ProcessTasks returns every task of a process, by id; none (and no error) for a
	// process unknown.
	ProcessTasks(ctx context.Context, processID string) ([]Task, error)

	// CreateGraph saves a process's new graph (ErrExists if it has one).
	CreateGraph(ctx context.Context, g Graph) error
	// Graph returns a process's graph (ErrNotFound).
	Graph(ctx context.Context, processID string) (Graph, error)
	// UpdateGraph writes g if the stored version is g.Version (ErrConflict otherwise)
	// and returns it with the next version.
	UpdateGraph(ctx context.Context, g Graph) (Graph, error)

	// Claim takes the queued task of actorType with the earliest ReadyAt not after now
	// (ties by ID), applies take to it and stores it with the next version, in one atomic
	// step: two claims never take the same task. take runs inside that step and must not
	// call the store. Claim records now as the queue's last poll (which never moves back)
	// whether or not a task was ready; ok is false when none was.
	Claim(ctx context.Context, actorType string, now time.Time, take func(*Task)) (t Task, ok bool, err error)
	// LastPolled returns when actorType's queue was last polled (zero: never).
	LastPolled(ctx context.Context, actorType string) (time.Time, error)

	// DueTasks, DueGraphs and DueProcesses return up to limit entities whose non-zero
	// RecoveryTime is not after now, earliest first (ties by ID), whatever their state:
	// the recovery service's scans, on an index of RecoveryTime. They change nothing; the
	// caller's update moves an entity's RecoveryTime on. limit follows the page-size rule
	// (ResolveLimit): 0 means DefaultLimit; below 0 or above MaxLimit is refused.
	DueTasks(ctx context.Context, now time.Time, limit int) ([]Task, error)
	DueGraphs(ctx context.Context, now time.Time, limit int) ([]Graph, error)
	DueProcesses(ctx context.Context, now time.Time, limit int) ([]Process, error)

	// SearchProcesses returns the processes q selects, by StartedAt then ID, at most
	// q.Limit after q.After, and how many q selects in all (ignoring Limit and After).
	// q.Limit follows the page-size rule (ResolveLimit), as the Due methods' limit does.
	SearchProcesses(ctx context.Context, q Query) (ps []Process, total int, err error)

	// CreateJob saves a new mass recovery job (ErrExists if its id is taken).
	CreateJob(ctx context.Context, j Job) error
	// Job returns a job (ErrNotFound).
	Job(ctx context.Context, id string) (Job, error)
	// UpdateJob writes j if the stored version is j.Version (ErrConflict otherwise) and
	// returns it with the next version.
	UpdateJob(ctx context.Context, j Job) (Job, error)
	// Jobs returns every job, by CreatedAt.
	Jobs(ctx context.Context) ([]Job, error)
}
