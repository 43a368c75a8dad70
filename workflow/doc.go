// Package workflow runs durable processes of tasks that actors poll and decide, and
// repairs them when things break: an actor takes a task and never answers, the store is
// briefly unavailable, a repair half done, a process stuck.
//
// # Model
//
// A Process runs from a start task; each Task is done by an actor type and, when
// decided, may schedule more tasks; a process's Graph holds which tasks are not finished
// and which are. A task goes queued → in progress → finished or failed. The queue of an
// actor type is its queued tasks in ReadyAt order, not a separate structure, so a task
// cannot be queued without being in the queue: there is no such state to repair. A task handed
// out belongs to its process's current run and is handed out only while the process runs;
// ending a process other than by finishing it cancels its unfinished tasks.
//
// # Atomic transitions
//
// Every entity has a version; every change is one conditional write that succeeds only
// on the version it read (Store), so two engines, or an engine and the recovery service,
// never both apply a change decided on the same state. A decision is accepted by one such
// write on its task, which records the decision whole (result, and the ids and specs of
// the tasks it schedules); the graph, the next tasks and the process's end follow, each
// tolerating having been done, so that whatever breaks off is completed later from the
// task alone. A conflict means another writer made progress, so a write that meets one
// is read again and retried until it is applied (or its context ends), with no budget
// that many sibling decisions at once could use up; Release returns nil only when the
// decision reached the graph, its next tasks and its process's end (ErrNotApplied
// otherwise).
//
// # Idempotent starts
//
// StartRequest.IdempotencyKey makes a start safe to repeat: a starter that restarts, or
// receives the order that starts a process twice, starts again with the same key (the
// order's id, say) and gets the process of the first start back, with Start's created
// false; of starters racing on one key, in one engine or many, exactly one creates the
// process. The key is unique per process type, in the store (PostgreSQL: a unique
// index on (type, idempotency_key)), and the creation is an insert-or-get in one
// atomic step (Store.CreateOrGetProcess). An empty key is no key: every such start is
// a new process.
//
// The key is not CustomID, made unique: a custom id is the caller's searchable label,
// which any number of processes may share (a customer's id on each of its orders), and
// making it unique would break those who use it so. The key is a field of its own.
//
// A key is held for ever, whatever becomes of its process: a finished, failed or
// aborted process still answers its key, so that a late retry never starts the work a
// second time; to run it again, an operator restarts the process (Restart keeps its
// key, and the process keeps answering it). A start must repeat the request that
// created the process: the same key with another CustomID or Start is refused with
// ErrKeyReused, naming the key and the process that holds it, as two pieces of work
// given one key are a bug in the caller's keys, not a retry. The comparison is with
// the process's RequestDigest, a digest of the first request, since a restart from a
// task replaces the process's Start.
//
// The key is saved with the process, in the write that creates it, so there is no
// window in which a process exists without its key: a start broken off after that write
// (its graph and start task not created) leaves a process that the next start of the
// key gets back, and begins at once; without one, the recovery service begins it after
// its idle timeout, as any start broken off.
//
// # Automatic recovery
//
// Each timeout sets the RecoveryTime of its entity (a task's work timeout, or its task
// timeout, that of the task; a process type's idle timeout that of the process's graph;
// its process timeout that of the process), and RecoverDue (Run calls it as it begins
// and every ScanInterval) reads the entities past it, in batches, on an index:
//
//   - a task in progress past its work timeout is taken back, queued again with a new Pass
//     (so that the late decision of the actor it was taken from can be refused), and
//     counted, overall and per actor type; or failed, when its actor type does not restart;
//   - a graph idle past its process type's idle timeout is checked: a decision not applied
//     is applied, a task the graph lists but the store lacks is created again from the
//     decision that scheduled it (or, when none did, marks the process broken, or restarts
//     it with ProcessPrefs.RestartBroken), a failed task fails the process. A queued task
//     is left waiting: it is in its queue by being queued, so it cannot be queued but
//     missing from the queue, and when nobody polls the queue (Store.LastPolled tells)
//     the actors are missing and queuing again would not help;
//   - a process past its recovery time whose start broke off is begun; one with nothing
//     left is finished; one running past its process timeout is counted.
//
// A new process is saved with an early recovery time (its idle timeout): Start does the
// minimum, and if creating its graph or start task fails, the recovery service does it.
//
// A test of these rules moves a fake clock (Config.Clock, package clock/clocktest) past a
// timeout and calls Flush, which returns once Run has made its pass at that time.
//
// By default an actor type accepts the first decision for a task, has a minute for it,
// and gets back in the queue a task whose work timeout passed (AcceptFirst true,
// WorkTimeout 1 min, RestartAfterWorkTimeout true, TaskTimeout off,
// ForceFinishAfterTaskTimeout false); a RetryPolicy (attempts, capped exponential
// backoff) retries a failed decision.
//
// # Operator tools
//
// Search selects processes by type, state, custom id, actor type and start time, with a
// count and keyset pages. A page size follows feedkit's one rule: Limit 0 means
// DefaultLimit (100), 1 to MaxLimit (1000) is taken as given, and a negative size or
// one above the maximum is refused with ErrInvalidLimit naming the field, never clamped;
// nothing means "all" (the count comes with every page, and the jobs page through). Restart runs a process again from its start or from one of its
// tasks, recording why: the current run's unfinished tasks are failed first and the run
// number goes up, so no decision of the old run reaches the new one. Abort stops a
// process. A mass recovery Job (StartJob, StepJob, RunJobs) checks and repairs the
// processes a query selects, chosen types first, at a rate; its progress (total, done,
// repaired, errors, and where it is) is saved after every batch, so it survives a
// restart and may be paused and resumed. A batch is saved before it is checked, with the
// processes found broken, so that an engine that takes over from one that died in its
// middle checks the same processes and counts each once.
//
// # Observing
//
// Config.Observer is told, for metrics, of each process started, restarted and ended
// (with its state), each task polled and each decision accepted (finished, retried or
// failed), each work or task timeout by actor type, each process timeout, and each
// repair by kind; its arguments are process types, actor types and small enums, never
// an id. A change is told by the engine whose conditional write applied it, once,
// however many engines race for it. How many processes are in each state is a level,
// read from the store with CountByState when the metrics are collected. The modules
// otelfeedkit and promfeedkit implement the Observer.
//
// # Stores
//
// NewMemoryStore keeps processes in one process's memory; workflow/pgstore keeps the same model in PostgreSQL
// (claims with FOR UPDATE SKIP LOCKED, conditional updates on versions), so that several
// engines share it: every task is handed to one actor at a time and every decision
// applied once. Both pass workflowtest.TestStore. examples/workflow shows it all with
// misbehaving actors.
package workflow
