package group

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/internal/faultproxy"
	"github.com/feedkit/feedkit/internal/testenv"
)

// pubGuard bounds every wait of these tests: generous, for a slow machine under -race.
const pubGuard = 2 * time.Minute

// pubTestConfig is a publisher's config for a test: a connection name of its own (so
// that the test can have the broker close its connections alone), quick reconnections,
// and the failures logged.
func pubTestConfig(t *testing.T, url string, top Topology) publisherConfig {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return publisherConfig{
		URL: url, Topology: top,
		ReconnectDelay: 10 * time.Millisecond, MaxReconnectDelay: 200 * time.Millisecond,
		ConnectionName: "feedkit-test-publisher-" + hex.EncodeToString(b[:]),
		OnError:        func(err error) { t.Log(err) },
	}
}

// startPublisher makes and starts a publisher, closed at the end of the test.
func startPublisher(t *testing.T, cfg publisherConfig) *publisher {
	t.Helper()
	p, err := newPublisher(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), pubGuard)
	defer cancel()
	require.NoError(t, p.start(ctx))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), pubGuard)
		defer cancel()
		_ = p.close(ctx)
	})
	return p
}

// dones records the done calls of a test's messages, each of which carries its seq.
type dones struct {
	mu     sync.Mutex
	seqs   []int64
	notify chan struct{} // a token after each call
}

func newDones() *dones { return &dones{notify: make(chan struct{}, 1)} }

// of is the done of the message numbered seq.
func (d *dones) of(seq int64) func() {
	return func() {
		d.mu.Lock()
		d.seqs = append(d.seqs, seq)
		d.mu.Unlock()
		select {
		case d.notify <- struct{}{}:
		default:
		}
	}
}

func (d *dones) snapshot() []int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]int64(nil), d.seqs...)
}

// last returns how many dones were called, and the seq of the last.
func (d *dones) last() (int, int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.seqs) == 0 {
		return 0, 0
	}
	return len(d.seqs), d.seqs[len(d.seqs)-1]
}

// wait waits until n dones were called.
func (d *dones) wait(t *testing.T, n int) {
	t.Helper()
	guard := time.NewTimer(pubGuard)
	defer guard.Stop()
	for {
		if got, _ := d.last(); got >= n {
			return
		}
		select {
		case <-d.notify:
		case <-guard.C:
			got, _ := d.last()
			t.Fatalf("%d of %d messages confirmed after %v", got, n, pubGuard)
		}
	}
}

// assertInOrder checks that the dones were called once each, for seqs 1 to n in order.
func (d *dones) assertInOrder(t *testing.T, n int64) {
	t.Helper()
	seqs := d.snapshot()
	require.Len(t, seqs, int(n), "one done per message")
	for i, s := range seqs {
		if s != int64(i+1) {
			t.Fatalf("done number %d is seq %d: not publish order", i+1, s)
		}
	}
}

func eventEnvelope(seq int64, match int) Envelope {
	ev := "sr:match:" + strconv.Itoa(match)
	return Envelope{Kind: KindEvent, RoutingKey: "hi.-.live.odds_change.1." + ev + ".-", Body: []byte("<odds_change/>"),
		ReceivedAt: time.Unix(0, seq), Event: ev, Epoch: 1, Seq: seq}
}

func systemEnvelope(seq int64) Envelope {
	return Envelope{Kind: KindSystem, RoutingKey: "-.-.-.alive.-.-.-.-", Body: []byte("<alive/>"),
		ReceivedAt: time.Unix(0, seq), Epoch: 1, Seq: seq}
}

