package otelfeedkit

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/feedkit/feedkit/workflow"
)

// The attribute keys of the workflow metrics.
const (
	keyProcessType = attribute.Key("feedkit.process.type")
	keyActorType   = attribute.Key("feedkit.actor.type")
	keyState       = attribute.Key("feedkit.state")
	keyTimeoutKind = attribute.Key("feedkit.timeout.kind")
	keyRepairKind  = attribute.Key("feedkit.repair.kind")
)

// processStates are the states feedkit.workflow.processes reports at each collection,
// every one of them, 0 included, so that a state emptied shows as 0 and not as a gap.
var processStates = []workflow.ProcessState{workflow.ProcessRunning, workflow.ProcessFinished,
	workflow.ProcessFailed, workflow.ProcessAborted, workflow.ProcessBroken}

// WorkflowMetrics records what a workflow engine does as OpenTelemetry metrics. It is a
// workflow.Observer: set it as workflow.Config.Observer. Call WatchEngine for the count
// of processes by state, which is read from the store, not told. Its methods may be
// called concurrently.
//
// An engine tells only the changes it made itself, so one WorkflowMetrics per engine,
// summed over the engines sharing a store, counts each change once.
type WorkflowMetrics struct {
	meter metric.Meter

	started, restarted, ended     metric.Int64Counter
	polled, released              metric.Int64Counter
	taskTimeouts, processTimeouts metric.Int64Counter
	repairs                       metric.Int64Counter
	processes                     metric.Int64ObservableGauge

	// The attribute sets of the calls, by their labels.
	byProcess      cache[string, attrs]
	byProcessState cache[enumKey, attrs]
	byActor        cache[string, attrs]
	byRelease      cache[enumKey, attrs]
	byTimeout      cache[enumKey, attrs]
	byRepair       cache[enumKey, attrs]
	stateAttrs     []attrs // of processStates, in their order

	guard watchGuard
}

// enumKey is a program's name (a process or actor type) and one of the workflow's small
// enums, as a cache key.
type enumKey struct {
	name string
	enum uint8
}

var _ workflow.Observer = (*WorkflowMetrics)(nil)

// NewWorkflow makes the workflow instruments of the package's table with the Meter named
// ScopeName. Of the options only WithMeterProvider matters: no pool is named, and no
// time is measured on a clock here.
func NewWorkflow(opts ...Option) (*WorkflowMetrics, error) {
	mk := &maker{meter: meterOf(opts)}
	w := &WorkflowMetrics{meter: mk.meter}
	w.started = mk.counter("feedkit.workflow.processes.started", "{process}",
		"Processes created by Start; a start that got its idempotency key's process back is not one.")
	w.restarted = mk.counter("feedkit.workflow.processes.restarted", "{process}",
		"Processes run again by a restart, by the state they were restarted from.")
	w.ended = mk.counter("feedkit.workflow.processes.ended", "{process}",
		"Processes that ended, by the state they ended in.")
	w.processes = mk.intGauge("feedkit.workflow.processes", "{process}",
		"Processes the store holds, by state: the store's count, shared by every engine on it.")
	w.polled = mk.counter("feedkit.workflow.tasks.polled", "{task}",
		"Tasks handed to an actor by Poll; empty polls are not counted.")
	w.released = mk.counter("feedkit.workflow.tasks.released", "{task}",
		"Actors' decisions accepted by Release, by what became of the task.")
	w.taskTimeouts = mk.counter("feedkit.workflow.tasks.timeouts", "{timeout}",
		"Task timeouts acted on: work (taken back from a silent actor) or task (failed, not done in time).")
	w.processTimeouts = mk.counter("feedkit.workflow.processes.timeouts", "{timeout}",
		"Processes found running past their process timeout, once per timeout passed.")
	w.repairs = mk.counter("feedkit.workflow.repairs", "{repair}",
		"Repairs made to processes that a crash or a store failure left inconsistent.")
	if err := mk.err(); err != nil {
		return nil, fmt.Errorf("otelfeedkit: NewWorkflow: %w", err)
	}
	for _, s := range processStates {
		w.stateAttrs = append(w.stateAttrs, newAttrs(keyState.String(s.String())))
	}
	return w, nil
}

