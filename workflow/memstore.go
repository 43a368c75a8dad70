package workflow

import (
	"cmp"
	"container/heap"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

var _ Store = (*MemoryStore)(nil)

// MemoryStore is the in-memory Store: the one for a single process, and the
// reference the conformance suite (workflow/workflowtest) holds other stores to.
//
// One mutex guards everything: every method is a short critical section of map and heap
// operations, so finer locks would buy little and cost the atomicity that Claim and the
// conditional updates need.
//
// The queues and the recovery scans are indexes kept up to date by every write, so that
// neither Claim nor the Due methods ever scan all entities: each actor type has a min-heap
// of its queued tasks by (ReadyAt, ID), and each entity kind a min-heap by
// (RecoveryTime, ID) of the entities that have one. An entity knows its place in each heap,
// so a write moves or removes it in O(log n) and no stale entries pile up.
//
// Entities are copied in and out (their slices cloned), so a caller never aliases what the
// store holds. Create stores Version 1 whatever the given one; an update stores the next.
// Times are stored without their monotonic clock reading, as a database would, so that
// entities are ordered by wall time only.
type MemoryStore struct {
	mu         sync.Mutex
	processes  map[string]*processRecord
	keys       map[processKey]string // (Type, IdempotencyKey) → the id of the process that holds it
	tasks      map[string]*taskRecord
	graphs     map[string]*graphRecord        // by ProcessID
	byProcess  map[string]map[string]struct{} // ProcessID → task ids
	queues     map[string]*timeHeap           // actor type → its queued tasks by ReadyAt
	lastPolled map[string]time.Time           // actor type → last Claim's now
	dueProcs   timeHeap                       // processes by RecoveryTime
	dueTasks   timeHeap                       // tasks by RecoveryTime
	dueGraphs  timeHeap                       // graphs by RecoveryTime
	jobs       map[string]Job
}

// processKey is an idempotency key in the scope of its process type.
type processKey struct{ typ, key string }

// keyOf returns p's key, and whether it has one.
func keyOf(p Process) (processKey, bool) {
	return processKey{p.Type, p.IdempotencyKey}, p.IdempotencyKey != ""
}

type processRecord struct {
	p   Process
	due heapItem
}

type taskRecord struct {
	t     Task
	queue heapItem // in queues[queueOf] while it is queued
	// queueOf is the actor type whose queue holds the task: kept apart from t.Spec so that
	// an update that changes the actor type can find the queue to take it out of.
	queueOf string
	due     heapItem
}

type graphRecord struct {
	g   Graph
	due heapItem
}

// NewMemoryStore returns an empty store.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{
		processes:  make(map[string]*processRecord),
		keys:       make(map[processKey]string),
		tasks:      make(map[string]*taskRecord),
		graphs:     make(map[string]*graphRecord),
		byProcess:  make(map[string]map[string]struct{}),
		queues:     make(map[string]*timeHeap),
		lastPolled: make(map[string]time.Time),
		jobs:       make(map[string]Job),
	}
}

// CreateProcess saves a new process with Version 1 (ErrExists if its id is taken, or
// its idempotency key within its type).
func (s *MemoryStore) CreateProcess(ctx context.Context, p Process) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if k, ok := keyOf(p); ok {
		if id, taken := s.keys[k]; taken {
			return fmt.Errorf("workflow: process %s: key %q of type %q held by process %s: %w", p.ID, k.key, k.typ, id, ErrExists)
		}
	}
	_, err := s.createProcess(p)
	return err
}

