package concurrent

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
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

// BenchmarkOverhead measures the layer's own cost per event, on the path a session's
// events take: a task made, tracked on the listener's Stream (with an alive every
// overheadAliveEvery events, so the processed point moves as in a session), scheduled,
// run on a worker (a listener that does nothing) and completed; 1,000 matches, 10
// workers, decoded messages so that no XML decode is counted. sessions=1 is one listener
// on the pool; sessions=2 two listeners sharing the pool (as an SDK's live and prematch
// sessions do), the events dealt to them in turn over the same matches, each with its
// own Stream and alives.
//
// Three comparisons are timed in the same run: one listener tracking its tasks without a
// Stream (no processed point: no-watermark-ns/op, x-of-no-watermark, the watermark's own
// cost); the seed's hashed allocator doing the same work (hashed-ns/op, x-of-hashed); and
// the benchmark's own work on a pool with an Observer that counts every call, by result,
// and sums the timed ones' waits and durations (with-observer-ns/op), against the same
// work on a pool without one, timed in the same way (x-of-no-observer, with over
// without: the observer's cost, sampled timing included; x-of-no-observer-p50, the
// median of the ratios chunk by chunk; with-observer-allocs/op). After every
// overheadChunk events of the benchmark (each chunk waited for until done), a chunk of
// each is timed with the benchmark's timer stopped, so that all see the same spells of
// load.
func BenchmarkOverhead(b *testing.B) {
	for _, sessions := range []int{1, 2} {
		b.Run(fmt.Sprintf("sessions=%d", sessions), func(b *testing.B) { benchmarkOverhead(b, sessions) })
	}
}

func benchmarkOverhead(b *testing.B, sessions int) {
	const matches = 1000
	msgs := oddsChanges(matches, 1)
	ctx := context.Background()
	live := RecoveryContext{Producer: 1}

	tracker := NewTaskLifecycleTracker()
	measured := newStreamed(b, tracker, sessions, Config{Threads: 10})
	onStream := func() {
		if err := measured.submit(ctx, msgs[measured.n%len(msgs)]); err != nil {
			b.Fatal(err)
		}
	}

	observedTracker := NewTaskLifecycleTracker()
	counts := &countingObserver{}
	observed := newStreamed(b, observedTracker, sessions, Config{Threads: 10, Name: "bench", Observer: counts})
	withObserver := newOverheadBaseline(observedTracker, func(m *feed.OddsChange) error {
		return observed.submit(ctx, m)
	}, msgs)
	withObserver.countAllocs = true
	// The same pool without the Observer, timed in the same way, so that the two differ
	// in the Observer alone.
	plainStreamedTracker := NewTaskLifecycleTracker()
	plainStreamed := newStreamed(b, plainStreamedTracker, sessions, Config{Threads: 10})
	withoutObserver := newOverheadBaseline(plainStreamedTracker, func(m *feed.OddsChange) error {
		return plainStreamed.submit(ctx, m)
	}, msgs)

	plainTracker := NewTaskLifecycleTracker()
	plain, err := NewDispatcher(feed.BaseOddsFeedListener{}, plainTracker, Config{Threads: 10})
	if err != nil {
		b.Fatal(err)
	}
	defer plain.Close(ctx)
	noWatermark := newOverheadBaseline(plainTracker, func(m *feed.OddsChange) error {
		return plain.submit(ctx, m.Event, false, live, &task{msg: m})
	}, msgs)

	hashedTracker := NewTaskLifecycleTracker()
	a := NewTaskAllocator(feed.BaseOddsFeedListener{}, hashedTracker, 10, DefaultQueueSize/10)
	defer a.Close()
	hashed := newOverheadBaseline(hashedTracker, func(m *feed.OddsChange) error { return a.Submit(ctx, m) }, msgs)

	// Warm all three up: lanes, rings and maps at their steady size.
	for range 200 * matches {
		onStream()
	}
	_ = tracker.Wait(ctx, live)
	noWatermark.warm()
	hashed.warm()
	withObserver.warm()
	withoutObserver.warm()

	b.ReportAllocs()
	n := 0
	ratios := make([]float64, 0, 64) // with the observer over without, chunk by chunk
	observerChunks := func() {
		// Each goes first in turn: neither gains from its place.
		var with, without time.Duration
		if len(ratios)%2 == 0 {
			with, without = withObserver.chunk(b), withoutObserver.chunk(b)
		} else {
			without, with = withoutObserver.chunk(b), withObserver.chunk(b)
		}
		ratios = append(ratios, float64(with)/float64(without))
	}
	for b.Loop() {
		onStream()
		if n++; n == overheadChunk {
			n = 0
			_ = tracker.Wait(ctx, live) // the chunk is done: its cost is all counted
			b.StopTimer()
			noWatermark.chunk(b)
			hashed.chunk(b)
			observerChunks()
			b.StartTimer()
		}
	}
	_ = tracker.Wait(ctx, live)
	if hashed.ops == 0 {
		noWatermark.chunk(b)
		hashed.chunk(b)
		observerChunks()
	}
	measured.checkProcessed(b, tracker)
	observed.checkProcessed(b, observedTracker)
	counts.check(b, observed)

	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(noWatermark.ns(), "no-watermark-ns/op")
	b.ReportMetric(ns/noWatermark.ns(), "x-of-no-watermark")
	b.ReportMetric(hashed.ns(), "hashed-ns/op")
	b.ReportMetric(ns/hashed.ns(), "x-of-hashed")
	b.ReportMetric(withObserver.ns(), "with-observer-ns/op")
	b.ReportMetric(withObserver.ns()/withoutObserver.ns(), "x-of-no-observer")
	// The median of the chunks' ratios: a spell of load on a shared machine that hits one
	// chunk and not its neighbour moves it less than the ratio of the sums.
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "x-of-no-observer-p50")
	b.ReportMetric(float64(withObserver.mallocs)/float64(withObserver.ops), "with-observer-allocs/op")
}