// drainQueue consumes every message in queue and returns them in queue order, the
// events of a batch each in its place.
func drainQueue(t *testing.T, url, queue string) []Envelope {
	t.Helper()
	conn, err := amqp.Dial(url)
	require.NoError(t, err)
	defer conn.Close()
	ch, err := conn.Channel()
	require.NoError(t, err)
	q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
	require.NoError(t, err)
	deliveries, err := ch.Consume(queue, "", true, false, false, false, nil)
	require.NoError(t, err)
	guard := time.NewTimer(pubGuard)
	defer guard.Stop()
	var out []Envelope
	for got := 0; got < q.Messages; got++ {
		select {
		case d, ok := <-deliveries:
			require.True(t, ok, "the consumer of %s ended", queue)
			e, err := readEnvelope(d.Headers, d.Body)
			require.NoError(t, err)
			if e.Kind != KindBatch {
				out = append(out, e)
				continue
			}
			count, _ := asInt64(d.Headers[headerCount])
			batch, err := readBatch(d.Body, count)
			require.NoError(t, err)
			out = append(out, batch...)
		case <-guard.C:
			t.Fatalf("%d of %d messages of %s after %v", got, q.Messages, queue, pubGuard)
		}
	}
	return out
}

// shardAccounts is what the shard queues hold, per seq and per queue.
type shardAccounts struct {
	copies  map[int64]int    // how many copies of each seq, over every queue
	shardOf map[string]int   // each event's queue
	broad   map[int]int      // the system messages in each queue (first copies)
	queues  map[int][]int64  // each queue's seqs in queue order
	events  map[int64]string // each event message's event
}

// readShards drains the topology's shard queues and checks what must hold with or
// without duplicates: each queue's first copies are in increasing seq order, and each
// event's messages are all in one queue.
func readShards(t *testing.T, url string, top Topology) shardAccounts {
	t.Helper()
	a := shardAccounts{copies: map[int64]int{}, shardOf: map[string]int{}, broad: map[int]int{}, queues: map[int][]int64{}, events: map[int64]string{}}
	for n := range top.Shards {
		seen := map[int64]bool{}
		var last int64
		for _, e := range drainQueue(t, url, top.ShardQueue(n)) {
			a.copies[e.Seq]++
			a.queues[n] = append(a.queues[n], e.Seq)
			if seen[e.Seq] {
				continue
			}
			seen[e.Seq] = true
			if e.Seq <= last {
				t.Fatalf("%s: seq %d after seq %d: out of order", top.ShardQueue(n), e.Seq, last)
			}
			last = e.Seq
			switch e.Kind {
			case KindSystem:
				a.broad[n]++
			case KindEvent:
				a.events[e.Seq] = e.Event
				if s, ok := a.shardOf[e.Event]; ok && s != n {
					t.Fatalf("%s in shard queues %d and %d", e.Event, s, n)
				}
				a.shardOf[e.Event] = n
			}
		}
	}
	return a
}

// publishMix publishes, with one goroutine, events over matches and, after every 50th
// event, an alive to each shard queue; it goes on until it has published events events
// and more() says no more, and returns the last seq. Each message's done is d's.
func publishMix(ctx context.Context, p *publisher, top Topology, d *dones, events, matches int, more func() bool) (int64, error) {
	var seq int64
	for i := 0; i < events || more(); i++ {
		seq++
		e := eventEnvelope(seq, i%matches)
		if err := p.publish(ctx, target{key: top.ShardQueue(top.ShardOf(e.Event))}, e, d.of(seq)); err != nil {
			return seq - 1, err
		}
		if i%50 == 49 {
			for n := range top.Shards {
				seq++
				if err := p.publish(ctx, target{key: top.ShardQueue(n)}, systemEnvelope(seq), d.of(seq)); err != nil {
					return seq - 1, err
				}
			}
		}
	}
	return seq, nil
}

