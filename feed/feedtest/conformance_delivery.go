package feedtest

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// testRouting: a queue receives exactly the messages whose routing key matches one of
// its bindings, '*' standing for one word and '#' for zero or more, as RabbitMQ's topic
// exchange decides.
func testRouting(t *testing.T, h TransportHarness) {
	withNode := func(n int) string {
		k, err := feed.ParseRoutingKey(suiteLiveKey)
		if err != nil {
			t.Fatal(err)
		}
		k.Node = feed.Node(n)
		return k.String()
	}
	sevenWords := "hi.-.live.odds_change.1.sr:match.1" // the key without its node segment
	node7 := feed.AllMessages.BindingKeys(feed.Node(7))
	tests := []struct {
		name     string
		bindings []string
		key      string
		routed   bool
	}{
		{"exact key", []string{suiteLiveKey}, suiteLiveKey, true},
		{"other key", []string{suiteLiveKey}, suiteAliveKey, false},
		{"* matches one word", []string{"hi.*.live.odds_change.*.*.*.*"}, suiteLiveKey, true},
		{"* does not match two words", []string{"hi.*.live.odds_change.*.*.*"}, suiteLiveKey, false},
		{"* does not match zero words", []string{"*.hi.-.live.odds_change.1.sr:match.1.-"}, suiteLiveKey, false},
		{"* matches an empty word", []string{"a.*.c"}, "a..c", true},
		{"# matches zero words", []string{"hi.-.live.odds_change.1.sr:match.1.-.#"}, suiteLiveKey, true},
		{"# matches zero words inside", []string{"a.#.c"}, "a.c", true},
		{"# matches many words", []string{"hi.#"}, suiteLiveKey, true},
		{"# inside a pattern", []string{"#.odds_change.#.-"}, suiteLiveKey, true},
		{"# alone matches everything", []string{"#"}, suiteAliveKey, true},
		{"# then * needs a word", []string{"a.#.*"}, "a", false},
		{"words are compared whole", []string{"h.#"}, suiteLiveKey, false},
		{"words are compared with their case", []string{"HI.#"}, suiteLiveKey, false},
		{"one binding of several matches", []string{"lo.#", "#.alive.#", "hi.#"}, suiteLiveKey, true},
		{"no binding of several matches", []string{"lo.#", "#.alive.#"}, suiteLiveKey, false},
		// The bindings of a session of node 7: messages for no node or node 7, with or
		// without the node segment, but not another node's recovery replies.
		{"session, no node", node7, suiteLiveKey, true},
		{"session, seven words", node7, sevenWords, true},
		{"session, its node", node7, withNode(7), true},
		{"session, another node", node7, withNode(8), false},
		{"live session, alive", feed.LiveMessagesOnly.BindingKeys(feed.NodeID{}), suiteAliveKey, true},
		{"prematch session, live odds", feed.PrematchMessagesOnly.BindingKeys(feed.NodeID{}), suiteLiveKey, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProbe(t, "subscriber")
			subscribeUp(t, h, p, append(tt.bindings, markerKey)...)
			publish(t, h, tt.key, "m")
			if tt.routed {
				p.expectMessage(t, tt.key, "m")
			}
			sendMarker(t, h, p)
		})
	}
}

// testOncePerSubscription: a message reaches a queue once however many of its bindings
// match, and every queue it matches.
func testOncePerSubscription(t *testing.T, h TransportHarness) {
	p := newProbe(t, "three matching bindings")
	subscribeUp(t, h, p, "#", "hi.#", "*.*.*.odds_change.#")
	other := newProbe(t, "one matching binding")
	subscribeUp(t, h, other, "#.sr:match.#", markerKey)

	publish(t, h, suiteLiveKey, "once")
	p.expectMessage(t, suiteLiveKey, "once")
	other.expectMessage(t, suiteLiveKey, "once")
	sendMarker(t, h, p, other) // a second copy would have come before it
}

// testOrder: each subscription receives the messages of one publisher in the order they
// were published, whatever else the publisher sends to other queues meanwhile.
func testOrder(t *testing.T, h TransportHarness) {
	all, hi := newProbe(t, "all"), newProbe(t, "hi only")
	subscribeUp(t, h, all, "#")
	subscribeUp(t, h, hi, "hi.#", markerKey)
	const n = 1000
	key := func(i int) string {
		if i%3 == 0 {
			return suiteLowKey // a third of the traffic goes to the first queue only
		}
		return suiteLiveKey
	}
	for i := range n {
		publish(t, h, key(i), strconv.Itoa(i))
	}
	for i := range n {
		all.expectMessage(t, key(i), strconv.Itoa(i))
		if i%3 != 0 {
			hi.expectMessage(t, key(i), strconv.Itoa(i))
		}
	}
	sendMarker(t, h, all, hi)
}

