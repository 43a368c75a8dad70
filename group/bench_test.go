package group

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/rabbitmq"
	"github.com/feedkit/feedkit/internal/ingestbench"
	"github.com/feedkit/feedkit/internal/testenv"
	"github.com/feedkit/feedkit/recovery"
)

// The benchmarks of issue 35's targets, on the real RabbitMQ that scripts/test.sh
// starts:
//
//	./scripts/test.sh go test -run '^$' -bench GroupShards -benchtime 20000x -count 5 ./group/
//	./scripts/test.sh go test -run '^$' -bench GroupIngress -benchtime 30000x -count 5 ./group/
//
// One op is one message. Both report a ratio against a baseline measured in the same
// run; -benchtime 1x (CI) runs them through with one message, which measures nothing.

// benchMatches is how many matches the messages are spread over, round robin: the
// group hashes them to shards by match, and the workers keep each match's order.
const benchMatches = 1000

// benchFixture is the feed package's 1 KiB odds_change (1,162 bytes), the body of
// BenchmarkIngestRabbitMQ; its event is replaced by each message's match.
var benchFixture = filepath.Join("..", "feed", "testdata", "odds_change_1k.xml")

const benchFixtureEvent = `event_id="sr:match:16470657"`

// benchMessage is one feed message of the benchmarks: match i%benchMatches's odds
// change, its routing key and its body.
type benchMessage struct {
	key   string
	event string // the match's URN, the shard key
	body  []byte
}

// benchMessages returns the feed messages of the benchmarks, one body per match.
func benchMessages(b *testing.B) []benchMessage {
	b.Helper()
	raw, err := os.ReadFile(benchFixture)
	if err != nil {
		b.Fatal(err)
	}
	if !bytes.Contains(raw, []byte(benchFixtureEvent)) {
		b.Fatalf("%s: no %s to replace", benchFixture, benchFixtureEvent)
	}
	msgs := make([]benchMessage, benchMatches)
	for i := range msgs {
		id := 30_000_001 + i
		msgs[i] = benchMessage{
			key:   fmt.Sprintf("hi.-.live.odds_change.1.sr:match.%d.-", id),
			event: fmt.Sprintf("sr:match:%d", id),
			body:  bytes.Replace(raw, []byte(benchFixtureEvent), fmt.Appendf(nil, `event_id="sr:match:%d"`, id), 1),
		}
	}
	return msgs
}

// benchRun is a unique suffix for the names a run declares.
var benchRun atomic.Int64

func benchName(what string) string {
	return fmt.Sprintf("bench-%s-%d-%d", what, os.Getpid(), benchRun.Add(1))
}

// rate is what one side of a benchmark achieved.
type rate = ingestbench.Rate

// ratio is a/b, or 0 when b is: a run of one message (-benchtime 1x) measures nothing.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func usPerMsg(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// benchChannel opens a connection and channel to url for the benchmarks' own
// declarations and inspections; closing the connection is the caller's.
func benchChannel(b *testing.B, url string) (*amqp.Connection, *amqp.Channel) {
	b.Helper()
	conn, err := amqp.Dial(url)
	if err != nil {
		b.Fatal(err)
	}
	ch, err := conn.Channel()
	if err != nil {
		_ = conn.Close()
		b.Fatal(err)
	}
	return conn, ch
}

// deleteTopology deletes top's queues and exchanges, so that a run's messages do not
// weigh on the broker in the next one.
func deleteTopology(b *testing.B, url string, top Topology) {
	b.Helper()
	conn, ch := benchChannel(b, url)
	defer conn.Close()
	for n := range top.Shards {
		if _, err := ch.QueueDelete(top.ShardQueue(n), false, false, false); err != nil {
			b.Fatal(err)
		}
	}
	for _, err := range []error{
		func() error { _, err := ch.QueueDelete(top.AcksQueue(), false, false, false); return err }(),
		ch.ExchangeDelete(top.ControlExchange(), false, false),
	} {
		if err != nil {
			b.Fatal(err)
		}
	}
}