// 20,000 events hashed over 4 shard queues, interleaved with alives sent to each queue,
// batched as they come: every done once and in order, every
// message in its queue once, each queue in publish order, each event in one queue.
func TestPublisherKeepsEachQueuesOrder(t *testing.T) {
	url := testenv.AMQPVhost(t)
	top := Topology{Prefix: "t", Shards: 4}
	p := startPublisher(t, pubTestConfig(t, url, top))
	const events, matches = 20000, 500
	d := newDones()
	began := time.Now()
	last, err := publishMix(t.Context(), p, top, d, events, matches, func() bool { return false })
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), pubGuard)
	defer cancel()
	require.NoError(t, p.close(ctx), "close waits for every confirmation")
	took := time.Since(began)
	d.assertInOrder(t, last)
	broadcasts := events / 50
	require.Equal(t, int64(events+broadcasts*top.Shards), last)

	s := p.stats()
	assert.Equal(t, uint64(last), s.Published)
	assert.Equal(t, uint64(last), s.Confirmed)
	assert.Zero(t, s.Republished+s.Returned+s.Nacked+s.Losses+s.Reconnects, "no loss, no copy: %+v", s)
	assert.LessOrEqual(t, s.Batched, uint64(events), "only events go in batches")
	t.Logf("%d events in %d batches", s.Batched, s.Batches)

	a := readShards(t, url, top)
	require.Len(t, a.copies, int(last), "every message in a queue")
	for seq, n := range a.copies {
		require.Equal(t, 1, n, "seq %d copies", seq)
	}
	assert.Len(t, a.shardOf, matches)
	for n := range top.Shards {
		assert.Equal(t, broadcasts, a.broad[n], "alives in shard queue %d", n)
		t.Logf("shard queue %d: %d messages", n, len(a.queues[n]))
	}
	t.Logf("%d messages published and confirmed in %v (%.0f/s)", last, took.Round(time.Millisecond), float64(last)/took.Seconds())
}

// What waits for the link goes out in batches, each queue's events packed up to an
// alive of that queue or batchMaxEvents, and reaches each queue in publish order.
func TestPublisherPacksWhatWaitsIntoBatches(t *testing.T) {
	url := testenv.AMQPVhost(t)
	top := Topology{Prefix: "t", Shards: 2}
	p, err := newPublisher(pubTestConfig(t, url, top))
	require.NoError(t, err)
	d := newDones()
	// A match of each shard: 400 events of each; after the 100th pair, an alive to each
	// queue.
	matches := []int{-1, -1}
	for m := 0; matches[0] < 0 || matches[1] < 0; m++ {
		matches[top.ShardOf(eventEnvelope(0, m).Event)] = m
	}
	var seq int64
	for i := range 400 {
		for _, match := range matches {
			seq++
			e := eventEnvelope(seq, match)
			require.NoError(t, p.publish(t.Context(), target{key: top.ShardQueue(top.ShardOf(e.Event))}, e, d.of(seq)))
		}
		if i == 99 {
			for n := range top.Shards {
				seq++
				require.NoError(t, p.publish(t.Context(), target{key: top.ShardQueue(n)}, systemEnvelope(seq), d.of(seq)))
			}
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), pubGuard)
	defer cancel()
	require.NoError(t, p.start(ctx))
	require.NoError(t, p.close(ctx))
	d.assertInOrder(t, seq)
	s := p.stats()
	// Each queue: a batch of 100 events, the alive, then 300 events: 256 and 44.
	assert.Equal(t, uint64(2*3), s.Batches, "%+v", s)
	assert.Equal(t, uint64(800), s.Batched)

	conn, err := amqp.Dial(url)
	require.NoError(t, err)
	defer conn.Close()
	ch, err := conn.Channel()
	require.NoError(t, err)
	for n := range top.Shards {
		q, err := ch.QueueDeclarePassive(top.ShardQueue(n), true, false, false, false, nil)
		require.NoError(t, err)
		assert.Equal(t, 4, q.Messages, "shard %d: 3 batches and an alive", n)
		got := drainQueue(t, url, top.ShardQueue(n))
		require.Len(t, got, 401)
		assert.Equal(t, KindSystem, got[100].Kind, "the alive after the first 100 events")
		for i := 1; i < len(got); i++ {
			require.Less(t, got[i-1].Seq, got[i].Seq, "shard %d in publish order", n)
		}
	}
}

