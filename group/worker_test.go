package group

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/internal/testenv"
)

// wkGuard bounds every wait of the worker's tests for something that must happen: a
// guard against a hang, generous for a slow machine under -race.
const wkGuard = 2 * time.Minute

// wkShards is K in the worker's tests.
const wkShards = 4

// wkRepliesQueue is where the tests' barriers ask for their acknowledgements.
const wkRepliesQueue = "wk.test-replies"

// wkEpochMs numbers the test messages: message seq of a match has the timestamp
// wkEpochMs+seq (ms), which survives the round trip through XML.
const wkEpochMs = 1_700_000_000_000

// wkTopology makes a virtual host of the test's own and declares the group's topology
// on it, so that the test can publish before any worker runs.
func wkTopology(t *testing.T) (string, Topology) {
	t.Helper()
	url := testenv.AMQPVhost(t)
	top, err := Topology{Prefix: "wk", Shards: wkShards}.withDefaults()
	require.NoError(t, err)
	conn, err := amqp.Dial(url)
	require.NoError(t, err)
	defer conn.Close()
	ch, err := conn.Channel()
	require.NoError(t, err)
	require.NoError(t, top.declare(ch))
	return url, top
}

// wkPublisher publishes a test's messages straight into the group's queues, as the
// ingress would, with publisher confirms.
type wkPublisher struct {
	t       *testing.T
	conn    *amqp.Connection
	ch      *amqp.Channel
	seq     int64
	pending []*amqp.DeferredConfirmation
}

func newWkPublisher(t *testing.T, url string) *wkPublisher {
	t.Helper()
	conn, err := amqp.Dial(url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	ch, err := conn.Channel()
	require.NoError(t, err)
	require.NoError(t, ch.Confirm(false))
	return &wkPublisher{t: t, conn: conn, ch: ch}
}

// to publishes e to the exchange with the key; "" is the default exchange, where the
// key names a queue. replyTo, if set, is the reply-to property.
func (p *wkPublisher) to(exchange, key string, e Envelope, replyTo string) {
	p.t.Helper()
	p.seq++
	e.Epoch, e.Seq = 1, p.seq
	msg := e.publishing()
	msg.ReplyTo = replyTo
	dc, err := p.ch.PublishWithDeferredConfirmWithContext(p.t.Context(), exchange, key, false, false, msg)
	require.NoError(p.t, err)
	p.pending = append(p.pending, dc)
}

// shard publishes e to shard n's queue.
func (p *wkPublisher) shard(top Topology, n int, e Envelope) {
	p.t.Helper()
	p.to("", top.ShardQueue(n), e, "")
}

// batch publishes events to shard n's queue as one batch, numbered in order.
func (p *wkPublisher) batch(top Topology, n int, events []Envelope) {
	p.t.Helper()
	ptrs := make([]*Envelope, len(events))
	for i := range events {
		p.seq++
		events[i].Epoch, events[i].Seq = 1, p.seq
		ptrs[i] = &events[i]
	}
	dc, err := p.ch.PublishWithDeferredConfirmWithContext(p.t.Context(), "", top.ShardQueue(n), false, false, batchPublishing(ptrs))
	require.NoError(p.t, err)
	p.pending = append(p.pending, dc)
}

// flush waits for the broker's confirmation of everything published.
func (p *wkPublisher) flush() {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.t.Context(), wkGuard)
	defer cancel()
	for _, dc := range p.pending {
		ok, err := dc.WaitContext(ctx)
		require.NoError(p.t, err)
		require.True(p.t, ok, "nacked")
	}
	p.pending = nil
}

func wkURN(match int) feed.URN { return feed.URN{Prefix: "sr", Type: "match", ID: int64(match)} }

// wkReceivedAt is the receipt time the ingress stamped on message seq of match.
func wkReceivedAt(match, seq int) time.Time {
	return time.Unix(1_800_000_000, int64(match)*1_000_000+int64(seq)*1000+7).UTC()
}

// wkEvent is message seq of match (an odds change or a bet stop) as the ingress
// republishes it.
func wkEvent(match, seq int) Envelope {
	h := feed.Header{Producer: 1, Event: wkURN(match), Timestamp: time.UnixMilli(wkEpochMs + int64(seq)).UTC()}
	var m feed.Message = &feed.OddsChange{Header: h}
	if seq%2 == 1 {
		m = &feed.BetStop{Header: h}
	}
	key := feed.RoutingKey{Priority: feed.PriorityLow, Live: true, Type: m.Type(), SportID: 1, Event: h.Event}
	return Envelope{Kind: KindEvent, RoutingKey: key.String(), Body: feedtest.Marshal(m),
		ReceivedAt: wkReceivedAt(match, seq), Event: h.Event.String()}
}