// streamed is BenchmarkOverhead's pool of sessions listeners: it deals the events to
// them in turn, each on its listener's Stream, with an alive on every Stream after each
// overheadAliveEvery events, as the sessions of an SDK do.
type streamed struct {
	pool  *Pool
	ls    []*Dispatcher
	n     int // events submitted
	alive time.Time
}

func newStreamed(b *testing.B, tracker *TaskLifecycleTracker, sessions int, cfg Config) *streamed {
	pool, err := NewPool(tracker, cfg)
	if err != nil {
		b.Fatal(err)
	}
	s := &streamed{pool: pool, ls: make([]*Dispatcher, sessions), alive: time.UnixMilli(1_700_000_000_000)}
	for j := range s.ls {
		if s.ls[j], err = pool.Dispatcher(feed.BaseOddsFeedListener{}); err != nil {
			b.Fatal(err)
		}
	}
	b.Cleanup(func() {
		for _, c := range s.ls {
			_ = c.Close(context.Background())
		}
		_ = pool.Close(context.Background())
	})
	return s
}

func (s *streamed) submit(ctx context.Context, m *feed.OddsChange) error {
	if err := s.ls[s.n%len(s.ls)].submit(ctx, m.Event, true, RecoveryContext{Producer: 1}, &task{msg: m}); err != nil {
		return err
	}
	if s.n++; s.n%overheadAliveEvery == 0 {
		s.alive = s.alive.Add(time.Second)
		for _, c := range s.ls {
			c.stream.Alive(1, s.alive)
		}
	}
	return nil
}

// checkProcessed fails the benchmark unless the processed point followed the alives.
func (s *streamed) checkProcessed(b *testing.B, tracker *TaskLifecycleTracker) {
	through, ok := tracker.Processed(1)
	if s.n >= overheadAliveEvery && (!ok || through.Before(s.alive.Add(-time.Second))) {
		b.Fatalf("the processed point is at %v (%v), the alives at %v", through, ok, s.alive)
	}
}