// The broker closes the publisher's connection five times while it publishes: every done
// is called once and in order, every message reaches its queue, and the only duplicates
// are of messages unconfirmed when a connection was closed, each queue's first copies
// in publish order.
func TestPublisherRepublishesAcrossForcedCloses(t *testing.T) {
	url := testenv.AMQPVhost(t)
	top := Topology{Prefix: "t", Shards: 4}
	cfg := pubTestConfig(t, url, top)
	p := startPublisher(t, cfg)
	const events, matches, closes = 20000, 500, 5
	d := newDones()

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var chaosDone atomic.Bool
	type result struct {
		last int64
		err  error
	}
	published := make(chan result, 1)
	go func() {
		last, err := publishMix(ctx, p, top, d, events, matches, func() bool { return !chaosDone.Load() })
		published <- result{last, err}
	}()

	// A message can be in a queue twice only if it was published (not necessarily
	// written) before the broker closed the connection, and not confirmed before the
	// test asked it to: within (confirmed before the close, published after it].
	type window struct{ lo, hi int64 }
	var windows []window
	closed := 0
	next := 1000
	for range closes {
		d.wait(t, next)
		_, lo := d.last()
		n := testenv.CloseAMQPConnections(t, cfg.ConnectionName, "test: forced close")
		hi := int64(p.stats().Published)
		windows = append(windows, window{lo, hi})
		closed += n
		t.Logf("closed %d connection(s) with seqs (%d, %d] unconfirmed or in flight", n, lo, hi)
		// A confirmation of a message published after the close comes from a new link.
		next = int(hi) + 500
	}
	d.wait(t, next)
	chaosDone.Store(true)
	var r result
	select {
	case r = <-published:
	case <-time.After(pubGuard):
		t.Fatal("the publishing goroutine did not finish")
	}
	require.NoError(t, r.err)
	cctx, ccancel := context.WithTimeout(t.Context(), pubGuard)
	defer ccancel()
	require.NoError(t, p.close(cctx))
	d.assertInOrder(t, r.last)

	s := p.stats()
	t.Logf("stats: %+v", s)
	assert.Equal(t, closes, closed, "each close found the publisher's connection")
	assert.GreaterOrEqual(t, s.Reconnects, uint64(closed))
	assert.GreaterOrEqual(t, s.Losses, uint64(closed))
	assert.Equal(t, uint64(r.last), s.Published)
	assert.Equal(t, uint64(r.last), s.Confirmed)
	assert.Zero(t, s.Unconfirmed)
	assert.GreaterOrEqual(t, r.last, int64(events))

	a := readShards(t, url, top)
	dups := 0
	span := make([]struct{ lo, hi int64 }, len(windows)) // the duplicates of each close
	for seq := int64(1); seq <= r.last; seq++ {
		n := a.copies[seq]
		require.NotZero(t, n, "seq %d is in no queue", seq)
		if n == 1 {
			continue
		}
		dups += n - 1
		in := -1
		for i, w := range windows {
			if w.lo < seq && seq <= w.hi {
				in = i
			}
		}
		require.NotEqual(t, -1, in, "seq %d is in the queues %d times, but was confirmed before every close or published after it", seq, n)
		if span[in].lo == 0 {
			span[in].lo = seq
		}
		span[in].hi = seq
	}
	// What one loss publishes again is what was unconfirmed then: at most Window
	// consecutive messages.
	for i, sp := range span {
		if sp.lo != 0 {
			assert.Less(t, sp.hi-sp.lo, int64(publisherDefaultWindow), "close %d: duplicates from %d to %d", i+1, sp.lo, sp.hi)
			t.Logf("close %d: duplicates of seqs %d to %d", i+1, sp.lo, sp.hi)
		}
	}
	require.Len(t, a.copies, int(r.last), "no seq the publisher did not publish")
	assert.LessOrEqual(t, uint64(dups), s.Republished, "a duplicate is a message written again")
	assert.Len(t, a.shardOf, matches)
	t.Logf("%d messages published, %d duplicates in the queues, %d republished", r.last, dups, s.Republished)
}

