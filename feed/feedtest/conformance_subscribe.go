package feedtest

import (
	"context"
	"errors"
	"testing"

	"github.com/feedkit/feedkit/feed"
)

// The suite's keys: an event message of the live stream, the same at low priority, and
// a system message.
var (
	suiteLiveKey = feed.RoutingKey{Priority: feed.PriorityHigh, Live: true, Type: feed.MessageOddsChange,
		SportID: 1, Event: feed.MustParseURN("sr:match:1")}.String()
	suiteLowKey = feed.RoutingKey{Priority: feed.PriorityLow, Type: feed.MessageBetStop,
		SportID: 2, Event: feed.MustParseURN("sr:match:2")}.String()
	suiteAliveKey = feed.RoutingKey{Type: feed.MessageAlive}.String()
)

// testSubscribeArguments: Subscribe refuses a call without bindings or without a
// receiver, and returns no subscription.
func testSubscribeArguments(t *testing.T, h TransportHarness) {
	tests := []struct {
		name     string
		bindings []string
		r        feed.Receiver
	}{
		{"nil bindings", nil, newProbe(t, "nil bindings")},
		{"no bindings", []string{}, newProbe(t, "no bindings")},
		{"nil receiver", []string{"#"}, nil},
	}
	for _, tt := range tests {
		if p, ok := tt.r.(*probe); ok {
			p.closedNow() // no call at all is allowed
		}
		sub, err := h.Transport.Subscribe(t.Context(), tt.bindings, tt.r)
		if err == nil {
			t.Errorf("%s: Subscribe returned no error", tt.name)
		}
		if sub != nil {
			t.Errorf("%s: Subscribe returned a subscription with its error %v", tt.name, err)
			_ = sub.Close(context.Background())
		}
	}
}

// testSubscribeEndedContext: Subscribe with a context that has ended returns the
// context's error and no subscription, whether the broker is reachable or not, and
// binds no queue.
func testSubscribeEndedContext(t *testing.T, h TransportHarness) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	refuse := func(name string) {
		t.Helper()
		p := newProbe(t, name)
		p.closedNow() // no call at all is allowed
		sub, err := h.Transport.Subscribe(ctx, []string{"#"}, p)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: Subscribe returned %v, want context.Canceled", name, err)
		}
		if sub != nil {
			t.Errorf("%s: Subscribe returned a subscription with its error %v", name, err)
			_ = sub.Close(context.Background())
		}
	}
	refuse("reachable")
	h.Drop()
	refuse("unreachable")
	h.Restore()

	// Nothing reaches the refused receivers: a witness bound since gets what they would.
	w := newProbe(t, "witness")
	subscribeUp(t, h, w, "#")
	publish(t, h, suiteLiveKey, "m")
	w.expectMessage(t, suiteLiveKey, "m")
}

// testSubscribeContextBoundsCallOnly: the context of Subscribe bounds the subscribing,
// not the subscription, which consumes and reconnects after it has ended.
func testSubscribeContextBoundsCallOnly(t *testing.T, h TransportHarness) {
	ctx, cancel := context.WithCancel(t.Context())
	p := newProbe(t, "subscriber")
	sub, err := h.Transport.Subscribe(ctx, []string{"#"}, p)
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	t.Cleanup(func() { p.Release(); closeSub(t, p, sub) })
	p.expectUp(t)
	cancel()

	publish(t, h, suiteLiveKey, "m1")
	p.expectMessage(t, suiteLiveKey, "m1")
	h.Drop()
	p.expectDown(t)
	h.Restore()
	p.expectUp(t)
	publish(t, h, suiteLiveKey, "m2")
	p.expectMessage(t, suiteLiveKey, "m2")
}

// testBoundWhenSubscribeReturns: with the broker reachable, the queue is bound when
// Subscribe returns: a message published at once reaches it, after ConnectionUp.
func testBoundWhenSubscribeReturns(t *testing.T, h TransportHarness) {
	p := newProbe(t, "subscriber")
	subscribe(t, h, p, "#")
	publish(t, h, suiteLiveKey, "m")
	p.expectUp(t)
	p.expectMessage(t, suiteLiveKey, "m")
	sendMarker(t, h, p)
}
