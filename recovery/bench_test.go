package recovery_test

import (
	"context"
	"testing"
	"time"

	"github.com/feedkit/feedkit/recovery"
)

// BenchmarkLimit measures one rate-limit check: Allow over the requests of the busiest
// tier (60 per hour, 20 per 10 minutes) with its windows full, and Reserve of the
// in-memory ledger, which also prunes and records. Target: ≤ 1 µs per check.
func BenchmarkLimit(b *testing.B) {
	tier := recovery.DefaultLimits()[0]
	past := times(t0, 59, time.Minute) // 59 in the hour, the last 10 minutes holding 10
	now := t0.Add(59*time.Minute + 30*time.Second)
	b.Run("Allow", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if ok, _ := recovery.Allow(past, now, tier.Windows); !ok {
				b.Fatal("refused")
			}
		}
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
		b.ReportAllocs()
		for b.Loop() {
			if res, _ := l.Reserve(ctx, req); res.Allowed {
				b.Fatal("allowed past the limit")
			}
		}
	})
}