// proxiedPublisher starts a publisher whose connections pass a fault proxy.
func proxiedPublisher(t *testing.T, cfg publisherConfig) (*publisher, *faultproxy.Proxy) {
	t.Helper()
	u, err := url.Parse(cfg.URL)
	require.NoError(t, err)
	proxy, err := faultproxy.New(u.Host)
	require.NoError(t, err)
	t.Cleanup(func() { _ = proxy.Close() })
	u.Host = proxy.Addr()
	cfg.URL = u.String()
	return startPublisher(t, cfg), proxy
}

// With the broker silent, publish blocks once Window messages are unconfirmed and gives
// up at its context's end, publishing nothing; the messages written into the silence
// and lost with the connection are published again, each reaching the queue once.
func TestPublisherWindowAndLostWrites(t *testing.T) {
	url := testenv.AMQPVhost(t)
	top := Topology{Prefix: "t", Shards: 1}
	cfg := pubTestConfig(t, url, top)
	cfg.Window = 8
	p, proxy := proxiedPublisher(t, cfg)
	to := target{key: top.ShardQueue(0)}
	d := newDones()

	proxy.Freeze()
	for seq := int64(1); seq <= 8; seq++ {
		require.NoError(t, p.publish(t.Context(), to, systemEnvelope(seq), d.of(seq)), "room in the window")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	err := p.publish(ctx, to, systemEnvelope(9), d.of(9))
	require.ErrorIs(t, err, context.DeadlineExceeded, "the window is full until the broker confirms")
	s := p.stats()
	assert.Equal(t, uint64(8), s.Published)
	assert.Equal(t, 8, s.Unconfirmed)
	assert.Empty(t, d.snapshot())

	// The eight were written into the proxy, which drops them with the connection.
	proxy.Cut()
	proxy.Thaw()
	d.wait(t, 8)
	require.NoError(t, p.publish(t.Context(), to, systemEnvelope(9), d.of(9)))
	cctx, ccancel := context.WithTimeout(t.Context(), pubGuard)
	defer ccancel()
	require.NoError(t, p.close(cctx))
	d.assertInOrder(t, 9)
	s = p.stats()
	// Those the publisher had written into the proxy before the cut are written again;
	// how many depends on how soon its goroutine ran, not on anything the test knows.
	assert.LessOrEqual(t, s.Republished, uint64(8))
	t.Logf("%d of the 8 written again on the new link", s.Republished)
	assert.Equal(t, uint64(1), s.Reconnects)
	assert.Equal(t, uint64(9), s.Confirmed)

	var seqs []int64
	for _, e := range drainQueue(t, url, top.ShardQueue(0)) {
		seqs = append(seqs, e.Seq)
	}
	assert.Equal(t, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9}, seqs, "each once, in order: the first writes never reached the broker")
}

