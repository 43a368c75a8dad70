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

	"github.com/feedkit/feedkit/clock/clocktest"
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

// BenchmarkBeat: Beat of a known key among 1,000,000 (wall clock, so the clock read is in
// the figure), the keys in random order: the monitor's table is visited at random. The
// keys' own bytes are laid out in visiting order, as a key just read from a message is in
// the cache; the key passed is the very string the monitor stores (BenchmarkBeatFreshKey
// passes copies).
//
// B/key is the heap in use, after GC, of the monitor and of the keys' bytes (a 14-byte key
// takes a 16-byte allocation), per key, against a baseline taken before they were made
// (the benchmark's own slice of keys is allocated before the baseline and not counted).
//
// map-ns/op and x-of-map: the same beats on a mutex-guarded Go map, timed in the same run
// (see beatAgainstMap); x-of-map is the figure to compare across machines.
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
	mb := newMapBaseline(visit, visit)

	b.ReportAllocs()
	beatAgainstMap(b, m, visit, mb)
	b.ReportMetric(perKey, "B/key")
	runtime.KeepAlive(m)
}

// BenchmarkBeatFreshKey: as BenchmarkBeat, but the key passed is a copy of the stored one,
// as a key parsed from a message is: the comparison reads the stored key's bytes, one
// more cache miss. The map of x-of-map holds the stored keys too and is passed the copies.
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
	mb := newMapBaseline(stored, visit)
	b.ReportAllocs()
	beatAgainstMap(b, m, visit, mb)
}

// baselineChunk is how many timed operations run between two timed runs of a baseline.
// Large enough that stopping and starting the benchmark timer (which reads the memory
// statistics) costs nothing in either figure, small enough that a run of one second
// interleaves a hundred chunks of each.
const baselineChunk = 1 << 16

// mapBaseline is the yardstick of the Beat benchmarks: what a naive monitor does per beat,
// a Go map from key to last-seen nanoseconds under one mutex, holding the same keys (a
// million entries, far beyond the caches, as the monitor's table), updated in the same
// random visiting order and reading the clock as Beat does (time.Since: the monotonic
// clock only). Both costs are mostly a cache miss into a large table, so their ratio
// moves far less from one machine to another than either time does.
type mapBaseline[K comparable] struct {
	mu    sync.Mutex
	last  map[K]int64
	epoch time.Time

	visit   []K
	next    int // the map's own place in visit, half a round from the monitor's
	ops     int
	elapsed time.Duration
}

// newMapBaseline returns a map holding keys, to be updated with the keys of visit.
func newMapBaseline[K comparable](keys, visit []K) *mapBaseline[K] {
	mb := &mapBaseline[K]{last: make(map[K]int64), epoch: time.Now(), visit: visit, next: len(visit) / 2}
	for _, k := range keys {
		mb.beat(k)
	}
	return mb
}

func (mb *mapBaseline[K]) beat(k K) {
	ns := int64(time.Since(mb.epoch))
	mb.mu.Lock()
	mb.last[k] = ns
	mb.mu.Unlock()
}

// run times n updates, taking the keys of visit from where the last run stopped.
func (mb *mapBaseline[K]) run(n int) {
	j := mb.next
	start := time.Now()
	for range n {
		mb.beat(mb.visit[j])
		if j++; j == len(mb.visit) {
			j = 0
		}
	}
	mb.elapsed += time.Since(start)
	mb.ops += n
	mb.next = j
}

