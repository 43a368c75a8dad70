package feedtest_test

import (
	"testing"

	"github.com/feedkit/feedkit/feed/feedtest"
)

// TestBrokerConformance holds the Broker to the promises of feed.Transport, which the
// RabbitMQ transport is held to by the same suite: the double behaves as the real thing.
func TestBrokerConformance(t *testing.T) {
	feedtest.TestTransport(t, func(t *testing.T) feedtest.TransportHarness {
		b := feedtest.NewBroker(feedtest.BrokerOptions{})
		t.Cleanup(b.Close)
		return feedtest.TransportHarness{Transport: b, Publisher: b,
			Drop: func() { b.Disconnect(nil) }, Restore: b.Reconnect}
	})
}
