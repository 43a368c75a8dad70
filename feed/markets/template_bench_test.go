package markets

import (
	"runtime"
	"testing"

	"github.com/feedkit/feedkit/feed"
)

// BenchmarkTemplateRender renders a compiled outcome name template of two expressions, the
// handicap outcome "{$competitor1} ({+hcp})" of market 16, with its market line's
// specifiers and competitor names at hand: the rendering alone, which
// BenchmarkOutcomeName's names through Names are compared with.
func BenchmarkTemplateRender(b *testing.B) {
	tpl, err := ParseTemplate("{$competitor1} ({+hcp})")
	if err != nil {
		b.Fatal(err)
	}
	specs := feed.Specifiers("hcp=-1.5")
	ent := constEntities{}
	const want = "Bayern Munich (-1.5)"
	if name, err := tpl.Render(specs, ent); err != nil || name != want {
		b.Fatalf("Render = %q, %v; want %q", name, err, want)
	}
	b.ReportAllocs()
	var name string
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	n := 0
	for b.Loop() {
		name, _ = tpl.Render(specs, ent)
		n++
	}
	runtime.ReadMemStats(&after)
	if name != want {
		b.Fatalf("Render = %q, want %q", name, want)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/op")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(n), "allocs/op")
}