// wkAlive is an alive as the ingress broadcasts it to every shard.
func wkAlive(n int) Envelope {
	body := feedtest.Marshal(&feed.Alive{Header: feed.Header{Producer: 1, Timestamp: time.UnixMilli(wkEpochMs + int64(n)).UTC()}, Subscribed: true})
	return Envelope{Kind: KindSystem, RoutingKey: "-.-.-.alive.-.-.-", Body: body, ReceivedAt: time.Now()}
}

// wkShardOf is the shard the test puts a match in.
func wkShardOf(match int) int { return match % wkShards }

// wkCall is one listener call: which worker made it, for which message.
type wkCall struct {
	worker     string
	match, seq int
}

// wkLog records the listener calls of a test's workers, in the order they returned.
type wkLog struct {
	t          *testing.T
	mu         sync.Mutex
	calls      []wkCall
	count      map[[2]int]int // calls per (match, seq)
	unparsable []*feed.UnparsableMessage
	wrongTime  []string
	changed    chan struct{} // a token after each call
}

func newWkLog(t *testing.T) *wkLog {
	return &wkLog{t: t, count: make(map[[2]int]int), changed: make(chan struct{}, 1)}
}

func (l *wkLog) record(c wkCall, receivedAt time.Time) {
	l.mu.Lock()
	l.calls = append(l.calls, c)
	l.count[[2]int{c.match, c.seq}]++
	if want := wkReceivedAt(c.match, c.seq); !receivedAt.Equal(want) {
		l.wrongTime = append(l.wrongTime, fmt.Sprintf("match %d seq %d: received at %v, not %v", c.match, c.seq, receivedAt, want))
	}
	l.mu.Unlock()
	l.notify()
}

func (l *wkLog) notify() {
	select {
	case l.changed <- struct{}{}:
	default:
	}
}

