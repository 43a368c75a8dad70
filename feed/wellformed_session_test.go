package feed_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// routingKeyFor is a routing key that routes a message of type t to a session that wants
// all messages.
func routingKeyFor(t feed.MessageType) string {
	if t.IsSystem() {
		return "-.-.-." + t.String() + ".-.-.-.-"
	}
	return "hi.-.live." + t.String() + ".1.sr:match.1.-"
}

// Every malformed document of issue 23 reaches OnUnparsableMessage through a Session, with
// its raw body and routing key and the decoder's error; each is counted and reported to
// OnError, and the good messages around them are delivered. A system message whose root
// start tag Peek reads goes to the system handler, which decodes it (recovery.Manager
// gives a malformed one to OnUnparsableMessage); Decode refuses each of those.
func TestSessionGivesMalformedDocumentsToOnUnparsableMessage(t *testing.T) {
	cases := feed.MalformedCases()
	var unparsable, handled []feed.MalformedCase
	events, turnedAway := 0, 0
	for _, c := range cases {
		_, peekErr := feed.Peek(c.Body)
		switch {
		case !c.Type.IsSystem():
			events++
			unparsable = append(unparsable, c)
		case peekErr != nil:
			turnedAway++
			unparsable = append(unparsable, c)
		default:
			handled = append(handled, c)
		}
	}
	require.NotZero(t, turnedAway)
	require.NotEmpty(t, handled)
	broker := newBroker(t, feedtest.BrokerOptions{})
	rec := newRecorder(len(unparsable) + 2)
	sys := &systemRecorder{got: make(chan feed.Event, len(handled))}
	var mu sync.Mutex
	var reported []error
	s := openSession(t, broker, feed.SessionConfig{Listener: rec, System: sys, OnError: func(err error) {
		mu.Lock()
		defer mu.Unlock()
		reported = append(reported, err)
	}})

	good := feedtest.Marshal(&feed.BetStop{Header: feed.Header{Producer: 1, Event: feed.URN{Prefix: "sr", Type: "match", ID: 1},
		Timestamp: time.UnixMilli(1).UTC()}, Groups: "all"})
	ctx := t.Context()
	goodKey := routingKeyFor(feed.MessageBetStop)
	require.NoError(t, broker.Publish(ctx, goodKey, good))
	for _, c := range cases {
		require.NoError(t, broker.Publish(ctx, routingKeyFor(c.Type), c.Body))
	}
	require.NoError(t, broker.Publish(ctx, goodKey, good))
	rec.wait(t)

	assert.Len(t, rec.messages(), 2, "the good messages before and after the malformed ones")
	byBody := map[string]feed.MalformedCase{}
	for _, c := range unparsable {
		byBody[string(c.Body)] = c
	}
	got := rec.Unparsable()
	require.Len(t, got, len(unparsable))
	for _, u := range got {
		c, ok := byBody[string(u.Body)]
		require.True(t, ok, "the raw body is kept: %q", u.Body)
		delete(byBody, string(u.Body))
		assert.Equal(t, routingKeyFor(c.Type), u.RoutingKey, c.Name)
		var de *feed.DecodeError
		require.ErrorAs(t, u.Err, &de, c.Name)
		assert.Contains(t, de.Msg, c.Msg, c.Name)
		assert.Equal(t, c.Offset, de.Offset, c.Name)
		assert.True(t, errors.Is(u.Err, feed.ErrMalformedMessage), c.Name)
	}
	assert.Empty(t, byBody, "each case arrived once")

	byBody = map[string]feed.MalformedCase{}
	for _, c := range handled {
		byBody[string(c.Body)] = c
	}
	for range handled {
		var ev feed.Event
		select {
		case ev = <-sys.got:
		case <-time.After(30 * time.Second):
			t.Fatal("the system handler did not receive every system message")
		}
		c, ok := byBody[string(ev.Body)]
		require.True(t, ok, "%q", ev.Body)
		delete(byBody, string(ev.Body))
		_, err := feed.Decode(c.Type, ev.Body)
		var de *feed.DecodeError
		require.ErrorAs(t, err, &de, c.Name)
		assert.Equal(t, c.Offset, de.Offset, c.Name)
	}

	st := s.Stats()
	assert.Equal(t, uint64(len(cases)+2), st.Received)
	assert.Equal(t, uint64(events+2), st.Events, "event messages go to the dispatcher, which finds them unparsable")
	assert.Equal(t, uint64(turnedAway), st.Unroutable, "system messages Peek refuses are turned away by the session")
	assert.Equal(t, uint64(len(handled)), st.System)
	mu.Lock()
	defer mu.Unlock()
	assert.Len(t, reported, len(unparsable), "each unparsable message is reported to OnError")
}

// The dispatcher counts each malformed event message as unparsable, once.
func TestDispatcherCountsMalformedDocumentsAsUnparsable(t *testing.T) {
	rec := feedtest.NewRecorder()
	d, err := feed.NewSerialDispatcher(rec, feed.DispatcherOptions{})
	require.NoError(t, err)
	n := 0
	for _, c := range feed.MalformedCases() {
		if c.Type.IsSystem() {
			continue
		}
		key, err := feed.ParseRoutingKey(routingKeyFor(c.Type))
		require.NoError(t, err)
		require.NoError(t, d.Dispatch(t.Context(), feed.Event{RawKey: routingKeyFor(c.Type), Key: key, Body: c.Body,
			ReceivedAt: time.Unix(1, 0)}))
		n++
	}
	require.NoError(t, d.Close(t.Context()))
	assert.Equal(t, feed.DispatcherStats{Unparsable: uint64(n)}, d.Stats())
	assert.Len(t, rec.Unparsable(), n)
	assert.Empty(t, rec.Messages())
}
