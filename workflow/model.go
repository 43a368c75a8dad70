package workflow

import (
	"fmt"
	"time"
)

// ProcessState is where a process stands.
type ProcessState uint8

// Process states. Only a Running process has tasks handed out.
const (
	ProcessRunning  ProcessState = iota + 1
	ProcessFinished              // every task done
	ProcessFailed                // a task failed for good
	ProcessAborted               // an operator aborted it
	ProcessBroken                // its entities are inconsistent and cannot be repaired
)

var processStateNames = map[ProcessState]string{ProcessRunning: "running", ProcessFinished: "finished",
	ProcessFailed: "failed", ProcessAborted: "aborted", ProcessBroken: "broken"}

func (s ProcessState) String() string {
	if n, ok := processStateNames[s]; ok {
		return n
	}
	return fmt.Sprintf("ProcessState(%d)", uint8(s))
}

// TaskState is where a task stands: queued → in progress → finished or failed.
type TaskState uint8

// Task states.
const (
	TaskQueued     TaskState = iota + 1 // waiting in its actor type's queue (from ReadyAt)
	TaskInProgress                      // handed to an actor, its decision awaited
	TaskFinished                        // decided
	TaskFailed                          // failed for good (retries exhausted, timeout)
)

var taskStateNames = map[TaskState]string{TaskQueued: "queued", TaskInProgress: "in progress",
	TaskFinished: "finished", TaskFailed: "failed"}

func (s TaskState) String() string {
	if n, ok := taskStateNames[s]; ok {
		return n
	}
	return fmt.Sprintf("TaskState(%d)", uint8(s))
}

// TaskSpec is a task to schedule: which actor type does it, with what arguments.
type TaskSpec struct {
	ActorType string
	Args      []byte
}

// Process is one run of a workflow: a graph of tasks from a start task.
type Process struct {
	ID   string
	Type string
	// CustomID is the caller's own label, searchable, and shared by as many processes as
	// the caller likes (a customer's id on each of its orders): it is no identity.
	CustomID string
	// IdempotencyKey, when not empty, names the process among those of its Type: a store
	// holds one process per (Type, IdempotencyKey), for ever, whatever its state, so that
	// a start repeated with the key gets the process back (see Engine.Start). Empty: the
	// process has none.
	IdempotencyKey string
	// RequestDigest is a digest of the start request that created the process with its
	// IdempotencyKey (its CustomID and Start, as first given; empty when there is no
	// key): kept apart from Start, which a restart from a task replaces, so that a start
	// of the key with other arguments is told from a retry of the first.
	RequestDigest string
	State         ProcessState
	// Start is the first task: kept on the process so that recovery can schedule it when
	// the start broke off after the process was saved.
	Start     TaskSpec
	StartTask string // the start task's id, chosen when the process is created
	StartedAt time.Time
	// RecoveryTime is when the recovery service must look at the process (zero: never).
	RecoveryTime time.Time
	Reason       string // why an operator restarted or aborted it, or why it is broken
	// Run counts the process's runs: 0 for the first, one more at each restart. Tasks and
	// the graph carry the run they belong to, so that a decision of an earlier run never
	// changes the graph of a later one.
	Run int
	// Version counts the changes; an update succeeds only on the version it read.
	Version int64
}

// Task is one piece of work of a process for an actor type, with its decision.
type Task struct {
	ID        string
	ProcessID string
	Run       int // the process run it belongs to
	Spec      TaskSpec
	State     TaskState
	// Pass is the key an actor's decision must carry when its actor type does not accept
	// the first decision: it changes each time the task is handed out, so that the
	// decision of an actor the task was taken back from is refused.
	Pass string
	// ReadyAt orders the queue: the task is handed out no sooner.
	ReadyAt time.Time
	// RecoveryTime is when the recovery service must look at the task: its work timeout
	// while in progress, its task timeout while queued (zero: never).
	RecoveryTime time.Time
	// Deadline is the task timeout's end (zero: none).
	Deadline time.Time
	Attempts int // times handed out
	// The decision: Result and Next when it succeeded, Error when it failed. Next lists
	// the tasks it schedules, with their ids fixed when the decision is accepted, so that a
	// release broken off half-way is completed from the task alone.
	Result    []byte
	Error     string
	Next      []string
	NextSpecs []TaskSpec
	Version   int64
}