// ---------------------------------------------------------------------------
// BenchmarkGroupShards
// ---------------------------------------------------------------------------

// BenchmarkGroupShards: the messages of 1,000 matches (b.N of them, 1 KiB odds
// changes) are loaded into the shard queues of a topology of K shards, then drained by
// K workers, one per shard, whose listener waits 1 ms per message (an I/O-bound
// listener: time.Sleep stands for the database write). K = 1 and K = 4 run one after
// the other; x-of-1-shard is K = 4's messages/s over K = 1's. Target (issue 35): at
// least 3.5.
//
// What is held equal is the worker: the same concurrent.Config.Threads and the default
// prefetch in both runs, as a deployment scales by adding workers (processes) configured
// alike; one worker given 4× the threads would scale too, but that is the concurrent
// listener's speed-up (concurrent's BenchmarkSpeedupVsSerial), not the group's. The
// sub-benchmarks set the threads: threads=4 is the target's case, whose 4-shard run
// asks about 16,000 messages a second of the machine (4 workers × 4 threads × 1 ms),
// which two cores shared with the broker can feed; threads=10 is concurrent's default,
// whose 4-shard run would ask 40,000, more than this machine's broker delivers (it says
// where the machine, not the group, stops the scaling).
//
// Each run loads its queues first (published and confirmed through the ingress's
// publisher), then starts its workers with their listeners held: the first call of each
// worker waits, so that every worker is connected and has its prefetch before the clock
// starts; the window ends when the listener has returned from every message.
// max-shard-share is the 4-shard run's largest queue over the messages: the run cannot
// end before that shard's worker has processed it, so 1/max-shard-share bounds
// x-of-1-shard.
func BenchmarkGroupShards(b *testing.B) {
	for _, threads := range []int{4, concurrent.DefaultThreads} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			b.StopTimer() // the clock runs over the measured window only
			url := testenv.AMQPVhost(b)
			msgs := benchMessages(b)
			one := measureShards(b, url, msgs, 1, threads, false)
			four := measureShards(b, url, msgs, 4, threads, true)
			b.ReportMetric(four.MsgsPerSec, "msgs/s")
			b.ReportMetric(one.MsgsPerSec, "1-shard-msgs/s")
			b.ReportMetric(ratio(four.MsgsPerSec, one.MsgsPerSec), "x-of-1-shard")
			b.ReportMetric(four.maxShare, "max-shard-share")
			b.ReportMetric(usPerMsg(four.CPUPerMsg), "cpu-us/msg")
			b.ReportMetric(usPerMsg(one.CPUPerMsg), "1-shard-cpu-us/msg")
			if b.N > 1 {
				b.Logf("N=%d, %d threads per worker: 1 shard %.0f msgs/s (%v), 4 shards %.0f msgs/s (queues %v done at %v), x%.2f; process CPU per message %v and %v",
					b.N, threads, one.MsgsPerSec, one.finished[0], four.MsgsPerSec, four.depths, four.finished,
					four.MsgsPerSec/one.MsgsPerSec, one.CPUPerMsg, four.CPUPerMsg)
			}
		})
	}
}

// shardRate is one run of BenchmarkGroupShards.
type shardRate struct {
	rate
	depths   []int           // the events in each shard queue
	finished []time.Duration // when each shard's last message was processed, from the start
	maxShare float64         // the largest depth over all
}

