package feedkit_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/rabbitmq"
	"github.com/feedkit/feedkit/internal/faultproxy"
	"github.com/feedkit/feedkit/internal/testenv"
	"github.com/feedkit/feedkit/recovery"
)

// feedLink is the broker an end-to-end test runs on, and how it loses its connection.
type feedLink struct {
	transport feed.Transport
	pub       feedtest.Publisher
	drop      func() // drop the sessions' connections: what is published meanwhile is lost
	restore   func() // let them reconnect
	flush     func(context.Context) error
	// settle returns once sdk has processed what was published and cond holds. On the
	// embedded broker both are flushed, and cond must hold then. RabbitMQ gives no signal
	// that its consumer has read what the broker holds, so there the test waits for cond,
	// re-checking it, then flushes the SDK.
	settle func(ctx context.Context, sdk *feedkit.SDK, cond func() bool) error
}

func embeddedLink(t *testing.T) feedLink {
	b := feedtest.NewBroker(feedtest.BrokerOptions{})
	t.Cleanup(b.Close)
	return feedLink{transport: b, pub: b, drop: func() { b.Disconnect(nil) }, restore: b.Reconnect,
		flush: func(context.Context) error { return nil },
		settle: func(ctx context.Context, sdk *feedkit.SDK, cond func() bool) error {
			if err := b.Flush(ctx); err != nil {
				return err
			}
			if err := sdk.Flush(ctx); err != nil {
				return err
			}
			if !cond() {
				return errors.New("not so once everything published was processed")
			}
			return nil
		}}
}

// rabbitLink runs the SDK's transport through a fault-injecting proxy to the broker, so
// that an outage lasts until the test ends it, however long the test takes meanwhile (the
// transport reconnects on its own within 200 ms); the simulator publishes directly.
func rabbitLink(t *testing.T) feedLink { return rabbitLinkObserved(t, nil) }

// rabbitLinkObserved is rabbitLink with obs told of the transport's links (nil: none).
func rabbitLinkObserved(t *testing.T, obs rabbitmq.Observer) feedLink {
	vhost := testenv.AMQPVhost(t)
	u, err := url.Parse(vhost)
	require.NoError(t, err)
	proxy, err := faultproxy.New(u.Host)
	require.NoError(t, err)
	t.Cleanup(func() { _ = proxy.Close() })
	u.Host = proxy.Addr()
	cfg := rabbitmq.Config{URL: u.String(), DeclareExchange: true, ConnectionName: "feedkit-e2e-sdk",
		ReconnectDelay: 200 * time.Millisecond, MaxReconnectDelay: 200 * time.Millisecond, Observer: obs}
	tr, err := rabbitmq.New(cfg)
	cfg.Observer = nil
	require.NoError(t, err)
	cfg.URL, cfg.ConnectionName = vhost, "feedkit-e2e-simulator"
	pub, err := rabbitmq.NewPublisher(t.Context(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = pub.Close(context.Background()) })
	return feedLink{transport: tr, pub: pub,
		drop: func() {
			require.NoError(t, proxy.Refuse())
			proxy.Cut()
		},
		restore: func() { require.NoError(t, proxy.Accept()) },
		flush:   pub.Flush,
		settle: func(ctx context.Context, sdk *feedkit.SDK, cond func() bool) error {
			if err := pub.Flush(ctx); err != nil {
				return err
			}
			if err := feedkit.WaitFor(ctx, cond); err != nil {
				return err
			}
			return sdk.Flush(ctx)
		}}
}

// The whole story, on the simulator: alives stop → the producer goes down; the connection
// drops and messages are lost; alives resume → a recovery from the last alive before the
// silence → the replay → a snapshot_complete with a wrong request id is ignored → the
// right one → ProducerUp, deferred until every replayed message has been processed. What
// the simulator sent equals what the listener received: nothing is lost across the outage.
//
// The feed and the SDK's recovery share one fake clock, moved by the test alone: alives
// come when the test sends them and a silence lasts until the test advances the clock,
// so a slow or busy machine can neither take the producer down early nor keep it up.
func TestE2EOutageRecoveryOnTheEmbeddedBroker(t *testing.T) {
	for _, threads := range []int{4, 0} {
		t.Run(fmt.Sprintf("threads=%d", threads), func(t *testing.T) {
			testOutageRecovery(t, embeddedLink(t), threads, newCountingObserver())
		})
	}
}