// beatAgainstMap runs m.Beat over visit, round and round, under b.Loop, and reports the
// map baseline's time per update (map-ns/op) and the beat's time over it (x-of-map).
//
// The two are interleaved in one run: after every baselineChunk beats, the timer stopped,
// baselineChunk updates of the map are timed apart. On a shared machine whose load comes
// and goes, each figure then sees the same share of every spell of load, which a baseline
// timed before (or before and after) the loop does not. With b.Loop the benchmark
// function runs once per -count, so the baseline's totals and b.N cover the same run.
// When the loop is too short for one chunk (-benchtime 1x), one chunk of the map is timed
// after it, so that the ratio is always reported.
func beatAgainstMap[K comparable](b *testing.B, m *Monitor[K], visit []K, mb *mapBaseline[K]) {
	j, chunk := 0, 0
	for b.Loop() {
		m.Beat(visit[j])
		if j++; j == len(visit) {
			j = 0
		}
		if chunk++; chunk == baselineChunk {
			chunk = 0
			b.StopTimer()
			mb.run(baselineChunk)
			b.StartTimer()
		}
	}
	if mb.ops == 0 {
		mb.run(baselineChunk)
	}
	mapNs := float64(mb.elapsed.Nanoseconds()) / float64(mb.ops)
	b.ReportMetric(mapNs, "map-ns/op")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/mapNs, "x-of-map")
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
// each starting at another place of the random order. It has no map baseline: a map
// under one mutex, beaten from every core, measures the contention on that mutex, a
// design the sharded monitor does not share, rather than the machine.
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
// monitor's table), against a map of int32 keys.
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
	mb := newMapBaseline(perm, perm)
	b.ReportAllocs()
	beatAgainstMap(b, m, perm, mb)
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
//     per shard whatever the number of keys. Its yardstick, timed in the same run, is the
//     tick of a naive monitor (see scanBaseline): a scan of a mutex-guarded map of the
//     same keys' deadlines (scan-ns/op); ppm-of-scan is the Advance's time in millionths
//     of a scan's.
func BenchmarkExpire(b *testing.B) {
	shuffled := sensorKeys(benchKeys)
	newMonitor := func(b *testing.B, lost *atomic.Int64) (*Monitor[string], *clocktest.Fake) {
		fake := clocktest.NewFake(t0)
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
		sb := newScanBaseline(shuffled, int64(timeout))
		tick, chunk := int64(0), 0
		for b.Loop() {
			if tick++; tick%turn == busy {
				b.StopTimer()
				m.Advance(t0.Add(time.Duration(tick) * time.Second))
				tick++
				b.StartTimer()
			}
			m.Advance(t0.Add(time.Duration(tick) * time.Second))
			// One scan per baselineChunk ticks, interleaved as in beatAgainstMap: a scan
			// takes milliseconds, so a run of one second still times about a hundred.
			if chunk++; chunk == baselineChunk {
				chunk = 0
				b.StopTimer()
				sb.scan(b, tick*int64(time.Second))
				b.StartTimer()
			}
		}
		if lost.Load() != 0 {
			b.Fatalf("%d keys lost", lost.Load())
		}
		if sb.scans == 0 { // -benchtime 1x
			sb.scan(b, tick*int64(time.Second))
		}
		scanNs := float64(sb.elapsed.Nanoseconds()) / float64(sb.scans)
		b.ReportMetric(float64(turn), "wheel-buckets")
		b.ReportMetric(scanNs, "scan-ns/op")
		b.ReportMetric(1e6*float64(b.Elapsed().Nanoseconds())/float64(b.N)/scanNs, "ppm-of-scan")
	})
}

// scanBaseline is the yardstick of BenchmarkExpire/idle: the tick of a naive monitor, which
// keeps each key's deadline in a Go map under one mutex and scans them all at every tick.
// The wheel's promise is that a tick does not scan: its idle Advance should be a tiny,
// constant fraction of such a scan, whatever the machine. (Only a rough one: the scan
// streams through memory, while the idle Advance takes a lock per shard, and machines
// differ in the two in different measure.)
type scanBaseline struct {
	mu       sync.Mutex
	deadline map[string]int64 // nanoseconds since the monitor's epoch

	scans   int
	elapsed time.Duration
}

// newScanBaseline returns a map of keys, each due at the given nanoseconds.
func newScanBaseline(keys []string, due int64) *scanBaseline {
	sb := &scanBaseline{deadline: make(map[string]int64)}
	for _, k := range keys {
		sb.deadline[k] = due
	}
	return sb
}

// scan times one tick at now: every deadline compared with it. None is due here; the
// count of lost keys is checked so that the loop does work the compiler must keep.
func (sb *scanBaseline) scan(b *testing.B, now int64) {
	start := time.Now()
	sb.mu.Lock()
	lost := 0
	for _, d := range sb.deadline {
		if d <= now {
			lost++
		}
	}
	sb.mu.Unlock()
	sb.elapsed += time.Since(start)
	sb.scans++
	if lost != 0 {
		b.Fatalf("scan baseline: %d keys due", lost)
	}
}
