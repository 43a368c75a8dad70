package feedtest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// t0 is where the fake clocks of these tests start: a fixed instant, so that timestamps
// can be compared exactly.
var t0 = ms(1764152400000)

// publication is one Publish call a chanPublisher saw.
type publication struct {
	key  string
	body []byte
}

// chanPublisher is a Publisher that reports every message on a channel.
type chanPublisher struct{ ch chan publication }

func newChanPublisher() *chanPublisher { return &chanPublisher{ch: make(chan publication, 1<<12)} }

func (p *chanPublisher) Publish(_ context.Context, key string, body []byte) error {
	p.ch <- publication{key, body}
	return nil
}

// nextAlive returns the next alive published, skipping event messages.
func (p *chanPublisher) nextAlive(t *testing.T) *feed.Alive {
	t.Helper()
	for {
		select {
		case m := <-p.ch:
			if m.key != aliveKey.String() {
				continue
			}
			return decode(t, feed.MessageAlive, m.body).(*feed.Alive)
		case <-time.After(time.Minute):
			t.Fatal("timed out waiting for an alive")
			return nil
		}
	}
}

// failingPublisher refuses every message.
type failingPublisher struct{ err error }

func (p failingPublisher) Publish(context.Context, string, []byte) error { return p.err }

func newSimulator(t *testing.T, p feedtest.Publisher, cfg feedtest.SimulatorConfig) *feedtest.Simulator {
	t.Helper()
	sim, err := feedtest.NewSimulator(p, cfg)
	require.NoError(t, err)
	return sim
}

func alive(producer int, ts time.Time, subscribed bool) *feed.Alive {
	return &feed.Alive{Header: feed.Header{Producer: producer, Timestamp: ts}, Subscribed: subscribed}
}

func TestSimulatorSendsAlivesEveryInterval(t *testing.T) {
	fc := clocktest.NewFake(t0)
	pub := newChanPublisher()
	// Ctrl first: the simulator checks whether a producer is stopped just before sending its
	// alive, so once LO's alive has arrived, the test knows Ctrl's turn in that round is over
	// and can stop or resume it without racing the simulator.
	ctrl, _ := feed.LookupProducer(feed.DefaultProducers(), 3)
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	// A rate of one event per 1000 s: the event loop publishes one message, then waits on
	// a timer that this test never reaches, so the alives are all there is to see.
	sim := newSimulator(t, pub, feedtest.SimulatorConfig{Producers: []feed.Producer{ctrl, lo}, Rate: 1e-3,
		AliveInterval: 10 * time.Second, Clock: fc})
	ctx, cancel := context.WithCancel(t.Context())
	ran := make(chan error, 1)
	go func() { ran <- sim.Run(ctx) }()

	// Run sends each producer's alive at once, in the order of the producers.
	assert.Equal(t, alive(3, t0, true), pub.nextAlive(t))
	assert.Equal(t, alive(1, t0, true), pub.nextAlive(t))

	fc.BlockUntil(2) // the alive ticker and the event loop's pacing timer
	now := t0
	for range 3 {
		// Half an interval sends nothing: the alives that follow carry the full interval's time.
		fc.Advance(5 * time.Second)
		fc.Advance(5 * time.Second)
		now = now.Add(10 * time.Second)
		assert.Equal(t, alive(3, now, true), pub.nextAlive(t))
		assert.Equal(t, alive(1, now, true), pub.nextAlive(t))
	}

	// A stopped producer is skipped: two intervals bring LO's alives only.
	sim.StopAlives(3)
	for range 2 {
		fc.Advance(10 * time.Second)
		now = now.Add(10 * time.Second)
		assert.Equal(t, alive(1, now, true), pub.nextAlive(t))
	}
	sim.ResumeAlives(3)
	fc.Advance(10 * time.Second)
	now = now.Add(10 * time.Second)
	assert.Equal(t, alive(3, now, true), pub.nextAlive(t))
	assert.Equal(t, alive(1, now, true), pub.nextAlive(t))

	cancel()
	require.NoError(t, <-ran, "Run returns nil when its context is cancelled")
}

func TestSimulatorSendAlive(t *testing.T) {
	fc := clocktest.NewFake(t0.Add(1500 * time.Microsecond)) // sub-millisecond time is cut off
	pub := newChanPublisher()
	sim := newSimulator(t, pub, feedtest.SimulatorConfig{Clock: fc})

	require.NoError(t, sim.SendAlive(t.Context(), 3, false))
	m := <-pub.ch
	assert.Equal(t, "-.-.-.alive.-.-.-.-", m.key)
	assert.Equal(t, alive(3, t0.Add(time.Millisecond), false), decode(t, feed.MessageAlive, m.body))

	err := sim.SendAlive(t.Context(), 99, true)
	assert.ErrorContains(t, err, "unknown producer 99")
	require.Len(t, sim.Sent(), 1, "the alive is recorded, the refused one is not")
	assert.False(t, sim.Sent()[0].Replay)
}

func TestSimulatorRunReturnsThePublishersError(t *testing.T) {
	boom := errors.New("boom")
	sim := newSimulator(t, failingPublisher{boom}, feedtest.SimulatorConfig{Clock: clocktest.NewFake(t0)})
	err := sim.Run(t.Context())
	require.ErrorIs(t, err, boom)
	assert.Empty(t, sim.Sent(), "nothing refused is recorded")
}

