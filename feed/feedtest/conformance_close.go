package feedtest

import (
	"context"
	"errors"
	"testing"
)

// testCloseStops: once Close has returned, the receiver is called no more, whatever
// is published and whatever becomes of the connection; Close again is harmless.
func testCloseStops(t *testing.T, h TransportHarness) {
	p, w := newProbe(t, "closed"), newProbe(t, "witness")
	sub := subscribeUp(t, h, p, "#")
	subscribeUp(t, h, w, "#")
	publish(t, h, suiteLiveKey, "before")
	p.expectMessage(t, suiteLiveKey, "before")
	w.expectMessage(t, suiteLiveKey, "before")

	closeSub(t, p, sub)
	closeSub(t, p, sub) // a second Close returns nil at once
	publish(t, h, suiteLiveKey, "after")
	w.expectMessage(t, suiteLiveKey, "after")
	h.Drop()
	w.expectDown(t)
	h.Restore()
	w.expectUp(t)
	publish(t, h, suiteLiveKey, "reconnected")
	w.expectMessage(t, suiteLiveKey, "reconnected")
	p.noCallsYet(t)
}

// testCloseWaitsForReceive: Close returns once the transport will call the receiver no
// more, so not while a Receive is running; with a context that ends first, it returns
// the context's error, and a later Close completes once Receive has returned.
func testCloseWaitsForReceive(t *testing.T, h TransportHarness) {
	p := newProbe(t, "subscriber")
	sub := subscribeUp(t, h, p, "#")
	p.Hold()
	publish(t, h, suiteLiveKey, "m1")
	p.expectMessage(t, suiteLiveKey, "m1") // held in Receive
	publish(t, h, suiteLiveKey, "m2")

	ended, cancel := context.WithCancel(t.Context())
	cancel()
	if err := sub.Close(ended); !errors.Is(err, context.Canceled) {
		t.Errorf("Close with an ended context while Receive runs returned %v, want context.Canceled", err)
	}
	closed := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
		defer cancel()
		closed <- sub.Close(ctx)
	}()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while Receive was running", err)
	default:
	}
	p.Release()
	if err := <-closed; err != nil {
		t.Fatalf("Close after Receive returned: %v", err)
	}
	p.closedNow()
}

// testCloseWhileDown: a subscription whose connection is down closes, and is not
// reconnected when the broker is back.
func testCloseWhileDown(t *testing.T, h TransportHarness) {
	p, w := newProbe(t, "closed"), newProbe(t, "witness")
	sub := subscribeUp(t, h, p, "#")
	subscribeUp(t, h, w, "#")
	h.Drop()
	p.expectDown(t)
	w.expectDown(t)
	closeSub(t, p, sub)
	h.Restore()
	w.expectUp(t)
	publish(t, h, suiteLiveKey, "m")
	w.expectMessage(t, suiteLiveKey, "m")
	p.noCallsYet(t)
}
