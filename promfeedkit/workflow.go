package promfeedkit

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/feedkit/feedkit/workflow"
)

// The workflow metrics' label names.
const (
	labelProcessType = "feedkit_process_type"
	labelActorType   = "feedkit_actor_type"
	labelState       = "feedkit_state"
	labelTimeoutKind = "feedkit_timeout_kind"
	labelRepairKind  = "feedkit_repair_kind"
)

// CountTimeout bounds the store queries a scrape makes for feedkit_workflow_processes:
// under Prometheus' default scrape timeout of 10 s, so that a slow store costs the
// scrape this gauge, not every metric.
const CountTimeout = 5 * time.Second

// processStates are the states feedkit_workflow_processes reports, each at every scrape.
var processStates = []workflow.ProcessState{workflow.ProcessRunning, workflow.ProcessFinished,
	workflow.ProcessFailed, workflow.ProcessAborted, workflow.ProcessBroken}

// WorkflowMetrics is a workflow.Observer that keeps a workflow engine's metrics in
// Prometheus instruments, registered by NewWorkflow. Set it as workflow.Config.Observer;
// call WatchEngine for the count of processes by state, read from the store at each
// scrape.
//
// Each change is told by the engine that made it, so that one WorkflowMetrics per
// engine, summed over the engines of one store, counts each change once. The count by
// state is the store's: watch it from one engine per store.
type WorkflowMetrics struct {
	started, restarted, ended  *prometheus.CounterVec
	polled, released           *prometheus.CounterVec
	taskTimeouts, procTimeouts *prometheus.CounterVec
	repairs                    *prometheus.CounterVec
	countFailures              prometheus.Counter
	processesDesc              *prometheus.Desc
	engine                     atomic.Pointer[workflow.Engine]
}

var _ workflow.Observer = (*WorkflowMetrics)(nil)

// NewWorkflow makes a workflow engine's metrics and registers them with reg, all or
// none. reg may not be nil.
func NewWorkflow(reg prometheus.Registerer) (*WorkflowMetrics, error) {
	if reg == nil {
		return nil, errors.New("promfeedkit: NewWorkflow: the Registerer is nil (pass a registry: prometheus.NewRegistry(), or prometheus.DefaultRegisterer deliberately)")
	}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	m := &WorkflowMetrics{
		started: counter("feedkit_workflow_processes_started_total",
			"Processes created by Start; a start that got its idempotency key's process back is not one.", labelProcessType),
		restarted: counter("feedkit_workflow_processes_restarted_total",
			"Processes run again by Restart, by the state they were restarted from.", labelProcessType, labelState),
		ended: counter("feedkit_workflow_processes_ended_total",
			"Processes that ended, by how.", labelProcessType, labelState),
		polled: counter("feedkit_workflow_tasks_polled_total",
			"Tasks handed to an actor by Poll.", labelActorType),
		released: counter("feedkit_workflow_tasks_released_total",
			"Actors' decisions accepted by Release, by what became of the task.", labelActorType, labelResult),
		taskTimeouts: counter("feedkit_workflow_tasks_timeouts_total",
			"Tasks' timeouts acted on: work (taken back from a silent actor) or task (failed, not done in time).", labelTimeoutKind, labelActorType),
		procTimeouts: counter("feedkit_workflow_processes_timeouts_total",
			"Processes found running past their ProcessTimeout, once per timeout passed.", labelProcessType),
		repairs: counter("feedkit_workflow_repairs_total",
			"Repairs made to processes a crash or a store failure left inconsistent.", labelProcessType, labelRepairKind),
		countFailures: prometheus.NewCounter(prometheus.CounterOpts{Name: "feedkit_workflow_count_failures_total",
			Help: "Scrapes whose count of processes by state failed, and which left feedkit_workflow_processes out."}),
		processesDesc: prometheus.NewDesc("feedkit_workflow_processes",
			"Processes in the store, by state.", []string{labelState}, nil),
	}
	if err := reg.Register(workflowCollector{m}); err != nil {
		return nil, fmt.Errorf("promfeedkit: NewWorkflow: %w", err)
	}
	return m, nil
}

