package otelfeedkit_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/rabbitmq"
	"github.com/feedkit/feedkit/internal/testenv"
	"github.com/feedkit/feedkit/recovery"
)

// On RabbitMQ, WatchSDK reports the transport's levels too: the link up, and the bytes
// of every body received, as the transport's Stats count them. It needs
// FEEDKIT_AMQP_URL (./scripts/test.sh starts a broker).
func TestWatchSDKOnRabbitMQ(t *testing.T) {
	url := testenv.AMQPVhost(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	m, reader := newMetrics(t)
	rec := feedtest.NewRecorder()
	sdk, err := feedkit.New(feedkit.Config{
		AMQP:     &rabbitmq.Config{URL: url, DeclareExchange: true, ConnectionName: "otelfeedkit-test"},
		Recovery: recovery.Config{Disabled: true},
		Observer: m,
	})
	require.NoError(t, err)
	require.NoError(t, sdk.AddSession(feed.AllMessages, rec))
	t.Cleanup(func() { require.NoError(t, sdk.Close(context.Background())) })
	require.NoError(t, sdk.Open(ctx))
	reg, err := m.WatchSDK(sdk)
	require.NoError(t, err)
	t.Cleanup(func() { _ = reg.Unregister() })

	pub, err := rabbitmq.NewPublisher(ctx, rabbitmq.Config{URL: url, DeclareExchange: true, ConnectionName: "otelfeedkit-test-publisher"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = pub.Close(context.Background()) })
	var bytes int
	const n = 10
	for id := 1; id <= n; id++ {
		body := fmt.Appendf(nil, `<bet_stop event_id="sr:match:%d" product="1" timestamp="%d"/>`, id, id)
		require.NoError(t, pub.Publish(ctx, fmt.Sprintf("hi.-.live.bet_stop.1.sr:match.%d.-", id), body))
		bytes += len(body)
	}
	require.NoError(t, pub.Flush(ctx))
	require.NoError(t, rec.Wait(ctx, n))

	got := collect(t, reader)
	st := sdk.Stats().Transport
	require.NotNil(t, st)
	require.Equal(t, uint64(bytes), st.Bytes, "every body counted once received")
	assert.Equal(t, []point{{attrs: []string{}, value: 1}}, points(got["feedkit.transport.connected"]))
	assert.Equal(t, []point{{attrs: []string{}, value: float64(bytes)}}, points(got["feedkit.transport.received"]))
	assert.Equal(t, "By", got["feedkit.transport.received"].Unit)
	assert.NotContains(t, got, "feedkit.cache.entries", "no API, no names")
}