// WatchEngine reports feedkit.workflow.processes from e.CountByState at each
// collection, with the collection's context: every state, 0 included. The count is the
// store's, whatever engine reads it: watch one engine per store. Each collection costs
// one count query per state, five in all; bound them with the reader's timeout. A count
// that fails reports nothing, and its error goes back to the collection.
//
// A WorkflowMetrics watches one engine: a second WatchEngine is an error until the
// first's registration is unregistered, which stops the reports.
func (w *WorkflowMetrics) WatchEngine(e *workflow.Engine) (metric.Registration, error) {
	if e == nil {
		return nil, errors.New("otelfeedkit: WatchEngine: the Engine is nil")
	}
	observe := func(ctx context.Context, o metric.Observer) error {
		n, err := e.CountByState(ctx)
		if err != nil {
			return fmt.Errorf("otelfeedkit: feedkit.workflow.processes: %w", err)
		}
		for i, s := range processStates {
			o.ObserveInt64(w.processes, int64(n[s]), w.stateAttrs[i].observe...)
		}
		return nil
	}
	return w.guard.register(w.meter, "WatchEngine",
		"an engine is watched already; a WorkflowMetrics watches one (unregister the first to watch another)",
		observe, w.processes)
}

// process returns the attribute set of a process type alone.
func (w *WorkflowMetrics) process(typ string) attrs {
	if a, ok := w.byProcess.lookup(typ); ok {
		return a
	}
	return w.byProcess.get(typ, func() attrs { return newAttrs(keyProcessType.String(typ)) })
}

// processState returns the attribute set of a process type and a state.
func (w *WorkflowMetrics) processState(typ string, s workflow.ProcessState) attrs {
	k := enumKey{typ, uint8(s)}
	if a, ok := w.byProcessState.lookup(k); ok {
		return a
	}
	return w.byProcessState.get(k, func() attrs {
		return newAttrs(keyProcessType.String(typ), keyState.String(s.String()))
	})
}

// actor returns the attribute set of an actor type alone.
func (w *WorkflowMetrics) actor(typ string) attrs {
	if a, ok := w.byActor.lookup(typ); ok {
		return a
	}
	return w.byActor.get(typ, func() attrs { return newAttrs(keyActorType.String(typ)) })
}

// WorkflowProcessStarted counts in feedkit.workflow.processes.started.
func (w *WorkflowMetrics) WorkflowProcessStarted(processType string) {
	w.started.Add(bg, 1, w.process(processType).add...)
}

// WorkflowProcessRestarted counts in feedkit.workflow.processes.restarted, by the state
// the process was restarted from.
func (w *WorkflowMetrics) WorkflowProcessRestarted(processType string, from workflow.ProcessState) {
	w.restarted.Add(bg, 1, w.processState(processType, from).add...)
}

// WorkflowProcessEnded counts in feedkit.workflow.processes.ended, by the state the
// process ended in.
func (w *WorkflowMetrics) WorkflowProcessEnded(processType string, state workflow.ProcessState) {
	w.ended.Add(bg, 1, w.processState(processType, state).add...)
}

// WorkflowTaskPolled counts in feedkit.workflow.tasks.polled.
func (w *WorkflowMetrics) WorkflowTaskPolled(actorType string) {
	w.polled.Add(bg, 1, w.actor(actorType).add...)
}

// WorkflowTaskReleased counts in feedkit.workflow.tasks.released, by result.
func (w *WorkflowMetrics) WorkflowTaskReleased(actorType string, result workflow.ReleaseResult) {
	k := enumKey{actorType, uint8(result)}
	a, ok := w.byRelease.lookup(k)
	if !ok {
		a = w.byRelease.get(k, func() attrs {
			return newAttrs(keyActorType.String(actorType), keyResult.String(result.String()))
		})
	}
	w.released.Add(bg, 1, a.add...)
}

// WorkflowTaskTimeout counts in feedkit.workflow.tasks.timeouts, by kind.
func (w *WorkflowMetrics) WorkflowTaskTimeout(kind workflow.TimeoutKind, actorType string) {
	k := enumKey{actorType, uint8(kind)}
	a, ok := w.byTimeout.lookup(k)
	if !ok {
		a = w.byTimeout.get(k, func() attrs {
			return newAttrs(keyTimeoutKind.String(kind.String()), keyActorType.String(actorType))
		})
	}
	w.taskTimeouts.Add(bg, 1, a.add...)
}

// WorkflowProcessTimeout counts in feedkit.workflow.processes.timeouts.
func (w *WorkflowMetrics) WorkflowProcessTimeout(processType string) {
	w.processTimeouts.Add(bg, 1, w.process(processType).add...)
}

// WorkflowRepaired counts in feedkit.workflow.repairs, by kind.
func (w *WorkflowMetrics) WorkflowRepaired(processType string, kind workflow.RepairKind) {
	k := enumKey{processType, uint8(kind)}
	a, ok := w.byRepair.lookup(k)
	if !ok {
		a = w.byRepair.get(k, func() attrs {
			return newAttrs(keyProcessType.String(processType), keyRepairKind.String(kind.String()))
		})
	}
	w.repairs.Add(bg, 1, a.add...)
}
