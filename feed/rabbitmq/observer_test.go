package rabbitmq_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/rabbitmq"
	"github.com/feedkit/feedkit/internal/testenv"
)

// linkObserver counts what a Transport tells its Observer.
type linkObserver struct {
	mu                sync.Mutex
	ups, downs, fails uint64
	downCauses        []error
	failCauses        []error
}

func (o *linkObserver) TransportLinkUp() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ups++
}

func (o *linkObserver) TransportLinkDown(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.downs++
	o.downCauses = append(o.downCauses, err)
}

func (o *linkObserver) TransportAttemptFailed(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.fails++
	o.failCauses = append(o.failCauses, err)
}

// requireAsStats fails t unless o was told as many links made and lost and attempts
// failed as tr's Stats count, and as many as given.
func (o *linkObserver) requireAsStats(t *testing.T, tr *rabbitmq.Transport, ups, downs, fails uint64) {
	t.Helper()
	st := tr.Stats()
	o.mu.Lock()
	defer o.mu.Unlock()
	assert.Equal(t, st.Connects, o.ups, "links made")
	assert.Equal(t, st.ConnectionDrops, o.downs, "links lost")
	assert.Equal(t, st.FailedAttempts, o.fails, "attempts failed")
	require.Equal(t, []uint64{ups, downs, fails}, []uint64{o.ups, o.downs, o.fails}, "links made, lost, attempts failed")
}

// The Observer is told of each failed attempt (Subscribe's first one included), each
// link made and each link lost, as Stats counts them: through a broker down at start,
// then up, then closing the connection.
func TestObserverIsToldOfLinksAndFailedAttempts(t *testing.T) {
	b := newBroker(t)
	proxy, cfg := b.proxied(t)
	require.NoError(t, proxy.Refuse())
	clk := clocktest.NewFake(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	const delay = time.Second
	obs := &linkObserver{}
	cfg.Clock, cfg.Observer = clk, obs
	cfg.ReconnectDelay, cfg.MaxReconnectDelay = delay, delay
	tr := b.transport(t, cfg)
	r := feedtest.NewReceiverRecorder()
	sub, err := tr.Subscribe(t.Context(), []string{"#"}, r)
	require.NoError(t, err)
	t.Cleanup(func() {
		r.Release()
		require.NoError(t, sub.Close(context.Background()))
	})

	clk.BlockUntil(1) // Subscribe's attempt failed; the transport waits to retry
	obs.requireAsStats(t, tr, 0, 0, 1)
	retry, _ := clk.Next()
	clk.Set(retry)
	clk.BlockUntil(1) // the first retry failed too
	obs.requireAsStats(t, tr, 0, 0, 2)

	require.NoError(t, proxy.Accept())
	retry, _ = clk.Next()
	clk.Set(retry)
	expectUp(t, r)
	obs.requireAsStats(t, tr, 1, 0, 2)

	require.Equal(t, 1, testenv.CloseAMQPConnections(t, b.name, "feedkit test: observer"))
	cause := expectDown(t, r)
	clk.BlockUntil(1) // the transport waits to reconnect
	obs.requireAsStats(t, tr, 1, 1, 2)
	clk.Advance(delay)
	expectUp(t, r)
	publishAndReceive(t, b.publisher(t), r, 1)
	obs.requireAsStats(t, tr, 2, 1, 2)

	obs.mu.Lock()
	defer obs.mu.Unlock()
	assert.Equal(t, cause, obs.downCauses[0], "the observer is told the cause the receiver is")
	assert.ErrorContains(t, obs.downCauses[0], "CONNECTION_FORCED")
	assert.ErrorContains(t, obs.failCauses[0], "(will retry)")
	assert.ErrorContains(t, obs.failCauses[1], "(attempt 1)")
}