// waitUntil waits until cond holds on the log, under its lock.
func (l *wkLog) waitUntil(what string, cond func(l *wkLog) bool) {
	l.t.Helper()
	guard := time.NewTimer(wkGuard)
	defer guard.Stop()
	for {
		l.mu.Lock()
		ok := cond(l)
		l.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-l.changed:
		case <-guard.C:
			l.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// waitAll waits until every message of want was called at least once.
func (l *wkLog) waitAll(want [][2]int) {
	l.t.Helper()
	l.waitUntil(fmt.Sprintf("%d messages", len(want)), func(l *wkLog) bool {
		for _, k := range want {
			if l.count[k] == 0 {
				return false
			}
		}
		return true
	})
}

// check checks the log against the messages published (want, in each match's order):
// each called at least once (exactly once unless dups), and each match's messages in
// order of their first calls. It returns the number of duplicate calls.
func (l *wkLog) check(want [][2]int, dups bool) int {
	l.t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	assert.Empty(l.t, l.wrongTime, "ReceivedAt travels from the ingress")
	duplicates := 0
	for _, k := range want {
		n := l.count[k]
		assert.NotZero(l.t, n, "match %d seq %d was lost", k[0], k[1])
		if n > 1 {
			duplicates += n - 1
			if !dups {
				l.t.Errorf("match %d seq %d was delivered %d times", k[0], k[1], n)
			}
		}
	}
	assert.Len(l.t, l.count, len(want), "only the messages published are called")
	firsts := make(map[int][]int)
	seen := make(map[[2]int]bool)
	for _, c := range l.calls {
		k := [2]int{c.match, c.seq}
		if !seen[k] {
			seen[k] = true
			firsts[c.match] = append(firsts[c.match], c.seq)
		}
	}
	for match, seqs := range firsts {
		assert.True(l.t, slices.IsSorted(seqs), "match %d's messages out of order by first call: %v", match, seqs)
	}
	return duplicates
}

// byWorker counts the calls each worker made.
func (l *wkLog) byWorker() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := make(map[string]int)
	for _, c := range l.calls {
		n[c.worker]++
	}
	return n
}

// wkListener is a worker's listener: it records each call as it returns, after gate
// (when set) lets it go on.
type wkListener struct {
	feed.BaseOddsFeedListener
	name string
	log  *wkLog
	gate func(ctx context.Context, match, seq int)
}

func (l *wkListener) call(ctx context.Context, h *feed.Header) error {
	match, seq := int(h.Event.ID), int(h.Timestamp.UnixMilli()-wkEpochMs)
	if l.gate != nil {
		l.gate(ctx, match, seq)
	}
	l.log.record(wkCall{worker: l.name, match: match, seq: seq}, h.ReceivedAt)
	return nil
}

func (l *wkListener) OnOddsChange(ctx context.Context, m *feed.OddsChange) error {
	return l.call(ctx, &m.Header)
}

func (l *wkListener) OnBetStop(ctx context.Context, m *feed.BetStop) error {
	return l.call(ctx, &m.Header)
}

func (l *wkListener) OnUnparsableMessage(_ context.Context, m *feed.UnparsableMessage) error {
	l.log.mu.Lock()
	l.log.unparsable = append(l.log.unparsable, m)
	l.log.mu.Unlock()
	l.log.notify()
	return nil
}

// wkRunning is a worker a test runs.
type wkRunning struct {
	w    *Worker
	name string // its connection's name
	up   chan struct{}
	stop func() error
}

// wkConfig is a worker's config for a test: all shards, a connection name of its own
// (so that the test can have the broker close its connections alone), quick
// reconnections, the failures logged.
func wkConfig(t *testing.T, url string, top Topology, l feed.OddsFeedListener) WorkerConfig {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return WorkerConfig{
		URL: url, Topology: top, Shards: []int{0, 1, 2, 3}, Listener: l,
		Concurrent:     concurrent.Config{Threads: 4},
		ReconnectDelay: 10 * time.Millisecond, MaxReconnectDelay: 200 * time.Millisecond,
		ConnectionName: "feedkit-test-worker-" + hex.EncodeToString(b[:]),
		OnError:        func(err error) { t.Log(err) },
	}
}

// startWorker runs a worker until the test stops it (or ends), and waits until it
// consumes every queue: a worker started after it is its standby.
func startWorker(t *testing.T, cfg WorkerConfig) *wkRunning {
	t.Helper()
	w, err := NewWorker(cfg)
	require.NoError(t, err)
	r := &wkRunning{w: w, name: cfg.ConnectionName, up: make(chan struct{}, 16)}
	w.linkUp = func() { r.up <- struct{}{} }
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan error, 1)
	go func() { res <- w.Run(ctx) }()
	var once sync.Once
	var runErr error
	r.stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-res:
			case <-time.After(wkGuard):
				runErr = errors.New("Run did not return")
			}
		})
		return runErr
	}
	t.Cleanup(func() { _ = r.stop() })
	r.awaitUp(t)
	return r
}

// awaitUp waits for the worker's next link to consume.
func (r *wkRunning) awaitUp(t *testing.T) {
	t.Helper()
	select {
	case <-r.up:
	case <-time.After(wkGuard):
		t.Fatalf("worker %s never consumed", r.name)
	}
}

// wkQueueDepth is how many messages wait in queue, none of them unacknowledged (no
// consumer may hold any when it is called).
func wkQueueDepth(t *testing.T, url, queue string) int {
	t.Helper()
	conn, err := amqp.Dial(url)
	require.NoError(t, err)
	defer conn.Close()
	ch, err := conn.Channel()
	require.NoError(t, err)
	q, err := ch.QueueDeclarePassive(queue, true, false, false, false, amqp.Table{"x-single-active-consumer": true})
	require.NoError(t, err)
	return q.Messages
}

// wkPublishMatches publishes seqs messages for each of the matches, round-robin over
// the matches, each into its match's shard, with an alive into every shard every
// aliveEvery messages; it returns the messages in publishing order.
func wkPublishMatches(p *wkPublisher, top Topology, matches []int, from, seqs, aliveEvery int) [][2]int {
	var want [][2]int
	n := 0
	for seq := from; seq < from+seqs; seq++ {
		for _, m := range matches {
			p.shard(top, wkShardOf(m), wkEvent(m, seq))
			want = append(want, [2]int{m, seq})
			if n++; aliveEvery > 0 && n%aliveEvery == 0 {
				for s := range wkShards {
					p.shard(top, s, wkAlive(n))
				}
			}
		}
	}
	p.flush()
	return want
}

