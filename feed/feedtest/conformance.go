package feedtest

import (
	"context"
	"testing"

	"github.com/feedkit/feedkit/feed"
)

// TransportHarness is a feed.Transport under test, with what TestTransport needs around
// it: a way to publish to the exchange the transport's queues are bound to, and a way to
// cut the transport's connections.
type TransportHarness struct {
	// Transport is the transport under test. It stamps ReceivedAt with the wall clock
	// (the default of Broker and of the RabbitMQ transport).
	Transport feed.Transport
	// Publisher publishes to the exchange the transport's queues are bound to; no one
	// else publishes there. Its Publish returns once the broker has routed the message
	// to the queues bound at that moment (a RabbitMQ publisher waits for the broker's
	// confirmation), and it does not wait on a busy receiver for the few hundred
	// messages a test holds back (Broker's default queue capacity is ample).
	Publisher Publisher
	// Drop cuts the connection of every subscription of Transport, the way a network
	// failure would, and keeps them from connecting again until Restore. It returns
	// without waiting for the subscriptions to notice.
	Drop func()
	// Restore lets the subscriptions connect again.
	Restore func()
}

// TestTransport runs the conformance suite of feed.Transport: it checks every promise
// the interface and its Receiver and Subscription document, so that package feedtest's
// Broker, which stands in for RabbitMQ in the kit's tests and in yours, and the RabbitMQ
// transport of package feed/rabbitmq keep the same behaviour. A new transport calls it
// from a test:
//
//	func TestTransportConformance(t *testing.T) {
//		feedtest.TestTransport(t, func(t *testing.T) feedtest.TransportHarness {
//			b := feedtest.NewBroker(feedtest.BrokerOptions{})
//			t.Cleanup(b.Close)
//			return feedtest.TransportHarness{Transport: b, Publisher: b,
//				Drop: func() { b.Disconnect(nil) }, Restore: b.Reconnect}
//		})
//	}
//
// newTransport must return a connected transport of its own on every call, with an
// exchange of its own, and release what it holds when t ends. Drop and Restore are
// called from the test's goroutine only, so they may fail t.
//
// The suite never sleeps: it learns that a message did not arrive from a later one
// that did (a subscription keeps the publishing order of one publisher), and every wait
// is bounded by a minute, which only a hang reaches.
func TestTransport(t *testing.T, newTransport func(t *testing.T) TransportHarness) {
	t.Run("SubscribeRefusesBadArguments", func(t *testing.T) { testSubscribeArguments(t, newTransport(t)) })
	t.Run("SubscribeWithAnEndedContext", func(t *testing.T) { testSubscribeEndedContext(t, newTransport(t)) })
	t.Run("ContextBoundsSubscribeOnly", func(t *testing.T) { testSubscribeContextBoundsCallOnly(t, newTransport(t)) })
	t.Run("BoundWhenSubscribeReturns", func(t *testing.T) { testBoundWhenSubscribeReturns(t, newTransport(t)) })
	t.Run("RoutesByBindingKeys", func(t *testing.T) { testRouting(t, newTransport(t)) })
	t.Run("DeliversOncePerSubscription", func(t *testing.T) { testOncePerSubscription(t, newTransport(t)) })
	t.Run("KeepsPublishingOrderPerSubscription", func(t *testing.T) { testOrder(t, newTransport(t)) })
	t.Run("HandsOverBodiesWhole", func(t *testing.T) { testBodies(t, newTransport(t)) })
	t.Run("GivesEverySubscriptionItsOwnBody", func(t *testing.T) { testOwnBodies(t, newTransport(t)) })
	t.Run("StampsReceivedAtWhenHandedOver", func(t *testing.T) { testReceivedAt(t, newTransport(t)) })
	t.Run("BlockedReceiverLosesNothing", func(t *testing.T) { testBackPressure(t, newTransport(t)) })
	t.Run("CloseStopsDeliveries", func(t *testing.T) { testCloseStops(t, newTransport(t)) })
	t.Run("CloseWaitsForReceive", func(t *testing.T) { testCloseWaitsForReceive(t, newTransport(t)) })
	t.Run("ConnectionLoss", func(t *testing.T) { testConnectionLoss(t, newTransport(t)) })
	t.Run("ConnectionLossWhileReceiving", func(t *testing.T) { testLossWhileReceiving(t, newTransport(t)) })
	t.Run("SubscribeWhileDown", func(t *testing.T) { testSubscribeWhileDown(t, newTransport(t)) })
	t.Run("CloseWhileDown", func(t *testing.T) { testCloseWhileDown(t, newTransport(t)) })
	t.Run("NoOldMessageAfterConnectionDown", func(t *testing.T) { testNoOldMessageAfterDown(t, newTransport(t)) })
}

// markerKey is a routing key no test binds by accident: a subscription bound to it as
// well learns from the marker's arrival that nothing published before is on its way.
const markerKey = "feedtest-marker"

// subscribe subscribes p with bindings and closes the subscription when t ends, after
// releasing p so that Close cannot wait on a held Receive.
func subscribe(t *testing.T, h TransportHarness, p *probe, bindings ...string) feed.Subscription {
	t.Helper()
	sub, err := h.Transport.Subscribe(t.Context(), bindings, p)
	if err != nil {
		t.Fatalf("Subscribe(%q): %v", bindings, err)
	}
	if sub == nil {
		t.Fatalf("Subscribe(%q) returned neither a subscription nor an error", bindings)
	}
	t.Cleanup(func() {
		p.Release()
		closeSub(t, p, sub)
	})
	return sub
}

// closeSub closes sub within the hang guard; from then on p must not be called.
func closeSub(t *testing.T, p *probe, sub feed.Subscription) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	if err := sub.Close(ctx); err != nil {
		t.Errorf("%s: Close: %v", p.name, err)
		return
	}
	p.closedNow()
}

// subscribeUp subscribes p with bindings and waits for its first ConnectionUp.
func subscribeUp(t *testing.T, h TransportHarness, p *probe, bindings ...string) feed.Subscription {
	t.Helper()
	sub := subscribe(t, h, p, bindings...)
	p.expectUp(t)
	return sub
}

// publish publishes body with key, failing t on error.
func publish(t *testing.T, h TransportHarness, key, body string) {
	t.Helper()
	publishBytes(t, h, key, []byte(body))
}

func publishBytes(t *testing.T, h TransportHarness, key string, body []byte) {
	t.Helper()
	if err := h.Publisher.Publish(t.Context(), key, body); err != nil {
		t.Fatalf("Publish(%s): %v", key, err)
	}
}

// sendMarker publishes the marker and waits until every probe has received it, which
// proves each has received whatever was published to it before.
func sendMarker(t *testing.T, h TransportHarness, ps ...*probe) {
	t.Helper()
	publish(t, h, markerKey, "marker")
	for _, p := range ps {
		p.expectMessage(t, markerKey, "marker")
	}
}
