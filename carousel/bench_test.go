//go:build unix

package carousel

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// BenchmarkScheduler runs 1,000 cycles that each publish every 100 ms (10,000 publishes
// a second in all) until b.N publishes were made, and reports:
//
//   - ns/op: CPU time (user + system, the whole process) per publish: the scheduling
//     overhead, the publisher being a no-op that notes the time;
//   - interval-error-%: the mean of |actual interval - throttle| / throttle over every
//     pair of consecutive publishes of a cycle; p99-interval-error-% its 99th
//     percentile.
//
// The ticker sub-benchmark is the baseline measured in the same run, just before: 1,000
// goroutines each publishing on its own time.Ticker, the least a scheduler can do. The
// carousel's line repeats the ticker's figures beside its own, since absolute figures do
// not carry from one machine (or one load) to another and the comparison does:
//
//   - x-cpu-vs-ticker: the carousel's CPU per publish over the ticker's;
//   - ticker-interval-error-% and ticker-p99-interval-error-%: the ticker's interval
//     errors;
//   - x-interval-error-vs-ticker: the carousel's mean interval error over the ticker's,
//     whose error is the timers' own wake-up latency on this machine and load.
func BenchmarkScheduler(b *testing.B) {
	const cycles, throttle = 1000, 100 * time.Millisecond
	var ticker intervals // of the ticker's last run (the benchmark runs it for each b.N tried)
	b.Run("ticker", func(b *testing.B) {
		ticker = runIntervals(b, cycles, throttle, func(ctx context.Context, publish []func()) {
			var wg sync.WaitGroup
			for _, p := range publish {
				wg.Add(1)
				go func() {
					defer wg.Done()
					t := time.NewTicker(throttle)
					defer t.Stop()
					p() // the first at once, as a cycle's
					for {
						select {
						case <-t.C:
							p()
						case <-ctx.Done():
							return
						}
					}
				}()
			}
			<-ctx.Done()
			wg.Wait()
		})
	})
	b.Run("carousel", func(b *testing.B) {
		got := runIntervals(b, cycles, throttle, func(ctx context.Context, publish []func()) {
			src := NewMemorySource()
			if err := src.Put("c", items("i", 20, nil)...); err != nil {
				b.Fatal(err)
			}
			s, err := NewScheduler(Config{
				Source: src, Store: NewMemoryStore(),
				Publisher: PublisherFunc(func(_ context.Context, p Publication) error {
					publish[cycleIndex(p.Cycle)]()
					return nil
				}),
			})
			if err != nil {
				b.Fatal(err)
			}
			for i := range publish {
				if err := s.Add(ctx, CycleConfig{Name: fmt.Sprintf("c%04d", i), Type: ThrottledWholeCollection,
					Origin: "o", Collection: "c", CoolDown: time.Second, Throttle: throttle}); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.Start(ctx); err != nil {
				b.Fatal(err)
			}
			<-ctx.Done()
			if err := s.Shutdown(context.Background()); err != nil {
				b.Fatal(err)
			}
		})
		if ticker.cpu > 0 { // not when -bench selects the carousel alone
			b.ReportMetric(got.cpu/ticker.cpu, "x-cpu-vs-ticker")
		}
		if ticker.pairs > 0 && ticker.meanErr > 0 && got.pairs > 0 {
			b.ReportMetric(ticker.meanErr, "ticker-interval-error-%")
			b.ReportMetric(ticker.p99Err, "ticker-p99-interval-error-%")
			b.ReportMetric(got.meanErr/ticker.meanErr, "x-interval-error-vs-ticker")
		}
	})
}

// intervals is what runIntervals measured of a scheduler.
type intervals struct {
	cpu     float64 // CPU ns per publish
	pairs   int     // consecutive publishes of a cycle, whose interval was measured
	meanErr float64 // mean |interval - throttle| / throttle, in %
	p99Err  float64 // its 99th percentile
}

// cycleIndex parses the index out of a benchmark cycle's name, "c0042".
func cycleIndex(name string) int {
	n := 0
	for _, c := range name[1:] {
		n = n*10 + int(c-'0')
	}
	return n
}

// runIntervals runs a scheduler (run returns when ctx ends and its goroutines are gone)
// over cycles publish functions until b.N publishes were made, and reports the CPU per
// publish as ns/op and the interval errors, which it returns.
func runIntervals(b *testing.B, cycles int, throttle time.Duration, run func(ctx context.Context, publish []func())) intervals {
	perCycle := b.N/cycles + 2
	times := make([][]time.Time, cycles)
	for i := range times {
		times[i] = make([]time.Time, 0, perCycle)
	}
	var count atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	publish := make([]func(), cycles)
	for i := range publish {
		publish[i] = func() {
			// Only cycle i calls this, one call at a time: its slice needs no lock.
			if len(times[i]) < cap(times[i]) {
				times[i] = append(times[i], time.Now())
			}
			if count.Add(1) == int64(b.N) {
				cancel()
			}
		}
	}
	cpu0 := cpuTime()
	b.ResetTimer()
	run(ctx, publish)
	b.StopTimer()
	cpu := float64(cpuTime()-cpu0) / float64(count.Load())

	var errs []float64
	for _, ts := range times {
		for k := 1; k < len(ts); k++ {
			d := ts[k].Sub(ts[k-1])
			errs = append(errs, math.Abs(float64(d-throttle))/float64(throttle)*100)
		}
	}
	got := intervals{cpu: cpu, pairs: len(errs)}
	b.ReportMetric(cpu, "ns/op")
	if len(errs) > 0 {
		slices.Sort(errs)
		sum := 0.0
		for _, e := range errs {
			sum += e
		}
		got.meanErr, got.p99Err = sum/float64(len(errs)), errs[len(errs)*99/100]
		b.ReportMetric(got.meanErr, "interval-error-%")
		b.ReportMetric(got.p99Err, "p99-interval-error-%")
	}
	return got
}

// cpuTime returns the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
