package workflow

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Decision is an actor's answer for a task: a result and the tasks to schedule next, or
// an error.
type Decision struct {
	TaskID string
	Pass   string // the Pass of the task as the actor received it
	Result []byte
	Next   []TaskSpec
	Error  string // non-empty: the task failed
}

// Release applies an actor's decision. The task's own change is one conditional write,
// so of two decisions racing for a task one is applied and the other gets ErrDecided
// (or ErrStalePass). Once that write succeeded the decision is accepted; the graph, the
// next tasks and the process's end follow. Release returns nil only when all of them
// are done: when the store fails there (or ctx ends), it returns an error that wraps
// ErrNotApplied and the cause, and the recovery service completes them from the task,
// which records the decision whole. A conflict on the task or the graph (another writer
// moved it on) is no failure: it is read again and retried until it succeeds.
func (e *Engine) Release(ctx context.Context, d Decision) error {
	for {
		t, err := e.store.Task(ctx, d.TaskID)
		if err != nil {
			return fmt.Errorf("workflow: release: %w", err)
		}
		a := e.cfg.actor(t.Spec.ActorType)
		switch {
		case t.State == TaskFinished || t.State == TaskFailed:
			return fmt.Errorf("workflow: release of task %s (%s): %w", t.ID, t.State, ErrDecided)
		case !a.acceptFirst && (t.State != TaskInProgress || d.Pass != t.Pass):
			return fmt.Errorf("workflow: release of task %s: %w", t.ID, ErrStalePass)
		}
		now := e.clock.Now()
		if d.Error != "" {
			var written TaskState
			written, err = e.fail(ctx, t, d.Error, now, true)
			if o := e.cfg.Observer; o != nil && written != 0 {
				result := ReleaseRetried
				if written == TaskFailed {
					result = ReleaseFailed
				}
				o.WorkflowTaskReleased(t.Spec.ActorType, result)
			}
		} else {
			err = e.finish(ctx, t, d, now)
		}
		// Only a conflict on the task's own write is decided again: once the decision
		// is accepted, sending it again would be refused as decided.
		if errors.Is(err, ErrNotApplied) || !errors.Is(err, ErrConflict) {
			return err
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("workflow: release of task %s: %w", d.TaskID, err)
		}
	}
}

// finish records a successful decision on the task, then applies it.
func (e *Engine) finish(ctx context.Context, t Task, d Decision, now time.Time) error {
	t.State = TaskFinished
	t.Result, t.Error = d.Result, ""
	t.NextSpecs = d.Next
	t.Next = make([]string, len(d.Next))
	for i := range d.Next {
		t.Next[i] = newID()
	}
	t.RecoveryTime = time.Time{}
	t, err := e.store.UpdateTask(ctx, t)
	if err != nil {
		return err
	}
	if o := e.cfg.Observer; o != nil {
		o.WorkflowTaskReleased(t.Spec.ActorType, ReleaseFinished)
	}
	if _, err := e.apply(ctx, t); err != nil {
		return fmt.Errorf("workflow: task %s: %w: %w", t.ID, ErrNotApplied, err)
	}
	return nil
}

// apply carries a finished task's decision into its process: the graph first (the task
// moves to the finished set, the next tasks join the unfinished one), then the next
// tasks, then the process's end when nothing is left. Every step tolerates having been
// done already, so the recovery service repeats apply to complete one that broke off.
// applied reports whether this call's write moved the decision into the graph (of calls
// racing to apply it, one does), so that a repair is told once.
func (e *Engine) apply(ctx context.Context, t Task) (applied bool, err error) {
	// A process ended (aborted, failed) or restarted meanwhile gets nothing more from a
	// decision of its old run.
	p, err := e.store.Process(ctx, t.ProcessID)
	if err != nil {
		return false, err
	}
	if p.State != ProcessRunning || p.Run != t.Run {
		return false, nil
	}
	g, err := e.updateGraph(ctx, p, func(g *Graph) bool {
		applied = false // set again by each attempt: only the write that succeeds counts
		if g.Run != t.Run || slices.Contains(g.Finished, t.ID) {
			return false // a task of an earlier run changes nothing now; or applied already
		}
		applied = true
		g.NotFinished = slices.DeleteFunc(g.NotFinished, func(id string) bool { return id == t.ID })
		g.Finished = append(g.Finished, t.ID)
		for _, id := range t.Next {
			if !slices.Contains(g.NotFinished, id) && !slices.Contains(g.Finished, id) {
				g.NotFinished = append(g.NotFinished, id)
			}
		}
		return true
	})
	if err != nil {
		return false, err
	}
	if g.Run != t.Run {
		return applied, nil
	}
	if err := e.createNext(ctx, t); err != nil {
		return applied, err
	}
	if len(g.NotFinished) == 0 {
		_, err := e.endProcess(ctx, t.ProcessID, t.Run, ProcessFinished, "")
		return applied, err
	}
	return applied, nil
}