// close gives up at its context's end when the broker confirms nothing, and says how
// many messages it leaves unconfirmed; their done is never called.
func TestPublisherCloseGivesUpAtItsContext(t *testing.T) {
	url := testenv.AMQPVhost(t)
	top := Topology{Prefix: "t", Shards: 1}
	p, proxy := proxiedPublisher(t, pubTestConfig(t, url, top))
	d := newDones()
	proxy.Freeze()
	defer proxy.Thaw()
	require.NoError(t, p.publish(t.Context(), target{key: top.ShardQueue(0)}, systemEnvelope(1), d.of(1)))
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	err := p.close(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.ErrorContains(t, err, "1 messages unconfirmed")
	assert.Empty(t, d.snapshot())
	assert.ErrorIs(t, p.publish(t.Context(), target{key: top.ShardQueue(0)}, systemEnvelope(2), nil), errPublisherClosed)
	assert.NoError(t, p.close(t.Context()), "a second close")
}

// A message no queue takes is reported with its target, and still completed.
func TestPublisherReportsReturnedMessages(t *testing.T) {
	url := testenv.AMQPVhost(t)
	top := Topology{Prefix: "t", Shards: 1}
	cfg := pubTestConfig(t, url, top)
	returned := make(chan error, 1)
	cfg.OnError = func(err error) {
		t.Log(err)
		select {
		case returned <- err:
		default:
		}
	}
	p := startPublisher(t, cfg)
	d := newDones()
	require.NoError(t, p.publish(t.Context(), target{key: "t.nowhere"}, systemEnvelope(1), d.of(1)))
	require.NoError(t, p.publish(t.Context(), target{key: top.ShardQueue(0)}, systemEnvelope(2), d.of(2)))
	d.wait(t, 2)
	d.assertInOrder(t, 2)
	select {
	case err := <-returned:
		assert.ErrorContains(t, err, `seq 1, published to queue "t.nowhere"`)
	case <-time.After(pubGuard):
		t.Fatal("no return reported")
	}
	assert.Equal(t, uint64(1), p.stats().Returned)
}

// A queue that refuses publishes when full makes the broker nack: the publisher
// publishes the nacked message again on a new channel until the broker takes it, and
// completes every message once, in order.
func TestPublisherPublishesNackedMessagesAgain(t *testing.T) {
	url := testenv.AMQPVhost(t)
	top := Topology{Prefix: "t", Shards: 1}
	cfg := pubTestConfig(t, url, top)
	nacked := make(chan struct{}, 1)
	cfg.OnError = func(err error) {
		t.Log(err)
		if errors.Is(err, errPublisherNacked) {
			select {
			case nacked <- struct{}{}:
			default:
			}
		}
	}
	conn, err := amqp.Dial(url)
	require.NoError(t, err)
	defer conn.Close()
	ch, err := conn.Channel()
	require.NoError(t, err)
	const queue = "t.small"
	_, err = ch.QueueDeclare(queue, false, false, false, false, amqp.Table{"x-max-length": 2, "x-overflow": "reject-publish"})
	require.NoError(t, err)

	p := startPublisher(t, cfg)
	d := newDones()
	for seq := int64(1); seq <= 3; seq++ {
		require.NoError(t, p.publish(t.Context(), target{key: queue}, systemEnvelope(seq), d.of(seq)))
	}
	d.wait(t, 2)
	select {
	case <-nacked:
	case <-time.After(pubGuard):
		t.Fatal("the third message was not nacked")
	}
	for want := int64(1); want <= 2; want++ {
		m, ok, err := ch.Get(queue, true)
		require.NoError(t, err)
		require.True(t, ok)
		e, err := readEnvelope(m.Headers, m.Body)
		require.NoError(t, err)
		assert.Equal(t, want, e.Seq)
	}
	d.wait(t, 3)
	d.assertInOrder(t, 3)
	s := p.stats()
	assert.GreaterOrEqual(t, s.Nacked, uint64(1))
	assert.GreaterOrEqual(t, s.Republished, uint64(1))
	m, ok, err := ch.Get(queue, true)
	require.NoError(t, err)
	require.True(t, ok)
	e, err := readEnvelope(m.Headers, m.Body)
	require.NoError(t, err)
	assert.Equal(t, int64(3), e.Seq)
}

// A broker that cannot be reached: start retries until its context ends, and returns
// that context's error.
func TestPublisherStartEndsWithItsContext(t *testing.T) {
	var attempts atomic.Int32
	p, err := newPublisher(publisherConfig{
		URL: "amqp://guest:guest@127.0.0.1:1/", Topology: Topology{Shards: 1},
		ReconnectDelay: 10 * time.Millisecond, MaxReconnectDelay: 20 * time.Millisecond,
		OnError: func(error) { attempts.Add(1) },
	})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	err = p.start(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "127.0.0.1:1")
	assert.NotContains(t, err.Error(), "guest:guest", "no credentials in errors")
	assert.Positive(t, attempts.Load(), "each failed attempt reported")
	assert.NoError(t, p.close(t.Context()))
	assert.ErrorIs(t, p.start(t.Context()), errPublisherClosed)
}

// A topology the broker has otherwise (a shard queue declared with other arguments) is
// no failure that retrying fixes: start returns it at once.
func TestPublisherStartRefusesAConflictingTopology(t *testing.T) {
	url := testenv.AMQPVhost(t)
	conn, err := amqp.Dial(url)
	require.NoError(t, err)
	defer conn.Close()
	ch, err := conn.Channel()
	require.NoError(t, err)
	top := Topology{Prefix: "t", Shards: 1}
	_, err = ch.QueueDeclare(top.ShardQueue(0), true, false, false, false, nil)
	require.NoError(t, err)

	p, err := newPublisher(pubTestConfig(t, url, top))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), pubGuard)
	defer cancel()
	began := time.Now()
	err = p.start(ctx)
	t.Logf("start refused in %v: %v", time.Since(began).Round(time.Millisecond), err)
	var aerr *amqp.Error
	require.ErrorAs(t, err, &aerr)
	assert.Equal(t, amqp.PreconditionFailed, aerr.Code)
	assert.NoError(t, ctx.Err(), "at once, not at the context's end")
	assert.NoError(t, p.close(t.Context()))
}

