package markets_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/markets"
)

// competitors gives the template baseline its names at hand.
type competitors struct{}

func (competitors) Competitor(n int) (string, error) {
	return [...]string{"", "Arsenal FC", "Chelsea FC"}[n], nil
}
func (competitors) Event() (string, error)           { return "Arsenal FC vs Chelsea FC", nil }
func (competitors) Profile(feed.URN) (string, error) { return "", nil }

// BenchmarkOutcomeName names a cached outcome through Names, as a listener does: the
// handicap outcome 1714 of market 16, "{$competitor1} ({+hcp})", a template of two
// expressions, with the descriptions and the event's summary cached. Target: ≤ 1 µs and
// ≤ 2 allocs/op. x-of-render is its time over rendering the compiled template alone with
// the names at hand, measured in the same run: what the lookups cost.
func BenchmarkOutcomeName(b *testing.B) {
	ctx := context.Background()
	n, err := markets.New(newFakeAPI(), markets.Config{})
	if err != nil {
		b.Fatal(err)
	}
	const want = "Arsenal FC (-1.5)"
	specs := feed.Specifiers("hcp=-1.5")
	if got, err := n.OutcomeName(ctx, "en", match, 16, specs, "1714"); err != nil || got != want {
		b.Fatalf("OutcomeName = %q, %v; want %q", got, err, want)
	}
	tpl, err := markets.ParseTemplate("{$competitor1} ({+hcp})")
	if err != nil {
		b.Fatal(err)
	}
	render := renderBaseline(func() { _, _ = tpl.Render(specs, competitors{}) })
	b.ReportAllocs()
	var got string
	for b.Loop() {
		got, _ = n.OutcomeName(ctx, "en", match, 16, specs, "1714")
	}
	if got != want {
		b.Fatalf("OutcomeName = %q, want %q", got, want)
	}
	perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(perOp/float64(render.Nanoseconds()), "x-of-render")
	b.ReportMetric(float64(render.Nanoseconds()), "render-ns/op")
}

var (
	renderOnce sync.Once
	renderTime time.Duration
)

// renderBaseline times fn per call once per run (at least 300 ms of calls; the benchmark
// framework calls a benchmark several times while it sizes b.N, and testing.Benchmark
// cannot run inside a benchmark).
func renderBaseline(fn func()) time.Duration {
	renderOnce.Do(func() {
		fn()
		n, start := 0, time.Now()
		for n < 1000 || time.Since(start) < 300*time.Millisecond {
			fn()
			n++
		}
		renderTime = time.Since(start) / time.Duration(n)
	})
	return renderTime
}