func TestSimulatorPublishesExactlyN(t *testing.T) {
	pub := newChanPublisher()
	sim := newSimulator(t, pub, feedtest.SimulatorConfig{Rate: feedtest.Unlimited, Matches: 7})
	const n = 1000
	// Publish returns once all n are published; the channel holds them without waiting.
	go func() {
		for range n {
			<-pub.ch
		}
	}()
	require.NoError(t, sim.Publish(t.Context(), n))

	sent := sim.Sent()
	require.Len(t, sent, n)
	for _, s := range sent {
		assert.False(t, s.Key.Type.IsSystem(), "Publish sends event messages only")
		assert.False(t, s.Replay)
	}
	assert.Zero(t, sim.Forgotten())
	assert.Equal(t, feedtest.SimulatorStats{Events: n}, sim.Stats())

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	assert.ErrorIs(t, sim.Publish(ctx, 1), context.Canceled)
	assert.Len(t, sim.Sent(), n, "nothing is published with a cancelled context")
}

// A recovery requested while a message is being published replays it: the simulator
// records a message before it publishes it.
func TestRecoveryIncludesTheMessageBeingPublished(t *testing.T) {
	pub := &holdingPublisher{held: make(chan struct{}), release: make(chan struct{})}
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	sim := newSimulator(t, pub, feedtest.SimulatorConfig{Rate: feedtest.Unlimited, Matches: 1, Producers: []feed.Producer{lo}})
	srv := sim.NewRecoveryServer()
	t.Cleanup(srv.Close)

	published := make(chan error, 1)
	go func() { published <- sim.Publish(t.Context(), 1) }()
	<-pub.held // the message is in the publisher's hands, not yet published
	c, err := feedapi.NewClient(feedapi.Config{BaseURL: srv.URL, AccessToken: feedtest.DefaultAccessToken})
	require.NoError(t, err)
	require.NoError(t, c.InitiateRecovery(t.Context(), lo, time.Time{}, 5), "answered at once, though a publish is stuck")
	close(pub.release)
	require.NoError(t, <-published)
	sim.WaitReplays()

	pub.mu.Lock()
	defer pub.mu.Unlock()
	// The live publish and the replay run on goroutines of their own, so the live copy
	// may land anywhere; the replay's own order holds: its copy, then snapshot_complete.
	require.Len(t, pub.keys, 3, "the live message, its replay, and snapshot_complete")
	snap := slices.IndexFunc(pub.keys, func(k string) bool { return strings.Contains(k, "snapshot_complete") })
	require.GreaterOrEqual(t, snap, 1, "snapshot_complete follows the replayed message: %v", pub.keys)
	event := pub.keys[0]
	for i, k := range pub.keys {
		if i != snap {
			assert.Equal(t, event, k, "the message being published was replayed: %v", pub.keys)
		}
	}
	assert.Equal(t, feedtest.SimulatorStats{Events: 1, Replayed: 2}, sim.Stats())
}

// holdingPublisher holds its first Publish until released.
type holdingPublisher struct {
	held, release chan struct{}
	once          sync.Once
	mu            sync.Mutex
	keys          []string
}

func (p *holdingPublisher) Publish(_ context.Context, key string, _ []byte) error {
	p.once.Do(func() { close(p.held); <-p.release })
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keys = append(p.keys, key)
	return nil
}

// The feed's stream is in time order: an alive never overtakes an event message stamped
// before it. A consumer recovers from the last alive it processed; an event stamped
// before that alive but published after it, then lost in an outage, would be in no
// replay (a stress run lost one so).
//
// In a synctest bubble, synctest.Wait returns once the alive's goroutine has either sent
// its alive (the bug) or is waiting its turn behind the held event: the check that it has
// not gone needs no pause and no luck.
func TestSimulatorAliveNeverOvertakesAMessageStampedBeforeIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fc := clocktest.NewFake(t0)
		pub := &eventHoldingPublisher{held: make(chan struct{}), release: make(chan struct{})}
		lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
		sim := newSimulator(t, pub, feedtest.SimulatorConfig{Rate: feedtest.Unlimited, Matches: 1, Producers: []feed.Producer{lo}, Clock: fc})

		published := make(chan error, 1)
		go func() { published <- sim.Publish(t.Context(), 1) }()
		<-pub.held // an event stamped t0 is in the publisher's hands
		release := sync.OnceFunc(func() { close(pub.release) })
		defer release() // a failed check still lets the held event go, and the bubble end
		fc.Advance(time.Second)
		sent := make(chan error, 1)
		go func() { sent <- sim.SendAlive(t.Context(), lo.ID, true) }()
		synctest.Wait()
		select {
		case err := <-sent:
			t.Fatalf("SendAlive returned (%v) while an event stamped before its alive was still being published", err)
		default:
		}
		pub.mu.Lock()
		require.Empty(t, pub.sent, "nothing went while the event was held")
		pub.mu.Unlock()

		release()
		require.NoError(t, <-published)
		require.NoError(t, <-sent)

		pub.mu.Lock()
		defer pub.mu.Unlock()
		require.Len(t, pub.sent, 2)
		require.NotEqual(t, aliveKey.String(), pub.sent[0].key, "the event went first")
		a := decode(t, feed.MessageAlive, pub.sent[1].body).(*feed.Alive)
		assert.Equal(t, t0.Add(time.Second), a.Timestamp, "the alive was stamped when it went, after the event")
	})
}