func wkMatches(n int) []int {
	m := make([]int, n)
	for i := range m {
		m[i] = i + 1
	}
	return m
}

// sumShards sums a counter over the shards of a worker's stats.
func sumShards(st WorkerStats, f func(ShardStats) uint64) uint64 {
	var n uint64
	for _, s := range st.Shards {
		n += f(s)
	}
	return n
}

// One worker on 4 shards: every event reaches the listener once, each match's in order,
// with the receipt time the ingress stamped; system messages and foreign messages are
// taken and dropped in their turn, an event that cannot be routed and one too large
// reach OnUnparsableMessage as in a session; once Run returns, every delivery has been
// acknowledged.
func TestWorkerDeliversEveryEventOncePerMatchInOrder(t *testing.T) {
	url, top := wkTopology(t)
	p := newWkPublisher(t, url)
	want := wkPublishMatches(p, top, wkMatches(20), 0, 25, 50)
	// A foreign message, an unroutable event and an oversized one, in shard 2.
	require.NoError(t, p.ch.PublishWithContext(t.Context(), "", top.ShardQueue(2), false, false,
		amqp.Publishing{Body: []byte("not ours")}))
	bad := wkEvent(2, 1000)
	bad.RoutingKey = "not.a.routing.key"
	p.shard(top, 2, bad)
	large := wkEvent(6, 1000)
	large.Body = append(large.Body, []byte(strings.Repeat(" ", 8<<10))...)
	p.shard(top, 2, large)
	p.flush()
	aliveCount := (len(want) / 50) * wkShards
	replies := wkReplies(t, url, wkRepliesQueue)

	log := newWkLog(t)
	cfg := wkConfig(t, url, top, &wkListener{name: "A", log: log})
	cfg.MaxBodySize = 4 << 10
	var errs atomic.Int64
	cfg.OnError = func(err error) { t.Log(err); errs.Add(1) }
	r := startWorker(t, cfg)
	assert.Empty(t, wkEndBarriers(t, p, top, replies))
	log.waitAll(want)
	log.waitUntil("two unparsable messages", func(l *wkLog) bool { return len(l.unparsable) == 2 })
	require.NoError(t, r.stop())

	assert.Zero(t, log.check(want, false))
	log.mu.Lock()
	unparsable := slices.Clone(log.unparsable)
	log.mu.Unlock()
	// In parallel: the unroutable one has no match.
	slices.SortFunc(unparsable, func(a, b *feed.UnparsableMessage) int { return strings.Compare(a.RoutingKey, b.RoutingKey) })
	assert.ErrorIs(t, unparsable[1].Err, feed.ErrMalformedMessage)
	assert.Equal(t, "not.a.routing.key", unparsable[1].RoutingKey)
	assert.ErrorIs(t, unparsable[0].Err, feed.ErrBodyTooLarge)
	assert.Equal(t, wkURN(6), unparsable[0].Event)

	st := r.w.Stats()
	total := uint64(len(want) + aliveCount + 3 + wkShards)
	assert.Equal(t, total, sumShards(st, func(s ShardStats) uint64 { return s.Delivered }))
	assert.Equal(t, total, sumShards(st, func(s ShardStats) uint64 { return s.Acked }), "every delivery acknowledged")
	assert.Equal(t, uint64(len(want)+2), sumShards(st, func(s ShardStats) uint64 { return s.Events }))
	assert.Equal(t, uint64(len(want)+2), sumShards(st, func(s ShardStats) uint64 { return s.Processed }))
	assert.Equal(t, uint64(aliveCount), sumShards(st, func(s ShardStats) uint64 { return s.System }))
	assert.Equal(t, uint64(1), st.Shards[2].Invalid)
	assert.Equal(t, int64(1), errs.Load(), "the foreign message is reported")
	assert.Equal(t, uint64(1), st.Connects)
	for n := range wkShards {
		assert.Zero(t, wkQueueDepth(t, url, top.ShardQueue(n)), "shard %d", n)
	}
}

