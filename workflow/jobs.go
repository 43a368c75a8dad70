package workflow

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"golang.org/x/time/rate"
)

// StartJob creates a mass recovery job: the processes q selects are checked, and
// repaired, as the recovery service checks an idle one, whatever their recovery time;
// the types in priority first, in that order, then the rest; at most perSecond a second
// (0: no limit). RunJobs (or StepJob) does the work; the job's progress is saved after
// every batch, so a restarted engine resumes it where it was.
func (e *Engine) StartJob(ctx context.Context, q Query, priority []string, perSecond float64) (Job, error) {
	if perSecond < 0 {
		return Job{}, fmt.Errorf("workflow: StartJob: rate %v must not be negative", perSecond)
	}
	q.Limit, q.After = 0, nil
	now := e.clock.Now()
	// The job covers the processes started before it: new ones would keep it from ever
	// ending, and the recovery service watches them anyway.
	if end := now.Add(time.Microsecond); q.StartedTo.IsZero() || q.StartedTo.After(end) {
		q.StartedTo = end // exclusive: up to now, in PostgreSQL's precision too
	}
	_, total, err := e.store.SearchProcesses(ctx, Query{Types: q.Types, States: q.States, CustomID: q.CustomID,
		ActorType: q.ActorType, StartedFrom: q.StartedFrom, StartedTo: q.StartedTo, Limit: 1})
	if err != nil {
		return Job{}, fmt.Errorf("workflow: StartJob: %w", err)
	}
	j := Job{ID: newID(), Query: q, Priority: slices.Clone(priority), Rate: perSecond, State: JobRunning,
		Total: total, CreatedAt: now, UpdatedAt: now}
	if err := e.store.CreateJob(ctx, j); err != nil {
		return Job{}, fmt.Errorf("workflow: StartJob: %w", err)
	}
	j.Version = 1
	return j, nil
}

// PauseJob pauses a running job; ResumeJob resumes a paused one.
func (e *Engine) PauseJob(ctx context.Context, id string) (Job, error) {
	return e.setJobState(ctx, id, JobRunning, JobPaused)
}

// ResumeJob resumes a paused job.
func (e *Engine) ResumeJob(ctx context.Context, id string) (Job, error) {
	return e.setJobState(ctx, id, JobPaused, JobRunning)
}

func (e *Engine) setJobState(ctx context.Context, id string, from, to JobState) (Job, error) {
	return untilApplied(ctx, func() (Job, error) {
		j, err := e.store.Job(ctx, id)
		if err != nil {
			return j, err
		}
		if j.State != from {
			return j, fmt.Errorf("workflow: job %s is %s, not %s", id, j.State, from)
		}
		j.State, j.UpdatedAt = to, e.clock.Now()
		return e.store.UpdateJob(ctx, j)
	})
}

