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
// Its baseline runs in the same invocation: 1,000 goroutines each publishing on its own
// time.Ticker, the least a scheduler can do, for half of b.N publishes before the
// carousel and the other half after, so that a load that comes or goes during the run
// weighs on both alike. (Not a sub-benchmark of its own: go test -count repeats each
// sub-benchmark in a row, so a carousel run would be paired with the last ticker run,
// not with one beside it.) The ticker's figures are reported beside the carousel's,
// since absolute figures do not carry from one machine, or one load, to another, and
// the comparison does:
//
//   - ticker-ns/op, ticker-interval-error-%, ticker-p99-interval-error-%: the ticker's;
//   - x-cpu-vs-ticker: the carousel's CPU per publish over the ticker's;
//   - x-interval-error-vs-ticker: the carousel's mean interval error over the ticker's,
//     which is the timers' own wake-up latency on this machine and load.
func BenchmarkScheduler(b *testing.B) {
	const cycles, throttle = 1000, 100 * time.Millisecond
	ticker := func(ctx context.Context, publish []func()) {
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
	}
	carousel := func(ctx context.Context, publish []func()) {
		src := NewMemorySource()
		if err := src.Put("c", items("i", 20, nil)...); err != nil {
			b.Fatal(err)
		}
		s, err := NewScheduler(src, PublisherFunc(func(_ context.Context, p Publication) error {
			publish[cycleIndex(p.Cycle)]()
			return nil
		}), Config{Store: NewMemoryStore()})
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
	}

	// The timer runs throughout: its wall time sizes b.N when -benchtime is a duration,
	// and the ns/op reported is the CPU time, set below.
	base := runIntervals(max(b.N/2, 1), cycles, throttle, ticker)
	got := runIntervals(b.N, cycles, throttle, carousel)
	base.add(runIntervals(max(b.N-b.N/2, 1), cycles, throttle, ticker))

	b.ReportMetric(got.cpuPerPublish(), "ns/op")
	b.ReportMetric(base.cpuPerPublish(), "ticker-ns/op")
	b.ReportMetric(got.cpuPerPublish()/base.cpuPerPublish(), "x-cpu-vs-ticker")
	if len(got.errs) == 0 || len(base.errs) == 0 {
		return // too few publishes for an interval (-benchtime 1x)
	}
	mean, p99 := got.errors()
	baseMean, baseP99 := base.errors()
	b.ReportMetric(mean, "interval-error-%")
	b.ReportMetric(p99, "p99-interval-error-%")
	b.ReportMetric(baseMean, "ticker-interval-error-%")
	b.ReportMetric(baseP99, "ticker-p99-interval-error-%")
	b.ReportMetric(mean/baseMean, "x-interval-error-vs-ticker")
}

// cycleIndex parses the index out of a benchmark cycle's name, "c0042".
func cycleIndex(name string) int {
	n := 0
	for _, c := range name[1:] {
		n = n*10 + int(c-'0')
	}
	return n
}

// intervals is what runIntervals measured of a scheduler.
type intervals struct {
	cpu       time.Duration // CPU time of the whole process over the run
	publishes int64
	errs      []float64 // |interval - throttle| / throttle in %, of every pair of consecutive publishes of a cycle
}

// add pools the measures of another run into iv.
func (iv *intervals) add(other intervals) {
	iv.cpu += other.cpu
	iv.publishes += other.publishes
	iv.errs = append(iv.errs, other.errs...)
}

func (iv intervals) cpuPerPublish() float64 {
	return float64(iv.cpu.Nanoseconds()) / float64(iv.publishes)
}

// errors returns the mean and the 99th percentile of the interval errors.
func (iv intervals) errors() (mean, p99 float64) {
	errs := slices.Sorted(slices.Values(iv.errs))
	sum := 0.0
	for _, e := range errs {
		sum += e
	}
	return sum / float64(len(errs)), errs[len(errs)*99/100]
}

// runIntervals runs a scheduler (run returns when ctx ends and its goroutines are gone)
// over cycles publish functions until n publishes were made, and returns the process's
// CPU time meanwhile and the interval errors.
func runIntervals(n, cycles int, throttle time.Duration, run func(ctx context.Context, publish []func())) intervals {
	perCycle := n/cycles + 2
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
			if count.Add(1) == int64(n) {
				cancel()
			}
		}
	}
	cpu0 := cpuTime()
	run(ctx, publish)
	got := intervals{cpu: cpuTime() - cpu0, publishes: count.Load()}
	for _, ts := range times {
		for k := 1; k < len(ts); k++ {
			d := ts[k].Sub(ts[k-1])
			got.errs = append(got.errs, math.Abs(float64(d-throttle))/float64(throttle)*100)
		}
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