// Graph is a process's progress: which of its tasks are not finished, which are.
type Graph struct {
	ProcessID   string
	Run         int // the process run it follows
	NotFinished []string
	Finished    []string
	ChangedAt   time.Time
	// RecoveryTime is when the recovery service must check the process for consistency:
	// pushed by every change, by the process type's idle timeout.
	RecoveryTime time.Time
	Version      int64
}

// Counters are the recovery service's counters, for monitoring.
type Counters struct {
	WorkTimeouts        uint64            // decisions taken back after their work timeout
	WorkTimeoutsByActor map[string]uint64 // the same, per actor type
	TaskTimeouts        uint64
	GraphsChecked       uint64
	GraphsRepaired      uint64
	ProcessesFinished   uint64 // finished by the process scan
	ProcessTimeouts     uint64 // processes still running past their process timeout
	ProcessesBroken     uint64
}

// Query selects processes for search and mass recovery. Zero fields select everything.
type Query struct {
	Types    []string       // any of these types
	States   []ProcessState // any of these states
	CustomID string
	// ActorType selects processes with a task of that actor type (of any run).
	ActorType string
	// StartedFrom (inclusive) and StartedTo (exclusive) bound the start time.
	StartedFrom, StartedTo time.Time
	// Limit is the page size: 0 means DefaultLimit (100), from 1 to MaxLimit (1000) is
	// taken as given, and any other is refused with ErrInvalidLimit. There is no "all":
	// the total comes with every page, and a caller that needs every process pages
	// through. After continues a search after that process, in the order of the
	// results: StartedAt, then ID, ascending.
	Limit int
	After *Cursor
}

// Cursor is a position in search results: the last process of the previous page.
type Cursor struct {
	StartedAt time.Time
	ID        string
}

// JobState is where a mass recovery job stands.
type JobState uint8

// Job states.
const (
	JobRunning JobState = iota + 1
	JobPaused
	JobDone
)

var jobStateNames = map[JobState]string{JobRunning: "running", JobPaused: "paused", JobDone: "done"}

func (s JobState) String() string {
	if n, ok := jobStateNames[s]; ok {
		return n
	}
	return fmt.Sprintf("JobState(%d)", uint8(s))
}

// Job is an operator's mass recovery: check, and repair, the processes a query selects,
// the types in Priority order first, at most Rate per second. Its progress is saved as it
// goes, so that it resumes where it was after a restart.
type Job struct {
	ID       string
	Query    Query
	Priority []string // process types to check first, in this order; the rest after
	Rate     float64  // processes per second; 0: no limit
	State    JobState
	// Stage is the index in Priority being worked (len(Priority): the rest), and Cursor
	// the last process taken in it (into Batch).
	Stage  int
	Cursor *Cursor
	// Batch is the batch in hand: the ids of the processes it checks, saved (with Stage
	// and Cursor already past them) before the first of them is checked, and emptied
	// when its counts are saved. BatchBroken holds those of Batch that needed repair
	// when the batch was taken, before any was repaired. An engine that takes over the
	// job from one that died in the middle of a batch checks the same processes again,
	// and counts as repaired those the dead engine found broken, though its repair left
	// the second check nothing to do: each process of a batch is counted once, whatever
	// the point where the first engine stopped.
	Batch, BatchBroken []string
	// Progress.
	Total, Done, Repaired, Errors int
	CreatedAt, UpdatedAt          time.Time
	// LeasedUntil is when the engine working the job's current batch gives it up if it
	// has not saved it by then (zero: nobody works it): other engines leave it alone
	// until then, so a batch is checked, counted and paced once.
	LeasedUntil time.Time
	Version     int64
}