// WatchEngine makes each scrape count e's processes by state (Engine.CountByState: one
// store query per state, within CountTimeout) for feedkit_workflow_processes. A count
// that fails leaves the gauge out of that scrape and is counted in
// feedkit_workflow_count_failures_total. A WorkflowMetrics watches one engine.
func (m *WorkflowMetrics) WatchEngine(e *workflow.Engine) error {
	if e == nil {
		return errors.New("promfeedkit: WatchEngine: the Engine is nil")
	}
	if !m.engine.CompareAndSwap(nil, e) {
		return errors.New("promfeedkit: WatchEngine: this WorkflowMetrics already watches an engine (the count is the store's: one engine per store is enough)")
	}
	return nil
}

// WorkflowProcessStarted counts in feedkit_workflow_processes_started_total.
func (m *WorkflowMetrics) WorkflowProcessStarted(processType string) {
	m.started.WithLabelValues(processType).Inc()
}

// WorkflowProcessRestarted counts in feedkit_workflow_processes_restarted_total.
func (m *WorkflowMetrics) WorkflowProcessRestarted(processType string, from workflow.ProcessState) {
	m.restarted.WithLabelValues(processType, from.String()).Inc()
}

// WorkflowProcessEnded counts in feedkit_workflow_processes_ended_total.
func (m *WorkflowMetrics) WorkflowProcessEnded(processType string, state workflow.ProcessState) {
	m.ended.WithLabelValues(processType, state.String()).Inc()
}

// WorkflowTaskPolled counts in feedkit_workflow_tasks_polled_total.
func (m *WorkflowMetrics) WorkflowTaskPolled(actorType string) {
	m.polled.WithLabelValues(actorType).Inc()
}

// WorkflowTaskReleased counts in feedkit_workflow_tasks_released_total.
func (m *WorkflowMetrics) WorkflowTaskReleased(actorType string, result workflow.ReleaseResult) {
	m.released.WithLabelValues(actorType, result.String()).Inc()
}

// WorkflowTaskTimeout counts in feedkit_workflow_tasks_timeouts_total.
func (m *WorkflowMetrics) WorkflowTaskTimeout(kind workflow.TimeoutKind, actorType string) {
	m.taskTimeouts.WithLabelValues(kind.String(), actorType).Inc()
}

// WorkflowProcessTimeout counts in feedkit_workflow_processes_timeouts_total.
func (m *WorkflowMetrics) WorkflowProcessTimeout(processType string) {
	m.procTimeouts.WithLabelValues(processType).Inc()
}

// WorkflowRepaired counts in feedkit_workflow_repairs_total.
func (m *WorkflowMetrics) WorkflowRepaired(processType string, kind workflow.RepairKind) {
	m.repairs.WithLabelValues(processType, kind.String()).Inc()
}

// workflowCollector is what NewWorkflow registers, as one collector so that the
// registration succeeds or fails whole.
type workflowCollector struct{ m *WorkflowMetrics }

func (c workflowCollector) vectors() []prometheus.Collector {
	m := c.m
	return []prometheus.Collector{m.started, m.restarted, m.ended, m.polled, m.released,
		m.taskTimeouts, m.procTimeouts, m.repairs, m.countFailures}
}

// Describe implements prometheus.Collector.
func (c workflowCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, v := range c.vectors() {
		v.Describe(ch)
	}
	ch <- c.m.processesDesc
}

// Collect implements prometheus.Collector.
func (c workflowCollector) Collect(ch chan<- prometheus.Metric) {
	e := c.m.engine.Load()
	if e != nil {
		// Counted before the counters are sent, so that this scrape shows its own failure.
		ctx, cancel := context.WithTimeout(context.Background(), CountTimeout)
		n, err := e.CountByState(ctx)
		cancel()
		if err != nil {
			c.m.countFailures.Inc()
		} else {
			for _, s := range processStates {
				ch <- prometheus.MustNewConstMetric(c.m.processesDesc, prometheus.GaugeValue, float64(n[s]), s.String())
			}
		}
	}
	for _, v := range c.vectors() {
		v.Collect(ch)
	}
}
