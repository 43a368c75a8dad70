package workflow

// Observer is told what an Engine does, as it happens, so that a metrics library can
// count it (Config.Observer; the otelfeedkit and promfeedkit modules implement it).
// How many processes are in each state is a level, not an event: read it with
// CountByState when the metrics are collected.
//
// An engine tells only what it did: a change is told once its conditional write to the
// store was applied, so that of engines racing for one change only the one whose write
// won tells it, and a refused decision (ErrDecided, ErrStalePass) is not told. The
// Counters of each engine count the same timeouts and repairs.
//
// The arguments are process types, actor types and small enums: the names the program
// gives, few and fixed, fit for a metric's labels. No process or task id is passed.
//
// Its methods are called on the goroutines of the engine's callers and of Run and
// RunJobs, concurrently, with no lock of the engine held: they must be quick, must not
// block and must not call back into the engine.
type Observer interface {
	// WorkflowProcessStarted is told when Start creates a process; not when a start with
	// an IdempotencyKey gets back the process that holds the key.
	WorkflowProcessStarted(processType string)
	// WorkflowProcessRestarted is told when Restart runs a process again, from the
	// state it was in (running, or one it ended in); a process restarted because it was
	// broken (ProcessPrefs.RestartBroken) is told so too.
	WorkflowProcessRestarted(processType string, from ProcessState)
	// WorkflowProcessEnded is told when a running process ends: finished, failed,
	// aborted or broken.
	WorkflowProcessEnded(processType string, state ProcessState)

	// WorkflowTaskPolled is told when Poll hands a task to an actor; not for a poll
	// that finds none, nor for a task it fails instead (past its task timeout, or of a
	// process that is over).
	WorkflowTaskPolled(actorType string)
	// WorkflowTaskReleased is told when Release accepts an actor's decision for a task,
	// with what became of the task, even when what follows from it is left to recovery
	// (ErrNotApplied).
	WorkflowTaskReleased(actorType string, result ReleaseResult)
	// WorkflowTaskTimeout is told when the engine acts on a task's timeout: a task
	// taken back from its actor after its work timeout (queued again, or failed when
	// its actor type does not restart), or failed at its task timeout.
	WorkflowTaskTimeout(kind TimeoutKind, actorType string)
	// WorkflowProcessTimeout is told when the recovery service finds a process still
	// running past its ProcessTimeout, and again after each further ProcessTimeout.
	WorkflowProcessTimeout(processType string)

	// WorkflowRepaired is told of each repair the recovery service, or a mass recovery
	// job, makes to a process whose entities a crash or a store failure left
	// inconsistent. A process that cannot be repaired is told as ended broken instead
	// (WorkflowProcessEnded), or restarted (RepairProcessRestarted).
	WorkflowRepaired(processType string, kind RepairKind)
}

// ReleaseResult says what an accepted decision made of its task.
type ReleaseResult uint8

// The results of an accepted decision.
const (
	ReleaseFinished ReleaseResult = iota // the decision succeeded: the task finished
	ReleaseRetried                       // the decision failed, and the task is queued again by its RetryPolicy
	ReleaseFailed                        // the decision failed with no attempt left: the task failed
)

// String names the result in lower case ("finished", "retried", "failed"), as a
// metric's label.
func (r ReleaseResult) String() string {
	switch r {
	case ReleaseFinished:
		return "finished"
	case ReleaseRetried:
		return "retried"
	case ReleaseFailed:
		return "failed"
	}
	return "unknown"
}

// TimeoutKind says which timeout of a task passed (ActorPrefs).
type TimeoutKind uint8

// The timeouts of a task.
const (
	TimeoutWork TimeoutKind = iota // WorkTimeout: the actor did not answer in time
	TimeoutTask                    // TaskTimeout: the task was not done in time from its first queueing
)

// String names the kind in lower case ("work", "task"), as a metric's label.
func (k TimeoutKind) String() string {
	switch k {
	case TimeoutWork:
		return "work"
	case TimeoutTask:
		return "task"
	}
	return "unknown"
}

// RepairKind says what a repair did (see the package documentation, "Automatic
// recovery").
type RepairKind uint8

// The repairs of a process.
const (
	// RepairProcessBegun: its start broke off after it was saved, before its graph
	// was created; its graph and start task were created.
	RepairProcessBegun RepairKind = iota
	// RepairRestartCompleted: a restart broke off before the new run began; the graph
	// was moved to the new run and its start task created.
	RepairRestartCompleted
	// RepairDecisionApplied: a decision its task recorded had not reached the graph;
	// it was applied.
	RepairDecisionApplied
	// RepairTaskCreated: a task the graph lists was missing from the store; it was
	// created again from the decision that scheduled it. Told once per task; but a
	// store's CreateTasks leaves a task that exists and says nothing, so two engines
	// whose scans check one idle process at the same moment may both tell it.
	RepairTaskCreated
	// RepairProcessFailed: a task had failed for good and its process still ran; the
	// process was failed.
	RepairProcessFailed
	// RepairProcessFinished: every task was done and the process still ran; it was
	// finished.
	RepairProcessFinished
	// RepairProcessRestarted: a task the graph lists was in no store and no decision,
	// and ProcessPrefs.RestartBroken restarted the process from its start.
	RepairProcessRestarted
)

// String names the kind in lower case ("process_begun", "restart_completed",
// "decision_applied", "task_created", "process_failed", "process_finished",
// "process_restarted"), as a metric's label.
func (k RepairKind) String() string {
	switch k {
	case RepairProcessBegun:
		return "process_begun"
	case RepairRestartCompleted:
		return "restart_completed"
	case RepairDecisionApplied:
		return "decision_applied"
	case RepairTaskCreated:
		return "task_created"
	case RepairProcessFailed:
		return "process_failed"
	case RepairProcessFinished:
		return "process_finished"
	case RepairProcessRestarted:
		return "process_restarted"
	}
	return "unknown"
}