func TestE2EOutageRecoveryOnRabbitMQ(t *testing.T) {
	// A transport the host builds is given its observer by the host: the SDK hands
	// Config.Observer only to what it builds.
	obs := newCountingObserver()
	testOutageRecovery(t, rabbitLinkObserved(t, obs), 4, obs)
}

// e2eEpoch is when the end-to-end tests' fake clock starts.
var e2eEpoch = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

const (
	// e2eHeartbeatLimit is the producer's heartbeat limit, in fake time.
	e2eHeartbeatLimit = time.Second
	// e2eCheckInterval is the recovery manager's check interval, in fake time. Longer than
	// the limit and than all the traffic a test publishes, so that a check runs only when
	// the test advances the clock by it: once, when the alives have stopped.
	e2eCheckInterval = 10 * time.Second
)

func testOutageRecovery(t *testing.T, link feedLink, threads int, obs *countingObserver) {
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	clk := clocktest.NewFake(e2eEpoch)
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	sim, err := feedtest.NewSimulator(link.pub, feedtest.SimulatorConfig{
		Matches: 40, Rate: feedtest.Unlimited, Seed: 5, Producers: []feed.Producer{lo}, Clock: clk})
	require.NoError(t, err)
	node := feed.Node(5)
	// publish sends n event messages of the live stream, a millisecond of fake time apart,
	// so that each has a timestamp of its own (identity relies on it).
	publish := func(n int) {
		t.Helper()
		for range n {
			clk.Advance(time.Millisecond)
			require.NoError(t, sim.Publish(ctx, 1))
		}
	}
	alive := func() {
		t.Helper()
		clk.Advance(time.Millisecond)
		require.NoError(t, sim.SendAlive(ctx, lo.ID, true))
	}

	// The recovery API, behind a door that first slips a snapshot_complete with a wrong
	// request id onto the feed: it reaches the session before the replay does.
	wrongSent := make(chan struct{}, 8)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := feed.RoutingKey{Type: feed.MessageSnapshotComplete, Node: node}.String()
		body := feedtest.Marshal(&feed.SnapshotComplete{Header: feed.Header{Producer: lo.ID, Timestamp: clk.Now(), RequestID: 999_999}})
		if err := link.pub.Publish(r.Context(), key, body); err == nil {
			wrongSent <- struct{}{}
		}
		sim.RecoveryHandler().ServeHTTP(w, r)
	}))
	t.Cleanup(api.Close)
	awaitWrongSent := func() {
		t.Helper()
		select {
		case <-wrongSent:
		case <-ctx.Done():
			t.Fatal("the recovery API was not called")
		}
	}

	// The listener holds the replay of every recovery after the first until the gate opens,
	// so that the replay is certainly still being processed when the feed says it is over.
	var firstID atomic.Int64
	gate := make(chan struct{})
	var gateOnce sync.Once
	openGate := func() { gateOnce.Do(func() { close(gate) }) }
	t.Cleanup(openGate)
	rec := feedtest.NewRecorder()
	rec.Hook = func(m feed.Message) error {
		if id := m.MessageHeader().RequestID; id != 0 && firstID.Load() != 0 && id != firstID.Load() {
			<-gate
		}
		return nil
	}
	global := feedtest.NewGlobalRecorder()
	var sdk *feedkit.SDK
	// What the customer sees when an up reaches it.
	global.Hook = func(_ context.Context, c feedtest.GlobalCall) string {
		if c.Kind != feedtest.CallProducerStatus || c.Status.Down {
			return ""
		}
		st := sdk.Stats()
		pending := 0
		for rc, c := range st.Tasks {
			if rc.RequestID != 0 {
				pending += c.Pending()
			}
		}
		return fmt.Sprintf("replay tasks pending %d", pending)
	}
	sdk, err = feedkit.New(feedkit.Config{
		Transport: link.transport,
		Node:      node,
		Global:    global,
		API:       feedapi.Config{BaseURL: api.URL, AccessToken: feedtest.DefaultAccessToken},
		Recovery: recovery.Config{
			Producers:       []feed.Producer{lo},
			HeartbeatLimits: map[int]time.Duration{lo.ID: e2eHeartbeatLimit},
			CheckInterval:   e2eCheckInterval,
		},
		Clock:      clk,
		Concurrent: delivery(threads),
		Observer:   obs,
	})
	require.NoError(t, err)
	require.NoError(t, sdk.AddSession(feed.AllMessages, rec))
	require.NoError(t, sdk.Open(ctx))
	// The gate opens first: a test that failed with the replay held must not hang in Close.
	t.Cleanup(func() { openGate(); _ = sdk.Close(context.Background()) })
	require.Equal(t, "producer 1 down (InitialState)", global.RequireNext(t).String())
	require.Equal(t, "connection up on session 0 (all messages)", global.RequireNext(t).String())

	// Start: the first alive brings the first recovery, then the producer is up.
	alive()
	first := global.RequireNext(t)
	require.Equal(t, feedtest.CallRecoveryInitiated, first.Kind, first.String())
	id1 := first.Recovery.RequestID
	firstID.Store(id1)
	awaitWrongSent()
	require.Equal(t, "producer 1 up (FirstRecoveryCompleted): replay tasks pending 0", global.RequireNext(t).String())
	deferredBefore := sdk.Stats().Global.Deferred

	// Live traffic, then the last alive before the silence, which the SDK has taken in
	// before the clock moves on.
	publish(200)
	alive()
	require.NoError(t, link.settle(ctx, sdk, func() bool { return sdk.Stats().Recovery.Alives == 2 }))

	// Alives stop: the next check, a check interval later and so past the limit, finds the
	// producer silent and takes it down.
	clk.Advance(e2eCheckInterval)
	require.Equal(t, "producer 1 down (AliveIntervalViolation)", global.RequireNext(t).String())
	st, _ := sdk.Producer(lo.ID)
	require.Equal(t, recovery.Disconnected, st.State)
	disconnectedAt := st.LastDisconnectedAt
	require.Equal(t, st.LastSubscribedAt, disconnectedAt, "the disconnection is registered at the last alive")

	// The connection drops; what is published meanwhile never reaches the session.
	link.drop()
	require.Equal(t, feedtest.CallConnectionDown, global.RequireNext(t).Kind)
	publish(300)
	require.NoError(t, link.flush(ctx))
	link.restore()
	require.Equal(t, "connection up on session 0 (all messages)", global.RequireNext(t).String())

	// Alives resume: a recovery from the disconnection.
	alive()
	second := global.RequireNext(t)
	require.Equal(t, feedtest.CallRecoveryInitiated, second.Kind, second.String())
	id2 := second.Recovery.RequestID
	require.Greater(t, id2, id1)
	awaitWrongSent()
	reqs := sim.RecoveryRequests()
	require.Len(t, reqs, 2)
	assert.Equal(t, disconnectedAt.UnixMilli(), reqs[1].After.UnixMilli(), "recovered from last_disconnected_at")
	assert.Equal(t, node, reqs[1].Node)

	// Live traffic goes on beside the replay, which the listener holds; the feed's
	// snapshot_complete arrives (after the wrong one, which was ignored) and completes the
	// recovery; the up waits.
	// The listener is held here, so SDK.Flush, which waits for it, cannot be used: the
	// test waits for the manager's counters instead.
	publish(100)
	require.NoError(t, feedkit.WaitFor(ctx, func() bool { return sdk.Stats().Recovery.RecoveriesCompleted == 2 }))
	assert.GreaterOrEqual(t, sdk.Stats().Recovery.SnapshotsIgnored, uint64(2), "both wrong snapshot_completes were ignored")
	require.NoError(t, feedkit.WaitFor(ctx, func() bool { return sdk.Stats().Global.Held == 1 }))
	global.RequireNone(t)
	openGate()
	assert.Equal(t, "producer 1 up (ReturnedFromInactivity): replay tasks pending 0", global.RequireNext(t).String())
	assert.Equal(t, deferredBefore+1, sdk.Stats().Global.Deferred, "the up was deferred")

	// Nothing lost: every event message the live stream carried was received, live or
	// replayed, and nothing was received that was not sent.
	require.NoError(t, link.flush(ctx))
	sent := map[string]bool{}
	for _, s := range sim.Sent() {
		if !s.Replay && !s.Key.Type.IsSystem() {
			sent[identity(s.Message)] = true
		}
	}
	require.Len(t, sent, 600, "every message of the live stream has a timestamp of its own")
	require.NoError(t, link.settle(ctx, sdk, func() bool { return len(missing(sent, rec)) == 0 }), "missing %v", missing(sent, rec))
	for _, m := range rec.Messages() {
		assert.True(t, sent[identity(m)], "received but not sent: %s", identity(m))
	}
	assert.Empty(t, rec.Unparsable())
	global.RequireNone(t)
	requireObservedAsCounted(t, sdk, obs, rec, global)
}