// Events in batches (as the ingress packs a busy feed's) reach the listener once each,
// each match's in order with the single messages around them; a batch is acknowledged
// once all its events are processed, and a damaged one is dropped and reported.
func TestWorkerDeliversBatchesInOrder(t *testing.T) {
	url, top := wkTopology(t)
	p := newWkPublisher(t, url)
	var want [][2]int
	perShard := make([][]Envelope, wkShards)
	deliveries, batches := 0, 0
	flushShard := func(n int) {
		switch len(perShard[n]) {
		case 0:
			return
		case 1:
			p.shard(top, n, perShard[n][0])
		default:
			p.batch(top, n, perShard[n])
			batches++
		}
		deliveries++
		perShard[n] = nil
	}
	for seq := range 30 {
		for _, m := range wkMatches(20) {
			n := wkShardOf(m)
			perShard[n] = append(perShard[n], wkEvent(m, seq))
			want = append(want, [2]int{m, seq})
			if len(perShard[n]) == 7 {
				flushShard(n)
			}
		}
		if seq%10 == 9 { // alives between batches
			for n := range wkShards {
				flushShard(n)
				p.shard(top, n, wkAlive(seq))
				deliveries++
			}
		}
	}
	for n := range wkShards {
		flushShard(n)
	}
	damaged := batchPublishing([]*Envelope{new(wkEvent(1, 100)), new(wkEvent(1, 101))})
	damaged.Headers[headerCount] = int64(3)
	require.NoError(t, p.ch.PublishWithContext(t.Context(), "", top.ShardQueue(1), false, false, damaged))
	deliveries++
	p.flush()
	replies := wkReplies(t, url, wkRepliesQueue)

	log := newWkLog(t)
	cfg := wkConfig(t, url, top, &wkListener{name: "A", log: log})
	var errs atomic.Int64
	cfg.OnError = func(err error) {
		assert.ErrorContains(t, err, "a batch of 2 events, its header says 3")
		errs.Add(1)
	}
	r := startWorker(t, cfg)
	assert.Empty(t, wkEndBarriers(t, p, top, replies))
	log.waitAll(want)
	require.NoError(t, r.stop())

	assert.Zero(t, log.check(want, false))
	st := r.w.Stats()
	total := uint64(deliveries + wkShards) // and the barriers
	assert.Equal(t, total, sumShards(st, func(s ShardStats) uint64 { return s.Delivered }))
	assert.Equal(t, total, sumShards(st, func(s ShardStats) uint64 { return s.Acked }), "every delivery acknowledged")
	assert.Equal(t, uint64(batches), sumShards(st, func(s ShardStats) uint64 { return s.Batches }))
	assert.Equal(t, uint64(len(want)), sumShards(st, func(s ShardStats) uint64 { return s.Events }))
	assert.Equal(t, uint64(len(want)), sumShards(st, func(s ShardStats) uint64 { return s.Processed }))
	assert.Equal(t, uint64(1), st.Shards[1].Invalid)
	assert.Equal(t, int64(1), errs.Load(), "the damaged batch is reported")
	for n := range wkShards {
		assert.Zero(t, wkQueueDepth(t, url, top.ShardQueue(n)), "shard %d", n)
	}
}

