package workflow

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/feedkit/feedkit/clock"
)

// Defaults of the preferences.
const (
	DefaultWorkTimeout  = time.Minute
	DefaultIdleTimeout  = 5 * time.Minute
	DefaultScanInterval = time.Second
	DefaultScanBatch    = 100
	DefaultRetryInitial = time.Second
	DefaultRetryMax     = time.Minute
)

// ActorPrefs are the preferences of an actor type; the zero value has the defaults
// (see the package documentation, "Automatic recovery").
type ActorPrefs struct {
	// AcceptFirst accepts the first decision that arrives for a task, whoever sends it
	// (nil means true). False accepts only a decision carrying the task's current Pass:
	// the decision of an actor the task was taken back from is refused.
	AcceptFirst *bool
	// WorkTimeout is how long an actor has for a task; 0 means DefaultWorkTimeout.
	WorkTimeout time.Duration
	// RestartAfterWorkTimeout puts a task whose work timeout passed back in the queue
	// (nil means true); false records a failed decision instead.
	RestartAfterWorkTimeout *bool
	// TaskTimeout bounds a task from its first queueing (0: none). A task still queued
	// then is failed and never handed out; one in progress is failed when
	// ForceFinishAfterTaskTimeout is set, and otherwise given its work timeout to finish.
	TaskTimeout                 time.Duration
	ForceFinishAfterTaskTimeout bool
	// Retry says how a failed decision is retried.
	Retry RetryPolicy
}

// RetryPolicy retries a task whose decision failed, as mature engines do: up to
// MaxAttempts handings-out in all (0 or 1: no retry), each retry after a capped
// exponential backoff.
type RetryPolicy struct {
	MaxAttempts int
	// Initial and Max bound the backoff; 0 means DefaultRetryInitial and DefaultRetryMax.
	Initial, Max time.Duration
}

// ProcessPrefs are the preferences of a process type.
type ProcessPrefs struct {
	// ProcessTimeout is when, after its start, the recovery service looks at a process
	// (0: only when idle); a process still running then is counted and looked at again
	// after as long.
	ProcessTimeout time.Duration
	// IdleTimeout is how long a process may go without a change before the recovery
	// service checks it for consistency; 0 means DefaultIdleTimeout. A new process is
	// checked that soon too, in case its start broke off.
	IdleTimeout time.Duration
	// RestartBroken restarts from its start a process whose entities cannot be repaired
	// (a task its graph lists is in no store and no decision), instead of marking it
	// ProcessBroken for an operator.
	RestartBroken bool
}

// Config holds an Engine's preferences; the zero value has the defaults.
type Config struct {
	// Actors and Processes hold the preferences by actor and process type; a type not
	// listed has the defaults.
	Actors    map[string]ActorPrefs
	Processes map[string]ProcessPrefs
	// ScanInterval is how often Run looks for entities past their recovery time; 0 means
	// DefaultScanInterval. ScanBatch bounds each read, a page of the store's, so it is at
	// most MaxLimit; 0 means DefaultScanBatch.
	ScanInterval time.Duration
	ScanBatch    int
	// Clock is the source of time; nil is the wall clock. (a clocktest.Fake in tests).
	Clock clock.Clock
	// OnError receives the errors the engine recovers from that no call returns (a start
	// whose graph was left to recovery, a repair that failed); nil ignores them. Release
	// returns its own (ErrNotApplied).
	OnError func(error)
	// Logger logs the engine's repairs; nil is silent.
	Logger *slog.Logger
	// Observer is told of the processes started and ended, the tasks polled and
	// released, the timeouts and the repairs, for metrics; nil tells no one.
	Observer Observer
}

// actor is an actor type's resolved preferences.
type actor struct {
	acceptFirst, restart, forceFinish bool
	work, taskTimeout                 time.Duration
	retry                             RetryPolicy
}

func (c *Config) check() error {
	for name, a := range c.Actors {
		switch {
		case a.WorkTimeout < 0:
			return fmt.Errorf("workflow: Config.Actors[%q].WorkTimeout %v must not be negative", name, a.WorkTimeout)
		case a.TaskTimeout < 0:
			return fmt.Errorf("workflow: Config.Actors[%q].TaskTimeout %v must not be negative", name, a.TaskTimeout)
		case a.Retry.MaxAttempts < 0:
			return fmt.Errorf("workflow: Config.Actors[%q].Retry.MaxAttempts %d must not be negative", name, a.Retry.MaxAttempts)
		case a.Retry.Initial < 0 || a.Retry.Max < 0 || (a.Retry.Max != 0 && a.Retry.Max < a.Retry.Initial):
			return fmt.Errorf("workflow: Config.Actors[%q].Retry: Initial %v and Max %v must not be negative, and Max at least Initial", name, a.Retry.Initial, a.Retry.Max)
		}
	}
	for name, p := range c.Processes {
		if p.ProcessTimeout < 0 || p.IdleTimeout < 0 {
			return fmt.Errorf("workflow: Config.Processes[%q]: ProcessTimeout %v and IdleTimeout %v must not be negative", name, p.ProcessTimeout, p.IdleTimeout)
		}
	}
	switch {
	case c.ScanInterval < 0:
		return fmt.Errorf("workflow: Config.ScanInterval %v must not be negative", c.ScanInterval)
	case c.ScanBatch < 0 || c.ScanBatch > MaxLimit:
		return fmt.Errorf("workflow: Config.ScanBatch %d must be from 0 to %d (0 means %d): it is the page size of the scans", c.ScanBatch, MaxLimit, DefaultScanBatch)
	}
	return nil
}

func (c *Config) actor(actorType string) actor {
	a := c.Actors[actorType]
	r := actor{acceptFirst: true, restart: true, forceFinish: a.ForceFinishAfterTaskTimeout,
		work: a.WorkTimeout, taskTimeout: a.TaskTimeout, retry: a.Retry}
	if a.AcceptFirst != nil {
		r.acceptFirst = *a.AcceptFirst
	}
	if a.RestartAfterWorkTimeout != nil {
		r.restart = *a.RestartAfterWorkTimeout
	}
	if r.work == 0 {
		r.work = DefaultWorkTimeout
	}
	if r.retry.Initial == 0 {
		r.retry.Initial = DefaultRetryInitial
	}
	if r.retry.Max == 0 {
		r.retry.Max = max(DefaultRetryMax, r.retry.Initial)
	}
	return r
}

func (c *Config) process(processType string) ProcessPrefs {
	p := c.Processes[processType]
	if p.IdleTimeout == 0 {
		p.IdleTimeout = DefaultIdleTimeout
	}
	return p
}

// backoff returns the wait before retry number n (1 for the first).
func (r RetryPolicy) backoff(n int) time.Duration {
	d := r.Initial
	for i := 1; i < n && d < r.Max; i++ {
		d *= 2
	}
	return min(d, r.Max)
}