// measureShards loads b.N messages into a topology of k shards and times k workers of
// threads threads draining them; timed says whether the benchmark's timer runs over the window.
func measureShards(b *testing.B, url string, msgs []benchMessage, k, threads int, timed bool) shardRate {
	b.Helper()
	top := Topology{Prefix: benchName(fmt.Sprintf("shards%d", k)), Shards: k}
	defer deleteTopology(b, url, top)
	loadShards(b, url, top, msgs, b.N)

	// Which queues have messages (only their workers' listeners are called), and how
	// many: the queues count batches, not events.
	depths := make([]int, k)
	for i := range b.N {
		depths[top.ShardOf(msgs[i%len(msgs)].event)]++
	}

	run := &shardsRun{want: int64(b.N), gate: make(chan struct{}), ready: make(chan struct{}, k), done: make(chan struct{}),
		last: make([]atomic.Int64, k)}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	workers := make([]*Worker, k)
	ran := make(chan error, k)
	for n := range k {
		w, err := NewWorker(WorkerConfig{URL: url, Topology: top, Shards: []int{n},
			Listener: &sleepingListener{run: run, shard: n}, Concurrent: concurrent.Config{Threads: threads},
			OnError:        func(err error) { b.Errorf("worker %d: %v", n, err) },
			ConnectionName: fmt.Sprintf("bench-worker-%d", n)})
		if err != nil {
			b.Fatal(err)
		}
		workers[n] = w
		go func() { ran <- w.Run(ctx) }()
	}
	for _, d := range depths {
		if d > 0 {
			<-run.ready
		}
	}
	w := ingestbench.Start()
	if timed {
		b.StartTimer()
	}
	close(run.gate)
	<-run.done
	if timed {
		b.StopTimer()
	}
	r := w.End(b.N)
	finished := make([]time.Duration, k) // when each shard's last listener call returned
	for n := range k {
		if t := run.last[n].Load(); t != 0 {
			finished[n] = time.Unix(0, t).Sub(w.Began()).Round(time.Millisecond)
		}
	}
	stop()
	var processed uint64
	for range k {
		if err := <-ran; err != nil {
			b.Fatal(err)
		}
	}
	for _, w := range workers {
		for _, s := range w.Stats().Shards {
			processed += s.Processed
			if s.Invalid != 0 || s.Redelivered != 0 {
				b.Fatalf("shard %d: %d invalid, %d redelivered", s.Shard, s.Invalid, s.Redelivered)
			}
		}
	}
	if processed != uint64(b.N) {
		b.Fatalf("%d messages processed, %d loaded", processed, b.N)
	}
	return shardRate{rate: r, depths: depths, finished: finished, maxShare: float64(slices.Max(depths)) / float64(b.N)}
}

// loadShards publishes n event messages to their shard queues, as the ingress does,
// and returns once the broker has confirmed them all: message i is match
// i%benchMatches's.
func loadShards(b *testing.B, url string, top Topology, msgs []benchMessage, n int) {
	b.Helper()
	ctx := context.Background()
	pub, err := newPublisher(publisherConfig{URL: url, Topology: top, ConnectionName: "bench-load",
		OnError: func(err error) { b.Errorf("loading: %v", err) }})
	if err != nil {
		b.Fatal(err)
	}
	if err := pub.start(ctx); err != nil {
		b.Fatal(err)
	}
	received := time.Now()
	for i := range n {
		m := msgs[i%len(msgs)]
		e := Envelope{Kind: KindEvent, RoutingKey: m.key, Body: m.body, ReceivedAt: received, Event: m.event,
			Epoch: 1, Seq: int64(i + 1)}
		if err := pub.publish(ctx, target{key: top.ShardQueue(top.ShardOf(e.Event))}, e, nil); err != nil {
			b.Fatal(err)
		}
	}
	closeCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if err := pub.close(closeCtx); err != nil {
		b.Fatal(err)
	}
}

// shardsRun is what the listeners of one run of BenchmarkGroupShards share.
type shardsRun struct {
	n     atomic.Int64
	want  int64
	gate  chan struct{}  // closed when the clock starts
	ready chan struct{}  // a worker's first call is waiting at the gate
	done  chan struct{}  // closed at the want-th call's return
	last  []atomic.Int64 // per shard, when its last call returned (Unix ns)
}

// sleepingListener is one worker's listener: it waits 1 ms per odds change, as a
// listener writing to a database would, and counts. Its first call waits for the gate.
type sleepingListener struct {
	feed.BaseOddsFeedListener
	run   *shardsRun
	shard int
	ready sync.Once
}

func (l *sleepingListener) OnOddsChange(context.Context, *feed.OddsChange) error {
	select {
	case <-l.run.gate:
	default:
		l.ready.Do(func() { l.run.ready <- struct{}{} })
		<-l.run.gate
	}
	time.Sleep(time.Millisecond)
	l.run.last[l.shard].Store(time.Now().UnixNano())
	if l.run.n.Add(1) == l.run.want {
		close(l.run.done)
	}
	return nil
}

