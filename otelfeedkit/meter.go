package otelfeedkit

import (
	"errors"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
)

// meterOf returns the Meter named ScopeName of the provider the options give (the
// global one by default), for NewWorkflow and NewCarousel: their instruments need no
// other option.
func meterOf(opts []Option) metric.Meter {
	var c config
	for _, o := range opts {
		o(&c)
	}
	if c.provider == nil {
		c.provider = otel.GetMeterProvider()
	}
	return c.provider.Meter(ScopeName, metric.WithInstrumentationVersion(version()))
}

// maker makes instruments on a Meter and keeps every error, so that a constructor
// reports all of them at once.
type maker struct {
	meter metric.Meter
	errs  []error
}

func (mk *maker) check(err error) {
	if err != nil {
		mk.errs = append(mk.errs, err)
	}
}

// err returns the errors met, joined, or nil.
func (mk *maker) err() error { return errors.Join(mk.errs...) }

func (mk *maker) counter(name, unit, desc string) metric.Int64Counter {
	c, err := mk.meter.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
	mk.check(err)
	return c
}

// histogram makes a histogram of seconds, with buckets as advice.
func (mk *maker) histogram(name, desc string, buckets []float64) metric.Float64Histogram {
	h, err := mk.meter.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
		metric.WithExplicitBucketBoundaries(buckets...))
	mk.check(err)
	return h
}

func (mk *maker) intGauge(name, unit, desc string) metric.Int64ObservableGauge {
	g, err := mk.meter.Int64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
	mk.check(err)
	return g
}

func (mk *maker) floatGauge(name, unit, desc string) metric.Float64ObservableGauge {
	g, err := mk.meter.Float64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
	mk.check(err)
	return g
}