// createNext creates the tasks a finished task scheduled (those existing are left).
func (e *Engine) createNext(ctx context.Context, t Task) error {
	if len(t.Next) == 0 {
		return nil
	}
	now := e.clock.Now()
	next := make([]Task, len(t.Next))
	for i, id := range t.Next {
		next[i] = e.newTask(id, t.ProcessID, t.Run, t.NextSpecs[i], now)
	}
	return e.store.CreateTasks(ctx, next)
}

// updateGraph applies change to process p's graph and pushes its recovery time by p's
// idle timeout, reading it again after a conflict until it is written (untilApplied);
// change returns false when there is nothing to change.
func (e *Engine) updateGraph(ctx context.Context, p Process, change func(g *Graph) bool) (Graph, error) {
	idle := e.cfg.process(p.Type).IdleTimeout
	return untilApplied(ctx, func() (Graph, error) {
		g, err := e.store.Graph(ctx, p.ID)
		if err != nil {
			return g, err
		}
		if !change(&g) {
			return g, nil
		}
		now := e.clock.Now()
		g.ChangedAt, g.RecoveryTime = now, now.Add(idle)
		return e.store.UpdateGraph(ctx, g)
	})
}

// fail records a failed decision: the task is queued again after its retry policy's
// backoff while attempts remain, and fails for good otherwise, failing its process. A
// failure to end the process is returned wrapping ErrNotApplied: the task is failed, and
// the graph scan fails the process. written is the state the task's write stored
// (TaskQueued or TaskFailed), or 0 when that write was not applied.
func (e *Engine) fail(ctx context.Context, t Task, reason string, now time.Time, retry bool) (written TaskState, err error) {
	a := e.cfg.actor(t.Spec.ActorType)
	t.Error = reason
	if retry && t.Attempts < a.retry.MaxAttempts {
		t.State = TaskQueued
		t.Pass = ""
		t.ReadyAt = now.Add(a.retry.backoff(t.Attempts))
		t.RecoveryTime = t.Deadline
		if _, err := e.store.UpdateTask(ctx, t); err != nil {
			return 0, err
		}
		return TaskQueued, nil
	}
	t.State = TaskFailed
	t.RecoveryTime = time.Time{}
	if _, err := e.store.UpdateTask(ctx, t); err != nil {
		return 0, err
	}
	if _, err := e.endProcess(ctx, t.ProcessID, t.Run, ProcessFailed, "task "+t.ID+": "+reason); err != nil {
		return TaskFailed, fmt.Errorf("workflow: task %s failed: %w: %w", t.ID, ErrNotApplied, err)
	}
	return TaskFailed, nil
}

// endProcess moves a process running run to state, retrying on conflicts (untilApplied), and reports
// whether it did; a process no longer running, or on another run (restarted meanwhile),
// is left as it is. Ending a run other than by finishing it then cancels the run's
// unfinished tasks, so that no actor works for a process that is over; a failure there is
// reported, not returned (the process did end, and Poll refuses such tasks anyway).
func (e *Engine) endProcess(ctx context.Context, id string, run int, state ProcessState, reason string) (bool, error) {
	return untilApplied(ctx, func() (bool, error) {
		p, err := e.store.Process(ctx, id)
		if err != nil {
			return false, err
		}
		if p.State != ProcessRunning || p.Run != run {
			return false, nil
		}
		p.State, p.Reason, p.RecoveryTime = state, reason, time.Time{}
		if p, err = e.store.UpdateProcess(ctx, p); err != nil {
			return false, err
		}
		if o := e.cfg.Observer; o != nil {
			o.WorkflowProcessEnded(p.Type, state)
		}
		if state != ProcessFinished {
			if err := e.cancelRun(ctx, p, run+1, state.String()+": "+reason); err != nil {
				e.report(fmt.Errorf("workflow: process %s %s, some of its tasks not cancelled: %w", id, state, err))
			}
		}
		return true, nil
	})
}
