package workflow

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrNotRunning is returned by Abort for a process that is not running.
var ErrNotRunning = errors.New("workflow: process not running")

// Search returns the processes q selects, a page at a time, and how many it selects.
func (e *Engine) Search(ctx context.Context, q Query) ([]Process, int, error) {
	return e.store.SearchProcesses(ctx, q)
}

// CountByState returns how many processes the store holds in each state, every state
// present (0 when none is in it): the level "processes by state", which a metrics
// adapter reads when its metrics are collected, since an engine's Observer sees only
// its own changes and several engines may share a store.
//
// It asks the store for one count per state (SearchProcesses, with a page of one), so
// each count is exact when it is read, but the five are read one after the other: a
// process that changes state meanwhile may be in two counts, or in none. Its cost
// grows with the processes kept, finished ones included (in PostgreSQL a count over
// the processes table per state): read it at the collection interval, not per event.
func (e *Engine) CountByState(ctx context.Context) (map[ProcessState]int, error) {
	n := make(map[ProcessState]int, len(processStateNames))
	for s := range processStateNames {
		_, total, err := e.store.SearchProcesses(ctx, Query{States: []ProcessState{s}, Limit: 1})
		if err != nil {
			return nil, fmt.Errorf("workflow: count of %s processes: %w", s, err)
		}
		n[s] = total
	}
	return n, nil
}

// Restart runs a process again, whatever its state: from its start task, or from the
// task fromTask (one of its tasks, of any run) when given; reason is recorded. The
// process's run number goes up first, so that nothing of the old run counts any more
// (a decision accepted just before changes nothing in the new run), then the old run's
// unfinished tasks are failed, so that no actor's decision for them is accepted.
func (e *Engine) Restart(ctx context.Context, processID, fromTask, reason string) (Process, error) {
	p, err := e.store.Process(ctx, processID)
	if err != nil {
		return p, fmt.Errorf("workflow: restart: %w", err)
	}
	spec := p.Start
	if fromTask != "" {
		t, err := e.store.Task(ctx, fromTask)
		if err != nil {
			return p, fmt.Errorf("workflow: restart from task: %w", err)
		}
		if t.ProcessID != p.ID {
			return p, fmt.Errorf("workflow: restart: task %s is not of process %s", t.ID, p.ID)
		}
		spec = t.Spec
	}
	// The run goes up first: from then on nothing of the old run counts (a graph check
	// in between no longer reads its tasks as the current run's), and then its
	// unfinished tasks are failed so that no actor works on them.
	now := e.clock.Now()
	from := p.State
	p.Run++
	p.State, p.Start, p.StartTask = ProcessRunning, spec, newID()
	p.Reason = "restarted: " + reason
	p.RecoveryTime = now.Add(e.cfg.process(p.Type).IdleTimeout) // until the new run is begun
	p, err = e.store.UpdateProcess(ctx, p)
	if err != nil {
		return p, fmt.Errorf("workflow: restart: %w", err)
	}
	if o := e.cfg.Observer; o != nil {
		o.WorkflowProcessRestarted(p.Type, from)
	}
	if err := e.cancelRun(ctx, p, p.Run, "restarted: "+reason); err != nil {
		e.report(fmt.Errorf("workflow: process %s restarted, some tasks of its old run not cancelled: %w", p.ID, err))
	}
	if _, err := e.resetGraph(ctx, p); err != nil {
		e.report(fmt.Errorf("workflow: process %s restarted, its new run left to recovery: %w", p.ID, err))
	}
	return p, nil
}

// Abort stops a running process; reason is recorded. Its unfinished tasks are failed, so
// no decision for them is accepted.
func (e *Engine) Abort(ctx context.Context, processID, reason string) error {
	p, err := e.store.Process(ctx, processID)
	if err != nil {
		return fmt.Errorf("workflow: abort: %w", err)
	}
	if p.State != ProcessRunning {
		return fmt.Errorf("workflow: abort of process %s (%s): %w", p.ID, p.State, ErrNotRunning)
	}
	// The process ends first, and its tasks are cancelled with it (endProcess).
	ended, err := e.endProcess(ctx, p.ID, p.Run, ProcessAborted, reason)
	if err != nil {
		return fmt.Errorf("workflow: abort: %w", err)
	}
	if !ended {
		return fmt.Errorf("workflow: abort of process %s: it ended or restarted meanwhile: %w", p.ID, ErrNotRunning)
	}
	return nil
}

// cancelRun fails the queued and in-progress tasks of p's runs before before.
func (e *Engine) cancelRun(ctx context.Context, p Process, before int, why string) error {
	tasks, err := e.store.ProcessTasks(ctx, p.ID)
	if err != nil {
		return err
	}
	for _, t := range tasks {
		read := false // t is as ProcessTasks read it; after a conflict, read it again
		if _, err := untilApplied(ctx, func() (Task, error) {
			if read {
				var err error
				if t, err = e.store.Task(ctx, t.ID); err != nil {
					return t, err
				}
			}
			read = true
			if t.Run >= before || (t.State != TaskQueued && t.State != TaskInProgress) {
				return t, nil
			}
			t.State, t.Error, t.RecoveryTime = TaskFailed, why, time.Time{}
			return e.store.UpdateTask(ctx, t)
		}); err != nil {
			return err
		}
	}
	return nil
}

// resetGraph makes the graph follow the process's current run from its start task, and
// creates that task. It reads the process afresh and only ever moves the graph forward:
// a caller holding a process read before a restart must not take the graph back. moved
// reports whether this call's write moved the graph, or created it (of calls racing to
// reset it, one does), so that a repair is told once.
func (e *Engine) resetGraph(ctx context.Context, p Process) (moved bool, err error) {
	p, err = e.store.Process(ctx, p.ID)
	if err != nil {
		return false, err
	}
	if p.State != ProcessRunning {
		return false, nil
	}
	_, err = e.store.Graph(ctx, p.ID)
	if errors.Is(err, ErrNotFound) {
		return e.begin(ctx, p)
	}
	if err != nil {
		return false, err
	}
	if _, err := e.updateGraph(ctx, p, func(g *Graph) bool {
		moved = g.Run < p.Run // set again by each attempt: only the write that succeeds counts
		if !moved {
			return false
		}
		g.Run, g.NotFinished, g.Finished = p.Run, []string{p.StartTask}, nil
		return true
	}); err != nil {
		return false, err
	}
	_, err = e.begin(ctx, p)
	return moved, err
}

// completeRestart begins the current run of p, whose graph a restart that broke off
// left on an earlier run, and reports it repaired, as the scans count it.
func (e *Engine) completeRestart(ctx context.Context, p Process) (bool, error) {
	moved, err := e.resetGraph(ctx, p)
	if moved {
		e.repaired(p.Type, RepairRestartCompleted)
	}
	return true, err
}