// ---------------------------------------------------------------------------
// BenchmarkGroupIngress
// ---------------------------------------------------------------------------

// ingressShards is the topology the ingress benchmark republishes to: the K.
const ingressShards = 4

// BenchmarkGroupIngress measures the ingress's ingest against the single-process SDK's,
// in the same run, on the path of feed's BenchmarkIngestRabbitMQ: RabbitMQ →
// rabbitmq.Transport → Session. The SDK (feedkit.New, recoveries disabled) delivers to
// a SerialDispatcher and a listener that only counts (sdk-msgs/s); the ingress's SDK has
// instead a forwarding session whose Forwarder is the ingress's (forward.go), which
// republishes each event to its shard queue of 4 with the ingress's publisher
// (persistent, with confirms, batched), the session's ticket completed at the
// confirmation (msgs/s); events/amqp-msg is how many events an AMQP message carried. ratio-vs-sdk is the ingress's over the SDK's. Target (issue
// 35): at least 0.9 (republishing costs at most 10%).
//
// The method is BenchmarkIngestRabbitMQ's: each side is opened, held at its first
// event (the listener's call, the Forwarder's Dispatch), b.N messages are published
// and confirmed into the feed's exchange (1 KiB odds changes over 1,000 matches), then
// it is let go and timed until every message is processed (the listener) or confirmed
// by the broker (the ingress: the SDK's Flush, which waits for every ticket). The rate
// counts only the messages the session read inside the window. The SDK runs before the
// ingress and after the relay (below), and its two rates are averaged. The ingress's
// gate (barriers, global events) is not on the events' path and is left out: with
// recoveries disabled it would have nothing to do.
//
// relay-msgs/s is a relay with amqp091-go alone that sends one AMQP message per event
// (measureRelay), and x-of-relay the ingress's rate over it: what batching gains.
//
// The feed's broker and the group's are one RabbitMQ here, on the same two cores as this
// process: the ingress's broker both delivers the feed and stores the republished
// messages, which a deployment splits between the feed's broker (Sportradar's) and the
// operator's.
func BenchmarkGroupIngress(b *testing.B) {
	b.StopTimer() // the clock runs over the measured window only
	url := testenv.AMQPVhost(b)
	msgs := benchMessages(b)
	cfg := rabbitmq.Config{URL: url, Exchange: benchName("feed"), DeclareExchange: true,
		ConnectionName: "bench-feed", Prefetch: rabbitmq.DefaultPrefetch}
	pub, err := rabbitmq.NewPublisher(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		_ = pub.Close(context.Background())
		conn, ch := benchChannel(b, url)
		defer conn.Close()
		if err := ch.ExchangeDelete(cfg.Exchange, false, false); err != nil {
			b.Error(err)
		}
	}()
	publish := func(n int) {
		for i := range n {
			m := msgs[i%len(msgs)]
			if err := pub.Publish(context.Background(), m.key, m.body); err != nil {
				b.Fatal(err)
			}
		}
		if err := pub.Flush(context.Background()); err != nil {
			b.Fatal(err)
		}
	}

	before := measureSDKIngest(b, cfg, publish)
	in := measureIngress(b, url, cfg, publish)
	relay := measureRelay(b, url, cfg, publish)
	after := measureSDKIngest(b, cfg, publish)
	sdk := rate{MsgsPerSec: (before.MsgsPerSec + after.MsgsPerSec) / 2, CPUPerMsg: (before.CPUPerMsg + after.CPUPerMsg) / 2}
	b.ReportMetric(in.MsgsPerSec, "msgs/s")
	b.ReportMetric(sdk.MsgsPerSec, "sdk-msgs/s")
	b.ReportMetric(ratio(in.MsgsPerSec, sdk.MsgsPerSec), "ratio-vs-sdk")
	b.ReportMetric(relay.MsgsPerSec, "relay-msgs/s")
	b.ReportMetric(ratio(in.MsgsPerSec, relay.MsgsPerSec), "x-of-relay")
	b.ReportMetric(usPerMsg(in.CPUPerMsg), "cpu-us/msg")
	b.ReportMetric(usPerMsg(sdk.CPUPerMsg), "sdk-cpu-us/msg")
	b.ReportMetric(usPerMsg(relay.CPUPerMsg), "relay-cpu-us/msg")
	if b.N > 1 {
		b.Logf("N=%d: SDK %.0f msgs/s (%.0f before, %.0f after), ingress %.0f msgs/s, ratio %.3f; relay without batches %.0f msgs/s; process CPU per message %v SDK, %v ingress, %v relay",
			b.N, sdk.MsgsPerSec, before.MsgsPerSec, after.MsgsPerSec, in.MsgsPerSec, in.MsgsPerSec/sdk.MsgsPerSec,
			relay.MsgsPerSec, sdk.CPUPerMsg, in.CPUPerMsg, relay.CPUPerMsg)
	}
}