// RunJobs works the running jobs, a batch of each per ScanInterval, until ctx ends.
func (e *Engine) RunJobs(ctx context.Context) error {
	t := e.clock.NewTicker(e.cfg.ScanInterval)
	defer t.Stop()
	for {
		jobs, err := e.store.Jobs(ctx)
		if err != nil && ctx.Err() == nil {
			e.report(fmt.Errorf("workflow: jobs: %w", err))
		}
		for _, j := range jobs {
			if j.State == JobRunning {
				if _, err := e.StepJob(ctx, j.ID); err != nil && ctx.Err() == nil && !errors.Is(err, ErrConflict) {
					e.report(err)
				}
			}
		}
		select {
		case <-t.C():
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// StepJob checks the next batch (ScanBatch processes) of a running job and saves its
// progress. A job that another engine stepped meanwhile gets ErrConflict, and the batch
// counts once, theirs.
//
// A batch is taken before it is checked: its processes are read, those in need of
// repair noted (reading only), and the list saved in the job (Batch, BatchBroken) with
// the lease. Counting what a check repaired cannot be exact otherwise: a repair and the
// save of its count are writes to different entities, and an engine that dies between
// them leaves a repaired process that the next engine's check finds sound. With the
// list saved first, the next engine checks the same processes and counts a process
// noted broken as repaired whether it repairs it or finds it repaired: each process is
// counted once, wherever the first engine stopped.
func (e *Engine) StepJob(ctx context.Context, id string) (Job, error) {
	j, err := e.store.Job(ctx, id)
	if err != nil || j.State != JobRunning {
		return j, err
	}
	// Lease the batch: of engines stepping the job at once, one wins this write and does
	// the batch; the others leave the job alone until the lease ends, so a batch is
	// checked, counted and paced once. A lease outlives a batch at the job's rate by a
	// minute; an engine that dies holding it delays the job by that much.
	now := e.clock.Now()
	if now.Before(j.LeasedUntil) {
		return j, nil
	}
	if len(j.Batch) == 0 { // else the batch of an engine that died: check it again
		if err := e.takeBatch(ctx, &j); err != nil {
			return j, err
		}
	}
	if len(j.Batch) > 0 {
		lease := time.Minute
		if j.Rate > 0 {
			lease += time.Duration(float64(len(j.Batch)) / j.Rate * float64(time.Second))
		}
		j.LeasedUntil, j.UpdatedAt = now.Add(lease), now
		if j, err = e.store.UpdateJob(ctx, j); err != nil {
			return j, err
		}
	}
	leased := j
	for _, pid := range j.Batch {
		if err := e.throttle(ctx, j); err != nil {
			return j, err
		}
		p, err := e.store.Process(ctx, pid)
		repaired := false
		if err == nil {
			repaired, err = e.check(ctx, p)
		}
		j.Done++
		switch {
		case err != nil:
			j.Errors++
		case repaired || slices.Contains(j.BatchBroken, pid):
			j.Repaired++
		}
	}
	j.Batch, j.BatchBroken = nil, nil
	if j.Stage > len(j.Priority) {
		j.State = JobDone
		e.mu.Lock()
		delete(e.limiters, j.ID)
		e.mu.Unlock()
	}
	j.UpdatedAt, j.LeasedUntil = e.clock.Now(), time.Time{}
	saved, err := e.store.UpdateJob(ctx, j)
	if !errors.Is(err, ErrConflict) {
		return saved, err
	}
	// The job changed under the lease. Paused or resumed meanwhile (its progress as
	// leased): save the batch with the new state. Anything else (the lease ran out and
	// another engine moved on): this batch's save is dropped; the batch counts once, as
	// the engine that saved it counted it.
	fresh, err := e.store.Job(ctx, id)
	if err != nil {
		return j, err
	}
	if fresh.State == JobDone || fresh.Stage != leased.Stage || fresh.Done != leased.Done ||
		!sameCursor(fresh.Cursor, leased.Cursor) || !slices.Equal(fresh.Batch, leased.Batch) {
		return fresh, nil
	}
	if j.State != JobDone {
		j.State = fresh.State
	}
	j.Version = fresh.Version
	return e.store.UpdateJob(ctx, j)
}

// takeBatch moves j's Stage and Cursor past its next batch and sets its Batch and
// BatchBroken; when no process is left, Batch stays empty and Stage is past the last.
// Only reads: j is saved by the caller.
func (e *Engine) takeBatch(ctx context.Context, j *Job) error {
	for j.Stage <= len(j.Priority) && len(j.Batch) == 0 {
		q := j.Query
		q.Limit, q.After = e.cfg.ScanBatch, j.Cursor
		if j.Stage < len(j.Priority) {
			if len(q.Types) > 0 && !slices.Contains(q.Types, j.Priority[j.Stage]) {
				j.Stage, j.Cursor = j.Stage+1, nil
				continue
			}
			q.Types = []string{j.Priority[j.Stage]}
		}
		ps, _, err := e.store.SearchProcesses(ctx, q)
		if err != nil {
			return err
		}
		if len(ps) == 0 {
			j.Stage, j.Cursor = j.Stage+1, nil
			continue
		}
		last := ps[len(ps)-1]
		j.Cursor = &Cursor{StartedAt: last.StartedAt, ID: last.ID}
		for _, p := range ps {
			if j.Stage == len(j.Priority) && slices.Contains(j.Priority, p.Type) {
				continue // checked in its own stage
			}
			j.Batch = append(j.Batch, p.ID)
			// A process that cannot be read now is not noted: its check counts it.
			if broken, err := e.broken(ctx, p); err == nil && broken {
				j.BatchBroken = append(j.BatchBroken, p.ID)
			}
		}
	}
	return nil
}

func sameCursor(a, b *Cursor) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.ID == b.ID && a.StartedAt.Equal(b.StartedAt)
}

// broken reports whether check would repair p, reading only.
func (e *Engine) broken(ctx context.Context, p Process) (bool, error) {
	if p.State != ProcessRunning {
		return false, nil
	}
	g, err := e.store.Graph(ctx, p.ID)
	switch {
	case errors.Is(err, ErrNotFound):
		return true, nil // its start broke off: check begins it
	case err != nil:
		return false, err
	case g.Run != p.Run:
		return g.Run < p.Run, nil // a restart broke off; or p was read before one
	}
	tasks, err := e.runTasks(ctx, p.ID, g.Run)
	if err != nil {
		return false, err
	}
	return len(graphFaults(p, g, tasks)) > 0, nil
}

// check checks one process as the recovery service checks an idle one.
func (e *Engine) check(ctx context.Context, p Process) (bool, error) {
	if p.State != ProcessRunning {
		return false, nil
	}
	g, err := e.store.Graph(ctx, p.ID)
	switch {
	case errors.Is(err, ErrNotFound):
		return e.recoverProcess(ctx, p, e.clock.Now())
	case err != nil:
		return false, err
	case g.Run < p.Run:
		return e.completeRestart(ctx, p)
	}
	return e.recoverGraph(ctx, g, e.clock.Now())
}

// throttle waits, on the engine's clock, for the job's rate to allow one more process.
func (e *Engine) throttle(ctx context.Context, j Job) error {
	if j.Rate == 0 {
		return nil
	}
	e.mu.Lock()
	lim, ok := e.limiters[j.ID]
	if !ok || lim.Limit() != rate.Limit(j.Rate) {
		lim = rate.NewLimiter(rate.Limit(j.Rate), 1)
		e.limiters[j.ID] = lim
	}
	e.mu.Unlock()
	now := e.clock.Now()
	d := lim.ReserveN(now, 1).DelayFrom(now)
	if d <= 0 {
		return nil
	}
	t := e.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
