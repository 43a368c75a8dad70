package feed

import (
	"sync"
	"testing"
	"time"
)

// Benchmarks of the protocol layer. Targets (issue 2): decode at least 10x faster than
// encoding/xml on a 1 KiB and a 20 KiB odds_change; routing-key parse at most 300 ns and
// 1 allocation; peek at most 10% of an odds_change decode. Each ratio is measured against
// its baseline in the same run. Figures and the command are in BENCHMARKS.md.

func BenchmarkDecode(b *testing.B) {
	for _, f := range []struct{ typ, file string }{
		{"odds_change", "odds_change.xml"},
		{"bet_stop", "bet_stop.xml"},
		{"bet_settlement", "bet_settlement.xml"},
		{"rollback_bet_settlement", "rollback_bet_settlement.xml"},
		{"bet_cancel", "bet_cancel.xml"},
		{"rollback_bet_cancel", "rollback_bet_cancel.xml"},
		{"fixture_change", "fixture_change.xml"},
		{"alive", "alive.xml"},
		{"snapshot_complete", "snapshot_complete.xml"},
	} {
		b.Run(f.typ, func(b *testing.B) {
			body := readFixture(b, f.file)
			typ := ParseMessageType(f.typ)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Decode(typ, body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeVsEncodingXML's baseline is encoding/xml's Unmarshal into the reference
// structs, without the reference's own well-formedness pass (which reads the document twice
// more): the cost a user of encoding/xml would pay.
func BenchmarkDecodeVsEncodingXML(b *testing.B) {
	for _, size := range []struct{ name, file string }{
		{"1KiB", "odds_change_1k.xml"},
		{"20KiB", "odds_change_20k.xml"},
	} {
		b.Run(size.name, func(b *testing.B) {
			body := readFixture(b, size.file)
			ref := baseline("encoding/xml "+size.file, func() {
				if _, err := referenceDecodeUnchecked(MessageOddsChange, body); err != nil {
					b.Fatal(err)
				}
			})
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := DecodeOddsChange(body); err != nil {
					b.Fatal(err)
				}
			}
			fast := perOp(b)
			b.ReportMetric(float64(ref.Nanoseconds()), "encoding-xml-ns/op")
			b.ReportMetric(float64(ref)/float64(fast), "x-vs-encoding-xml")
		})
	}
}

func BenchmarkPeek(b *testing.B) {
	body := readFixture(b, "odds_change_1k.xml")
	decode := baseline("decode odds_change_1k.xml", func() {
		if _, err := DecodeOddsChange(body); err != nil {
			b.Fatal(err)
		}
	})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Peek(body); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(100*float64(perOp(b))/float64(decode), "pct-of-decode")
}

func BenchmarkRoutingKeyParse(b *testing.B) {
	const key = "hi.-.live.odds_change.1.sr:match.1234.-"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseRoutingKey(key); err != nil {
			b.Fatal(err)
		}
	}
}

func perOp(b *testing.B) time.Duration { return b.Elapsed() / time.Duration(b.N) }

var baselines sync.Map // name → time.Duration

// baseline measures fn's time per call once per run (at least 300 ms of calls), so that a
// benchmark can report its ratio to it; the benchmark framework calls a benchmark several
// times while it sizes b.N.
func baseline(name string, fn func()) time.Duration {
	if d, ok := baselines.Load(name); ok {
		return d.(time.Duration)
	}
	fn() // warm up
	n, start := 0, time.Now()
	for n < 20 || time.Since(start) < 300*time.Millisecond {
		fn()
		n++
	}
	d := time.Since(start) / time.Duration(n)
	baselines.Store(name, d)
	return d
}