// benchSDKConfig is the SDK of both sides: the feed from tr, no API, no recoveries.
func benchSDKConfig(tr feed.Transport, up *ingestbench.UpSignal) feedkit.Config {
	return feedkit.Config{Transport: tr, Node: feed.Node(1), Global: up, Recovery: recovery.Config{Disabled: true}}
}

// measureSDKIngest measures the single-process SDK: a session, serial delivery, a
// listener that only counts.
func measureSDKIngest(b *testing.B, cfg rabbitmq.Config, publish func(int)) rate {
	b.Helper()
	tr, err := rabbitmq.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	up := ingestbench.NewUpSignal()
	sdk, err := feedkit.New(benchSDKConfig(tr, up))
	if err != nil {
		b.Fatal(err)
	}
	l := ingestbench.NewCountingListener(b.N)
	if err := sdk.AddSession(feed.AllMessages, l); err != nil {
		b.Fatal(err)
	}
	if err := sdk.Open(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := sdk.Close(context.Background()); err != nil {
			b.Error(err)
		}
	}()
	<-up.C
	publish(b.N)

	held := sdk.Stats().Sessions[0].Received
	w := ingestbench.Start()
	close(l.Gate)
	<-l.Done
	return w.End(b.N - int(held))
}

// measureIngress measures the ingress: a forwarding session with the ingress's
// Forwarder and publisher.
func measureIngress(b *testing.B, url string, cfg rabbitmq.Config, publish func(int)) rate {
	b.Helper()
	ctx := context.Background()
	top := Topology{Prefix: benchName("ingress"), Shards: ingressShards}
	defer deleteTopology(b, url, top)
	gpub, err := newPublisher(publisherConfig{URL: url, Topology: top, ConnectionName: "bench-ingress",
		OnError: func(err error) { b.Errorf("ingress publisher: %v", err) }})
	if err != nil {
		b.Fatal(err)
	}
	if err := gpub.start(ctx); err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := gpub.close(ctx); err != nil {
			b.Error(err)
		}
	}()
	tr, err := rabbitmq.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	up := ingestbench.NewUpSignal()
	sdk, err := feedkit.New(benchSDKConfig(tr, up))
	if err != nil {
		b.Fatal(err)
	}
	num := &numbering{epoch: 1}
	held := &heldForwarder{gate: make(chan struct{}), want: int64(b.N), dispatched: make(chan struct{})}
	err = sdk.AddForwardingSession(feed.AllMessages, func(s *concurrent.Stream) (feedkit.Forwarder, error) {
		held.forwarder = &forwarder{pub: gpub, top: top, num: num, stream: s}
		return held, nil
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := sdk.Open(ctx); err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := sdk.Close(ctx); err != nil {
			b.Error(err)
		}
	}()
	<-up.C
	publish(b.N)

	// The Forwarder's first Dispatch is waiting: what the session read before now
	// is not counted.
	before := sdk.Stats().Sessions[0].Received
	w := ingestbench.Start()
	b.StartTimer()
	close(held.gate)
	<-held.dispatched
	if err := sdk.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	r := w.End(b.N - int(before))
	st := gpub.stats()
	if st.Confirmed != uint64(b.N) || st.Republished != 0 {
		b.Fatalf("ingress publisher: %+v, %d events", st, b.N)
	}
	b.ReportMetric(float64(st.Published)/float64(st.Published-st.Batched+st.Batches), "events/amqp-msg")
	return r
}