// An alive waiting its turn behind a publish that does not end gives up when its context
// does, and is not sent later.
func TestSimulatorSendAliveGivesUpWaitingWhenItsContextEnds(t *testing.T) {
	pub := &eventHoldingPublisher{held: make(chan struct{}), release: make(chan struct{})}
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	sim := newSimulator(t, pub, feedtest.SimulatorConfig{Rate: feedtest.Unlimited, Matches: 1, Producers: []feed.Producer{lo}, Clock: clocktest.NewFake(t0)})

	published := make(chan error, 1)
	go func() { published <- sim.Publish(t.Context(), 1) }()
	<-pub.held
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := sim.SendAlive(ctx, lo.ID, true)
	close(pub.release)
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, <-published)
	pub.mu.Lock()
	defer pub.mu.Unlock()
	require.Len(t, pub.sent, 1, "the event alone")
	assert.NotEqual(t, aliveKey.String(), pub.sent[0].key)
	assert.Equal(t, feedtest.SimulatorStats{Events: 1}, sim.Stats())
}

// eventHoldingPublisher holds the first event message until released; alives pass.
type eventHoldingPublisher struct {
	held, release chan struct{}
	mu            sync.Mutex
	holding       bool
	sent          []publication
}

func (p *eventHoldingPublisher) Publish(_ context.Context, key string, body []byte) error {
	p.mu.Lock()
	hold := key != aliveKey.String() && !p.holding
	p.holding = p.holding || hold
	p.mu.Unlock()
	if hold {
		close(p.held)
		<-p.release
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sent = append(p.sent, publication{key, body})
	return nil
}

// traffic publishes n messages with a simulator of the seed, on a clock that stands still,
// and returns what it sent.
func traffic(t *testing.T, seed uint64, n int) []feedtest.Sent {
	sim := newSimulator(t, discard{}, feedtest.SimulatorConfig{Matches: 10, Rate: feedtest.Unlimited, Seed: seed, Clock: clocktest.NewFake(t0)})
	require.NoError(t, sim.Publish(t.Context(), n))
	return sim.Sent()
}

func TestSimulatorIsReproducibleFromItsSeed(t *testing.T) {
	a, b := traffic(t, 42, 2000), traffic(t, 42, 2000)
	require.Len(t, b, len(a))
	for i := range a {
		// Same seed and the same clock: the same keys, types, events and even bytes.
		require.Equal(t, a[i].Key, b[i].Key, "message %d", i)
		require.Equal(t, string(a[i].Body), string(b[i].Body), "message %d", i)
	}
	c := traffic(t, 43, 2000)
	keys := func(s []feedtest.Sent) []feed.RoutingKey {
		out := make([]feed.RoutingKey, len(s))
		for i := range s {
			out[i] = s[i].Key
		}
		return out
	}
	assert.NotEqual(t, keys(a), keys(c), "another seed makes other traffic")
}

func TestSimulatorHistoryKeepsTheNewestWithinItsBytes(t *testing.T) {
	full := traffic(t, 9, 25)
	const limit = 8 << 10
	sim := newSimulator(t, discard{}, feedtest.SimulatorConfig{Matches: 10, Rate: feedtest.Unlimited, Seed: 9, HistoryBytes: limit, Clock: clocktest.NewFake(t0)})
	require.NoError(t, sim.Publish(t.Context(), 25))
	kept := sim.Sent()
	require.NotEmpty(t, kept)
	require.Less(t, len(kept), 25, "the bound forgot some")
	assert.Equal(t, full[25-len(kept):], kept, "the newest, oldest first")
	assert.Equal(t, 25-len(kept), sim.Forgotten())
	bytes := 0
	for _, s := range kept {
		bytes += len(s.Body)
	}
	assert.LessOrEqual(t, bytes, limit, "the bodies kept fit the bound")
	assert.Greater(t, bytes+len(full[24-len(kept)].Body), limit/2, "it keeps what fits, not far less")
}

func TestSimulatorHistoryForgetsWhatIsOlderThanItsAge(t *testing.T) {
	fc := clocktest.NewFake(t0)
	sim := newSimulator(t, discard{}, feedtest.SimulatorConfig{Matches: 10, Rate: feedtest.Unlimited, Seed: 9, HistoryAge: time.Minute, Clock: fc})
	require.NoError(t, sim.Publish(t.Context(), 10))
	fc.Advance(time.Minute)
	require.NoError(t, sim.Publish(t.Context(), 5))
	assert.Len(t, sim.Sent(), 15, "a minute old is not older than a minute")
	fc.Advance(time.Nanosecond)
	require.NoError(t, sim.Publish(t.Context(), 1))
	sent := sim.Sent()
	assert.Len(t, sent, 6, "the first ten are older than a minute now")
	assert.Equal(t, 10, sim.Forgotten())
	for _, s := range sent {
		assert.True(t, s.Message.MessageHeader().Timestamp.After(t0), "only the newer ones are kept")
	}
}

// A recovery that reaches back past what the history holds is refused, as the feed's
// API refuses a request it cannot serve; one within it replays everything since after.
func TestRecoveryBeyondTheHistoryIsRefused(t *testing.T) {
	fc := clocktest.NewFake(t0)
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	pub := newChanPublisher()
	sim := newSimulator(t, pub, feedtest.SimulatorConfig{Matches: 5, Rate: feedtest.Unlimited, Seed: 4, Producers: []feed.Producer{lo}, HistoryBytes: 16 << 10, Clock: fc})
	for range 200 {
		fc.Advance(time.Millisecond)
		require.NoError(t, sim.Publish(t.Context(), 1))
	}
	for len(pub.ch) > 0 {
		<-pub.ch
	}
	kept := sim.Sent()
	require.Greater(t, sim.Forgotten(), 0)
	oldest := kept[0].Message.MessageHeader().Timestamp
	srv := sim.NewRecoveryServer()
	t.Cleanup(srv.Close)
	c, err := feedapi.NewClient(feedapi.Config{BaseURL: srv.URL, AccessToken: feedtest.DefaultAccessToken})
	require.NoError(t, err)

	err = c.InitiateRecovery(t.Context(), lo, oldest.Add(-time.Millisecond), 1)
	var api *feed.APIError
	require.ErrorAs(t, err, &api)
	assert.Equal(t, http.StatusBadRequest, api.StatusCode)
	assert.Contains(t, api.Error(), "reaches back past the history kept")

	require.NoError(t, c.InitiateRecovery(t.Context(), lo, oldest.Add(time.Millisecond), 2))
	sim.WaitReplays()
	var want []string
	for _, s := range kept {
		if !s.Message.MessageHeader().Timestamp.Before(oldest.Add(time.Millisecond)) {
			want = append(want, s.Key.String())
		}
	}
	var got []string
	for len(pub.ch) > 0 {
		m := <-pub.ch
		if !strings.Contains(m.key, "snapshot_complete") {
			got = append(got, m.key)
		}
	}
	assert.Equal(t, want, got, "every message since after is replayed, in order")
	reqs := sim.RecoveryRequests()
	require.Len(t, reqs, 2)
	assert.Equal(t, http.StatusBadRequest, reqs[0].Status)
	assert.Equal(t, http.StatusAccepted, reqs[1].Status)
}

func TestSimulatorTimestampsNeverGoBackNorAheadOfTheClock(t *testing.T) {
	fc := clocktest.NewFake(t0)
	sim := newSimulator(t, discard{}, feedtest.SimulatorConfig{Matches: 5, Rate: feedtest.Unlimited, Seed: 3, Clock: fc})
	// First with the clock standing still, then moving by less and more than a
	// millisecond, then with a delay that grows and shrinks (the delayed clock goes back).
	require.NoError(t, sim.Publish(t.Context(), 500))
	for i := range 500 {
		fc.Advance(time.Duration(i%7) * 300 * time.Microsecond)
		if i%100 == 50 {
			sim.SetDelay(time.Duration(i%3) * 40 * time.Millisecond)
		}
		require.NoError(t, sim.Publish(t.Context(), 1))
	}
	byMatch := sim.EventsByMatch()
	require.NotEmpty(t, byMatch)
	for event, msgs := range byMatch {
		for i, m := range msgs {
			cur := m.Message.MessageHeader().Timestamp
			require.False(t, cur.After(fc.Now()), "%s: message %d at %v, ahead of the clock", event, i, cur)
			if i > 0 {
				prev := msgs[i-1].Message.MessageHeader().Timestamp
				require.False(t, cur.Before(prev), "%s: message %d at %v, before %v", event, i, cur, prev)
			}
		}
	}
}

func TestSimulatorSetDelay(t *testing.T) {
	fc := clocktest.NewFake(t0)
	sim := newSimulator(t, discard{}, feedtest.SimulatorConfig{Matches: 5, Rate: feedtest.Unlimited, Seed: 4, Clock: fc})
	require.NoError(t, sim.Publish(t.Context(), 20))
	fc.Advance(10 * time.Second) // well past the delay: no match has a timestamp in the way

	const delay = 3 * time.Second
	lastTimestamp := func() time.Time {
		sent := sim.Sent()
		return sent[len(sent)-1].Message.MessageHeader().Timestamp
	}
	sim.SetDelay(delay)
	for range 50 {
		require.NoError(t, sim.Publish(t.Context(), 1))
		require.Equal(t, fc.Now().Add(-delay), lastTimestamp(), "the feed is %v late", delay)
		fc.Advance(100 * time.Millisecond) // a match's next message is never in the same millisecond
	}
	sim.SetDelay(0)
	require.NoError(t, sim.Publish(t.Context(), 1))
	assert.Equal(t, fc.Now(), lastTimestamp(), "on time again")
}

func TestSimulatorReplacesMatchesThatEnd(t *testing.T) {
	const matches = 3
	sim := newSimulator(t, discard{}, feedtest.SimulatorConfig{Matches: matches, Rate: feedtest.Unlimited, Seed: 8, Clock: clocktest.NewFake(t0)})
	// A script is at most 203 messages long, so 2,000 messages over 3 matches end many.
	require.NoError(t, sim.Publish(t.Context(), 2000))

	byMatch := sim.EventsByMatch()
	assert.Greater(t, len(byMatch), matches, "matches came and went")
	settled := 0
	for event, msgs := range byMatch {
		assert.Equal(t, feed.MessageFixtureChange, msgs[0].Key.Type, "%s starts with its fixture", event)
		for _, m := range msgs {
			if m.Key.Type == feed.MessageBetSettlement {
				settled++
				break
			}
		}
	}
	// Every match but those still running finished its script, which settles it.
	assert.GreaterOrEqual(t, settled, len(byMatch)-matches)
}

// TestSimulatorPacesToItsRate publishes on a fake clock that moves only when the
// simulator waits on it, so the fake time that passes is the time pacing required.
func TestSimulatorPacesToItsRate(t *testing.T) {
	fc := clocktest.NewFake(t0)
	// Rate 100 gives a burst of 2: 198 of the 200 messages wait 10 ms each.
	sim := newSimulator(t, discard{}, feedtest.SimulatorConfig{Rate: 100, Clock: fc})
	const n = 200
	done := make(chan error, 1)
	go func() { done <- sim.Publish(t.Context(), n) }()

	for {
		// Advance only while the publisher waits on a timer, so that no time passes that it
		// did not ask for; stop when Publish has returned.
		waiting := make(chan struct{})
		go func() {
			fc.BlockUntil(1)
			close(waiting)
		}()
		select {
		case <-waiting:
			fc.Advance(time.Millisecond)
			continue
		case err := <-done:
			require.NoError(t, err)
		}
		// Release the goroutine still in BlockUntil.
		release := fc.NewTimer(time.Hour)
		<-waiting
		release.Stop()
		break
	}
	require.Len(t, sim.Sent(), n)
	elapsed := fc.Since(t0)
	want := time.Duration(n-2) * 10 * time.Millisecond
	assert.GreaterOrEqual(t, elapsed, want-time.Millisecond, "published faster than the rate")
	assert.LessOrEqual(t, elapsed, want+50*time.Millisecond, "pacing waited longer than the rate requires")
}

// recoveryFixture is a simulator publishing into a broker, its recovery API, and a
// receiver subscribed as the session of node 7 would be.
type recoveryFixture struct {
	fc  *clocktest.Fake
	b   *feedtest.Broker
	sim *feedtest.Simulator
	srv *httptest.Server
	r   *feedtest.ReceiverRecorder
}

func newRecoveryFixture(t *testing.T) *recoveryFixture {
	t.Helper()
	f := &recoveryFixture{fc: clocktest.NewFake(t0)}
	f.b = newTestBroker(t, feedtest.BrokerOptions{Clock: f.fc})
	f.sim = newSimulator(t, f.b, feedtest.SimulatorConfig{Matches: 10, Rate: feedtest.Unlimited, Seed: 5, Clock: f.fc})
	f.srv = httptest.NewServer(f.sim.RecoveryHandler())
	t.Cleanup(f.srv.Close)
	t.Cleanup(f.sim.WaitReplays) // before the broker closes
	return f
}

// subscribe binds the receiver after the live traffic, so that it sees only replays.
func (f *recoveryFixture) subscribe(t *testing.T) {
	t.Helper()
	f.r = feedtest.NewReceiverRecorder()
	subscribe(t, f.b, f.r, feed.AllMessages.BindingKeys(feed.Node(7))...)
}

// post sends a recovery request and returns the status and the body of the answer.
func (f *recoveryFixture) post(t *testing.T, token, pathAndQuery string) (int, string) {
	t.Helper()
	return f.request(t, http.MethodPost, token, pathAndQuery)
}

func (f *recoveryFixture) request(t *testing.T, method, token, pathAndQuery string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, f.srv.URL+pathAndQuery, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("x-access-token", token)
	}
	resp, err := f.srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// liveEvents returns the event messages of the live stream that match keep, in order.
func (f *recoveryFixture) liveEvents(keep func(feedtest.Sent) bool) []feedtest.Sent {
	var out []feedtest.Sent
	for _, s := range f.sim.Sent() {
		if !s.Replay && !s.Key.Type.IsSystem() && keep(s) {
			out = append(out, s)
		}
	}
	return out
}

// expectReplay checks that the receiver gets want, tagged with the request id and routed to
// node, then the snapshot_complete of the request.
func (f *recoveryFixture) expectReplay(t *testing.T, want []feedtest.Sent, producer int, requestID int64, node feed.NodeID) {
	t.Helper()
	for i, s := range want {
		d := expect(t, f.r, feedtest.CallReceive).Delivery
		key, err := feed.ParseRoutingKey(d.RoutingKey)
		require.NoError(t, err)
		wantKey := s.Key
		wantKey.Node = node
		require.Equal(t, wantKey, key, "replayed message %d: the live key, addressed to the node", i)

		wantMsg := decode(t, s.Key.Type, s.Body)
		wantMsg.MessageHeader().RequestID = requestID
		require.Equal(t, wantMsg, decode(t, key.Type, d.Body), "replayed message %d: the live message with the request id", i)
	}
	d := expect(t, f.r, feedtest.CallReceive).Delivery
	require.Equal(t, feed.RoutingKey{Type: feed.MessageSnapshotComplete, Node: node}.String(), d.RoutingKey)
	assert.Equal(t, &feed.SnapshotComplete{Header: feed.Header{Producer: producer, RequestID: requestID, Timestamp: f.fc.Now()}},
		decode(t, feed.MessageSnapshotComplete, d.Body))
	f.r.RequireNone(t) // the replay was the last thing published
}

func TestRecoveryReplaysTheProducersMessagesSinceAfter(t *testing.T) {
	f := newRecoveryFixture(t)
	require.NoError(t, f.sim.Publish(t.Context(), 300))
	f.fc.Advance(time.Minute)
	after := f.fc.Now()
	require.NoError(t, f.sim.Publish(t.Context(), 300))
	f.fc.Advance(time.Minute)
	f.subscribe(t)

	status, body := f.post(t, feedtest.DefaultAccessToken,
		fmt.Sprintf("/v1/liveodds/recovery/initiate_request?after=%d&request_id=4242&node_id=7", after.UnixMilli()))
	require.Equal(t, http.StatusAccepted, status, body)
	assert.Contains(t, body, `response_code="ACCEPTED"`)
	f.sim.WaitReplays()

	want := f.liveEvents(func(s feedtest.Sent) bool {
		h := s.Message.MessageHeader()
		return h.Producer == 1 && !h.Timestamp.Before(after)
	})
	older := f.liveEvents(func(s feedtest.Sent) bool { return s.Message.MessageHeader().Producer == 1 })
	require.NotEmpty(t, want)
	require.Greater(t, len(older), len(want), "the first minute is not replayed")
	f.expectReplay(t, want, 1, 4242, feed.Node(7))

	assert.Equal(t, []feedtest.RecoveryRequest{{Producer: 1, RequestID: 4242, After: after, Node: feed.Node(7), Status: http.StatusAccepted}},
		f.sim.RecoveryRequests())
	replays := 0
	for _, s := range f.sim.Sent() {
		if s.Replay {
			replays++
		}
	}
	assert.Equal(t, len(want)+1, replays, "the replay and its snapshot_complete are recorded as replays")
}

func TestRecoveryOfOneEvent(t *testing.T) {
	f := newRecoveryFixture(t)
	require.NoError(t, f.sim.Publish(t.Context(), 3000))
	f.subscribe(t)

	// A match of producer 1 that has been settled, so that the stateful replay has something.
	var event feed.URN
	for e, msgs := range f.sim.EventsByMatch() {
		if msgs[0].Message.MessageHeader().Producer != 1 {
			continue
		}
		for _, m := range msgs {
			if m.Key.Type == feed.MessageBetSettlement && (event.IsZero() || e.ID < event.ID) {
				event = e // the lowest such id: map order must not choose the event
			}
		}
	}
	require.False(t, event.IsZero(), "3,000 messages settle some match of producer 1")
	ofEvent := func(s feedtest.Sent) bool { return s.Key.Event == event }

	t.Run("odds", func(t *testing.T) {
		status, body := f.post(t, feedtest.DefaultAccessToken, "/v1/liveodds/odds/events/"+event.String()+"/initiate_request?request_id=9")
		require.Equal(t, http.StatusAccepted, status, body)
		f.sim.WaitReplays()
		// The event's current odds: its latest odds_change, and nothing else.
		odds := f.liveEvents(func(s feedtest.Sent) bool { return ofEvent(s) && s.Key.Type == feed.MessageOddsChange })
		require.Greater(t, len(odds), 2)
		f.expectReplay(t, odds[len(odds)-1:], 1, 9, feed.NodeID{}) // no node_id: addressed to no node
	})
	t.Run("stateful", func(t *testing.T) {
		status, body := f.post(t, feedtest.DefaultAccessToken, "/v1/liveodds/stateful_messages/events/"+event.String()+"/initiate_request?request_id=10&node_id=7")
		require.Equal(t, http.StatusAccepted, status, body)
		f.sim.WaitReplays()
		// Stateful messages are the settlements and cancellations, not the odds.
		want := f.liveEvents(func(s feedtest.Sent) bool {
			switch s.Key.Type {
			case feed.MessageOddsChange, feed.MessageBetStop, feed.MessageFixtureChange:
				return false
			}
			return ofEvent(s)
		})
		require.NotEmpty(t, want)
		f.expectReplay(t, want, 1, 10, feed.Node(7))
	})
	reqs := f.sim.RecoveryRequests()
	require.Len(t, reqs, 2)
	assert.Equal(t, feedtest.RecoveryRequest{Producer: 1, RequestID: 9, Event: event, Status: http.StatusAccepted}, reqs[0])
	assert.Equal(t, feedtest.RecoveryRequest{Producer: 1, RequestID: 10, Node: feed.Node(7), Event: event, Stateful: true, Status: http.StatusAccepted}, reqs[1])
}

func TestRecoveryRejectsBadRequests(t *testing.T) {
	f := newRecoveryFixture(t)
	f.fc.Advance(100 * time.Hour) // so that "after" can go back further than the window
	now := f.fc.Now()
	window := 72 * time.Hour // the recovery window of the default producers LO and Ctrl
	afterMs := func(d time.Duration) string { return strconv.FormatInt(now.Add(-d).UnixMilli(), 10) }

	tests := []struct {
		name, method, token, path string
		status                    int
		recorded                  *feedtest.RecoveryRequest // nil: refused before it counts as a recovery request
	}{
		{"no token", http.MethodPost, "", "/v1/liveodds/recovery/initiate_request?request_id=1",
			http.StatusUnauthorized, &feedtest.RecoveryRequest{Status: http.StatusUnauthorized}},
		{"wrong token", http.MethodPost, "nope", "/v1/liveodds/recovery/initiate_request?request_id=1",
			http.StatusUnauthorized, &feedtest.RecoveryRequest{Status: http.StatusUnauthorized}},
		{"unknown product", http.MethodPost, feedtest.DefaultAccessToken, "/v1/vf/recovery/initiate_request?request_id=1",
			http.StatusNotFound, &feedtest.RecoveryRequest{Status: http.StatusNotFound}},
		{"no request_id", http.MethodPost, feedtest.DefaultAccessToken, "/v1/liveodds/recovery/initiate_request",
			http.StatusBadRequest, &feedtest.RecoveryRequest{Producer: 1, Status: http.StatusBadRequest}},
		{"bad request_id", http.MethodPost, feedtest.DefaultAccessToken, "/v1/pre/recovery/initiate_request?request_id=x1",
			http.StatusBadRequest, &feedtest.RecoveryRequest{Producer: 3, Status: http.StatusBadRequest}},
		{"bad node_id", http.MethodPost, feedtest.DefaultAccessToken, "/v1/liveodds/recovery/initiate_request?request_id=2&node_id=seven",
			http.StatusBadRequest, &feedtest.RecoveryRequest{Producer: 1, RequestID: 2, Status: http.StatusBadRequest}},
		{"bad after", http.MethodPost, feedtest.DefaultAccessToken, "/v1/liveodds/recovery/initiate_request?request_id=3&after=yesterday",
			http.StatusBadRequest, &feedtest.RecoveryRequest{Producer: 1, RequestID: 3, Status: http.StatusBadRequest}},
		{"after older than the window", http.MethodPost, feedtest.DefaultAccessToken,
			"/v1/liveodds/recovery/initiate_request?request_id=4&after=" + afterMs(window+time.Millisecond),
			http.StatusBadRequest, &feedtest.RecoveryRequest{Producer: 1, RequestID: 4, After: now.Add(-window - time.Millisecond), Status: http.StatusBadRequest}},
		{"after at the edge of the window", http.MethodPost, feedtest.DefaultAccessToken,
			"/v1/pre/recovery/initiate_request?request_id=5&after=" + afterMs(window),
			http.StatusAccepted, &feedtest.RecoveryRequest{Producer: 3, RequestID: 5, After: now.Add(-window), Status: http.StatusAccepted}},
		{"bad event", http.MethodPost, feedtest.DefaultAccessToken, "/v1/liveodds/odds/events/match42/initiate_request?request_id=6",
			http.StatusBadRequest, nil},
		{"GET", http.MethodGet, feedtest.DefaultAccessToken, "/v1/liveodds/recovery/initiate_request?request_id=7",
			http.StatusMethodNotAllowed, nil},
	}
	var recorded []feedtest.RecoveryRequest
	for _, tt := range tests {
		status, body := f.request(t, tt.method, tt.token, tt.path)
		assert.Equal(t, tt.status, status, "%s: %s", tt.name, body)
		if tt.recorded != nil {
			recorded = append(recorded, *tt.recorded)
		}
	}
	assert.Equal(t, recorded, f.sim.RecoveryRequests(), "every recovery request is recorded with its answer")
}

func TestRecoveryFailuresOnDemand(t *testing.T) {
	f := newRecoveryFixture(t)
	f.subscribe(t)
	const path = "/v1/liveodds/recovery/initiate_request?request_id="

	f.sim.FailRecoveries(http.StatusInternalServerError, 0) // no failures: ignored
	f.sim.FailRecoveries(http.StatusServiceUnavailable, 2)
	f.sim.FailRecoveries(http.StatusTooManyRequests, 1)
	// A request refused for its own fault does not use up an injected failure.
	status, _ := f.post(t, "wrong", path+"1")
	assert.Equal(t, http.StatusUnauthorized, status)
	var got []int
	for id := 2; id <= 5; id++ {
		status, body := f.post(t, feedtest.DefaultAccessToken, path+strconv.Itoa(id))
		got = append(got, status)
		if status != http.StatusAccepted {
			assert.Contains(t, body, `response_code="SERVICE_UNAVAILABLE"`, "the schema's code for %d", status)
		}
	}
	assert.Equal(t, []int{503, 503, 429, 202}, got, "two 503s, one 429, then the API works again")

	// Only the accepted request is replayed: no traffic, so just its snapshot_complete.
	f.sim.WaitReplays()
	f.expectReplay(t, nil, 1, 5, feed.NodeID{})

	var statuses []int
	for _, r := range f.sim.RecoveryRequests() {
		statuses = append(statuses, r.Status)
	}
	assert.Equal(t, []int{401, 503, 503, 429, 202}, statuses)
}

func TestSimulatorDropConnection(t *testing.T) {
	t.Run("broker", func(t *testing.T) {
		f := newRecoveryFixture(t)
		f.subscribe(t)
		dropped := make(chan error, 1)
		go func() { dropped <- f.sim.DropConnection(t.Context(), time.Second) }()
		expect(t, f.r, feedtest.CallReceiverDown)
		f.fc.BlockUntil(1)
		require.NoError(t, f.sim.Publish(t.Context(), 5)) // lost: published while down
		f.fc.Advance(time.Second)
		require.NoError(t, <-dropped)
		expect(t, f.r, feedtest.CallReceiverUp)
		assert.Equal(t, uint64(5), f.b.Stats().LostWhileDown)
	})
	t.Run("publisher that cannot", func(t *testing.T) {
		sim := newSimulator(t, discard{}, feedtest.SimulatorConfig{})
		err := sim.DropConnection(t.Context(), time.Second)
		assert.ErrorContains(t, err, "feedtest_test.discard cannot drop connections")
	})
}

func TestNewSimulatorValidatesItsConfig(t *testing.T) {
	badProducer := feed.DefaultProducers()[0]
	badProducer.MaxRecoveryWindow = 0
	tests := []struct {
		name string
		pub  feedtest.Publisher
		cfg  feedtest.SimulatorConfig
		want string // the field at fault, named in the error
	}{
		{"nil publisher", nil, feedtest.SimulatorConfig{}, "publisher is nil"},
		{"negative matches", discard{}, feedtest.SimulatorConfig{Matches: -1}, "Matches -1"},
		{"negative rate", discard{}, feedtest.SimulatorConfig{Rate: -5}, "Rate -5"},
		{"negative alive interval", discard{}, feedtest.SimulatorConfig{AliveInterval: -time.Second}, "AliveInterval -1s"},
		{"negative history bytes", discard{}, feedtest.SimulatorConfig{HistoryBytes: -1}, "HistoryBytes -1"},
		{"negative history age", discard{}, feedtest.SimulatorConfig{HistoryAge: -time.Second}, "HistoryAge -1s"},
		{"no producers", discard{}, feedtest.SimulatorConfig{Producers: []feed.Producer{}}, "Producers is empty"},
		{"invalid producer", discard{}, feedtest.SimulatorConfig{Producers: []feed.Producer{badProducer}}, "Producers: feed: producer 1 (LO): MaxRecoveryWindow"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sim, err := feedtest.NewSimulator(tt.pub, tt.cfg)
			require.Error(t, err)
			assert.Nil(t, sim)
			assert.Contains(t, err.Error(), tt.want)
		})
	}

	// The zero config is usable, with the documented defaults.
	sim, err := feedtest.NewSimulator(discard{}, feedtest.SimulatorConfig{})
	require.NoError(t, err)
	var ids []int
	for _, p := range sim.Producers() {
		ids = append(ids, p.ID)
	}
	assert.Equal(t, []int{1, 3}, ids, "LO and Ctrl")
}