// check fails the benchmark unless o was told of every call of s, and timed one in
// DefaultTimingSample (the first, then each DefaultTimingSample-th).
func (o *countingObserver) check(b *testing.B, s *streamed) {
	st := s.pool.Stats()
	if got := o.calls[CallReturned].Load(); got != st.Completed || got != uint64(s.n) {
		b.Fatalf("the observer was told of %d calls; the pool completed %d of %d", got, st.Completed, s.n)
	}
	if want := (uint64(s.n) + DefaultTimingSample - 1) / DefaultTimingSample; o.timed.Load() != want {
		b.Fatalf("%d calls timed, want %d", o.timed.Load(), want)
	}
	if o.waitSum.Load() < 0 || o.durationSum.Load() < 0 {
		b.Fatalf("negative times: waits %d ns, durations %d ns", o.waitSum.Load(), o.durationSum.Load())
	}
}

// overheadChunk is how many events of each go between the switches of BenchmarkOverhead;
// overheadAliveEvery how many events go between two alives on its Stream.
const (
	overheadChunk      = 1 << 16
	overheadAliveEvery = 1000
)

// overheadBaseline times chunks of submissions of msgs, each waited for until its tracker
// has finished every task.
type overheadBaseline struct {
	tracker *TaskLifecycleTracker
	submit  func(*feed.OddsChange) error
	msgs    []*feed.OddsChange
	next    int
	elapsed time.Duration
	ops     int
	// countAllocs counts the heap allocations of the chunks into mallocs, the timer being
	// stopped for them: runtime.ReadMemStats, outside the time measured.
	countAllocs bool
	mallocs     uint64
}

func newOverheadBaseline(t *TaskLifecycleTracker, submit func(*feed.OddsChange) error, msgs []*feed.OddsChange) *overheadBaseline {
	return &overheadBaseline{tracker: t, submit: submit, msgs: msgs}
}

// chunk times overheadChunk submissions and returns their time.
func (o *overheadBaseline) chunk(b *testing.B) time.Duration {
	var mem runtime.MemStats
	if o.countAllocs {
		runtime.ReadMemStats(&mem)
		o.mallocs -= mem.Mallocs
	}
	start := time.Now()
	for range overheadChunk {
		if err := o.submit(o.msgs[o.next%len(o.msgs)]); err != nil {
			b.Fatal(err)
		}
		o.next++
	}
	_ = o.tracker.Wait(context.Background(), RecoveryContext{Producer: 1})
	took := time.Since(start)
	o.elapsed += took
	o.ops += overheadChunk
	if o.countAllocs {
		runtime.ReadMemStats(&mem)
		o.mallocs += mem.Mallocs
	}
	return took
}

func (o *overheadBaseline) warm() {
	for range 200 * len(o.msgs) {
		_ = o.submit(o.msgs[o.next%len(o.msgs)])
		o.next++
	}
	_ = o.tracker.Wait(context.Background(), RecoveryContext{Producer: 1})
}

func (o *overheadBaseline) ns() float64 { return float64(o.elapsed.Nanoseconds()) / float64(o.ops) }

// sleepListener blocks each call for a fixed time, as a listener that writes to a
// database would.
type sleepListener struct {
	feed.BaseOddsFeedListener
	d time.Duration
}

func (l sleepListener) OnBetStop(context.Context, *feed.BetStop) error {
	time.Sleep(l.d)
	return nil
}

// betStops returns n raw bet_stop events spread over matches, as a session dispatches them.
func betStops(b *testing.B, n, matches int) []feed.Event {
	evs := make([]feed.Event, n)
	for i := range evs {
		m := &feed.BetStop{Header: feed.Header{Producer: 1, Event: feed.URN{Prefix: "sr", Type: "match", ID: int64(1 + i%matches)},
			Timestamp: time.UnixMilli(1_700_000_000_000).UTC()}}
		key := feed.RoutingKey{Priority: feed.PriorityHigh, Live: true, Type: feed.MessageBetStop, SportID: 1, Event: m.Event}
		parsed, err := feed.ParseRoutingKey(key.String())
		if err != nil {
			b.Fatal(err)
		}
		evs[i] = feed.Event{RawKey: key.String(), Key: parsed, Body: feedtest.Marshal(m), Producer: 1}
	}
	return evs
}

