package markets

import (
	"testing"
	"time"
)

// BenchmarkMarketsParse parses a markets.xml?include_mappings=true document of 1,000
// markets (about 1.5 MB, shaped like the real one: see buildMarketsDoc) with
// ParseDescriptions, and measures encoding/xml's reading of the same document in the same
// run: x-of-encoding-xml is how many times faster ParseDescriptions is, encoding-xml-ns/op
// and encoding-xml-allocs/op the reference's own figures.
func BenchmarkMarketsParse(b *testing.B) {
	doc := buildMarketsDoc(1000)
	ref := func() {
		if _, err := referenceDescriptions(doc); err != nil {
			b.Fatal(err)
		}
	}
	// testing.Benchmark cannot run inside a benchmark (both take the framework's lock),
	// so the baseline is timed by hand: at least 10 calls and 500 ms.
	ref()
	n, start := 0, time.Now()
	for n < 10 || time.Since(start) < 500*time.Millisecond {
		ref()
		n++
	}
	refNs := float64(time.Since(start).Nanoseconds()) / float64(n)
	refAllocs := testing.AllocsPerRun(3, ref)

	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseDescriptions(doc); err != nil {
			b.Fatal(err)
		}
	}
	fast := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(refNs/fast, "x-of-encoding-xml")
	b.ReportMetric(refNs, "encoding-xml-ns/op")
	b.ReportMetric(refAllocs, "encoding-xml-allocs/op")
}
