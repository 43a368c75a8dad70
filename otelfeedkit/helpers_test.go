package otelfeedkit_test

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/feedkit/feedkit/otelfeedkit"
)

// newMetrics returns Metrics on a MeterProvider of the SDK read by a ManualReader.
func newMetrics(t testing.TB, opts ...otelfeedkit.Option) (*otelfeedkit.Metrics, *sdkmetric.ManualReader) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	m, err := otelfeedkit.New(append([]otelfeedkit.Option{otelfeedkit.WithMeterProvider(mp)}, opts...)...)
	require.NoError(t, err)
	return m, reader
}

// collect reads every metric with data, by name.
func collect(t testing.TB, r *sdkmetric.ManualReader) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.Collect(context.Background(), &rm))
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		require.Equal(t, otelfeedkit.ScopeName, sm.Scope.Name)
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// point is one data point as a test compares it: its attributes as "key=value" sorted,
// and its value (a histogram's count and sum).
type point struct {
	attrs []string
	value float64
	count uint64 // histograms only
}

// points returns m's data points, sorted by attributes.
func points(m metricdata.Metrics) []point {
	var out []point
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			out = append(out, point{attrs: kvStrings(p.Attributes.ToSlice()), value: float64(p.Value)})
		}
	case metricdata.Sum[float64]:
		for _, p := range d.DataPoints {
			out = append(out, point{attrs: kvStrings(p.Attributes.ToSlice()), value: p.Value})
		}
	case metricdata.Gauge[int64]:
		for _, p := range d.DataPoints {
			out = append(out, point{attrs: kvStrings(p.Attributes.ToSlice()), value: float64(p.Value)})
		}
	case metricdata.Gauge[float64]:
		for _, p := range d.DataPoints {
			out = append(out, point{attrs: kvStrings(p.Attributes.ToSlice()), value: p.Value})
		}
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			out = append(out, point{attrs: kvStrings(p.Attributes.ToSlice()), value: p.Sum, count: p.Count})
		}
	default:
		panic("unexpected data " + m.Name)
	}
	slices.SortFunc(out, func(a, b point) int { return slices.Compare(a.attrs, b.attrs) })
	return out
}

// kvStrings is kvs as "key=value", sorted.
func kvStrings(kvs []attribute.KeyValue) []string {
	out := make([]string, 0, len(kvs))
	for _, kv := range kvs {
		out = append(out, string(kv.Key)+"="+kv.Value.String())
	}
	slices.Sort(out)
	return out
}