// BenchmarkSpeedupVsSerial: a listener that blocks 1 ms per event, 1,000 matches, 16
// workers; one op is one event. The serial dispatcher runs the same events in the same
// run (at most 500 of them: it needs a millisecond each), and x-vs-serial is its time per
// event over the concurrent listener's.
func BenchmarkSpeedupVsSerial(b *testing.B) {
	const matches, threads = 1000, 16
	l := sleepListener{d: time.Millisecond}
	ctx := context.Background()
	live := RecoveryContext{Producer: 1}

	serialN := min(b.N, 500)
	evs := betStops(b, max(b.N, serialN), matches)
	serial, err := feed.NewSerialDispatcher(l, feed.DispatcherOptions{QueueSize: serialN})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	for _, ev := range evs[:serialN] {
		_ = serial.Dispatch(ctx, ev)
	}
	_ = serial.Close(ctx)
	serialPer := time.Since(start) / time.Duration(serialN)

	tracker := NewTaskLifecycleTracker()
	c, err := NewDispatcher(l, tracker, Config{Threads: threads, QueueSize: max(b.N, 1)})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(ctx)
	b.ResetTimer()
	for i := range b.N {
		if err := c.Dispatch(ctx, evs[i]); err != nil {
			b.Fatal(err)
		}
	}
	_ = tracker.Wait(ctx, live)
	b.StopTimer()
	concurrentPer := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(float64(serialPer)/float64(concurrentPer), "x-vs-serial")
	b.ReportMetric(float64(serialPer.Microseconds()), "serial-us/event")
}

// headOfLine is BenchmarkHeadOfLine's listener: the stalled match's calls take 500 ms,
// the others 1 ms; each call records how long its event waited for a worker.
type headOfLine struct {
	feed.BaseOddsFeedListener
	stalled    feed.URN
	dispatched []time.Time     // by event number (the message's timestamp)
	waited     []time.Duration // by event number
}

func (l *headOfLine) OnBetStop(ctx context.Context, m *feed.BetStop) error {
	n := m.Timestamp.UnixNano()
	l.waited[n] = time.Since(l.dispatched[n])
	d := time.Millisecond
	if m.Event == l.stalled {
		d = 500 * time.Millisecond
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	return nil
}

// BenchmarkHeadOfLine: one match's listener calls stall 500 ms, the other matches' take
// 1 ms; events arrive at 2,000 a second over 1,000 matches, one in 500 for the stalled
// match, on 10 workers. p99-ms is the 99th percentile of the time the other matches'
// events wait for a worker with match scheduling; baseline-p99-ms the same with the
// seed's hashed queues, where the matches that share the stalled match's queue wait
// behind it.
func BenchmarkHeadOfLine(b *testing.B) {
	const matches, threads, perMilli = 1000, 10, 2
	stalled := feed.URN{Prefix: "sr", Type: "match", ID: 1}
	msgs := make([]*feed.BetStop, b.N)
	for i := range msgs {
		ev, producer := feed.URN{Prefix: "sr", Type: "match", ID: int64(2 + i%(matches-1))}, 1
		if i%500 == 0 {
			ev, producer = stalled, 2 // the stalled match's tasks are tracked apart
		}
		msgs[i] = &feed.BetStop{Header: feed.Header{Producer: producer, Event: ev, Timestamp: time.Unix(0, int64(i))}}
	}
	others := RecoveryContext{Producer: 1}

	run := func(submit func(context.Context, feed.Message) error, l *headOfLine) {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for i, m := range msgs {
			if i%perMilli == 0 {
				<-tick.C
			}
			l.dispatched[i] = time.Now()
			if err := submit(context.Background(), m); err != nil {
				b.Fatal(err)
			}
		}
	}
	newListener := func() *headOfLine {
		return &headOfLine{stalled: stalled, dispatched: make([]time.Time, b.N), waited: make([]time.Duration, b.N)}
	}

	byMatch := newListener()
	tracker := NewTaskLifecycleTracker()
	c, err := NewDispatcher(byMatch, tracker, Config{Threads: threads})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	run(c.submitMessage, byMatch)
	_ = tracker.Wait(context.Background(), others)
	b.StopTimer()
	closeNow(c)

	hashed := newListener()
	baseTracker := NewTaskLifecycleTracker()
	a := NewTaskAllocator(hashed, baseTracker, threads, DefaultQueueSize/threads)
	run(a.Submit, hashed)
	_ = baseTracker.Wait(context.Background(), others)
	a.Close()

	b.ReportMetric(p99Others(byMatch, msgs, stalled), "p99-ms")
	b.ReportMetric(p99Others(hashed, msgs, stalled), "baseline-p99-ms")
}

// closeNow closes c without waiting for its queue: the stalled match's calls end with
// their context.
func closeNow(c *Dispatcher) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = c.Close(ctx)
	_ = c.Close(context.Background())
}

