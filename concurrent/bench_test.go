package concurrent

import (
	"context"
	"testing"

	"github.com/feedkit/feedkit/feed"
)

// oddsChanges returns one decoded odds_change per match, for benchmarks that leave the
// decode out.
func oddsChanges(matches, producer int) []*feed.OddsChange {
	ms := make([]*feed.OddsChange, matches)
	for i := range ms {
		ms[i] = &feed.OddsChange{}
		ms[i].Header = feed.Header{Producer: producer, Event: feed.URN{Prefix: "sr", Type: "match", ID: int64(1_000_000 + i)}}
	}
	return ms
}

// BenchmarkOverhead measures the layer's own cost per event: a task made, tracked,
// scheduled, run on a worker (a listener that does nothing) and completed; 1,000 matches,
// 10 workers, decoded messages so that no XML decode is counted. The "hashed" sub-benchmark
// is the seed's allocator doing the same.
func BenchmarkOverhead(b *testing.B) {
	const matches = 1000
	msgs := oddsChanges(matches, 1)
	live := RecoveryContext{Producer: 1}
	ctx := context.Background()
	b.Run("by-match", func(b *testing.B) {
		tracker := NewTaskLifecycleTracker()
		c, err := NewOddsFeedListener(feed.BaseOddsFeedListener{}, tracker, Config{Threads: 10})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close(ctx)
		for i := range 20 * matches { // warm up: lanes, rings and maps at their steady size
			_ = c.OnOddsChange(ctx, msgs[i%matches])
		}
		_ = tracker.Wait(ctx, live)
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			if err := c.OnOddsChange(ctx, msgs[i%matches]); err != nil {
				b.Fatal(err)
			}
		}
		_ = tracker.Wait(ctx, live)
	})
	b.Run("hashed", func(b *testing.B) {
		tracker := NewTaskLifecycleTracker()
		a := NewTaskAllocator(feed.BaseOddsFeedListener{}, tracker, 10, DefaultQueueSize/10)
		defer a.Close()
		for i := range 20 * matches {
			_ = a.Submit(ctx, msgs[i%matches])
		}
		_ = tracker.Wait(ctx, live)
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			if err := a.Submit(ctx, msgs[i%matches]); err != nil {
				b.Fatal(err)
			}
		}
		_ = tracker.Wait(ctx, live)
	})
}