// testBodies: every body arrives byte for byte with its routing key, whatever its bytes
// and size (an empty one, every byte value, a megabyte), and the transport does not
// reuse a body it has handed over: the bodies are compared once all have arrived.
func testBodies(t *testing.T, h TransportHarness) {
	every := make([]byte, 256)
	for i := range every {
		every[i] = byte(i)
	}
	big := make([]byte, 1<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range big {
		big[i] = byte(rng.Uint32())
	}
	bodies := [][]byte{{}, []byte("x"), every, []byte("\xff\xfe not UTF-8 \xc3\x28"), big, []byte(`<odds_change product="1"/>`)}
	for i := range 200 { // small bodies of many lengths, as the feed sends
		b := make([]byte, i*37%1500)
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		bodies = append(bodies, b)
	}
	p := newProbe(t, "subscriber")
	subscribeUp(t, h, p, "#")
	keys := []string{suiteLiveKey, suiteLowKey, suiteAliveKey}
	for i, b := range bodies {
		publishBytes(t, h, keys[i%len(keys)], b)
	}
	got := make([]feed.Delivery, len(bodies))
	for i := range bodies {
		got[i] = p.expect(t, CallReceive).Delivery
	}
	sendMarker(t, h, p)
	for i, b := range bodies {
		if got[i].RoutingKey != keys[i%len(keys)] {
			t.Errorf("message %d: routing key %q, want %q", i, got[i].RoutingKey, keys[i%len(keys)])
		}
		if !bytes.Equal(got[i].Body, b) {
			t.Errorf("message %d: body of %d bytes differs from the %d bytes published", i, len(got[i].Body), len(b))
		}
	}
}

// testOwnBodies: the body handed to a receiver is its own, for good: changing it
// changes no other subscription's copy of the message, and the publisher may reuse its
// buffer once Publish has returned.
func testOwnBodies(t *testing.T, h TransportHarness) {
	a, b := newProbe(t, "a"), newProbe(t, "b")
	subscribeUp(t, h, a, "#")
	subscribeUp(t, h, b, "#")
	buf := []byte("shared")
	publishBytes(t, h, suiteLiveKey, buf)
	copy(buf, "XXXXXX") // the publisher reuses its buffer, as an AMQP client may
	da := a.expectMessage(t, suiteLiveKey, "shared")
	db := b.expectMessage(t, suiteLiveKey, "shared")
	for i := range da.Body {
		da.Body[i] = 'X' // a session decodes in place; a listener may keep or change the bytes
	}
	if string(db.Body) != "shared" {
		t.Errorf("b's body is %q after a changed its own: the two share their bytes", db.Body)
	}
}

// testReceivedAt: ReceivedAt is when the transport handed the message over, on the wall
// clock: a message that waited while the receiver was busy carries the time it was
// handed over, not the time it was published.
func testReceivedAt(t *testing.T, h TransportHarness) {
	p := newProbe(t, "subscriber")
	subscribeUp(t, h, p, "#")
	p.Hold()
	before := time.Now()
	publish(t, h, suiteLiveKey, "m1")
	d1 := p.expectMessage(t, suiteLiveKey, "m1") // held in Receive
	after := time.Now()
	if d1.ReceivedAt.Before(before) || d1.ReceivedAt.After(after) {
		t.Errorf("m1: ReceivedAt %v is not between the publishing (%v) and its reading (%v)", d1.ReceivedAt, before, after)
	}
	publish(t, h, suiteLiveKey, "m2") // waits for the receiver
	released := time.Now()
	p.Release()
	d2 := p.expectMessage(t, suiteLiveKey, "m2")
	after = time.Now()
	if d2.ReceivedAt.Before(released) || d2.ReceivedAt.After(after) {
		t.Errorf("m2: ReceivedAt %v is not between the receiver's release (%v) and its reading (%v)", d2.ReceivedAt, released, after)
	}
}

// testBackPressure: a receiver that blocks in Receive slows the transport down and
// loses nothing: what was published meanwhile arrives, in order, once it returns.
func testBackPressure(t *testing.T, h TransportHarness) {
	const held = 200
	p := newProbe(t, "subscriber")
	subscribeUp(t, h, p, "#")
	p.Hold()
	publish(t, h, suiteLiveKey, "first")
	p.expectMessage(t, suiteLiveKey, "first") // held in Receive
	for i := range held {
		publish(t, h, suiteLiveKey, strconv.Itoa(i))
	}
	p.noCallsYet(t) // still held: a transport that called on would be calling concurrently
	p.Release()
	for i := range held {
		p.expectMessage(t, suiteLiveKey, strconv.Itoa(i))
	}
	sendMarker(t, h, p)
}
