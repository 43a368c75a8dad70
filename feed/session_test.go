package feed_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// received is one message as a recorder saw it.
type received struct {
	Type      feed.MessageType
	Event     feed.URN
	Timestamp time.Time
	RequestID int64
}

// recorder is a feedtest.Recorder with the number of messages a test waits for.
type recorder struct {
	*feedtest.Recorder
	want int
}

func newRecorder(want int) *recorder { return &recorder{Recorder: feedtest.NewRecorder(), want: want} }

// wait blocks until the recorder has received its count.
func (r *recorder) wait(t *testing.T) { r.waitFor(t, r.want) }

// waitFor blocks until n messages (unparsable ones included) have arrived, failing the test
// after a generous deadline: a hang is a bug, not slowness.
func (r *recorder) waitFor(t *testing.T, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := r.Wait(ctx, n); err != nil {
		t.Fatal(err)
	}
}

// messages summarises the decoded messages received, in arrival order.
func (r *recorder) messages() []received {
	var got []received
	for _, m := range r.Messages() {
		h := m.MessageHeader()
		got = append(got, received{m.Type(), h.Event, h.Timestamp, h.RequestID})
	}
	return got
}

func openSession(t *testing.T, tr feed.Transport, cfg feed.SessionConfig) *feed.Session {
	t.Helper()
	s, err := feed.NewSession(tr, cfg)
	require.NoError(t, err)
	require.NoError(t, s.Open(t.Context()))
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

func newBroker(t *testing.T, opts feedtest.BrokerOptions) *feedtest.Broker {
	b := feedtest.NewBroker(opts)
	t.Cleanup(b.Close)
	return b
}

func TestSessionDeliversEveryEventInOrderPerMatch(t *testing.T) {
	broker := newBroker(t, feedtest.BrokerOptions{})
	sim, err := feedtest.NewSimulator(broker, feedtest.SimulatorConfig{Matches: 200, Rate: feedtest.Unlimited, Seed: 7})
	require.NoError(t, err)
	const n = 20000
	rec := newRecorder(n)
	s := openSession(t, broker, feed.SessionConfig{Listener: rec, QueueSize: 64})

	require.NoError(t, sim.Publish(t.Context(), n))
	rec.wait(t)

	// Compare whole messages, not just timestamps: several messages of a match can share a
	// millisecond, and a swap among them must not go unnoticed.
	got := map[feed.URN][]feed.Message{}
	for _, m := range rec.Messages() {
		m.MessageHeader().ReceivedAt = time.Time{}
		got[m.MessageHeader().Event] = append(got[m.MessageHeader().Event], m)
	}
	sent := sim.EventsByMatch()
	require.Len(t, got, len(sent), "every match that was sent to was received")
	types := map[feed.MessageType]int{}
	for event, msgs := range sent {
		want := make([]feed.Message, len(msgs))
		for i, m := range msgs {
			want[i] = m.Message
			types[m.Key.Type]++
		}
		require.Equal(t, want, got[event], "messages of %s, in order", event)
	}
	assert.Len(t, types, 7, "the simulator sent every event message type: %v", types)
	st := s.Stats()
	assert.Equal(t, uint64(n), st.Events)
	assert.Equal(t, uint64(n), st.Received)
	assert.Zero(t, st.Unroutable)
}

func TestSessionReportsBadInputToOnUnparsableMessageAndGoesOn(t *testing.T) {
	broker := newBroker(t, feedtest.BrokerOptions{})
	rec := newRecorder(6)
	var errs []error
	var errMu sync.Mutex
	openSession(t, broker, feed.SessionConfig{Listener: rec, MaxBodySize: 4096, OnError: func(err error) {
		errMu.Lock()
		errs = append(errs, err)
		errMu.Unlock()
	}})

	good := func(id int64) []byte {
		return feedtest.Marshal(&feed.BetStop{Header: feed.Header{Producer: 1, Event: feed.URN{Prefix: "sr", Type: "match", ID: id}, Timestamp: time.UnixMilli(1).UTC()}})
	}
	ctx := t.Context()
	key := "hi.-.live.bet_stop.1.sr:match.1.-"
	garbage := []byte("\x00\x01 not xml at all <<<")
	oversized := []byte("<bet_stop product=\"1\" event_id=\"sr:match:1\" timestamp=\"1\" groups=\"" + strings.Repeat("x", 5000) + "\"/>")
	require.NoError(t, broker.Publish(ctx, key, good(1)))
	require.NoError(t, broker.Publish(ctx, "hi.-.live.bet_stop.one.sr:match.1.-", good(1))) // malformed sport segment
	require.NoError(t, broker.Publish(ctx, "hi.-.live.cash_out.1.sr:match.1.-", good(1)))   // unknown message type
	require.NoError(t, broker.Publish(ctx, key, garbage))
	require.NoError(t, broker.Publish(ctx, key, oversized))
	require.NoError(t, broker.Publish(ctx, key, good(1)))
	rec.wait(t)

	assert.Len(t, rec.messages(), 2, "the good messages before and after the bad ones")
	require.Len(t, rec.Unparsable(), 4)
	u := rec.Unparsable()
	assert.Equal(t, "hi.-.live.bet_stop.one.sr:match.1.-", u[0].RoutingKey)
	assert.Equal(t, good(1), u[0].Body, "the raw body is kept")
	var rke *feed.RoutingKeyError
	assert.ErrorAs(t, u[0].Err, &rke)
	assert.Contains(t, u[1].Err.Error(), `segment 4 (type) "cash_out": unknown message type`)
	assert.Equal(t, garbage, u[2].Body)
	assert.ErrorIs(t, u[2].Err, feed.ErrMalformedMessage)
	assert.Equal(t, feed.URN{Prefix: "sr", Type: "match", ID: 1}, u[2].Event, "the event comes from the routing key")
	assert.ErrorIs(t, u[3].Err, feed.ErrBodyTooLarge)
	assert.Equal(t, oversized, u[3].Body)
	for _, m := range u {
		assert.False(t, m.ReceivedAt.IsZero())
	}
	errMu.Lock()
	defer errMu.Unlock()
	assert.Len(t, errs, 4, "each unparsable message is reported to OnError too")
}

func TestSessionSurvivesListenerPanicsAndErrors(t *testing.T) {
	broker := newBroker(t, feedtest.BrokerOptions{})
	rec := newRecorder(1)
	calls := 0
	rec.Hook = func(m feed.Message) error {
		calls++
		switch calls {
		case 1:
			panic("customer bug")
		case 2:
			return errors.New("database down")
		}
		return nil
	}
	reported := make(chan error, 2)
	openSession(t, broker, feed.SessionConfig{Listener: rec, OnError: func(err error) { reported <- err }})

	for i := range 3 {
		body := feedtest.Marshal(&feed.FixtureChange{Header: feed.Header{Producer: 3, Event: feed.URN{Prefix: "sr", Type: "match", ID: int64(i + 1)}}})
		require.NoError(t, broker.Publish(t.Context(), "lo.pre.-.fixture_change.1.sr:match.1.-", body))
	}
	rec.wait(t)

	panicErr, failErr := <-reported, <-reported
	assert.ErrorIs(t, panicErr, feed.ErrListenerPanic)
	var le *feed.ListenerError
	require.ErrorAs(t, panicErr, &le)
	assert.Equal(t, "OnFixtureChange", le.Method)
	assert.Equal(t, "customer bug", le.Panic)
	assert.Contains(t, string(le.Stack), "session_test.go")
	assert.EqualError(t, failErr, "feed: OnFixtureChange for sr:match:2: database down")
	assert.Equal(t, int64(3), rec.messages()[0].Event.ID, "the stream went on after both")
}

// The goroutine that reads from the transport does not wait for the listener: with the
// listener blocked, the session keeps reading until its dispatcher's queue is full.
func TestSessionKeepsReadingWhileTheListenerIsBlocked(t *testing.T) {
	broker := newBroker(t, feedtest.BrokerOptions{QueueCapacity: 1})
	const queue = 16
	// 1 in the listener, queue in the dispatcher, 1 held by the reading goroutine, 1 in the broker.
	const fits = 1 + queue + 1 + 1
	rec := newRecorder(fits)
	started, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	rec.Hook = func(feed.Message) error {
		once.Do(func() { close(started); <-release })
		return nil
	}
	openSession(t, broker, feed.SessionConfig{Listener: rec, QueueSize: queue})

	body := feedtest.Marshal(&feed.BetStop{Header: feed.Header{Producer: 1, Event: feed.URN{Prefix: "sr", Type: "match", ID: 1}}})
	require.NoError(t, broker.Publish(t.Context(), "hi.-.live.bet_stop.1.sr:match.1.-", body))
	<-started
	for range fits - 1 {
		// Each Publish returns only because the session goes on reading; were it waiting on the
		// blocked listener, the broker's one-message queue would block the second Publish.
		require.NoError(t, broker.Publish(t.Context(), "hi.-.live.bet_stop.1.sr:match.1.-", body))
	}
	close(release)
	rec.wait(t)
	assert.Len(t, rec.messages(), fits, "nothing was dropped")
}

func TestSessionRoutesSystemMessagesToTheSystemHandler(t *testing.T) {
	broker := newBroker(t, feedtest.BrokerOptions{})
	sys := &systemRecorder{got: make(chan feed.Event, 4)}
	rec := newRecorder(1)
	s := openSession(t, broker, feed.SessionConfig{Listener: rec, System: sys, Node: feed.Node(7)})

	ctx := t.Context()
	alive := feedtest.Marshal(&feed.Alive{Header: feed.Header{Producer: 1, Timestamp: time.UnixMilli(5).UTC()}, Subscribed: true})
	snap := feedtest.Marshal(&feed.SnapshotComplete{Header: feed.Header{Producer: 3, RequestID: 42, Timestamp: time.UnixMilli(6).UTC()}})
	require.NoError(t, broker.Publish(ctx, "-.-.-.alive.-.-.-.-", alive))
	require.NoError(t, broker.Publish(ctx, "-.-.-.snapshot_complete.-.-.-.8", snap)) // for another node
	require.NoError(t, broker.Publish(ctx, "-.-.-.snapshot_complete.-.-.-.7", snap))
	require.NoError(t, broker.Publish(ctx, "-.-.-.snapshot_complete.-.-.-", snap))
	body := feedtest.Marshal(&feed.BetStop{Header: feed.Header{Producer: 1, Event: feed.URN{Prefix: "sr", Type: "match", ID: 1}}})
	require.NoError(t, broker.Publish(ctx, "hi.-.live.bet_stop.1.sr:match.1.-", body))
	rec.wait(t)

	a, s1, s2 := <-sys.got, <-sys.got, <-sys.got
	assert.Equal(t, feed.MessageAlive, a.Key.Type)
	assert.Equal(t, 1, a.Producer)
	assert.Equal(t, alive, a.Body)
	assert.Equal(t, feed.MessageSnapshotComplete, s1.Key.Type)
	assert.Equal(t, feed.Node(7), s1.Key.Node)
	assert.Equal(t, int64(42), s1.RequestID, "peeked on the reading goroutine")
	assert.Equal(t, 3, s1.Producer)
	assert.False(t, s2.Key.Node.IsSet())
	assert.Empty(t, sys.got, "the snapshot_complete for node 8 was not routed here")
	assert.Equal(t, uint64(3), s.Stats().System)
	assert.Len(t, rec.messages(), 1, "system messages do not reach the odds listener")
}

type systemRecorder struct{ got chan feed.Event }

func (s *systemRecorder) HandleSystem(ev feed.Event) { s.got <- ev }

func TestSessionsByInterestSplitTheTraffic(t *testing.T) {
	broker := newBroker(t, feedtest.BrokerOptions{})
	sim, err := feedtest.NewSimulator(broker, feedtest.SimulatorConfig{Matches: 40, Rate: feedtest.Unlimited, Seed: 3})
	require.NoError(t, err)
	const n = 3000
	sink := &counter{}
	live := &counter{}
	pre := &counter{}
	openSession(t, broker, feed.SessionConfig{Listener: sink})
	openSession(t, broker, feed.SessionConfig{Listener: live, Interest: feed.LiveMessagesOnly})
	openSession(t, broker, feed.SessionConfig{Listener: pre, Interest: feed.PrematchMessagesOnly})

	require.NoError(t, sim.Publish(t.Context(), n))
	var wantLive, wantPre int
	for _, m := range sim.Sent() {
		switch {
		case m.Key.Live:
			wantLive++
		case m.Key.Prematch:
			wantPre++
		}
	}
	require.Positive(t, wantLive)
	require.Positive(t, wantPre)
	require.Equal(t, n, wantLive+wantPre)
	live.waitFor(t, wantLive)
	pre.waitFor(t, wantPre)
	sink.waitFor(t, n)
	assert.True(t, live.onlyLive(), "the live session got only live messages")
	assert.Equal(t, wantLive, live.count())
	assert.Equal(t, wantPre, pre.count())
}

// counter counts messages per producer; Ctrl (3) is prematch, LO (1) is live.
type counter struct {
	feed.BaseOddsFeedListener
	mu        sync.Mutex
	n         int
	producers map[int]int
	cond      *sync.Cond
}

func (c *counter) add(p int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.producers == nil {
		c.producers = map[int]int{}
	}
	c.n++
	c.producers[p]++
	if c.cond != nil {
		c.cond.Broadcast()
	}
	return nil
}
func (c *counter) OnOddsChange(_ context.Context, m *feed.OddsChange) error { return c.add(m.Producer) }
func (c *counter) OnBetStop(_ context.Context, m *feed.BetStop) error       { return c.add(m.Producer) }
func (c *counter) OnBetSettlement(_ context.Context, m *feed.BetSettlement) error {
	return c.add(m.Producer)
}
func (c *counter) OnRollbackBetSettlement(_ context.Context, m *feed.RollbackBetSettlement) error {
	return c.add(m.Producer)
}
func (c *counter) OnBetCancel(_ context.Context, m *feed.BetCancel) error { return c.add(m.Producer) }
func (c *counter) OnRollbackBetCancel(_ context.Context, m *feed.RollbackBetCancel) error {
	return c.add(m.Producer)
}
func (c *counter) OnFixtureChange(_ context.Context, m *feed.FixtureChange) error {
	return c.add(m.Producer)
}

func (c *counter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func (c *counter) onlyLive() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.producers[3] == 0
}

// waitFor blocks until n messages were counted (a signal through a condition variable).
func (c *counter) waitFor(t *testing.T, n int) {
	t.Helper()
	c.mu.Lock()
	if c.cond == nil {
		c.cond = sync.NewCond(&c.mu)
	}
	timer := time.AfterFunc(30*time.Second, func() {
		c.mu.Lock()
		c.n = -1 << 30 // wake the waiter with an impossible count
		c.cond.Broadcast()
		c.mu.Unlock()
	})
	defer timer.Stop()
	for c.n >= 0 && c.n < n {
		c.cond.Wait()
	}
	got := c.n
	c.mu.Unlock()
	require.GreaterOrEqual(t, got, n, "timed out waiting for %d messages", n)
}

func TestSessionReportsConnectionDownAndUp(t *testing.T) {
	broker := newBroker(t, feedtest.BrokerOptions{})
	global := feedtest.NewGlobalRecorder()
	rec := newRecorder(2)
	s := openSession(t, broker, feed.SessionConfig{Listener: rec, Global: global, Index: 3, Interest: feed.LiveMessagesOnly})
	assert.Equal(t, feed.SessionRef{Index: 3, Interest: feed.LiveMessagesOnly}, s.Ref())
	assert.Equal(t, "connection up on session 3 (live messages only)", global.RequireNext(t).String(), "the first connection is reported up, naming the session")

	body := func(id int64) []byte {
		return feedtest.Marshal(&feed.BetStop{Header: feed.Header{Producer: 1, Event: feed.URN{Prefix: "sr", Type: "match", ID: id}}})
	}
	ctx := t.Context()
	require.NoError(t, broker.Publish(ctx, "hi.-.live.bet_stop.1.sr:match.1.-", body(1)))
	rec.waitFor(t, 1)
	broker.Disconnect(errors.New("broker restarted"))
	assert.Equal(t, "connection down on session 3 (live messages only): broker restarted", global.RequireNext(t).String())
	require.NoError(t, broker.Publish(ctx, "hi.-.live.bet_stop.1.sr:match.2.-", body(2))) // lost: no queue
	broker.Reconnect()
	assert.Equal(t, "connection up on session 3 (live messages only)", global.RequireNext(t).String())
	require.NoError(t, broker.Publish(ctx, "hi.-.live.bet_stop.1.sr:match.3.-", body(3)))
	rec.wait(t)

	var ids []int64
	for _, m := range rec.messages() {
		ids = append(ids, m.Event.ID)
	}
	assert.Equal(t, []int64{1, 3}, ids, "the message published while disconnected is lost, the others arrive")
	st := broker.Stats()
	assert.Equal(t, uint64(1), st.LostWhileDown)
	assert.Equal(t, uint64(1), s.Stats().ConnectionDowns)
}

func TestSessionForOneNodeIgnoresOtherNodes(t *testing.T) {
	broker := newBroker(t, feedtest.BrokerOptions{})
	rec := newRecorder(2)
	openSession(t, broker, feed.SessionConfig{Listener: rec, Node: feed.Node(5)})
	ctx := t.Context()
	for _, node := range []string{"6", "5", "-"} {
		body := feedtest.Marshal(&feed.BetStop{Header: feed.Header{Producer: 1, Event: feed.URN{Prefix: "sr", Type: "match", ID: 1}, RequestID: 9}})
		require.NoError(t, broker.Publish(ctx, "hi.-.live.bet_stop.1.sr:match.1."+node, body))
	}
	rec.wait(t)
	assert.Len(t, rec.messages(), 2)
}

func TestSessionCloseDeliversWhatItHolds(t *testing.T) {
	broker := newBroker(t, feedtest.BrokerOptions{})
	const n = 50
	rec := newRecorder(n)
	release := make(chan struct{})
	rec.Hook = func(feed.Message) error { <-release; return nil }
	inner, err := feed.NewSerialDispatcher(rec, feed.DispatcherOptions{QueueSize: n})
	require.NoError(t, err)
	disp := &countingDispatcher{Dispatcher: inner, want: n, reached: make(chan struct{})}
	s, err := feed.NewSession(broker, feed.SessionConfig{Dispatcher: disp})
	require.NoError(t, err)
	require.NoError(t, s.Open(t.Context()))
	body := feedtest.Marshal(&feed.BetStop{Header: feed.Header{Producer: 1, Event: feed.URN{Prefix: "sr", Type: "match", ID: 1}}})
	for range n {
		require.NoError(t, broker.Publish(t.Context(), "hi.-.live.bet_stop.1.sr:match.1.-", body))
	}
	<-disp.reached // all n are in the session's hands, the listener still blocked on the first
	close(release)
	require.NoError(t, s.Close(t.Context()))
	assert.Len(t, rec.messages(), n, "Close delivered everything the session held before returning")
	require.ErrorIs(t, s.Open(t.Context()), feed.ErrSessionClosed)
	require.NoError(t, s.Close(t.Context()), "Close twice is harmless")
}

// countingDispatcher signals once it has been handed want events.
type countingDispatcher struct {
	feed.Dispatcher
	mu      sync.Mutex
	n, want int
	reached chan struct{}
}

func (c *countingDispatcher) Dispatch(ctx context.Context, ev feed.Event) error {
	err := c.Dispatcher.Dispatch(ctx, ev)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n++; c.n == c.want {
		close(c.reached)
	}
	return err
}

func TestSessionCloseGivesUpWhenItsContextEnds(t *testing.T) {
	broker := newBroker(t, feedtest.BrokerOptions{})
	rec := newRecorder(1)
	started := make(chan struct{})
	rec.Hook = func(feed.Message) error { close(started); select {} }
	s, err := feed.NewSession(broker, feed.SessionConfig{Listener: rec})
	require.NoError(t, err)
	require.NoError(t, s.Open(t.Context()))
	body := feedtest.Marshal(&feed.BetStop{Header: feed.Header{Producer: 1, Event: feed.URN{Prefix: "sr", Type: "match", ID: 1}}})
	require.NoError(t, broker.Publish(t.Context(), "hi.-.live.bet_stop.1.sr:match.1.-", body))
	<-started
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	assert.ErrorIs(t, s.Close(ctx), context.Canceled)
}

func TestNewSessionRefusesBadConfig(t *testing.T) {
	broker := newBroker(t, feedtest.BrokerOptions{})
	rec := newRecorder(0)
	d, err := feed.NewSerialDispatcher(rec, feed.DispatcherOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Close(context.Background()) })
	tests := []struct {
		name    string
		t       feed.Transport
		cfg     feed.SessionConfig
		wantErr string
	}{
		{"no transport", nil, feed.SessionConfig{Listener: rec}, "transport is nil"},
		{"no listener", broker, feed.SessionConfig{}, "set Listener or Dispatcher"},
		{"both", broker, feed.SessionConfig{Listener: rec, Dispatcher: d}, "not both"},
		{"negative body size", broker, feed.SessionConfig{Listener: rec, MaxBodySize: -1}, "MaxBodySize -1"},
		{"negative queue", broker, feed.SessionConfig{Listener: rec, QueueSize: -5}, "QueueSize -5"},
		{"no matches", broker, feed.SessionConfig{Listener: rec, Interest: feed.SpecifiedMatchesOnly()}, "at least one event"},
		{"negative index", broker, feed.SessionConfig{Listener: rec, Index: -1}, "SessionConfig.Index -1 must not be negative"},
		{"queue size with a dispatcher", broker, feed.SessionConfig{Dispatcher: d, QueueSize: 10}, "bound your Dispatcher instead"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := feed.NewSession(tt.t, tt.cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
}

func TestSessionTurnsAwayBadSystemMessages(t *testing.T) {
	broker := newBroker(t, feedtest.BrokerOptions{})
	sys := &systemRecorder{got: make(chan feed.Event, 4)}
	rec := newRecorder(2)
	s := openSession(t, broker, feed.SessionConfig{Listener: rec, System: sys})
	ctx := t.Context()
	require.NoError(t, broker.Publish(ctx, "-.-.-.alive.-.-.-.-", []byte("garbage")))
	betStop := feedtest.Marshal(&feed.BetStop{Header: feed.Header{Producer: 1, Event: feed.URN{Prefix: "sr", Type: "match", ID: 1}}})
	require.NoError(t, broker.Publish(ctx, "-.-.-.snapshot_complete.-.-.-.-", betStop)) // the key and the body disagree
	rec.wait(t)

	require.Len(t, rec.Unparsable(), 2)
	assert.Equal(t, []byte("garbage"), rec.Unparsable()[0].Body)
	assert.ErrorIs(t, rec.Unparsable()[0].Err, feed.ErrMalformedMessage)
	assert.ErrorContains(t, rec.Unparsable()[1].Err, "routing key says snapshot_complete, body is <bet_stop>")
	assert.Empty(t, sys.got, "the system handler never sees them")
	assert.Equal(t, uint64(2), s.Stats().Unroutable)
}

func TestSessionSurvivesPanickingCallbacks(t *testing.T) {
	broker := newBroker(t, feedtest.BrokerOptions{})
	rec := newRecorder(2)
	rec.Hook = func(m feed.Message) error {
		if m.MessageHeader().Event.ID == 1 {
			return errors.New("fails, so that OnError is called")
		}
		return nil
	}
	var calls sync.WaitGroup
	calls.Add(2)
	openSession(t, broker, feed.SessionConfig{
		Listener: rec,
		System:   panickingSystem{},
		OnError:  func(error) { calls.Done(); panic("OnError has a bug too") },
	})
	ctx := t.Context()
	alive := feedtest.Marshal(&feed.Alive{Header: feed.Header{Producer: 1}, Subscribed: true})
	require.NoError(t, broker.Publish(ctx, "-.-.-.alive.-.-.-.-", alive)) // HandleSystem panics; OnError too
	for id := range int64(2) {
		body := feedtest.Marshal(&feed.BetStop{Header: feed.Header{Producer: 1, Event: feed.URN{Prefix: "sr", Type: "match", ID: id + 1}}})
		require.NoError(t, broker.Publish(ctx, "hi.-.live.bet_stop.1.sr:match.1.-", body))
	}
	rec.waitFor(t, 1)
	calls.Wait() // both panicking OnError calls happened, and the stream went on
	assert.Len(t, rec.messages(), 1)
}

type panickingSystem struct{}

func (panickingSystem) HandleSystem(feed.Event) { panic("system handler bug") }

func TestNewSessionStartsNoGoroutine(t *testing.T) {
	broker := newBroker(t, feedtest.BrokerOptions{})
	before := runtime.NumGoroutine()
	var sessions []*feed.Session
	for range 50 {
		s, err := feed.NewSession(broker, feed.SessionConfig{Listener: newRecorder(0), Global: feed.BaseGlobalEventsListener{}})
		require.NoError(t, err)
		sessions = append(sessions, s)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), before)
	for _, s := range sessions {
		require.NoError(t, s.Close(t.Context()), "closing a session never opened")
	}
}

func TestSessionOpenFailureStopsWhatItStarted(t *testing.T) {
	before := runtime.NumGoroutine()
	s, err := feed.NewSession(refusingTransport{}, feed.SessionConfig{Listener: newRecorder(0), Global: feed.BaseGlobalEventsListener{}})
	require.NoError(t, err)
	for range 3 {
		assert.ErrorContains(t, s.Open(t.Context()), "broker unreachable", "Open may be retried")
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), before)
	require.NoError(t, s.Close(t.Context()))
}

type refusingTransport struct{}

func (refusingTransport) Subscribe(context.Context, []string, feed.Receiver) (feed.Subscription, error) {
	return nil, errors.New("broker unreachable")
}

// A SystemHandler that is a ConnectionLossHandler hears of a lost connection in order
// with the system messages: after those read before the loss, before those read after.
func TestSessionReportsConnectionLossInOrderWithSystemMessages(t *testing.T) {
	broker := newBroker(t, feedtest.BrokerOptions{})
	sys := &lossRecorder{got: make(chan string, 8)}
	openSession(t, broker, feed.SessionConfig{Listener: newRecorder(0), System: sys, Index: 1})
	ctx := t.Context()
	alive := func(ms int64) []byte {
		return feedtest.Marshal(&feed.Alive{Header: feed.Header{Producer: 1, Timestamp: time.UnixMilli(ms).UTC()}, Subscribed: true})
	}
	require.NoError(t, broker.Publish(ctx, "-.-.-.alive.-.-.-.-", alive(1)))
	assert.Equal(t, "alive", <-sys.got)
	broker.Disconnect(errors.New("cable cut"))
	broker.Reconnect()
	require.NoError(t, broker.Publish(ctx, "-.-.-.alive.-.-.-.-", alive(2)))
	assert.Equal(t, "down on session 1 (all messages): cable cut", <-sys.got, "the loss names the session")
	assert.Equal(t, "alive", <-sys.got)
}

type lossRecorder struct{ got chan string }

func (s *lossRecorder) HandleSystem(ev feed.Event) { s.got <- ev.Key.Type.String() }
func (s *lossRecorder) HandleConnectionDown(ref feed.SessionRef, err error) {
	s.got <- "down on " + ref.String() + ": " + err.Error()
}