// CreateOrGetProcess saves p with Version 1, unless a process of its type holds its
// idempotency key (not empty): then it returns a copy of that process and created false,
// under the same lock as the save, so that of racing calls one creates. ErrExists if
// p's id is taken.
func (s *MemoryStore) CreateOrGetProcess(ctx context.Context, p Process) (Process, bool, error) {
	if err := ctx.Err(); err != nil {
		return Process{}, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if k, ok := keyOf(p); ok {
		if id, taken := s.keys[k]; taken {
			return cloneProcess(s.processes[id].p), false, nil
		}
	}
	r, err := s.createProcess(p)
	if err != nil {
		return Process{}, false, err
	}
	return cloneProcess(r.p), true, nil
}

// createProcess saves p with Version 1 and indexes it, unless its id is taken. The
// caller holds the lock and has checked its key.
func (s *MemoryStore) createProcess(p Process) (*processRecord, error) {
	if _, ok := s.processes[p.ID]; ok {
		return nil, fmt.Errorf("workflow: process %s: %w", p.ID, ErrExists)
	}
	r := &processRecord{p: cloneProcess(p), due: newHeapItem(p.ID)}
	r.p.Version = 1
	s.processes[p.ID] = r
	if k, ok := keyOf(p); ok {
		s.keys[k] = p.ID
	}
	s.dueProcs.setDue(&r.due, r.p.RecoveryTime)
	return r, nil
}

// Process returns a copy of a process (ErrNotFound).
func (s *MemoryStore) Process(ctx context.Context, id string) (Process, error) {
	if err := ctx.Err(); err != nil {
		return Process{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.processes[id]
	if !ok {
		return Process{}, fmt.Errorf("workflow: process %s: %w", id, ErrNotFound)
	}
	return cloneProcess(r.p), nil
}

// UpdateProcess writes p if the stored version is p.Version (ErrConflict otherwise,
// ErrNotFound if there is none, ErrExists if another process holds its idempotency key
// within its type) and returns a copy of it with the next version.
func (s *MemoryStore) UpdateProcess(ctx context.Context, p Process) (Process, error) {
	if err := ctx.Err(); err != nil {
		return Process{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.processes[p.ID]
	if !ok {
		return Process{}, fmt.Errorf("workflow: process %s: %w", p.ID, ErrNotFound)
	}
	if r.p.Version != p.Version {
		return Process{}, fmt.Errorf("workflow: process %s: version %d, stored %d: %w",
			p.ID, p.Version, r.p.Version, ErrConflict)
	}
	oldKey, hadKey := keyOf(r.p)
	newKey, hasKey := keyOf(p)
	if hasKey && (!hadKey || newKey != oldKey) {
		if id, taken := s.keys[newKey]; taken {
			return Process{}, fmt.Errorf("workflow: process %s: key %q of type %q held by process %s: %w",
				p.ID, newKey.key, newKey.typ, id, ErrExists)
		}
	}
	if hadKey {
		delete(s.keys, oldKey)
	}
	if hasKey {
		s.keys[newKey] = p.ID
	}
	r.p = cloneProcess(p)
	r.p.Version++
	s.dueProcs.setDue(&r.due, r.p.RecoveryTime)
	return cloneProcess(r.p), nil
}

// CreateTasks saves new tasks with Version 1. A task whose id exists, or came earlier in
// ts, is left as it is and is not an error, so that a release broken off half-way can be
// completed by creating its tasks again.
func (s *MemoryStore) CreateTasks(ctx context.Context, ts []Task) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range ts {
		if _, ok := s.tasks[t.ID]; ok {
			continue
		}
		r := &taskRecord{t: cloneTask(t), queue: newHeapItem(t.ID), due: newHeapItem(t.ID)}
		r.t.Version = 1
		s.tasks[t.ID] = r
		s.listTask(t.ProcessID, t.ID)
		s.indexTask(r)
	}
	return nil
}

// Task returns a copy of a task (ErrNotFound).
func (s *MemoryStore) Task(ctx context.Context, id string) (Task, error) {
	if err := ctx.Err(); err != nil {
		return Task{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.tasks[id]
	if !ok {
		return Task{}, fmt.Errorf("workflow: task %s: %w", id, ErrNotFound)
	}
	return cloneTask(r.t), nil
}

// UpdateTask writes t if the stored version is t.Version (ErrConflict otherwise,
// ErrNotFound if there is none) and returns a copy of it with the next version. A task
// written as queued enters its actor type's queue at its ReadyAt; one written otherwise
// leaves it.
func (s *MemoryStore) UpdateTask(ctx context.Context, t Task) (Task, error) {
	if err := ctx.Err(); err != nil {
		return Task{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.tasks[t.ID]
	if !ok {
		return Task{}, fmt.Errorf("workflow: task %s: %w", t.ID, ErrNotFound)
	}
	if r.t.Version != t.Version {
		return Task{}, fmt.Errorf("workflow: task %s: version %d, stored %d: %w",
			t.ID, t.Version, r.t.Version, ErrConflict)
	}
	s.replaceTask(r, cloneTask(t))
	return cloneTask(r.t), nil
}

// ProcessTasks returns copies of every task of a process, by id; none (and no error) for
// a process that has no tasks or does not exist.
func (s *MemoryStore) ProcessTasks(ctx context.Context, processID string) ([]Task, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := s.byProcess[processID]
	out := make([]Task, 0, len(ids))
	for id := range ids {
		out = append(out, cloneTask(s.tasks[id].t))
	}
	slices.SortFunc(out, func(a, b Task) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// CreateGraph saves a process's new graph with Version 1 (ErrExists if it has one).
func (s *MemoryStore) CreateGraph(ctx context.Context, g Graph) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.graphs[g.ProcessID]; ok {
		return fmt.Errorf("workflow: graph %s: %w", g.ProcessID, ErrExists)
	}
	r := &graphRecord{g: cloneGraph(g), due: newHeapItem(g.ProcessID)}
	r.g.Version = 1
	s.graphs[g.ProcessID] = r
	s.dueGraphs.setDue(&r.due, r.g.RecoveryTime)
	return nil
}

// Graph returns a copy of a process's graph (ErrNotFound).
func (s *MemoryStore) Graph(ctx context.Context, processID string) (Graph, error) {
	if err := ctx.Err(); err != nil {
		return Graph{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.graphs[processID]
	if !ok {
		return Graph{}, fmt.Errorf("workflow: graph %s: %w", processID, ErrNotFound)
	}
	return cloneGraph(r.g), nil
}

// UpdateGraph writes g if the stored version is g.Version (ErrConflict otherwise,
// ErrNotFound if there is none) and returns a copy of it with the next version.
func (s *MemoryStore) UpdateGraph(ctx context.Context, g Graph) (Graph, error) {
	if err := ctx.Err(); err != nil {
		return Graph{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.graphs[g.ProcessID]
	if !ok {
		return Graph{}, fmt.Errorf("workflow: graph %s: %w", g.ProcessID, ErrNotFound)
	}
	if r.g.Version != g.Version {
		return Graph{}, fmt.Errorf("workflow: graph %s: version %d, stored %d: %w",
			g.ProcessID, g.Version, r.g.Version, ErrConflict)
	}
	r.g = cloneGraph(g)
	r.g.Version++
	s.dueGraphs.setDue(&r.due, r.g.RecoveryTime)
	return cloneGraph(r.g), nil
}

// Claim takes the queued task of actorType with the earliest (ReadyAt, ID) not after now,
// applies take to a copy of it and stores that with the next version, in one step under
// the store's lock: two claims never take the same task. take runs under that lock, so it
// must be quick and must not call the store. Changes take makes to ID or Version are
// ignored; any other change is kept and re-indexed (a task take leaves queued stays in
// the queue at its new ReadyAt). take may be nil. Claim costs O(log n) in the queue's
// length.
//
// The queue's last poll is moved to now, never back: claims of several goroutines may
// arrive out of the order of their nows, and the latest poll is what the monitoring wants.
func (s *MemoryStore) Claim(ctx context.Context, actorType string, now time.Time, take func(*Task)) (Task, bool, error) {
	if err := ctx.Err(); err != nil {
		return Task{}, false, err
	}
	now = now.Round(0)
	s.mu.Lock()
	defer s.mu.Unlock()
	if last, ok := s.lastPolled[actorType]; !ok || now.After(last) {
		s.lastPolled[actorType] = now
	}
	q := s.queues[actorType]
	if q == nil || len(q.items) == 0 || q.items[0].at.After(now) {
		return Task{}, false, nil
	}
	r := s.tasks[q.items[0].id]
	t := cloneTask(r.t)
	if take != nil {
		take(&t)
	}
	t.ID, t.Version = r.t.ID, r.t.Version
	s.replaceTask(r, cloneTask(t)) // cloned again: take may have kept pointers into t
	return cloneTask(r.t), true, nil
}

// LastPolled returns the latest now a Claim of actorType was given (zero: never).
func (s *MemoryStore) LastPolled(ctx context.Context, actorType string) (time.Time, error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastPolled[actorType], nil
}

// DueTasks returns copies of up to limit tasks whose non-zero RecoveryTime is not after
// now, by (RecoveryTime, ID), whatever their state. They stay due until updated. It costs
// O(limit log limit), however many are due.
func (s *MemoryStore) DueTasks(ctx context.Context, now time.Time, limit int) ([]Task, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	limit, err := ResolveLimit("limit", limit)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	items := s.dueTasks.upTo(now.Round(0), limit)
	out := make([]Task, len(items))
	for i, it := range items {
		out[i] = cloneTask(s.tasks[it.id].t)
	}
	return out, nil
}

// DueGraphs returns copies of up to limit graphs whose non-zero RecoveryTime is not after
// now, by (RecoveryTime, ProcessID). They stay due until updated.
func (s *MemoryStore) DueGraphs(ctx context.Context, now time.Time, limit int) ([]Graph, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	limit, err := ResolveLimit("limit", limit)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	items := s.dueGraphs.upTo(now.Round(0), limit)
	out := make([]Graph, len(items))
	for i, it := range items {
		out[i] = cloneGraph(s.graphs[it.id].g)
	}
	return out, nil
}

// DueProcesses returns copies of up to limit processes whose non-zero RecoveryTime is not
// after now, by (RecoveryTime, ID), whatever their state. They stay due until updated.
func (s *MemoryStore) DueProcesses(ctx context.Context, now time.Time, limit int) ([]Process, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	limit, err := ResolveLimit("limit", limit)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	items := s.dueProcs.upTo(now.Round(0), limit)
	out := make([]Process, len(items))
	for i, it := range items {
		out[i] = cloneProcess(s.processes[it.id].p)
	}
	return out, nil
}

// replaceTask stores t (already a private copy) in place of r's task with the next version,
// and moves r in the indexes. The caller holds the lock and has checked the version.
func (s *MemoryStore) replaceTask(r *taskRecord, t Task) {
	if t.ProcessID != r.t.ProcessID {
		s.unlistTask(r.t.ProcessID, r.t.ID)
		s.listTask(t.ProcessID, t.ID)
	}
	t.Version = r.t.Version + 1
	r.t = t
	s.indexTask(r)
}

// listTask adds a task to its process's list.
func (s *MemoryStore) listTask(processID, id string) {
	ids := s.byProcess[processID]
	if ids == nil {
		ids = make(map[string]struct{})
		s.byProcess[processID] = ids
	}
	ids[id] = struct{}{}
}

// unlistTask takes a task off its process's list, and drops the list when empty so that
// finished processes leave nothing behind.
func (s *MemoryStore) unlistTask(processID, id string) {
	ids := s.byProcess[processID]
	delete(ids, id)
	if len(ids) == 0 {
		delete(s.byProcess, processID)
	}
}

// indexTask puts r where its task's current fields say in its actor type's queue and in
// the recovery index.
func (s *MemoryStore) indexTask(r *taskRecord) {
	queued := r.t.State == TaskQueued
	if r.queue.pos >= 0 && (!queued || r.queueOf != r.t.Spec.ActorType) {
		s.queues[r.queueOf].remove(&r.queue)
	}
	if queued {
		r.queueOf = r.t.Spec.ActorType
		q := s.queues[r.queueOf]
		if q == nil {
			q = &timeHeap{}
			s.queues[r.queueOf] = q
		}
		q.set(&r.queue, r.t.ReadyAt)
	}
	s.dueTasks.setDue(&r.due, r.t.RecoveryTime)
}

// heapItem is an entity's entry in a timeHeap. It lives in the entity's record and keeps
// its position, so that a change of the entity fixes the heap in place.
type heapItem struct {
	at  time.Time
	id  string
	pos int // index in the heap's items; -1 when not in it
}

func newHeapItem(id string) heapItem { return heapItem{id: id, pos: -1} }

// timeHeap is a min-heap of entities by (time, id): the id breaks ties so that the order is
// total and the same on every run.
type timeHeap struct{ items []*heapItem }

func (h *timeHeap) Len() int           { return len(h.items) }
func (h *timeHeap) Less(i, j int) bool { return itemLess(h.items[i], h.items[j]) }
func (h *timeHeap) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.items[i].pos, h.items[j].pos = i, j
}

// Push and Pop are container/heap's; use set and remove.
func (h *timeHeap) Push(x any) {
	it := x.(*heapItem)
	it.pos = len(h.items)
	h.items = append(h.items, it)
}

func (h *timeHeap) Pop() any {
	n := len(h.items) - 1
	it := h.items[n]
	h.items[n] = nil // no reference kept to a removed entity
	h.items = h.items[:n]
	it.pos = -1
	return it
}

// set puts it in the heap at time at, or moves it there.
func (h *timeHeap) set(it *heapItem, at time.Time) {
	it.at = at
	if it.pos >= 0 {
		heap.Fix(h, it.pos)
		return
	}
	heap.Push(h, it)
}

// remove takes it out of the heap if it is in it.
func (h *timeHeap) remove(it *heapItem) {
	if it.pos >= 0 {
		heap.Remove(h, it.pos)
	}
}

// setDue indexes it at a recovery time; a zero time means never, so it leaves the index.
func (h *timeHeap) setDue(it *heapItem, at time.Time) {
	if at.IsZero() {
		h.remove(it)
		return
	}
	h.set(it, at)
}

// upTo returns the first limit items not after now, in order, without changing the heap.
// It walks the heap best-first: a node's children are candidates once it is taken, and
// the candidates are kept in a small heap of their own, so the cost is O(limit log limit)
// however many items are due; popping and pushing back would cost O(limit log n) and
// write to the heap under what is a read.
func (h *timeHeap) upTo(now time.Time, limit int) []*heapItem {
	if limit <= 0 || len(h.items) == 0 || h.items[0].at.After(now) {
		return nil
	}
	out := make([]*heapItem, 0, min(limit, len(h.items)))
	cand := &candidates{h: h, pos: []int{0}}
	for len(cand.pos) > 0 && len(out) < limit {
		i := heap.Pop(cand).(int)
		out = append(out, h.items[i])
		for c := 2*i + 1; c <= 2*i+2 && c < len(h.items); c++ {
			if !h.items[c].at.After(now) {
				heap.Push(cand, c)
			}
		}
	}
	return out
}

// candidates is a min-heap of positions in h, by their items' order.
type candidates struct {
	h   *timeHeap
	pos []int
}

func (c *candidates) Len() int           { return len(c.pos) }
func (c *candidates) Less(i, j int) bool { return itemLess(c.h.items[c.pos[i]], c.h.items[c.pos[j]]) }
func (c *candidates) Swap(i, j int)      { c.pos[i], c.pos[j] = c.pos[j], c.pos[i] }
func (c *candidates) Push(x any)         { c.pos = append(c.pos, x.(int)) }
func (c *candidates) Pop() any {
	n := len(c.pos) - 1
	p := c.pos[n]
	c.pos = c.pos[:n]
	return p
}

func itemLess(a, b *heapItem) bool {
	if c := a.at.Compare(b.at); c != 0 {
		return c < 0
	}
	return a.id < b.id
}

// The clone functions copy an entity with its own slices, and its times without their
// monotonic reading (see MemoryStore).

func cloneProcess(p Process) Process {
	p.Start = cloneSpec(p.Start)
	p.StartedAt = p.StartedAt.Round(0)
	p.RecoveryTime = p.RecoveryTime.Round(0)
	return p
}

func cloneTask(t Task) Task {
	t.Spec = cloneSpec(t.Spec)
	t.ReadyAt = t.ReadyAt.Round(0)
	t.RecoveryTime = t.RecoveryTime.Round(0)
	t.Deadline = t.Deadline.Round(0)
	t.Result = slices.Clone(t.Result)
	t.Next = slices.Clone(t.Next)
	if t.NextSpecs != nil {
		specs := make([]TaskSpec, len(t.NextSpecs))
		for i, sp := range t.NextSpecs {
			specs[i] = cloneSpec(sp)
		}
		t.NextSpecs = specs
	}
	return t
}

func cloneGraph(g Graph) Graph {
	g.NotFinished = slices.Clone(g.NotFinished)
	g.Finished = slices.Clone(g.Finished)
	g.ChangedAt = g.ChangedAt.Round(0)
	g.RecoveryTime = g.RecoveryTime.Round(0)
	return g
}

func cloneSpec(sp TaskSpec) TaskSpec {
	sp.Args = slices.Clone(sp.Args)
	return sp
}