// A queue bound after the simulator sent its alives gets each producer's alive at once,
// not an AliveInterval later: the fake clock never moves here, so without it the alive
// would never come. It works through a Publisher that wraps the Broker and forwards its
// QueueBound, as the Broker's doc says.
func TestSimulatorSendsAlivesToAQueueBoundLate(t *testing.T) {
	fc := clocktest.NewFake(t0)
	broker := feedtest.NewBroker(feedtest.BrokerOptions{Clock: fc})
	t.Cleanup(broker.Close)
	pub := &alivesSeen{Broker: broker, alives: make(chan struct{}, 16)}
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	// One event per 1000 s: the event loop publishes one message, then waits on a timer
	// this test never reaches.
	sim := newSimulator(t, pub, feedtest.SimulatorConfig{Producers: []feed.Producer{lo}, Rate: 1e-3,
		AliveInterval: 10 * time.Second, Clock: fc})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a guard against a hang
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- sim.Run(ctx) }()
	select {
	case <-pub.alives: // the first alive went to no queue
	case <-ctx.Done():
		t.Fatal("no alive was published")
	}
	rec := feedtest.NewReceiverRecorder()
	sub, err := broker.Subscribe(ctx, []string{"-.-.-.alive.#"}, rec)
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Close(context.Background()) })
	assert.Equal(t, feedtest.CallReceiverUp, rec.RequireNext(t).Kind)
	c := rec.RequireNext(t)
	require.Equal(t, feedtest.CallReceive, c.Kind, c.String())
	assert.Equal(t, "-.-.-.alive.-.-.-.-", c.Delivery.RoutingKey)
	m, err := feed.DecodeAlive(c.Delivery.Body)
	require.NoError(t, err)
	assert.Equal(t, alive(1, t0, true), m)
	cancel()
	require.NoError(t, <-ran)
	assert.Equal(t, uint64(2), sim.Stats().Alives, "one alive at the start, one for the queue bound; the clock never moved")
}

// alivesSeen wraps a Broker, its QueueBound included, and signals every alive published.
type alivesSeen struct {
	*feedtest.Broker
	alives chan struct{}
}

func (a *alivesSeen) Publish(ctx context.Context, key string, body []byte) error {
	err := a.Broker.Publish(ctx, key, body)
	if strings.Contains(key, ".alive.") {
		a.alives <- struct{}{}
	}
	return err
}
