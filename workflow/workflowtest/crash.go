package workflowtest

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/feedkit/feedkit/workflow"
)

// errKilled is what a dead engine's store calls return.
var errKilled = errors.New("workflowtest: the engine died")

// dying is a Store through which an engine dies after a number of writes: the writes
// up to then pass, and every call after them, read or write, fails, as when the
// engine's process is killed between two statements. Counting writes rather than
// calls puts the death between any two changes the engine makes.
type dying struct {
	workflow.Store
	mu   sync.Mutex
	left int // writes still allowed
	dead bool
}

// dieAfter returns s, through which at most writes writes pass.
func dieAfter(s workflow.Store, writes int) *dying { return &dying{Store: s, left: writes} }

// read fails once the engine is dead.
func (d *dying) read() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dead {
		return errKilled
	}
	return nil
}

// write lets one more write pass, or kills the engine.
func (d *dying) write() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.left == 0 {
		d.dead = true
	}
	if d.dead {
		return errKilled
	}
	d.left--
	return nil
}

func (d *dying) isDead() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dead
}

func (d *dying) CreateProcess(ctx context.Context, p workflow.Process) error {
	if err := d.write(); err != nil {
		return err
	}
	return d.Store.CreateProcess(ctx, p)
}

func (d *dying) CreateOrGetProcess(ctx context.Context, p workflow.Process) (workflow.Process, bool, error) {
	if err := d.write(); err != nil {
		return workflow.Process{}, false, err
	}
	return d.Store.CreateOrGetProcess(ctx, p)
}

func (d *dying) Process(ctx context.Context, id string) (workflow.Process, error) {
	if err := d.read(); err != nil {
		return workflow.Process{}, err
	}
	return d.Store.Process(ctx, id)
}

func (d *dying) UpdateProcess(ctx context.Context, p workflow.Process) (workflow.Process, error) {
	if err := d.write(); err != nil {
		return workflow.Process{}, err
	}
	return d.Store.UpdateProcess(ctx, p)
}

func (d *dying) CreateTasks(ctx context.Context, ts []workflow.Task) error {
	if err := d.write(); err != nil {
		return err
	}
	return d.Store.CreateTasks(ctx, ts)
}

func (d *dying) Task(ctx context.Context, id string) (workflow.Task, error) {
	if err := d.read(); err != nil {
		return workflow.Task{}, err
	}
	return d.Store.Task(ctx, id)
}

func (d *dying) UpdateTask(ctx context.Context, t workflow.Task) (workflow.Task, error) {
	if err := d.write(); err != nil {
		return workflow.Task{}, err
	}
	return d.Store.UpdateTask(ctx, t)
}

func (d *dying) ProcessTasks(ctx context.Context, processID string) ([]workflow.Task, error) {
	if err := d.read(); err != nil {
		return nil, err
	}
	return d.Store.ProcessTasks(ctx, processID)
}

func (d *dying) CreateGraph(ctx context.Context, g workflow.Graph) error {
	if err := d.write(); err != nil {
		return err
	}
	return d.Store.CreateGraph(ctx, g)
}

func (d *dying) Graph(ctx context.Context, processID string) (workflow.Graph, error) {
	if err := d.read(); err != nil {
		return workflow.Graph{}, err
	}
	return d.Store.Graph(ctx, processID)
}

func (d *dying) UpdateGraph(ctx context.Context, g workflow.Graph) (workflow.Graph, error) {
	if err := d.write(); err != nil {
		return workflow.Graph{}, err
	}
	return d.Store.UpdateGraph(ctx, g)
}

func (d *dying) Claim(ctx context.Context, actorType string, now time.Time, take func(*workflow.Task)) (workflow.Task, bool, error) {
	if err := d.write(); err != nil {
		return workflow.Task{}, false, err
	}
	return d.Store.Claim(ctx, actorType, now, take)
}

func (d *dying) LastPolled(ctx context.Context, actorType string) (time.Time, error) {
	if err := d.read(); err != nil {
		return time.Time{}, err
	}
	return d.Store.LastPolled(ctx, actorType)
}

func (d *dying) DueTasks(ctx context.Context, now time.Time, limit int) ([]workflow.Task, error) {
	if err := d.read(); err != nil {
		return nil, err
	}
	return d.Store.DueTasks(ctx, now, limit)
}

func (d *dying) DueGraphs(ctx context.Context, now time.Time, limit int) ([]workflow.Graph, error) {
	if err := d.read(); err != nil {
		return nil, err
	}
	return d.Store.DueGraphs(ctx, now, limit)
}

func (d *dying) DueProcesses(ctx context.Context, now time.Time, limit int) ([]workflow.Process, error) {
	if err := d.read(); err != nil {
		return nil, err
	}
	return d.Store.DueProcesses(ctx, now, limit)
}

func (d *dying) SearchProcesses(ctx context.Context, q workflow.Query) ([]workflow.Process, int, error) {
	if err := d.read(); err != nil {
		return nil, 0, err
	}
	return d.Store.SearchProcesses(ctx, q)
}

func (d *dying) CreateJob(ctx context.Context, j workflow.Job) error {
	if err := d.write(); err != nil {
		return err
	}
	return d.Store.CreateJob(ctx, j)
}

func (d *dying) Job(ctx context.Context, id string) (workflow.Job, error) {
	if err := d.read(); err != nil {
		return workflow.Job{}, err
	}
	return d.Store.Job(ctx, id)
}

func (d *dying) UpdateJob(ctx context.Context, j workflow.Job) (workflow.Job, error) {
	if err := d.write(); err != nil {
		return workflow.Job{}, err
	}
	return d.Store.UpdateJob(ctx, j)
}

func (d *dying) Jobs(ctx context.Context) ([]workflow.Job, error) {
	if err := d.read(); err != nil {
		return nil, err
	}
	return d.Store.Jobs(ctx)
}
