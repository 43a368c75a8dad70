package feedtest

import (
	"strconv"
	"testing"
)

// testConnectionLoss: a lost connection is reported to every subscription once, with its
// cause; what is published until the connection is back reaches none of them (their
// queues went with it); ConnectionUp reports the queue bound again, with the same
// bindings, and nothing arrives between the loss and the return.
func testConnectionLoss(t *testing.T, h TransportHarness) {
	live, all := newProbe(t, "live"), newProbe(t, "all")
	subscribeUp(t, h, live, "hi.#", markerKey)
	subscribeUp(t, h, all, "#")
	publish(t, h, suiteLiveKey, "m1")
	live.expectMessage(t, suiteLiveKey, "m1")
	all.expectMessage(t, suiteLiveKey, "m1")

	h.Drop()
	live.expectDown(t)
	all.expectDown(t)
	publish(t, h, suiteLiveKey, "lost")
	publish(t, h, suiteLowKey, "lost too")
	h.Restore()
	live.expectUp(t)
	all.expectUp(t)

	publish(t, h, suiteLowKey, "low")
	publish(t, h, suiteLiveKey, "m2")
	all.expectMessage(t, suiteLowKey, "low")
	all.expectMessage(t, suiteLiveKey, "m2")
	live.expectMessage(t, suiteLiveKey, "m2") // bound again with its bindings, not "low"
	sendMarker(t, h, live, all)
}

// testLossWhileReceiving: the connection drops while the receiver is inside Receive and
// more messages wait: the call in progress ends, a run of the waiting messages may
// still arrive (in order, none skipped), then ConnectionDown, and none of them after it.
func testLossWhileReceiving(t *testing.T, h TransportHarness) {
	const waiting = 5
	p := newProbe(t, "subscriber")
	subscribeUp(t, h, p, "#")
	p.Hold()
	publish(t, h, suiteLiveKey, "held")
	p.expectMessage(t, suiteLiveKey, "held")
	for i := range waiting {
		publish(t, h, suiteLiveKey, strconv.Itoa(i))
	}
	h.Drop()
	p.Release()
	arrived := 0
	for c := p.next(t); c.Kind != CallReceiverDown; c = p.next(t) {
		if c.Kind != CallReceive || c.Delivery.RoutingKey != suiteLiveKey || string(c.Delivery.Body) != strconv.Itoa(arrived) {
			t.Fatalf("got %v, want message %d or ConnectionDown", c, arrived)
		}
		arrived++
	}
	t.Logf("%d of the %d waiting messages arrived before ConnectionDown", arrived, waiting)
	publish(t, h, suiteLiveKey, "lost")
	h.Restore()
	p.expectUp(t)
	publish(t, h, suiteLiveKey, "after")
	p.expectMessage(t, suiteLiveKey, "after")
	sendMarker(t, h, p)
}

// testSubscribeWhileDown: with the broker unreachable, Subscribe still returns a
// subscription; it reports nothing (no loss: it never had a connection) until the
// broker is back, then ConnectionUp, and consumes from then on.
func testSubscribeWhileDown(t *testing.T, h TransportHarness) {
	h.Drop()
	p := newProbe(t, "subscriber")
	subscribe(t, h, p, "#")
	publish(t, h, suiteLiveKey, "lost")
	h.Restore()
	p.expectUp(t)
	publish(t, h, suiteLiveKey, "after")
	p.expectMessage(t, suiteLiveKey, "after")
	sendMarker(t, h, p)
}