// p99Others returns the 99th percentile, in milliseconds, of the waits of the events of
// every match but the stalled one.
func p99Others(l *headOfLine, msgs []*feed.BetStop, stalled feed.URN) float64 {
	var w []time.Duration
	for i, m := range msgs {
		if m.Event != stalled {
			w = append(w, l.waited[i])
		}
	}
	if len(w) == 0 {
		return 0
	}
	slices.Sort(w)
	return float64(w[(len(w)*99)/100]) / float64(time.Millisecond)
}

// upRecorder is the customer's global listener in BenchmarkProducerUpLatency. It stays
// apart from feedtest.GlobalRecorder because its job is the measurement: it stamps the
// wall time of each up as it is called and records nothing else, so that no lock, append
// or description runs between the call and the stamp.
type upRecorder struct {
	feed.BaseGlobalEventsListener
	ups chan time.Time
}

func (r *upRecorder) OnProducerStatusChange(_ context.Context, s feed.ProducerStatus) {
	if s.Reason.IsUp() {
		r.ups <- time.Now()
	}
}

// lastDone is a listener that records when its latest call returned.
type lastDone struct {
	feed.BaseOddsFeedListener
	at atomic.Int64
}

func (l *lastDone) OnOddsChange(context.Context, *feed.OddsChange) error {
	now := time.Now().UnixNano()
	for {
		prev := l.at.Load()
		if prev >= now || l.at.CompareAndSwap(prev, now) {
			return nil
		}
	}
}

// BenchmarkProducerUpLatency: one op is a recovery of 10,000 tasks over 1,000 matches on
// 10 workers, with its up status sent while they run; up-latency-us is the mean time from
// the last task's listener call returning to the customer's OnProducerStatusChange.
func BenchmarkProducerUpLatency(b *testing.B) {
	const tasks, matches = 10_000, 1000
	ctx := context.Background()
	tracker := NewTaskLifecycleTracker()
	odds := &lastDone{}
	c, err := NewDispatcher(odds, tracker, Config{Threads: 10, QueueSize: tasks})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(ctx)
	customer := &upRecorder{ups: make(chan time.Time, 1)}
	g, err := NewStatusGate(customer, tracker, GateConfig{})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close(ctx)
	msgs := oddsChanges(matches, 1)

	var total, worst time.Duration
	b.ResetTimer()
	for i := range b.N {
		request := int64(i + 1)
		g.OnRecoveryInitiated(ctx, feed.RecoveryInitiated{Producer: 1, RequestID: request})
		for n := range tasks {
			m := *msgs[n%matches]
			m.RequestID = request
			if err := c.OnOddsChange(ctx, &m); err != nil {
				b.Fatal(err)
			}
		}
		g.OnProducerStatusChange(ctx, feed.ProducerStatus{Producer: 1, Reason: feed.FirstRecoveryCompleted})
		upAt := <-customer.ups
		lat := upAt.Sub(time.Unix(0, odds.at.Load()))
		total += lat
		worst = max(worst, lat)
	}
	b.StopTimer()
	b.ReportMetric(float64(total.Microseconds())/float64(b.N), "up-latency-us")
	b.ReportMetric(float64(worst.Microseconds()), "max-up-latency-us")
	b.ReportMetric(float64(g.Stats().Deferred)/float64(b.N), "held-back/op")
}
