package feed_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// told is what an observer was told of one kind of message: those of one session,
// producer and type.
type told struct {
	Session  feed.SessionRef
	Producer int
	Type     feed.MessageType
}

// sessionObserver counts what a session tells its Observer.
type sessionObserver struct {
	mu         sync.Mutex
	received   map[told]int
	bytes      map[told]int
	unparsable map[told]int
}

func newSessionObserver() *sessionObserver {
	return &sessionObserver{received: map[told]int{}, bytes: map[told]int{}, unparsable: map[told]int{}}
}

func (o *sessionObserver) FeedMessageReceived(s feed.SessionRef, producer int, typ feed.MessageType, bytes int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	k := told{s, producer, typ}
	o.received[k]++
	o.bytes[k] += bytes
}

func (o *sessionObserver) FeedMessageUnparsable(s feed.SessionRef, producer int, typ feed.MessageType) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.unparsable[told{s, producer, typ}]++
}

// counts returns copies of the counts so far: received, bytes and unparsable.
func (o *sessionObserver) counts() (received, bytes, unparsable map[told]int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	cp := func(m map[told]int) map[told]int {
		out := make(map[told]int, len(m))
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	return cp(o.received), cp(o.bytes), cp(o.unparsable)
}

func sum(m map[told]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// observedTraffic is a mix of messages a session reads, good and bad, with what its
// observer must be told of them.
type observedTraffic struct {
	keys              []string
	bodies            [][]byte
	received, bytes   map[told]int
	unparsable        map[told]int
	unroutable        int // refused by the session as it reads: key, size, system root
	undecodable       int // routed, refused by the decoder
	events, system    int // routed to the dispatcher, to the system handler
	delivered         int // decoded and given to the listener
	maxBody           int
	unparsableByCause map[string]int
}

// makeObservedTraffic makes n messages for session ref: a tenth each of a malformed
// routing key, a body that is no XML, a body that lacks a required attribute, an
// oversized body, and a system message whose root is not what its key says, so that
// half of them are unparsable; the rest are good event messages and alives.
func makeObservedTraffic(ref feed.SessionRef, n int) *observedTraffic {
	tr := &observedTraffic{received: map[told]int{}, bytes: map[told]int{}, unparsable: map[told]int{},
		maxBody: 2048, unparsableByCause: map[string]int{}}
	for i := range n {
		producer := 1 + 2*(i%2) // 1 or 3
		event := feed.URN{Prefix: "sr", Type: "match", ID: int64(1 + i%7)}
		h := feed.Header{Producer: producer, Event: event, Timestamp: time.UnixMilli(int64(1 + i)).UTC()}
		var m feed.Message = &feed.BetStop{Header: h, Groups: "all"}
		if i%3 == 0 {
			m = &feed.BetCancel{Header: h}
		}
		key := feed.RoutingKey{Priority: feed.PriorityHigh, Live: true, Type: m.Type(), SportID: 1, Event: event}.String()
		body := feedtest.Marshal(m)
		typ, bad := m.Type(), ""
		switch i % 10 {
		case 0, 1, 2, 3:
			tr.events++
			tr.delivered++
		case 4:
			body = feedtest.Marshal(&feed.Alive{Header: feed.Header{Producer: producer, Timestamp: h.Timestamp}, Subscribed: true})
			key, typ = "-.-.-.alive.-.-.-.-", feed.MessageAlive
			tr.system++
		case 5:
			key, typ, bad = strings.Replace(key, "."+typ.String()+".", ".cash_out.", 1), feed.MessageUnknown, "malformed key"
			tr.unroutable++
		case 6:
			body, producer, bad = []byte("\x00 not xml <<<"), 0, "no XML"
			tr.events++
			tr.undecodable++
		case 7:
			body, bad = []byte(fmt.Sprintf(`<bet_stop product="%d" timestamp="1" groups="all"/>`, producer)), "no event_id"
			tr.events++
			tr.undecodable++
		case 8:
			body = []byte(fmt.Sprintf(`<bet_stop product="%d" event_id="sr:match:1" timestamp="1" groups="%s"/>`,
				producer, strings.Repeat("x", tr.maxBody)))
			bad = "oversized"
			tr.unroutable++
		case 9:
			key, typ, bad = "-.-.-.snapshot_complete.-.-.-.-", feed.MessageSnapshotComplete, "key says snapshot_complete"
			tr.unroutable++
		}
		k := told{ref, producer, typ}
		tr.keys, tr.bodies = append(tr.keys, key), append(tr.bodies, body)
		tr.received[k]++
		tr.bytes[k] += len(body)
		if bad != "" {
			tr.unparsable[k]++
			tr.unparsableByCause[bad]++
		}
	}
	return tr
}

// Every message a session reads is told to its Observer once, with its producer, type
// and size, and every one that could not be routed or decoded is told once more as
// unparsable: those the session refuses as it reads, and those whose body the
// dispatcher cannot decode, whichever dispatcher it is. The counts are the session's
// Stats and the listener's.
func TestSessionTellsItsObserverEveryMessageOnce(t *testing.T) {
	const n = 300
	for _, name := range []string{"serial", "concurrent", "concurrent, errors inline", "concurrent serial"} {
		t.Run(name, func(t *testing.T) {
			broker := newBroker(t, feedtest.BrokerOptions{})
			rec := feedtest.NewRecorder()
			obs := newSessionObserver()
			cfg := feed.SessionConfig{Index: 1, Listener: rec}
			tracker := concurrent.NewTaskLifecycleTracker()
			switch name {
			case "concurrent":
				d, err := concurrent.NewDispatcher(rec, tracker, concurrent.Config{Threads: 2})
				require.NoError(t, err)
				cfg.Listener, cfg.Dispatcher = nil, d
			case "concurrent, errors inline":
				d, err := concurrent.NewDispatcher(rec, tracker, concurrent.Config{Threads: 2, HandleErrorsAsynchronously: new(false)})
				require.NoError(t, err)
				cfg.Listener, cfg.Dispatcher = nil, d
			case "concurrent serial":
				d, err := concurrent.NewSerialDispatcher(rec, tracker, concurrent.SerialConfig{})
				require.NoError(t, err)
				cfg.Listener, cfg.Dispatcher = nil, d
			}
			ref := feed.SessionRef{Index: 1, Interest: feed.AllMessages}
			tr := makeObservedTraffic(ref, n)
			cfg.MaxBodySize, cfg.Observer = tr.maxBody, obs
			s := openSession(t, broker, cfg)
			require.Equal(t, ref, s.Ref())

			for i := range tr.keys {
				require.NoError(t, broker.Publish(t.Context(), tr.keys[i], tr.bodies[i]))
			}
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			require.NoError(t, broker.Flush(ctx), "every message read")
			require.NoError(t, s.Close(ctx), "every message delivered")

			received, bytes, unparsable := obs.counts()
			assert.Equal(t, tr.received, received, "received, by producer and type")
			assert.Equal(t, tr.bytes, bytes, "bytes received, by producer and type")
			assert.Equal(t, tr.unparsable, unparsable, "unparsable, by producer and type")
			assert.Equal(t, n, sum(received))
			assert.Equal(t, n/2, sum(unparsable), "unparsable: %v", tr.unparsableByCause)

			st := s.Stats()
			assert.Equal(t, uint64(n), st.Received)
			assert.Equal(t, uint64(tr.events), st.Events)
			assert.Equal(t, uint64(tr.system), st.System)
			assert.Equal(t, uint64(tr.unroutable), st.Unroutable)
			assert.Equal(t, uint64(tr.undecodable), st.Undecodable)
			assert.Equal(t, sum(unparsable), int(st.Unroutable+st.Undecodable), "the observer and the Stats agree")
			assert.Len(t, rec.Unparsable(), sum(unparsable), "the listener was given each unparsable message once")
			assert.Len(t, rec.Messages(), tr.delivered)
		})
	}
}

// A session without an Observer still counts what does not decode.
func TestSessionCountsUndecodableWithoutAnObserver(t *testing.T) {
	broker := newBroker(t, feedtest.BrokerOptions{})
	rec := feedtest.NewRecorder()
	ref := feed.SessionRef{Interest: feed.AllMessages}
	tr := makeObservedTraffic(ref, 100)
	s := openSession(t, broker, feed.SessionConfig{Listener: rec, MaxBodySize: tr.maxBody})
	for i := range tr.keys {
		require.NoError(t, broker.Publish(t.Context(), tr.keys[i], tr.bodies[i]))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	require.NoError(t, broker.Flush(ctx))
	require.NoError(t, s.Close(ctx))
	st := s.Stats()
	assert.Equal(t, uint64(tr.undecodable), st.Undecodable)
	assert.Equal(t, uint64(tr.unroutable), st.Unroutable)
	assert.Len(t, rec.Unparsable(), tr.undecodable+tr.unroutable)
}

// An event that a session did not read is no session's business: Deliver tells no
// observer and counts nothing when the event does not decode.
func TestDeliverOfAnEventFromNoSession(t *testing.T) {
	rec := feedtest.NewRecorder()
	ev := feed.Event{RawKey: "hi.-.live.bet_stop.1.sr:match.1.-", Body: []byte("not xml"),
		Key: feed.RoutingKey{Type: feed.MessageBetStop}}
	require.ErrorIs(t, feed.Deliver(t.Context(), rec, &ev), feed.ErrMalformedMessage)
	assert.Len(t, rec.Unparsable(), 1)
}