// measureRelay measures a relay without batches, with amqp091-go alone: a consumer of a
// queue of its own on the feed's exchange (the transport's prefetch and
// acknowledgements, as BenchmarkIngestRabbitMQ's raw consumer) that republishes each
// message, with the ingress's headers, to its shard queue of ingressShards, persistent,
// on a channel in confirm mode with the ingress publisher's window, and is timed until
// every message is confirmed.
func measureRelay(b *testing.B, url string, cfg rabbitmq.Config, publish func(int)) rate {
	b.Helper()
	top := Topology{Prefix: benchName("relay"), Shards: ingressShards}
	defer deleteTopology(b, url, top)
	inConn, in := benchChannel(b, url)
	defer inConn.Close()
	outConn, out := benchChannel(b, url)
	defer outConn.Close()
	if err := top.declare(out); err != nil {
		b.Fatal(err)
	}
	if err := out.Confirm(false); err != nil {
		b.Fatal(err)
	}
	const window = publisherDefaultWindow
	confirms := out.NotifyPublish(make(chan amqp.Confirmation, window))
	if err := in.Qos(cfg.Prefetch, 0, false); err != nil {
		b.Fatal(err)
	}
	q, err := in.QueueDeclare("", false, true, true, false, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := in.QueueBind(q.Name, "#", cfg.Exchange, false, nil); err != nil {
		b.Fatal(err)
	}
	deliveries, err := in.Consume(q.Name, "", false, true, false, false, nil)
	if err != nil {
		b.Fatal(err)
	}
	publish(b.N)

	ackEvery := max(1, cfg.Prefetch/4)
	var taken, unacked, confirmed int
	var lastTag uint64
	relay := func(d amqp.Delivery) {
		taken++
		key, err := feed.ParseRoutingKey(d.RoutingKey)
		if err != nil {
			b.Fatal(err)
		}
		e := Envelope{Kind: KindEvent, RoutingKey: d.RoutingKey, Body: d.Body, ReceivedAt: time.Now(),
			Event: key.Event.String(), Epoch: 1, Seq: int64(taken)}
		if err := out.Publish("", top.ShardQueue(top.ShardOf(e.Event)), true, false, e.publishing()); err != nil {
			b.Fatal(err)
		}
		lastTag = d.DeliveryTag
		if unacked++; unacked >= ackEvery {
			_ = in.Ack(lastTag, true)
			unacked = 0
		}
	}
	// Like the others, hold the first message until the clock starts.
	relay(<-deliveries)
	w := ingestbench.Start()
	for confirmed < b.N {
		var next <-chan amqp.Delivery
		if taken < b.N && taken-confirmed < window {
			next = deliveries
		}
		select {
		case d := <-next:
			relay(d)
		case c := <-confirms:
			if !c.Ack {
				b.Fatalf("relay: the broker nacked delivery tag %d", c.DeliveryTag)
			}
			confirmed++
		}
		if unacked > 0 && len(deliveries) == 0 {
			_ = in.Ack(lastTag, true)
			unacked = 0
		}
	}
	return w.End(b.N - 1)
}

// heldForwarder is the ingress's Forwarder, its first Dispatch held until gate closes;
// dispatched is closed once want events are handed to the publisher.
type heldForwarder struct {
	*forwarder
	gate       chan struct{}
	n, want    int64 // n is the reading goroutine's alone
	dispatched chan struct{}
}

func (h *heldForwarder) Dispatch(ctx context.Context, ev feed.Event) error {
	<-h.gate
	err := h.forwarder.Dispatch(ctx, ev)
	if h.n++; h.n == h.want {
		close(h.dispatched)
	}
	return err
}