// wkReplies consumes a queue of barrier acknowledgements.
func wkReplies(t *testing.T, url, queue string) <-chan Envelope {
	t.Helper()
	conn, err := amqp.Dial(url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	ch, err := conn.Channel()
	require.NoError(t, err)
	_, err = ch.QueueDeclare(queue, false, false, false, false, nil)
	require.NoError(t, err)
	ds, err := ch.Consume(queue, "", true, false, false, false, nil)
	require.NoError(t, err)
	out := make(chan Envelope, 64)
	go func() {
		for d := range ds {
			e, err := readEnvelope(d.Headers, d.Body)
			if err != nil {
				e = Envelope{Kind: "unreadable: " + Kind(err.Error())}
			}
			if len(e.Body) == 0 {
				e.Body = nil
			}
			out <- e
		}
	}()
	return out
}

func wkNextReply(t *testing.T, replies <-chan Envelope) Envelope {
	t.Helper()
	select {
	case e := <-replies:
		return e
	case <-time.After(wkGuard):
		t.Fatal("timed out waiting for a barrier's acknowledgement")
		return Envelope{}
	}
}

// wkEndBarriers puts a barrier at the end of every shard queue and waits for their
// acknowledgements: everything published before is then processed by the active worker.
// It returns the other acknowledgements it read meanwhile.
func wkEndBarriers(t *testing.T, p *wkPublisher, top Topology, replies <-chan Envelope) []Envelope {
	t.Helper()
	for n := range wkShards {
		p.to("", top.ShardQueue(n), Envelope{Kind: KindBarrier, Barrier: fmt.Sprintf("end-%d", n), Shard: n}, wkRepliesQueue)
	}
	p.flush()
	var others []Envelope
	ends := make(map[string]bool)
	for len(ends) < wkShards {
		e := wkNextReply(t, replies)
		if strings.HasPrefix(e.Barrier, "end-") {
			ends[e.Barrier] = true
		} else {
			others = append(others, e)
		}
	}
	return others
}

// A barrier is acknowledged to the queue its reply-to names only once every event
// before it in its shard has been processed (the listener call returned), while the
// events after it go on; then the barrier's delivery is acknowledged too.
func TestWorkerAcknowledgesABarrierOnlyAfterEveryEarlierEvent(t *testing.T) {
	url, top := wkTopology(t)
	replies := wkReplies(t, url, wkRepliesQueue)
	log := newWkLog(t)
	entered, release := make(chan struct{}), make(chan struct{})
	var returned atomic.Bool
	l := &wkListener{name: "A", log: log, gate: func(_ context.Context, match, seq int) {
		if match == 4 && seq == 0 {
			close(entered)
			<-release
			returned.Store(true)
		}
	}}
	r := startWorker(t, wkConfig(t, url, top, l))

	p := newWkPublisher(t, url)
	for _, m := range []int{4, 8, 12} { // shard 0
		p.shard(top, 0, wkEvent(m, 0))
	}
	barrier := Envelope{Kind: KindBarrier, Barrier: "b-1", Producer: 1, Request: 7, Shard: 0}
	p.to("", top.ShardQueue(0), barrier, wkRepliesQueue)
	p.shard(top, 0, wkEvent(16, 0)) // after the barrier
	p.flush()

	waitFor := func(ch <-chan struct{}, what string) {
		select {
		case <-ch:
		case <-time.After(wkGuard):
			t.Fatalf("timed out waiting for %s", what)
		}
	}
	waitFor(entered, "the gated call")
	log.waitAll([][2]int{{8, 0}, {12, 0}, {16, 0}})
	select {
	case e := <-replies:
		t.Fatalf("barrier acknowledged while an event before it is in its listener call: %+v", e)
	default:
	}
	assert.Zero(t, r.w.Stats().Shards[0].BarriersAcked)

	// Another barrier, alone in shard 1: acknowledged at once.
	p.to("", top.ShardQueue(1), Envelope{Kind: KindBarrier, Barrier: "b-2", Producer: 1, Request: 7, Shard: 1}, wkRepliesQueue)
	p.flush()
	e := wkNextReply(t, replies)
	assert.Equal(t, "b-2", e.Barrier)
	assert.Equal(t, 1, e.Shard)

	close(release)
	e = wkNextReply(t, replies)
	assert.True(t, returned.Load(), "acknowledged after the listener call returned")
	assert.Equal(t, Envelope{Kind: KindBarrierAck, Barrier: "b-1", Producer: 1, Request: 7, Shard: 0, Epoch: 1}, e)
	require.NoError(t, r.stop())

	st := r.w.Stats()
	assert.Equal(t, uint64(1), st.Shards[0].BarriersAcked)
	assert.Equal(t, uint64(1), st.Shards[1].BarriersAcked)
	assert.Equal(t, uint64(5), st.Shards[0].Acked, "the barrier's delivery too")
	assert.Zero(t, wkQueueDepth(t, url, top.ShardQueue(0)))
	assert.Zero(t, wkQueueDepth(t, url, top.ShardQueue(1)))
}

// A standby worker on the same shards takes over when the active one's Run ends: the
// active one finishes what it dispatched and acknowledges it, and leaves the rest to
// the broker, which gives it to the standby: every event once, each match in order.
func TestWorkerStandbyTakesOverWhenTheActiveStops(t *testing.T) {
	url, top := wkTopology(t)
	replies := wkReplies(t, url, wkRepliesQueue)
	log := newWkLog(t)
	stopping := make(chan struct{})
	gated := make(chan struct{})
	// A holds match 1 at seq 5 until it is told to stop: the rest of its shard is done
	// but not acknowledged behind it, and its queue has deliveries not yet dispatched.
	a := startWorker(t, wkConfig(t, url, top, &wkListener{name: "A", log: log, gate: func(_ context.Context, match, seq int) {
		if match == 1 && seq == 5 {
			close(gated)
			<-stopping
		}
	}}))
	b := startWorker(t, wkConfig(t, url, top, &wkListener{name: "B", log: log}))

	p := newWkPublisher(t, url)
	matches := wkMatches(20)
	want := wkPublishMatches(p, top, matches, 0, 20, 40)
	<-gated
	log.waitUntil("A past the middle", func(l *wkLog) bool { return len(l.calls) >= len(want)/2 })
	close(stopping)
	require.NoError(t, a.stop())
	want = append(want, wkPublishMatches(p, top, matches, 20, 10, 40)...)

	assert.Empty(t, wkEndBarriers(t, p, top, replies))
	log.waitAll(want)
	require.NoError(t, b.stop())
	assert.Zero(t, log.check(want, false), "a graceful hand-over duplicates nothing")
	by := log.byWorker()
	assert.NotZero(t, by["A"])
	assert.NotZero(t, by["B"])
	assert.Equal(t, len(want), by["A"]+by["B"])
	for n := range wkShards {
		assert.Zero(t, wkQueueDepth(t, url, top.ShardQueue(n)), "shard %d", n)
	}
}

// A standby worker takes over when the broker closes the active one's connection: the
// deliveries it had not acknowledged come to the standby, some of them processed
// already (duplicates, only of deliveries the broker gives again), none lost, each match
// in order by first call. A barrier behind a call the old worker never finished is
// acknowledged by the standby; the old worker reconnects as the standby.
func TestWorkerStandbyTakesOverWhenTheActiveConnectionIsClosed(t *testing.T) {
	url, top := wkTopology(t)
	replies := wkReplies(t, url, wkRepliesQueue)
	log := newWkLog(t)
	gated, release := make(chan struct{}), make(chan struct{})
	a := startWorker(t, wkConfig(t, url, top, &wkListener{name: "A", log: log, gate: func(_ context.Context, match, seq int) {
		if match == 1 && seq == 5 {
			close(gated)
			<-release // ignores its context: the call outlives the link
		}
	}}))
	b := startWorker(t, wkConfig(t, url, top, &wkListener{name: "B", log: log}))

	p := newWkPublisher(t, url)
	matches := wkMatches(20)
	want := wkPublishMatches(p, top, matches, 0, 15, 40)
	p.to("", top.ShardQueue(1), Envelope{Kind: KindBarrier, Barrier: "b-fo", Producer: 1, Request: 9, Shard: 1}, wkRepliesQueue)
	p.flush()
	<-gated
	log.waitUntil("A past the middle", func(l *wkLog) bool { return len(l.calls) >= len(want)/2 })

	require.Equal(t, 1, testenv.CloseAMQPConnections(t, a.name, "test: the active worker dies"))
	a.awaitUp(t) // A is back, as the standby
	want = append(want, wkPublishMatches(p, top, matches, 15, 10, 40)...)
	others := wkEndBarriers(t, p, top, replies)
	log.waitAll(want)
	require.NotEmpty(t, others, "b-fo acknowledged, by B")
	for _, e := range others {
		assert.Equal(t, Envelope{Kind: KindBarrierAck, Barrier: "b-fo", Producer: 1, Request: 9, Shard: 1, Epoch: 1}, e)
	}

	close(release) // A's old call returns; its deliveries are the broker's, never acked
	require.NoError(t, b.stop())
	require.NoError(t, a.stop())
	dups := log.check(want, true)
	sa, sb := a.w.Stats(), b.w.Stats()
	redelivered := sumShards(sb, func(s ShardStats) uint64 { return s.Redelivered })
	assert.NotZero(t, redelivered, "A's unacknowledged deliveries went to B")
	assert.LessOrEqual(t, uint64(dups), redelivered+1, "duplicates only of deliveries given again (and A's call in flight)")
	assert.Equal(t, uint64(1), sa.Drops)
	assert.Equal(t, uint64(1+wkShards), sumShards(sb, func(s ShardStats) uint64 { return s.BarriersAcked }))
	t.Logf("duplicates %d, redelivered to B %d, calls by worker %v", dups, redelivered, log.byWorker())
	for n := range wkShards {
		assert.Zero(t, wkQueueDepth(t, url, top.ShardQueue(n)), "shard %d", n)
	}
}

// The global events of the control exchange reach WorkerConfig.Global in order; one
// that does not decode is reported and dropped.
func TestWorkerPassesGlobalEventsInOrder(t *testing.T) {
	url, top := wkTopology(t)
	rec := feedtest.NewGlobalRecorder()
	cfg := wkConfig(t, url, top, &wkListener{name: "A", log: newWkLog(t)})
	cfg.Global = rec
	r := startWorker(t, cfg)

	p := newWkPublisher(t, url)
	var want []string
	for i := range 20 {
		ev := globalEvent{Kind: globalProducerStatus, Status: feed.ProducerStatus{Producer: i + 1, Down: i%2 == 0,
			Reason: feed.AliveIntervalViolation, Timestamp: time.Now()}}
		if i%2 == 1 {
			ev.Status.Reason = feed.ReturnedFromInactivity
		}
		if i == 10 {
			p.to(top.ControlExchange(), "", Envelope{Kind: KindGlobal, Body: []byte("{")}, "")
		}
		body, err := encodeGlobal(ev)
		require.NoError(t, err)
		p.to(top.ControlExchange(), "", Envelope{Kind: KindGlobal, Body: body}, "")
		state := "up"
		if ev.Status.Down {
			state = "down"
		}
		want = append(want, fmt.Sprintf("producer %d %s (%s)", i+1, state, ev.Status.Reason))
	}
	p.flush()
	calls := rec.RequireCalls(t, 20)
	var got []string
	for _, c := range calls {
		got = append(got, c.String())
	}
	assert.Equal(t, want, got)
	require.NoError(t, r.stop())
	st := r.w.Stats()
	assert.Equal(t, uint64(20), st.Globals)
	assert.Equal(t, uint64(1), st.BadGlobals)
}

func TestWorkerConfigRefusedByField(t *testing.T) {
	l := &wkListener{}
	ok := WorkerConfig{URL: "amqp://localhost/", Topology: Topology{Shards: 4}, Shards: []int{0, 1}, Listener: l}
	for _, c := range []struct {
		field string
		edit  func(*WorkerConfig)
	}{
		{"URL", func(c *WorkerConfig) { c.URL = "" }},
		{"URL", func(c *WorkerConfig) { c.URL = "http://x" }},
		{"Topology.Shards", func(c *WorkerConfig) { c.Topology.Shards = 0 }},
		{"Topology.Prefix", func(c *WorkerConfig) { c.Topology.Prefix = "a b" }},
		{"Shards", func(c *WorkerConfig) { c.Shards = nil }},
		{"Shards", func(c *WorkerConfig) { c.Shards = []int{4} }},
		{"Shards", func(c *WorkerConfig) { c.Shards = []int{1, 1} }},
		{"Listener", func(c *WorkerConfig) { c.Listener = nil }},
		{"Prefetch", func(c *WorkerConfig) { c.Prefetch = -1 }},
		{"Prefetch", func(c *WorkerConfig) { c.Prefetch = 70000 }},
		{"MaxBodySize", func(c *WorkerConfig) { c.MaxBodySize = -1 }},
		{"DrainTimeout", func(c *WorkerConfig) { c.DrainTimeout = -1 }},
		{"Heartbeat", func(c *WorkerConfig) { c.Heartbeat = 1500 * time.Millisecond }},
		{"DialTimeout", func(c *WorkerConfig) { c.DialTimeout = -1 }},
		{"ReconnectDelay", func(c *WorkerConfig) { c.ReconnectDelay = -1 }},
		{"MaxReconnectDelay", func(c *WorkerConfig) { c.MaxReconnectDelay = -1 }},
		{"MaxReconnectDelay", func(c *WorkerConfig) { c.ReconnectDelay, c.MaxReconnectDelay = time.Second, time.Millisecond }},
		{"Concurrent.Threads", func(c *WorkerConfig) { c.Concurrent.Threads = -1 }},
	} {
		cfg := ok
		c.edit(&cfg)
		_, err := NewWorker(cfg)
		if assert.Error(t, err, c.field) {
			assert.Contains(t, err.Error(), c.field)
			assert.Contains(t, err.Error(), "WorkerConfig")
		}
	}
	w, err := NewWorker(ok)
	require.NoError(t, err)
	assert.Equal(t, DefaultWorkerPrefetch, w.cfg.Prefetch)
	assert.Equal(t, DefaultWorkerConnectionName, w.cfg.ConnectionName)
	assert.Equal(t, "feedkit.shard.1", w.Stats().Shards[1].Queue)
}