// requireObservedAsCounted holds what the SDK told its Observer against what its Stats,
// the listener and the global listener counted: every message, call, status change,
// alive, recovery and request told once.
func requireObservedAsCounted(t *testing.T, sdk *feedkit.SDK, obs *countingObserver, rec *feedtest.Recorder, global *feedtest.GlobalRecorder) {
	t.Helper()
	require.NoError(t, sdk.Flush(t.Context()))
	st, got := sdk.Stats(), obs.totals()
	var received uint64
	for _, s := range st.Sessions {
		received += s.Received
	}
	assert.Equal(t, received, got.Received, "messages received")
	assert.Equal(t, uint64(len(rec.Unparsable())), got.Unparsable, "messages unparsable")
	var calls uint64
	for _, n := range got.Calls {
		calls += n
	}
	assert.Equal(t, uint64(len(rec.Messages())+len(rec.Unparsable())), calls, "listener calls")
	assert.Equal(t, st.Recovery.Alives, got.Alives, "alives")
	assert.Equal(t, st.Recovery.RecoveriesRequested+st.Recovery.EventRecoveriesRequested, got.Requests[recovery.RequestAccepted], "recoveries accepted")
	assert.Equal(t, st.Recovery.RequestsRateLimited, got.Requests[recovery.RequestRateLimited], "requests rate limited")
	assert.Equal(t, st.Recovery.RequestsFailed, got.Requests[recovery.RequestFailed], "requests failed")
	assert.Equal(t, st.Recovery.RecoveriesCompleted+st.Recovery.EventRecoveriesCompleted, got.Ended[recovery.RecoveryCompleted], "recoveries completed")
	assert.Equal(t, st.Global.Deferred, got.UpsHeld, "ups held back")
	assert.Equal(t, st.Global.Released, got.UpsReleased, "ups released")
	if st.API != nil {
		assert.Equal(t, st.API.Requests, got.APIRequests, "API requests")
		assert.Equal(t, st.API.Held, got.APIHeld, "API requests held")
	}
	if st.Transport != nil {
		assert.Equal(t, st.Transport.Connects, got.LinkUps, "links made")
		assert.Equal(t, st.Transport.ConnectionDrops, got.LinkDowns, "links lost")
		assert.Equal(t, st.Transport.FailedAttempts, got.LinkFails, "attempts failed")
	}
	var told []string
	for _, c := range global.Calls() {
		if c.Kind == feedtest.CallProducerStatus {
			told = append(told, feedtest.GlobalCall{Kind: c.Kind, Status: c.Status}.String())
		}
	}
	var observed []string
	for _, s := range got.Statuses {
		observed = append(observed, feedtest.GlobalCall{Kind: feedtest.CallProducerStatus, Status: s}.String())
	}
	assert.Equal(t, told, observed, "status changes, in order")
}

// identity names a message by what the feed put in it.
func identity(m feed.Message) string {
	h := m.MessageHeader()
	return fmt.Sprintf("%s %s %d", h.Event, m.Type(), h.Timestamp.UnixMilli())
}

func missing(sent map[string]bool, rec *feedtest.Recorder) []string {
	got := map[string]bool{}
	for _, m := range rec.Messages() {
		got[identity(m)] = true
	}
	var out []string
	for id := range sent {
		if !got[id] {
			out = append(out, id)
		}
	}
	return out
}

// delivery is the SDK's delivery for a test run with threads workers: serial for 0.
func delivery(threads int) *concurrent.Config {
	if threads == 0 {
		return nil
	}
	return &concurrent.Config{Threads: threads}
}
