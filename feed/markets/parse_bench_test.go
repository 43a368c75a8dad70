package markets

import (
	"testing"
	"time"
)

// BenchmarkMarketsParse parses a markets.xml?include_mappings=true document of 1,000
// markets (about 1.2 MB, shaped like the real one: see buildMarketsDoc) with
// ParseDescriptions, and compares encoding/xml's reading of the same document in the same
// run: x-of-encoding-xml is how many times faster ParseDescriptions is, encoding-xml-ns/op
// and encoding-xml-allocs/op the reference's own figures.
//
// testing.Benchmark cannot run inside a benchmark (both take the framework's lock), so
// the comparison is timed by hand, the two parsers in turn, and from the fastest call of
// each: on a busy machine, a slow spell then slows neither more than the other.
func BenchmarkMarketsParse(b *testing.B) {
	doc := buildMarketsDoc(1000)
	ref := func() {
		if _, err := referenceDescriptions(doc); err != nil {
			b.Fatal(err)
		}
	}
	fast := func() {
		if _, err := ParseDescriptions(doc); err != nil {
			b.Fatal(err)
		}
	}
	refAllocs := testing.AllocsPerRun(3, ref)
	bestRef, bestFast := time.Duration(1<<62), time.Duration(1<<62)
	for n, start := 0, time.Now(); n < 10 || time.Since(start) < time.Second; n++ {
		t := time.Now()
		ref()
		bestRef = min(bestRef, time.Since(t))
		t = time.Now()
		fast()
		bestFast = min(bestFast, time.Since(t))
	}

	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		fast()
	}
	b.ReportMetric(float64(bestRef)/float64(bestFast), "x-of-encoding-xml")
	b.ReportMetric(float64(bestRef.Nanoseconds()), "encoding-xml-ns/op")
	b.ReportMetric(refAllocs, "encoding-xml-allocs/op")
}
