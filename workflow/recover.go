package workflow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"
)

// Report says what one pass of the recovery service did.
type Report struct {
	Tasks, Graphs, Processes int // entities past their recovery time, looked at
	Repaired                 int // of those, repaired
}

// Run runs the recovery service until ctx ends: at once, and every ScanInterval after,
// RecoverDue.
func (e *Engine) Run(ctx context.Context) error {
	began := e.clock.Now() // before the ticker, whose first tick is ScanInterval after
	t := e.clock.NewTicker(e.cfg.ScanInterval)
	defer t.Stop()
	for {
		now := e.clock.Now()
		e.mu.Lock()
		e.passing++
		e.mu.Unlock()
		if _, err := e.recoverDue(ctx, now); err != nil && ctx.Err() == nil {
			e.report(err)
		}
		e.passed(pass{run: began, interval: e.cfg.ScanInterval, began: now})
		select {
		case <-t.C():
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Flush waits until Run has made the pass it makes by the clock's time now, and is not
// making another, and returns nil; or ctx.Err() if ctx ends first, as it will when no Run
// is going. Run passes as it begins and then at every ScanInterval: the pass it makes by
// now is that of its last tick at or before now, so what fell due after that tick waits
// for the next one, as it would in production. A test on a fake clock (package
// clock/clocktest) moves the clock past a timeout and calls Flush to see the repairs
// made, without polling; Counters and the store tell what they were, and OnError gets the
// errors of the pass, as always. Flush waits for Run to begin when it has not yet: a test
// that starts Run on a goroutine calls Flush before it moves the clock, so that Run's
// ticks are counted from the start.
func (e *Engine) Flush(ctx context.Context) error {
	now := e.clock.Now()
	return e.passes.Wait(ctx, func() bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		return e.passing == 0 && e.lastPass.covers(now)
	})
}

// pass is when a pass of Run began, on the grid of its Run's ticks.
type pass struct {
	run      time.Time     // when its Run began; the zero time before the first pass
	interval time.Duration // its Run's ScanInterval
	began    time.Time
}

// covers reports whether p is the pass Run makes by now, or a later one: whether it began
// at or after the last tick of its Run at or before now.
func (p pass) covers(now time.Time) bool {
	if p.run.IsZero() {
		return false
	}
	if !p.began.Before(now) {
		return true
	}
	tick := func(t time.Time) int64 { return int64(t.Sub(p.run) / p.interval) }
	return tick(p.began) >= tick(now)
}

// passed records that a pass of Run has finished, for Flush.
func (e *Engine) passed(p pass) {
	e.mu.Lock()
	e.passing--
	e.lastPass = p
	e.mu.Unlock()
	e.passes.Notify()
}

// RecoverDue looks at every task, graph and process whose recovery time has passed, in
// batches of ScanBatch, and repairs what needs it. An entity it cannot repair now (the
// store failing) keeps its recovery time and is looked at again next time.
func (e *Engine) RecoverDue(ctx context.Context) (Report, error) {
	return e.recoverDue(ctx, e.clock.Now())
}

// recoverDue is RecoverDue with the clock's time read by the caller.
func (e *Engine) recoverDue(ctx context.Context, now time.Time) (Report, error) {
	var r Report
	if err := scan(ctx, e.cfg.ScanBatch, func(n int) ([]Task, error) { return e.store.DueTasks(ctx, now, n) },
		func(t Task) (bool, error) { r.Tasks++; return e.recoverTask(ctx, t, now) }, &r.Repaired); err != nil {
		return r, err
	}
	if err := scan(ctx, e.cfg.ScanBatch, func(n int) ([]Graph, error) { return e.store.DueGraphs(ctx, now, n) },
		func(g Graph) (bool, error) { r.Graphs++; return e.recoverGraph(ctx, g, now) }, &r.Repaired); err != nil {
		return r, err
	}
	err := scan(ctx, e.cfg.ScanBatch, func(n int) ([]Process, error) { return e.store.DueProcesses(ctx, now, n) },
		func(p Process) (bool, error) { r.Processes++; return e.recoverProcess(ctx, p, now) }, &r.Repaired)
	return r, err
}

// scan reads due entities batch after batch and handles each. Handling pushes an
// entity's recovery time past now, so the next batch holds others; an entity whose
// handling failed is skipped for the rest of this pass (a read asks for as many more).
// A read is a page of at most MaxLimit: when the failures fill it, the pass ends, and
// the rest waits for the next.
func scan[T any](ctx context.Context, batch int, due func(n int) ([]T, error), handle func(T) (bool, error), repaired *int) error {
	failed := 0
	for failed < MaxLimit {
		items, err := due(min(batch+failed, MaxLimit))
		if err != nil {
			return err
		}
		items = items[min(failed, len(items)):]
		if len(items) == 0 {
			return nil
		}
		for _, it := range items {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			ok, err := handle(it)
			if err != nil {
				failed++
				continue
			}
			if ok {
				*repaired++
			}
		}
	}
	return nil
}

// recoverTask handles a task past its recovery time: a decision overdue is taken back
// and queued again (or failed), a task past its task timeout is failed.
func (e *Engine) recoverTask(ctx context.Context, t Task, now time.Time) (bool, error) {
	a := e.cfg.actor(t.Spec.ActorType)
	pastDeadline := !t.Deadline.IsZero() && !now.Before(t.Deadline)
	var err error
	switch {
	case t.State == TaskQueued && pastDeadline,
		t.State == TaskInProgress && pastDeadline && a.forceFinish:
		_, err = e.fail(ctx, t, "task timeout", now, false)
		if err = e.reportNotApplied(err); err == nil {
			e.count(func(c *Counters) { c.TaskTimeouts++ })
			e.timedOut(TimeoutTask, t.Spec.ActorType)
		}
	case t.State == TaskInProgress && !a.restart:
		_, err = e.fail(ctx, t, "work timeout", now, true)
		if err = e.reportNotApplied(err); err == nil {
			e.count(func(c *Counters) { c.WorkTimeouts++; c.WorkTimeoutsByActor[t.Spec.ActorType]++ })
			e.timedOut(TimeoutWork, t.Spec.ActorType)
		}
	case t.State == TaskInProgress:
		// Back to the queue only if still in progress (the version says so), with a new
		// pass so that the late decision of the actor it was taken from can be refused.
		t.State, t.Pass, t.ReadyAt = TaskQueued, "", now
		t.RecoveryTime = t.Deadline
		if _, err = e.store.UpdateTask(ctx, t); err == nil {
			e.count(func(c *Counters) { c.WorkTimeouts++; c.WorkTimeoutsByActor[t.Spec.ActorType]++ })
			e.timedOut(TimeoutWork, t.Spec.ActorType)
			e.logger.LogAttrs(ctx, slog.LevelInfo, "workflow: work timeout, task queued again",
				slog.String("task", t.ID), slog.String("actor", t.Spec.ActorType))
			if p, err := e.store.Process(ctx, t.ProcessID); err == nil { // push its check
				_, _ = e.updateGraph(ctx, p, func(*Graph) bool { return true })
			}
		}
	default:
		// Nothing is due for it (decided, or queued before its deadline): clear the mark.
		t.RecoveryTime = t.Deadline
		if t.State == TaskFinished || t.State == TaskFailed {
			t.RecoveryTime = time.Time{}
		}
		_, err = e.store.UpdateTask(ctx, t)
		return false, ignoreConflict(err)
	}
	if err != nil {
		return false, ignoreConflict(err)
	}
	return true, nil
}

// recoverGraph checks an idle process for consistency and repairs it: a task finished
// but not applied is applied, a task the graph lists but the store lacks is created again
// from the decision that scheduled it, a failed task fails the process. Queued tasks of
// an actor type whose queue nobody polls are left waiting: the actors are missing, and
// queuing them again would not help. It then plans the next check.
func (e *Engine) recoverGraph(ctx context.Context, g Graph, now time.Time) (bool, error) {
	e.count(func(c *Counters) { c.GraphsChecked++ })
	p, err := e.store.Process(ctx, g.ProcessID)
	if err != nil {
		return false, err
	}
	if p.State != ProcessRunning {
		g.RecoveryTime = time.Time{}
		_, err := e.store.UpdateGraph(ctx, g)
		return false, ignoreConflict(err)
	}
	if g.Run < p.Run { // a restart broke off before the graph followed it
		return e.completeRestart(ctx, p)
	}
	if g.Run > p.Run { // the process was read before a restart: look again next time
		return false, nil
	}
	tasks, err := e.runTasks(ctx, p.ID, g.Run)
	if err != nil {
		return false, err
	}
	faults := graphFaults(p, g, tasks)
	// The tasks in the store, and those this check creates: a missing task is told
	// created once, though both its listing in the graph and the decision that
	// scheduled it are faults.
	have := make(map[string]bool, len(tasks))
	for _, t := range tasks {
		have[t.ID] = true
	}
	for _, f := range faults {
		switch f.kind {
		case faultUnscheduled:
			why := fmt.Sprintf("task %s is in the graph but in no store and no decision", f.task.ID)
			if e.cfg.process(p.Type).RestartBroken {
				e.report(fmt.Errorf("workflow: process %s restarted: %s", p.ID, why))
				if _, err := e.Restart(ctx, p.ID, "", why); err != nil {
					return false, err
				}
				e.repaired(p.Type, RepairProcessRestarted)
				return true, nil
			}
			return true, e.markBroken(ctx, p, why)
		case faultMissing:
			if err := e.store.CreateTasks(ctx, []Task{e.newTask(f.task.ID, p.ID, g.Run, f.task.Spec, now)}); err != nil {
				return false, err
			}
			e.tasksCreated(p.Type, have, f.task.ID)
		case faultUnapplied:
			applied, err := e.apply(ctx, f.task)
			if applied {
				e.repaired(p.Type, RepairDecisionApplied)
			}
			if err != nil {
				return false, err
			}
		case faultFailed:
			ended, err := e.endProcess(ctx, p.ID, g.Run, ProcessFailed, "task "+f.task.ID+": "+f.task.Error)
			if ended {
				e.repaired(p.Type, RepairProcessFailed)
			}
			if err != nil {
				return false, err
			}
		case faultNextMissing:
			if err := e.createNext(ctx, f.task); err != nil {
				return false, err
			}
			e.tasksCreated(p.Type, have, f.task.Next...)
		}
	}
	repaired := len(faults) > 0
	if repaired {
		e.count(func(c *Counters) { c.GraphsRepaired++ })
	}
	g2, err := e.updateGraph(ctx, p, func(*Graph) bool { return true }) // plan the next check
	if err == nil && g2.Run == g.Run && len(g2.NotFinished) == 0 {
		var ended bool
		if ended, err = e.endProcess(ctx, p.ID, g.Run, ProcessFinished, ""); ended {
			e.repaired(p.Type, RepairProcessFinished)
		}
	}
	return repaired, err
}

// tasksCreated tells a repair for each of ids that have, the tasks of a process's run
// in the store, lacked, and adds it there.
func (e *Engine) tasksCreated(processType string, have map[string]bool, ids ...string) {
	for _, id := range ids {
		if !have[id] {
			have[id] = true
			e.repaired(processType, RepairTaskCreated)
		}
	}
}

// runTasks returns the tasks of a process's run: those of earlier runs are over.
func (e *Engine) runTasks(ctx context.Context, processID string, run int) ([]Task, error) {
	tasks, err := e.store.ProcessTasks(ctx, processID)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(tasks, func(t Task) bool { return t.Run != run }), nil
}

// faultKind is a kind of inconsistency of a process's graph.
type faultKind uint8

const (
	faultMissing     faultKind = iota + 1 // listed unfinished, in no store, scheduled by a decision: create it
	faultUnscheduled                      // listed unfinished, in no store and no decision: broken
	faultUnapplied                        // finished, its decision not applied: apply it
	faultFailed                           // failed: its process fails
	faultNextMissing                      // applied, its next tasks not all created: create them
)

// graphFault is one inconsistency of a process's graph, and the task it concerns (for
// faultMissing, the task to create; for faultUnscheduled, its id only).
type graphFault struct {
	kind faultKind
	task Task
}

// graphFaults lists what is wrong with graph g of the running process p, given the tasks
// of g's run, in the order recoverGraph repairs it. It reads and changes nothing, so a
// mass recovery job can tell a broken process before repairing it. A queued task is not
// a fault: it is in its queue by being queued.
func graphFaults(p Process, g Graph, tasks []Task) []graphFault {
	byID := make(map[string]Task, len(tasks))
	for _, t := range tasks {
		byID[t.ID] = t
	}
	var faults []graphFault
	for _, id := range g.NotFinished {
		t, ok := byID[id]
		switch {
		case !ok:
			spec, found := scheduledBy(id, p, tasks)
			if !found {
				faults = append(faults, graphFault{kind: faultUnscheduled, task: Task{ID: id}})
				continue
			}
			faults = append(faults, graphFault{kind: faultMissing, task: Task{ID: id, Spec: spec}})
		case t.State == TaskFinished:
			faults = append(faults, graphFault{kind: faultUnapplied, task: t})
		case t.State == TaskFailed:
			faults = append(faults, graphFault{kind: faultFailed, task: t})
		}
	}
	// A decision applied to the graph whose next tasks were not all created.
	for _, t := range tasks {
		if t.State != TaskFinished || !slices.Contains(g.Finished, t.ID) {
			continue
		}
		if slices.ContainsFunc(t.Next, func(id string) bool { _, ok := byID[id]; return !ok }) {
			faults = append(faults, graphFault{kind: faultNextMissing, task: t})
		}
	}
	return faults
}

// scheduledBy finds the spec of task id: the start task's, or the decision that
// scheduled it.
func scheduledBy(id string, p Process, tasks []Task) (TaskSpec, bool) {
	if id == p.StartTask {
		return p.Start, true
	}
	for _, t := range tasks {
		if i := slices.Index(t.Next, id); i >= 0 && i < len(t.NextSpecs) {
			return t.NextSpecs[i], true
		}
	}
	return TaskSpec{}, false
}

// recoverProcess handles a process past its recovery time: one whose start broke off
// is begun again, one with nothing left to do is finished, one still running past its
// process timeout is counted and looked at again after as long.
func (e *Engine) recoverProcess(ctx context.Context, p Process, now time.Time) (bool, error) {
	if p.State != ProcessRunning {
		p.RecoveryTime = time.Time{}
		_, err := e.store.UpdateProcess(ctx, p)
		return false, ignoreConflict(err)
	}
	g, err := e.store.Graph(ctx, p.ID)
	switch {
	case errors.Is(err, ErrNotFound):
		created, err := e.begin(ctx, p)
		if created {
			e.repaired(p.Type, RepairProcessBegun)
		}
		return true, err
	case err != nil:
		return false, err
	case g.Run < p.Run:
		return e.completeRestart(ctx, p)
	case g.Run == p.Run && len(g.NotFinished) == 0:
		ended, err := e.endProcess(ctx, p.ID, p.Run, ProcessFinished, "")
		if ended {
			e.count(func(c *Counters) { c.ProcessesFinished++ })
			e.repaired(p.Type, RepairProcessFinished)
		}
		return ended, err
	}
	pp := e.cfg.process(p.Type)
	p.RecoveryTime = time.Time{}
	timedOut := false
	if pp.ProcessTimeout > 0 {
		// A process looked at before its process timeout (its start broke off before it
		// set the recovery time to it) is not past it: look again when it is.
		p.RecoveryTime = p.StartedAt.Add(pp.ProcessTimeout)
		if timedOut = !now.Before(p.RecoveryTime); timedOut {
			p.RecoveryTime = now.Add(pp.ProcessTimeout)
		}
	}
	if _, err = e.store.UpdateProcess(ctx, p); err == nil && timedOut {
		e.count(func(c *Counters) { c.ProcessTimeouts++ })
		if o := e.cfg.Observer; o != nil {
			o.WorkflowProcessTimeout(p.Type)
		}
	}
	return false, ignoreConflict(err)
}

func (e *Engine) markBroken(ctx context.Context, p Process, reason string) error {
	ended, err := e.endProcess(ctx, p.ID, p.Run, ProcessBroken, reason)
	if ended {
		e.count(func(c *Counters) { c.ProcessesBroken++ })
		e.report(fmt.Errorf("workflow: process %s broken: %s", p.ID, reason))
	}
	return err
}

// reportNotApplied reports an error wrapping ErrNotApplied and returns nil for it: the
// task's change was made, and the recovery service completes what follows from it.
func (e *Engine) reportNotApplied(err error) error {
	if errors.Is(err, ErrNotApplied) {
		e.report(err)
		return nil
	}
	return err
}

// ignoreConflict treats a conflict as done: someone else changed the entity, and the
// change they made is the newer truth.
func ignoreConflict(err error) error {
	if errors.Is(err, ErrConflict) {
		return nil
	}
	return err
}
