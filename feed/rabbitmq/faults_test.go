package rabbitmq_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/rabbitmq"
	"github.com/feedkit/feedkit/internal/faultproxy"
)

// proxied puts a fault-injecting proxy between the test's transport and the broker; the
// returned config dials the proxy.
func (b broker) proxied(t *testing.T) (*faultproxy.Proxy, rabbitmq.Config) {
	t.Helper()
	u, err := url.Parse(b.url)
	require.NoError(t, err)
	p, err := faultproxy.New(u.Host)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	u.Host = p.Addr()
	cfg := b.config(t)
	cfg.URL = u.String()
	return p, cfg
}

// publishAndReceive publishes one message for match id and fails t unless it is r's next
// call.
func publishAndReceive(t *testing.T, pub *rabbitmq.Publisher, r *feedtest.ReceiverRecorder, id int64) {
	t.Helper()
	key, body := betStop(id)
	require.NoError(t, pub.Publish(t.Context(), key, body))
	require.NoError(t, pub.Flush(t.Context()))
	expectReceive(t, r, key)
}

func TestBrokerDownAtStart(t *testing.T) {
	b := newBroker(t)
	proxy, cfg := b.proxied(t)
	require.NoError(t, proxy.Refuse())
	clk := clocktest.NewFake(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	cfg.Clock = clk
	// Every wait within (delay/2, delay]. The clock is moved to each retry's instant and
	// no further: the next retry, set after a jittered wait while the clock passes this
	// one, may fall due before a whole delay has passed.
	const delay = time.Second
	cfg.ReconnectDelay, cfg.MaxReconnectDelay = delay, delay
	tr := b.transport(t, cfg)
	r := feedtest.NewReceiverRecorder()
	sub, err := tr.Subscribe(t.Context(), []string{"#"}, r)
	require.NoError(t, err, "an unreachable broker is no error at start: the transport retries")
	t.Cleanup(func() { require.NoError(t, sub.Close(context.Background())) })

	// Two more refused attempts, each after a backoff wait on the clock.
	// Each attempt's error is the last one, stamped with the clock's time of the attempt:
	// after the previous one, at the latest the clock's time now.
	var prevErrAt time.Time
	for attempt := 1; attempt <= 2; attempt++ {
		clk.BlockUntil(1)
		st := tr.Stats()
		require.Equal(t, uint64(attempt), st.FailedAttempts)
		assert.Equal(t, uint64(attempt-1), st.ReconnectAttempts, "the first attempt is Subscribe's")
		assert.True(t, st.LastErrorAt.After(prevErrAt) && !st.LastErrorAt.After(clk.Now()), "last error at %v", st.LastErrorAt)
		prevErrAt = st.LastErrorAt
		retry, _ := clk.Next()
		clk.Set(retry)
	}
	clk.BlockUntil(1)
	st := tr.Stats()
	assert.Equal(t, uint64(3), st.FailedAttempts)
	assert.Equal(t, uint64(2), st.ReconnectAttempts)
	assert.Zero(t, st.Connects)
	assert.Zero(t, st.Connected)
	assert.Contains(t, st.LastError, "(attempt 2)")
	r.RequireNone(t) // no connection change while the broker was never reached

	require.NoError(t, proxy.Accept()) // the broker is up
	clk.Advance(delay)
	expectUp(t, r)
	publishAndReceive(t, b.publisher(t), r, 1)
	st = tr.Stats()
	assert.Equal(t, uint64(1), st.Connects)
	assert.Equal(t, int64(1), st.Connected)
	assert.Equal(t, uint64(3), st.ReconnectAttempts, "two failed, the third made the link")
	assert.Equal(t, uint64(3), st.FailedAttempts)
	_, body := betStop(1)
	assert.Equal(t, uint64(1), st.Delivered)
	assert.Equal(t, uint64(len(body)), st.Bytes)
}

func TestReconnectAfterANetworkReset(t *testing.T) {
	b := newBroker(t)
	proxy, cfg := b.proxied(t)
	tr := b.transport(t, cfg)
	r := feedtest.NewReceiverRecorder()
	subscribeAll(t, tr, r)
	pub := b.publisher(t)
	publishAndReceive(t, pub, r, 1)

	proxy.Cut()
	down := expectDown(t, r)
	assert.Zero(t, tr.Stats().Connected, "told down once the link is gone")
	expectUp(t, r)
	publishAndReceive(t, pub, r, 2)
	st := tr.Stats()
	assert.Equal(t, uint64(2), st.Connects)
	assert.Equal(t, int64(1), st.Connected)
	assert.Equal(t, uint64(1), st.ConnectionDrops)
	// The broker is up throughout: each failed attempt (if the reset outlived one) is
	// followed by another, and the last makes the link.
	assert.Equal(t, st.FailedAttempts+1, st.ReconnectAttempts)
	if st.FailedAttempts == 0 {
		assert.Contains(t, st.LastError, down.Error(), "the loss is the last error")
	}
	_, b1 := betStop(1)
	_, b2 := betStop(2)
	assert.Equal(t, uint64(2), st.Delivered)
	assert.Equal(t, uint64(len(b1)+len(b2)), st.Bytes)
}

// TestSilentBrokerIsDetectedByHeartbeats freezes the network without closing it: only
// the missing heartbeats tell the transport the broker is gone.
func TestSilentBrokerIsDetectedByHeartbeats(t *testing.T) {
	b := newBroker(t)
	proxy, cfg := b.proxied(t)
	cfg.Heartbeat = time.Second
	tr := b.transport(t, cfg)
	r := feedtest.NewReceiverRecorder()
	subscribeAll(t, tr, r)

	proxy.Freeze()
	expectDown(t, r) // three missed heartbeats end the connection
	proxy.Thaw()
	expectUp(t, r)
	publishAndReceive(t, b.publisher(t), r, 1)
}

// TestCloseIsPromptInEveryState closes subscriptions caught in each state of the
// reconnect loop; each Close must return well before any of the transport's timeouts.
// Those are set to a minute or more below, so that the bound on Close can be generous: a
// slow machine does not reach it, a Close that waits for a timeout does.
func TestCloseIsPromptInEveryState(t *testing.T) {
	b := newBroker(t)
	closeWithin := func(t *testing.T, sub interface{ Close(context.Context) error }) {
		t.Helper()
		// Far below DialTimeout, the heartbeat timeouts and the reconnect delays below.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		require.NoError(t, sub.Close(ctx), "Close returned before its context ended")
	}

	t.Run("waiting to reconnect", func(t *testing.T) {
		proxy, cfg := b.proxied(t)
		require.NoError(t, proxy.Refuse())
		cfg.ReconnectDelay, cfg.MaxReconnectDelay = time.Hour, time.Hour
		sub, err := b.transport(t, cfg).Subscribe(t.Context(), []string{"#"}, feedtest.NewReceiverRecorder())
		require.NoError(t, err)
		closeWithin(t, sub)
	})
	t.Run("mid-handshake", func(t *testing.T) {
		proxy, cfg := b.proxied(t)
		cfg.DialTimeout = time.Hour
		cfg.Heartbeat = time.Minute
		cfg.ReconnectDelay = time.Millisecond
		r := feedtest.NewReceiverRecorder()
		sub, err := b.transport(t, cfg).Subscribe(t.Context(), []string{"#"}, r)
		require.NoError(t, err)
		expectUp(t, r)
		proxy.Freeze()
		proxy.Cut() // the transport reconnects into a network that forwards nothing
		expectDown(t, r)
		require.NoError(t, proxy.WaitAccepted(waitCtx(t), 2), "the reconnection is under way")
		closeWithin(t, sub)
	})
	t.Run("consuming from a silent broker", func(t *testing.T) {
		proxy, cfg := b.proxied(t)
		cfg.Heartbeat = time.Minute // three of them before a silent broker is given up
		r := feedtest.NewReceiverRecorder()
		sub, err := b.transport(t, cfg).Subscribe(t.Context(), []string{"#"}, r)
		require.NoError(t, err)
		expectUp(t, r)
		proxy.Freeze() // the graceful AMQP close gets no answer
		closeWithin(t, sub)
	})
}

// TestHandshakeStallIsRetriedNotRefused freezes the network at the first connection: the
// handshake times out, which amqp091-go reports as bad credentials. Subscribe must see a
// network failure, worth retrying, and connect once the network is back.
func TestHandshakeStallIsRetriedNotRefused(t *testing.T) {
	b := newBroker(t)
	proxy, cfg := b.proxied(t)
	cfg.DialTimeout = 500 * time.Millisecond
	proxy.Freeze()
	r := feedtest.NewReceiverRecorder()
	sub, err := b.transport(t, cfg).Subscribe(t.Context(), []string{"#"}, r)
	require.NoError(t, err, "a stalled handshake is not a refusal")
	t.Cleanup(func() { require.NoError(t, sub.Close(context.Background())) })
	proxy.Thaw()
	expectUp(t, r)
}

// TestPublisherOnASilentNetwork fills the socket of a publisher whose network went
// silent: Publish gives up when its context ends, and Close returns when its own does.
func TestPublisherOnASilentNetwork(t *testing.T) {
	b := newBroker(t)
	proxy, cfg := b.proxied(t)
	pub, err := rabbitmq.NewPublisher(t.Context(), cfg)
	require.NoError(t, err)
	proxy.Freeze()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	body := make([]byte, 64<<10)
	for err == nil { // until the socket's buffers are full and a write blocks
		err = pub.Publish(ctx, "hi.-.live.bet_stop.1.sr:match.1.-", body)
	}
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Error(t, pub.Publish(t.Context(), "hi.-.live.bet_stop.1.sr:match.1.-", body), "the publisher has failed for good")
	closeCtx, cancelClose := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancelClose()
	done := make(chan error, 1)
	go func() { done <- pub.Close(closeCtx) }()
	select {
	case err := <-done:
		assert.Error(t, err, "the first failure")
	case <-time.After(waitTimeout):
		t.Fatal("Close did not return")
	}
}