func TestPublisherRefusesBadConfigByField(t *testing.T) {
	good := publisherConfig{URL: "amqp://localhost/", Topology: Topology{Shards: 2}}
	for _, c := range []struct {
		change func(*publisherConfig)
		want   string
	}{
		{func(c *publisherConfig) { c.URL = "" }, "URL is required"},
		{func(c *publisherConfig) { c.URL = "http://localhost/" }, "URL: not an amqp"},
		{func(c *publisherConfig) { c.Topology.Shards = 0 }, "Topology.Shards 0"},
		{func(c *publisherConfig) { c.Topology.Prefix = "a b" }, "Topology.Prefix"},
		{func(c *publisherConfig) { c.Window = -1 }, "Window -1"},
		{func(c *publisherConfig) { c.Window = 1 << 20 }, "Window 1048576"},
		{func(c *publisherConfig) { c.DialTimeout = -time.Second }, "DialTimeout -1s"},
		{func(c *publisherConfig) { c.ReconnectDelay = -time.Second }, "ReconnectDelay -1s"},
		{func(c *publisherConfig) { c.MaxReconnectDelay = -time.Second }, "MaxReconnectDelay -1s"},
		{func(c *publisherConfig) { c.ReconnectDelay, c.MaxReconnectDelay = time.Second, time.Millisecond }, "MaxReconnectDelay 1ms must be at least ReconnectDelay"},
	} {
		cfg := good
		c.change(&cfg)
		_, err := newPublisher(cfg)
		if assert.Error(t, err, c.want) {
			assert.Contains(t, err.Error(), c.want)
			assert.True(t, strings.HasPrefix(err.Error(), "group: "), err.Error())
		}
	}
	p, err := newPublisher(good)
	require.NoError(t, err)
	assert.Equal(t, publisherDefaultWindow, p.cfg.Window)
	assert.Equal(t, publisherDefaultDialTimeout, p.cfg.DialTimeout)
	assert.Equal(t, publisherDefaultReconnectDelay, p.cfg.ReconnectDelay)
	assert.Equal(t, publisherDefaultMaxReconnectDelay, p.cfg.MaxReconnectDelay)
	assert.Equal(t, DefaultPrefix, p.cfg.Topology.Prefix)
}
