package workflow

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/internal/broadcast"
)

// Engine runs processes: it starts them, hands their tasks to actors, applies the
// decisions, and repairs what breaks (see RecoverDue). Several engines may share one
// Store: every change is a conditional write, so none is applied twice.
type Engine struct {
	cfg    Config
	store  Store
	clock  clock.Clock
	logger *slog.Logger

	mu       sync.Mutex
	counters Counters
	limiters map[string]*rate.Limiter // pace this engine's steps of each job, by job id
	passing  int                      // passes of Run under way, for Flush
	lastPass pass                     // the last pass of Run to finish, for Flush

	passes broadcast.Signal // notified at the end of each pass of Run
}

// New checks cfg and returns an engine that keeps its processes in store (a
// MemoryStore, or a shared one such as workflow/pgstore's for several processes).
func New(store Store, cfg Config) (*Engine, error) {
	if store == nil {
		return nil, errors.New("workflow: New: store is nil")
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if cfg.ScanInterval == 0 {
		cfg.ScanInterval = DefaultScanInterval
	}
	if cfg.ScanBatch == 0 {
		cfg.ScanBatch = DefaultScanBatch
	}
	e := &Engine{cfg: cfg, store: store, clock: clock.OrReal(cfg.Clock), logger: cfg.Logger,
		counters: Counters{WorkTimeoutsByActor: map[string]uint64{}}, limiters: map[string]*rate.Limiter{}}
	if e.logger == nil {
		e.logger = slog.New(slog.DiscardHandler)
	}
	return e, nil
}

// Errors of Release, matched with errors.Is.
var (
	// ErrDecided: the task has a decision already; this one is not applied.
	ErrDecided = errors.New("workflow: task already decided")
	// ErrStalePass: the decision's pass is not the task's current one (the task was taken
	// back from the actor and handed out again), and the actor type does not accept the
	// first decision.
	ErrStalePass = errors.New("workflow: decision carries a stale pass")
	// ErrNotApplied: the decision was accepted (its task records it, and sending it
	// again gets ErrDecided), but what follows from it (the graph, the next tasks, the
	// process's end) could not all be done now, the store failing or ctx ending: the
	// recovery service completes it from the task when the process has been idle for its
	// IdleTimeout. The error wraps the cause too.
	ErrNotApplied = errors.New("workflow: decision accepted, the rest left to recovery")
)

// StartRequest asks for a new process.
type StartRequest struct {
	Type     string
	CustomID string
	// IdempotencyKey, when not empty, makes the start idempotent: the process of Type
	// that holds the key, if there is one, is returned instead of a new one (see Start).
	// Give what identifies the work to the caller, e.g. the id of the order the process
	// runs for. Valid UTF-8 without NUL, at most MaxIdempotencyKeyLen bytes.
	IdempotencyKey string
	Start          TaskSpec
}

// Start creates a process and schedules its start task, and reports created true.
//
// With an IdempotencyKey that a process of req.Type holds already, whatever that
// process's state (running, finished, aborted, restarted), it creates nothing and
// returns that process, as stored, with created false and a nil error: a starter that
// restarts, or receives its order twice, starts again with the same key and gets the
// same process, and of starters racing on one key exactly one creates it. The key is
// held for ever; running the work again is Restart's job. The request must be the
// one that created the process (same CustomID and Start, compared with the process's
// RequestDigest): other arguments under a held key are refused with an error wrapping
// ErrKeyReused that names the key and the process, which comes with it. A process
// found whose start broke off (saved, but its graph not created) is begun, as the
// recovery service would later.
//
// It does the minimum before it answers: the process is saved, with a recovery time as
// soon as its type's idle timeout, so that if what follows (its graph, its start task)
// breaks off, the recovery service completes it soon. Only a failure to save the
// process is an error.
func (e *Engine) Start(ctx context.Context, req StartRequest) (p Process, created bool, err error) {
	switch {
	case req.Type == "":
		return Process{}, false, errors.New("workflow: StartRequest.Type is empty")
	case req.Start.ActorType == "":
		return Process{}, false, errors.New("workflow: StartRequest.Start.ActorType is empty")
	}
	if err := checkKey(req.IdempotencyKey); err != nil {
		return Process{}, false, err
	}
	now := e.clock.Now()
	p = Process{ID: newID(), Type: req.Type, CustomID: req.CustomID, IdempotencyKey: req.IdempotencyKey,
		State: ProcessRunning, Start: req.Start, StartTask: newID(), StartedAt: now,
		RecoveryTime: now.Add(e.cfg.process(req.Type).IdleTimeout)}
	if req.IdempotencyKey != "" {
		p.RequestDigest = req.digest()
	}
	got, created, err := e.store.CreateOrGetProcess(ctx, p)
	if err != nil {
		return Process{}, false, fmt.Errorf("workflow: start: %w", err)
	}
	if !created {
		if got.RequestDigest != p.RequestDigest {
			return got, false, fmt.Errorf("workflow: start: StartRequest.IdempotencyKey %q of type %q is held by process %s, started with another CustomID or Start: %w",
				req.IdempotencyKey, req.Type, got.ID, ErrKeyReused)
		}
		e.resume(ctx, got)
		return got, false, nil
	}
	if o := e.cfg.Observer; o != nil {
		o.WorkflowProcessStarted(got.Type)
	}
	if _, err := e.begin(ctx, got); err != nil {
		e.report(fmt.Errorf("workflow: process %s saved, its start left to recovery: %w", got.ID, err))
	}
	return got, true, nil
}

// begin creates a process's graph and start task, and sets its recovery time to its
// process timeout. Each step tolerates having been done already; created reports
// whether this call created the graph (of calls racing to begin a process, one does),
// so that a repair is told once.
func (e *Engine) begin(ctx context.Context, p Process) (created bool, err error) {
	now := e.clock.Now()
	pp := e.cfg.process(p.Type)
	g := Graph{ProcessID: p.ID, Run: p.Run, NotFinished: []string{p.StartTask}, ChangedAt: now, RecoveryTime: now.Add(pp.IdleTimeout)}
	switch err := e.store.CreateGraph(ctx, g); {
	case err == nil:
		created = true
	case !errors.Is(err, ErrExists):
		return false, err
	}
	if err := e.store.CreateTasks(ctx, []Task{e.newTask(p.StartTask, p.ID, p.Run, p.Start, now)}); err != nil {
		return created, err
	}
	p.RecoveryTime = time.Time{}
	if pp.ProcessTimeout > 0 {
		p.RecoveryTime = p.StartedAt.Add(pp.ProcessTimeout)
	}
	if _, err := e.store.UpdateProcess(ctx, p); err != nil && !errors.Is(err, ErrConflict) {
		return created, err
	}
	return created, nil
}

// newTask returns a queued task ready at now, with its task timeout if it has one.
func (e *Engine) newTask(id, processID string, run int, spec TaskSpec, now time.Time) Task {
	t := Task{ID: id, ProcessID: processID, Run: run, Spec: spec, State: TaskQueued, ReadyAt: now}
	if a := e.cfg.actor(spec.ActorType); a.taskTimeout > 0 {
		t.Deadline = now.Add(a.taskTimeout)
		t.RecoveryTime = t.Deadline
	}
	return t
}

// Poll hands the next ready task of actorType to an actor, or reports none. The task is
// in progress until its decision is released or its work timeout passes; the actor must
// send back its Pass with the decision. A task found past its task timeout is failed
// instead of handed out.
func (e *Engine) Poll(ctx context.Context, actorType string) (Task, bool, error) {
	a := e.cfg.actor(actorType)
	for {
		now := e.clock.Now()
		t, ok, err := e.store.Claim(ctx, actorType, now, func(t *Task) {
			t.State = TaskInProgress
			t.Pass = newID()
			t.Attempts++
			t.RecoveryTime = now.Add(a.work)
			if !t.Deadline.IsZero() && a.forceFinish && t.Deadline.Before(t.RecoveryTime) {
				t.RecoveryTime = t.Deadline
			}
		})
		if err != nil || !ok {
			return t, ok, err
		}
		if !t.Deadline.IsZero() && !now.Before(t.Deadline) {
			_, err = e.fail(ctx, t, "task timeout", now, false)
			if err = e.reportNotApplied(err); err != nil {
				e.report(fmt.Errorf("workflow: task %s past its timeout, left to recovery: %w", t.ID, err))
			} else {
				e.count(func(c *Counters) { c.TaskTimeouts++ })
				e.timedOut(TimeoutTask, actorType)
			}
			continue
		}
		// A task of a process that ended, or of a run a restart left, is not worked on.
		p, err := e.store.Process(ctx, t.ProcessID)
		if err != nil {
			e.polled(actorType)
			return t, true, nil // the work timeout repairs the task if the actor cannot use it
		}
		if p.State == ProcessRunning && p.Run == t.Run {
			e.polled(actorType)
			return t, true, nil
		}
		t.State, t.Error, t.RecoveryTime = TaskFailed, "process "+p.State.String()+" or restarted", time.Time{}
		if _, err := e.store.UpdateTask(ctx, t); err != nil {
			e.report(fmt.Errorf("workflow: task %s of a process over, left to recovery: %w", t.ID, err))
		}
	}
}

// Counters returns a copy of the recovery counters.
func (e *Engine) Counters() Counters {
	e.mu.Lock()
	defer e.mu.Unlock()
	c := e.counters
	c.WorkTimeoutsByActor = make(map[string]uint64, len(e.counters.WorkTimeoutsByActor))
	for k, v := range e.counters.WorkTimeoutsByActor {
		c.WorkTimeoutsByActor[k] = v
	}
	return c
}

func (e *Engine) count(f func(c *Counters)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	f(&e.counters)
}

// polled tells the observer, if any, that a task of actorType was handed out.
func (e *Engine) polled(actorType string) {
	if o := e.cfg.Observer; o != nil {
		o.WorkflowTaskPolled(actorType)
	}
}

// timedOut tells the observer, if any, of a task's timeout acted on.
func (e *Engine) timedOut(kind TimeoutKind, actorType string) {
	if o := e.cfg.Observer; o != nil {
		o.WorkflowTaskTimeout(kind, actorType)
	}
}

// repaired tells the observer, if any, of a repair made to a process of processType.
func (e *Engine) repaired(processType string, kind RepairKind) {
	if o := e.cfg.Observer; o != nil {
		o.WorkflowRepaired(processType, kind)
	}
}

func (e *Engine) report(err error) {
	e.logger.LogAttrs(context.Background(), slog.LevelWarn, "workflow: error", slog.Any("err", err))
	if e.cfg.OnError != nil {
		e.cfg.OnError(err)
	}
}

// newID returns a random id.
func newID() string { return rand.Text() }
