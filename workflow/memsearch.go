package workflow

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// SearchProcesses implements Store. The memory store scans every process: searches are
// an operator's, not a hot path.
func (s *MemoryStore) SearchProcesses(ctx context.Context, q Query) ([]Process, int, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	limit, err := ResolveLimit("Query.Limit", q.Limit)
	if err != nil {
		return nil, 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var all []Process
	for _, r := range s.processes {
		if s.selects(q, r.p) {
			all = append(all, r.p)
		}
	}
	slices.SortFunc(all, compareProcesses)
	total := len(all)
	if q.After != nil {
		i, _ := slices.BinarySearchFunc(all, *q.After, func(p Process, c Cursor) int {
			return compareProcesses(p, Process{StartedAt: c.StartedAt, ID: c.ID})
		})
		for i < len(all) && compareProcesses(all[i], Process{StartedAt: q.After.StartedAt, ID: q.After.ID}) <= 0 {
			i++
		}
		all = all[i:]
	}
	if len(all) > limit {
		all = all[:limit]
	}
	out := make([]Process, len(all))
	for i, p := range all {
		out[i] = cloneProcess(p)
	}
	return out, total, nil
}

func compareProcesses(a, b Process) int {
	if c := a.StartedAt.Compare(b.StartedAt); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

func (s *MemoryStore) selects(q Query, p Process) bool {
	switch {
	case len(q.Types) > 0 && !slices.Contains(q.Types, p.Type),
		len(q.States) > 0 && !slices.Contains(q.States, p.State),
		q.CustomID != "" && q.CustomID != p.CustomID,
		!q.StartedFrom.IsZero() && p.StartedAt.Before(q.StartedFrom),
		!q.StartedTo.IsZero() && !p.StartedAt.Before(q.StartedTo):
		return false
	}
	if q.ActorType != "" {
		for id := range s.byProcess[p.ID] {
			if s.tasks[id].t.Spec.ActorType == q.ActorType {
				return true
			}
		}
		return false
	}
	return true
}

// CreateJob implements Store.
func (s *MemoryStore) CreateJob(ctx context.Context, j Job) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.jobs[j.ID]; ok {
		return fmt.Errorf("workflow: job %s: %w", j.ID, ErrExists)
	}
	j = cloneJob(j)
	j.Version = 1
	s.jobs[j.ID] = j
	return nil
}

// Job implements Store.
func (s *MemoryStore) Job(ctx context.Context, id string) (Job, error) {
	if err := ctx.Err(); err != nil {
		return Job{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[id]
	if !ok {
		return Job{}, fmt.Errorf("workflow: job %s: %w", id, ErrNotFound)
	}
	return cloneJob(j), nil
}

// UpdateJob implements Store.
func (s *MemoryStore) UpdateJob(ctx context.Context, j Job) (Job, error) {
	if err := ctx.Err(); err != nil {
		return Job{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.jobs[j.ID]
	switch {
	case !ok:
		return Job{}, fmt.Errorf("workflow: job %s: %w", j.ID, ErrNotFound)
	case old.Version != j.Version:
		return Job{}, fmt.Errorf("workflow: job %s: version %d, stored %d: %w", j.ID, j.Version, old.Version, ErrConflict)
	}
	j = cloneJob(j)
	j.Version++
	s.jobs[j.ID] = j
	return cloneJob(j), nil
}

// Jobs implements Store.
func (s *MemoryStore) Jobs(ctx context.Context) ([]Job, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Job, 0, len(s.jobs))
	for _, j := range s.jobs {
		out = append(out, cloneJob(j))
	}
	slices.SortFunc(out, func(a, b Job) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

func cloneJob(j Job) Job {
	j.Query = cloneQuery(j.Query)
	j.Priority = slices.Clone(j.Priority)
	j.Batch, j.BatchBroken = slices.Clone(j.Batch), slices.Clone(j.BatchBroken)
	if j.Cursor != nil {
		c := *j.Cursor
		j.Cursor = &c
	}
	j.CreatedAt, j.UpdatedAt, j.LeasedUntil = j.CreatedAt.Round(0), j.UpdatedAt.Round(0), j.LeasedUntil.Round(0)
	return j
}

func cloneQuery(q Query) Query {
	q.Types = slices.Clone(q.Types)
	q.States = slices.Clone(q.States)
	if q.After != nil {
		c := *q.After
		q.After = &c
	}
	return q
}
