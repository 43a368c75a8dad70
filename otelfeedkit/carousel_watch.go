package otelfeedkit

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/metric"

	"github.com/feedkit/feedkit/carousel"
)

// WatchScheduler reports the levels of s, read from s.Status() once per collection:
// each cycle's iteration, items, completed items, errors, progress, throttle, main state
// and health, and whether the scheduler is active. A cycle deleted is no longer
// reported.
//
// A CarouselMetrics watches one scheduler: a second WatchScheduler is an error until the
// first's registration is unregistered, which stops the reports.
func (c *CarouselMetrics) WatchScheduler(s *carousel.Scheduler) (metric.Registration, error) {
	if s == nil {
		return nil, errors.New("otelfeedkit: WatchScheduler: the Scheduler is nil")
	}
	observe := func(_ context.Context, o metric.Observer) error {
		c.observe(s.Status(), o)
		return nil
	}
	return c.guard.register(c.meter, "WatchScheduler",
		"a scheduler is watched already; a CarouselMetrics watches one (unregister the first to watch another)",
		observe, c.iteration, c.items, c.completed, c.errors, c.progress, c.throttle, c.state, c.unhealthy, c.active)
}

// observe reports the levels of one Status.
func (c *CarouselMetrics) observe(st carousel.Status, o metric.Observer) {
	o.ObserveInt64(c.active, flag(st.Active))
	for _, cs := range st.Cycles {
		a, m := c.cycle(cs.ID), cs.Metadata
		o.ObserveInt64(c.iteration, int64(m.Iteration), a.cycle.observe...)
		o.ObserveInt64(c.items, int64(m.Total), a.cycle.observe...)
		o.ObserveInt64(c.completed, int64(m.Completed), a.cycle.observe...)
		o.ObserveInt64(c.errors, int64(m.Errors), a.cycle.observe...)
		o.ObserveFloat64(c.progress, m.Progress(), a.cycle.observe...)
		o.ObserveFloat64(c.throttle, m.Throttle.Seconds(), a.cycle.observe...)
		var main carousel.State // none: every state reports 0
		if len(m.States) > 0 {
			main = m.States[0]
		}
		for i, s := range cycleStates {
			o.ObserveInt64(c.state, flag(s == main), a.states[i].observe...)
		}
		o.ObserveInt64(c.unhealthy, flag(m.Has(carousel.Unhealthy)), a.cycle.observe...)
	}
}

// flag is a boolean as a gauge's value: 1 or 0.
func flag(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
