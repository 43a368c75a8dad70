package recovery_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/feedkit/feedkit/recovery"
)

// BenchmarkLimit measures one rate-limit check: Allow over the requests of the busiest
// tier (60 per hour, 20 per 10 minutes) with its windows full, and Reserve of the
// in-memory ledger, which also prunes and records. Target: ≤ 1 µs per check.
//
// Each is timed against a token bucket (golang.org/x/time/rate) doing the same check in
// the same run, and reports rate-limiter-ns/op and x-of-rate-limiter, its time over the
// bucket's: the figure to compare across machines, where nanoseconds do not carry.
//   - Allow against Limiter.AllowN: one check of one bucket, no lock around it, allowed
//     as Allow's request is;
//   - MemoryLedger.Reserve against the naive ledger: a mutex-guarded map from the
//     ledger's key (account and tier) to a Limiter, checked with AllowN and refused as
//     Reserve's request is.
func BenchmarkLimit(b *testing.B) {
	tier := recovery.DefaultLimits()[0]
	past := times(t0, 59, time.Minute) // 59 in the hour, the last 10 minutes holding 10
	now := t0.Add(59*time.Minute + 30*time.Second)
	b.Run("Allow", func(b *testing.B) {
		// One token a minute, each check a minute after the last: every one allowed.
		lim := rate.NewLimiter(rate.Every(time.Minute), 1)
		at := now
		bucket := baseline{run: func(n int) {
			for range n {
				if !lim.AllowN(at, 1) {
					b.Fatal("token bucket refused")
				}
				at = at.Add(time.Minute)
			}
		}}
		b.ReportAllocs()
		chunk := 0
		for b.Loop() {
			if ok, _ := recovery.Allow(past, now, tier.Windows); !ok {
				b.Fatal("refused")
			}
			if chunk++; chunk == baselineChunk {
				chunk = 0
				b.StopTimer()
				bucket.time(baselineChunk)
				b.StartTimer()
			}
		}
		bucket.report(b, "rate-limiter")
	})
	b.Run("MemoryLedger.Reserve", func(b *testing.B) {
		// Each request is refused by a full window, so the ledger keeps its 60 entries:
		// the check, not the bookkeeping of a growing list, is what is timed.
		l := recovery.NewMemoryLedger()
		ctx := context.Background()
		req := recovery.LedgerRequest{Account: "acme", Length: time.Minute, Limits: recovery.DefaultLimits()}
		for i := range 60 {
			req.At = t0.Add(time.Duration(i) * time.Minute)
			if res, _ := l.Reserve(ctx, req); !res.Allowed {
				b.Fatal("setup refused")
			}
		}
		req.At = t0.Add(59*time.Minute + 30*time.Second)
		naive := newNaiveLedger()
		if !naive.reserve(req) {
			b.Fatal("naive ledger: setup refused")
		}
		bucket := baseline{run: func(n int) {
			for range n {
				if naive.reserve(req) {
					b.Fatal("naive ledger: allowed past the limit")
				}
			}
		}}
		b.ReportAllocs()
		chunk := 0
		for b.Loop() {
			if res, _ := l.Reserve(ctx, req); res.Allowed {
				b.Fatal("allowed past the limit")
			}
			if chunk++; chunk == baselineChunk {
				chunk = 0
				b.StopTimer()
				bucket.time(baselineChunk)
				b.StartTimer()
			}
		}
		bucket.report(b, "rate-limiter")
	})
}

// naiveLedger is the yardstick of MemoryLedger.Reserve: a ledger as it is often written,
// one token bucket per account and tier in a map under a mutex.
type naiveLedger struct {
	mu      sync.Mutex
	buckets map[naiveKey]*rate.Limiter
}

type naiveKey struct {
	account string
	class   int
}

func newNaiveLedger() *naiveLedger {
	return &naiveLedger{buckets: make(map[naiveKey]*rate.Limiter)}
}

// reserve takes a token of the request's bucket (one a minute, the busiest tier's pace)
// and reports whether there was one.
func (l *naiveLedger) reserve(r recovery.LedgerRequest) bool {
	key := naiveKey{r.Account, r.Limits.Class(r.Length)}
	l.mu.Lock()
	defer l.mu.Unlock()
	lim := l.buckets[key]
	if lim == nil {
		lim = rate.NewLimiter(rate.Every(time.Minute), 1)
		l.buckets[key] = lim
	}
	return lim.AllowN(r.At, 1)
}

// baselineChunk is how many timed checks run between two timed runs of a baseline. Large
// enough that stopping and starting the benchmark timer (which reads the memory
// statistics) costs nothing in either figure, small enough that a run of one second
// interleaves a hundred or more chunks of each.
const baselineChunk = 1 << 16

// baseline times a yardstick in chunks interleaved with a benchmark's timed loop: after
// every baselineChunk timed operations, the timer stopped, baselineChunk operations of the
// baseline are timed apart. On a shared machine whose load comes and goes, each figure
// then sees the same share of every spell of load, which a baseline timed once before
// the loop does not. With b.Loop a benchmark function runs once per -count, so the
// baseline's totals and b.N cover the same run.
type baseline struct {
	run     func(n int) // n operations of the baseline, in a loop of its own
	ops     int
	elapsed time.Duration
}

func (bl *baseline) time(n int) {
	start := time.Now()
	bl.run(n)
	bl.elapsed += time.Since(start)
	bl.ops += n
}

// report reports the baseline's time per operation (name-ns/op) and the benchmark's over
// it (x-of-name). When the loop was too short for one chunk (-benchtime 1x), one chunk is
// timed now, so that the ratio is always reported.
func (bl *baseline) report(b *testing.B, name string) {
	if bl.ops == 0 {
		bl.time(baselineChunk)
	}
	ns := float64(bl.elapsed.Nanoseconds()) / float64(bl.ops)
	b.ReportMetric(ns, name+"-ns/op")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/ns, "x-of-"+name)
}
