package heartbeat

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/feedkit/feedkit/internal/clock"
)

// benchKeys is the number of keys of the benchmarks: the lock-sensor scale.
const benchKeys = 1_000_000

// visitOrder returns a random permutation of n key numbers: the order of visits.
func visitOrder(n int) []int {
	return rand.New(rand.NewPCG(1, 2)).Perm(n)
}

// sensorKeys returns the keys "sensor-0000000"... (14 bytes each) in visiting order, their
// bytes allocated in that order too: a key passed to Beat is in the cache, as one just
// read from a message is, while the monitor's table is visited at random.
func sensorKeys(n int) []string {
	keys := make([]string, n)
	for j, p := range visitOrder(n) {
		keys[j] = fmt.Sprintf("sensor-%07d", p)
	}
	return keys
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// BenchmarkBeat: Beat of a known key among 1,000,000 (wall clock, so time.Now is in the
// figure), the keys in random order: the monitor's table is visited at random. The keys'
// own bytes are laid out in visiting order, as a key just read from a message is in the
// cache; the key passed is the very string the monitor stores (BenchmarkBeatFreshKey passes
// copies).
//
// B/key is the heap in use, after GC, of the monitor and of the keys' bytes (a 14-byte key
// takes a 16-byte allocation), per key, against a baseline taken before they were made
// (the benchmark's own slice of keys is allocated before the baseline and not counted).
func BenchmarkBeat(b *testing.B) {
	visit := make([]string, benchKeys)
	perm := visitOrder(benchKeys)
	base := heapInUse()
	for j, p := range perm {
		visit[j] = fmt.Sprintf("sensor-%07d", p)
	}
	m, err := New(Config[string]{Timeout: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	for _, k := range visit {
		m.Beat(k)
	}
	perKey := float64(heapInUse()-base) / benchKeys

	b.ReportAllocs()
	j := 0
	for b.Loop() {
		m.Beat(visit[j])
		if j++; j == benchKeys {
			j = 0
		}
	}
	b.ReportMetric(perKey, "B/key")
	runtime.KeepAlive(m)
}

// BenchmarkBeatFreshKey: as BenchmarkBeat, but the key passed is a copy of the stored one,
// as a key parsed from a message is: the comparison reads the stored key's bytes, one
// more cache miss.
func BenchmarkBeatFreshKey(b *testing.B) {
	stored := make([]string, benchKeys) // allocated in number order, visited at random
	for i := range stored {
		stored[i] = fmt.Sprintf("sensor-%07d", i)
	}
	m, err := New(Config[string]{Timeout: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	for _, k := range stored {
		m.Beat(k)
	}
	visit := make([]string, benchKeys)
	for j, p := range visitOrder(benchKeys) {
		visit[j] = strings.Clone(stored[p])
	}
	b.ReportAllocs()
	j := 0
	for b.Loop() {
		m.Beat(visit[j])
		if j++; j == benchKeys {
			j = 0
		}
	}
}

var parallelFixture = sync.OnceValues(func() (*Monitor[string], []string) {
	keys := sensorKeys(benchKeys)
	m, err := New(Config[string]{Timeout: time.Hour})
	if err != nil {
		panic(err)
	}
	for _, k := range keys {
		m.Beat(k)
	}
	return m, keys
})

// BenchmarkBeatParallel: Beat of known keys among 1,000,000 from GOMAXPROCS goroutines,
// each starting at another place of the random order.
func BenchmarkBeatParallel(b *testing.B) {
	m, keys := parallelFixture()
	var start atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		j := int(start.Add(benchKeys/64)) % benchKeys
		for pb.Next() {
			m.Beat(keys[j])
			if j++; j == benchKeys {
				j = 0
			}
		}
	})
}

// BenchmarkBeatIntKeys: as BenchmarkBeat with int32 keys (no memory per key outside the
// monitor's table).
func BenchmarkBeatIntKeys(b *testing.B) {
	perm := make([]int32, benchKeys)
	for j, p := range visitOrder(benchKeys) {
		perm[j] = int32(p)
	}
	base := heapInUse()
	m, err := New(Config[int32]{Timeout: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	for i := range int32(benchKeys) {
		m.Beat(i)
	}
	perKey := float64(heapInUse()-base) / benchKeys
	b.ReportAllocs()
	j := 0
	for b.Loop() {
		m.Beat(perm[j])
		if j++; j == benchKeys {
			j = 0
		}
	}
	b.ReportMetric(perKey, "B/key")
}

// BenchmarkExpire measures the wheel with 1,000,000 keys of timeout 1 hour (Tick 1s, a
// fake clock).
//
//   - due: every key is due in the next tick; one Advance finds them all lost and calls
//     OnLost (a counter) for each: ns/expired is its time per key.
//   - revisit: every key beat again after it was placed, so when its bucket comes up it is
//     not due but moved (lazy rescheduling): ns/revisit is the time per key.
//   - idle: an Advance of one tick with no key due (ns/op), which looks at one empty bucket
//     per shard whatever the number of keys.
func BenchmarkExpire(b *testing.B) {
	shuffled := sensorKeys(benchKeys)
	newMonitor := func(b *testing.B, lost *atomic.Int64) (*Monitor[string], *clock.Fake) {
		fake := clock.NewFake(t0)
		m, err := New(Config[string]{Timeout: time.Hour, Clock: fake,
			OnLost: func(string, time.Time) { lost.Add(1) }})
		if err != nil {
			b.Fatal(err)
		}
		return m, fake
	}
	// populate tracks every key, beaten at t0. The table's growth rebuilds the wheel's
	// lists in table order, which a sweep would walk like an array; setting the timeouts
	// in random order relinks them in random order, as keys arriving over time would be.
	populate := func(b *testing.B, m *Monitor[string]) {
		for _, k := range shuffled {
			m.BeatAt(k, t0)
		}
		for _, k := range shuffled {
			if err := m.SetTimeout(k, time.Hour); err != nil {
				b.Fatal(err)
			}
		}
	}

	b.Run("due", func(b *testing.B) {
		var lost atomic.Int64
		m, fake := newMonitor(b, &lost)
		populate(b, m)
		var elapsed time.Duration
		n := 0
		for b.Loop() {
			b.StopTimer()
			for _, k := range shuffled { // all alive again (restored), due in one hour
				m.Beat(k)
			}
			fake.Advance(time.Hour)
			b.StartTimer()
			start := time.Now()
			if got := m.Advance(fake.Now()); got != benchKeys {
				b.Fatalf("found %d lost, want %d", got, benchKeys)
			}
			elapsed += time.Since(start)
			n++
		}
		b.ReportMetric(float64(elapsed.Nanoseconds())/float64(n*benchKeys), "ns/expired")
	})

	b.Run("revisit", func(b *testing.B) {
		var lost atomic.Int64
		m, fake := newMonitor(b, &lost)
		populate(b, m)
		var elapsed time.Duration
		n := 0
		for b.Loop() {
			b.StopTimer()
			fake.Advance(time.Minute)
			for _, k := range shuffled { // beats move no entry
				m.Beat(k)
			}
			fake.Advance(time.Hour - time.Minute) // the tick of the entries' bucket
			b.StartTimer()
			start := time.Now()
			if got := m.Advance(fake.Now()); got != 0 {
				b.Fatalf("found %d lost, want 0", got)
			}
			elapsed += time.Since(start)
			n++
		}
		b.ReportMetric(float64(elapsed.Nanoseconds())/float64(n*benchKeys), "ns/revisit")
	})

	b.Run("idle", func(b *testing.B) {
		// Keys with a timeout of ten years, so none is ever due here. Such a deadline lies
		// beyond the wheel's span: all the keys sit in one bucket and are revisited once
		// per turn of the wheel (65,536 ticks at most). The Advances of those ticks are
		// left out of the timing; every other Advance of one tick is timed.
		var lost atomic.Int64
		m, _ := newMonitor(b, &lost)
		const timeout = 10 * 365 * 24 * time.Hour
		for _, k := range shuffled {
			m.BeatAt(k, t0)
		}
		for _, k := range shuffled {
			if err := m.SetTimeout(k, timeout); err != nil {
				b.Fatal(err)
			}
		}
		turn := int64(maxBuckets) // the smallest wheel: its turn divides the others'
		for i := range m.shards {
			turn = min(turn, int64(len(m.shards[i].heads)))
		}
		busy := int64(timeout/time.Second) % turn
		tick := int64(0)
		for b.Loop() {
			if tick++; tick%turn == busy {
				b.StopTimer()
				m.Advance(t0.Add(time.Duration(tick) * time.Second))
				tick++
				b.StartTimer()
			}
			m.Advance(t0.Add(time.Duration(tick) * time.Second))
		}
		if lost.Load() != 0 {
			b.Fatalf("%d keys lost", lost.Load())
		}
		b.ReportMetric(float64(turn), "wheel-buckets")
	})
}
