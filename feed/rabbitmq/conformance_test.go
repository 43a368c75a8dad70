package rabbitmq_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/rabbitmq"
)

// TestTransportConformance holds the transport to the promises of feed.Transport, which
// feedtest's Broker, its stand-in in the kit's tests, is held to by the same suite. Each
// scenario has an exchange of its own on the test's virtual host, and its transport
// reaches the broker through a fault proxy: Drop makes the proxy refuse connections
// (resetting those it carries) until Restore, so an outage lasts as long as the
// scenario needs, however slow the machine. The publisher goes straight to the broker.
func TestTransportConformance(t *testing.T) {
	b := newBroker(t)
	feedtest.TestTransport(t, func(t *testing.T) feedtest.TransportHarness {
		exchange := "feedtest-" + unsafeName.ReplaceAllString(t.Name(), "-")
		proxy, cfg := b.proxied(t)
		cfg.Exchange = exchange
		// A small prefetch window, so that the broker holds what a blocked receiver has
		// not taken; quick reconnections once the proxy accepts again.
		cfg.Prefetch = 16
		cfg.MaxReconnectDelay = 100 * time.Millisecond
		pub, err := rabbitmq.NewPublisher(t.Context(), rabbitmq.Config{URL: b.url, Exchange: exchange,
			DeclareExchange: true, ConnectionName: b.name + "-publisher"})
		require.NoError(t, err)
		t.Cleanup(func() { _ = pub.Close(context.Background()) })
		return feedtest.TransportHarness{
			Transport: b.transport(t, cfg),
			Publisher: confirmed{pub},
			Drop:      func() { require.NoError(t, proxy.Refuse()) },
			Restore:   func() { require.NoError(t, proxy.Accept()) },
		}
	})
}

// confirmed publishes a message and waits for the broker's confirmation, which comes
// once the broker has routed it: a message published while a subscription is down is
// then routed while its queue is gone, not after the new one is bound.
type confirmed struct{ *rabbitmq.Publisher }

func (c confirmed) Publish(ctx context.Context, key string, body []byte) error {
	if err := c.Publisher.Publish(ctx, key, body); err != nil {
		return err
	}
	return c.Flush(ctx)
}
