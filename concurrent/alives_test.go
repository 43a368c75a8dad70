package concurrent_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// aliveEvent is an alive of producer stamped at, as a session hands it to its
// SystemHandler.
func aliveEvent(t testing.TB, producer int, at time.Time, subscribed bool) feed.Event {
	t.Helper()
	return systemEvent(t, &feed.Alive{Header: feed.Header{Producer: producer, Timestamp: at}, Subscribed: subscribed})
}

func systemEvent(t testing.TB, m feed.Message) feed.Event {
	t.Helper()
	key := feed.RoutingKey{Type: m.Type()}
	return feed.Event{RawKey: key.String(), Key: key, Body: feedtest.Marshal(m),
		Producer: m.MessageHeader().Producer, RequestID: m.MessageHeader().RequestID}
}

// systemLog is the next handler behind an AliveMarker: it notes what reaches it.
type systemLog struct {
	mu    sync.Mutex
	got   []string
	downs []error
}

func (l *systemLog) HandleSystem(ev feed.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, ev.Key.Type.String())
}

func (l *systemLog) HandleConnectionDown(_ feed.SessionRef, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.downs = append(l.downs, err)
}

// onlySystem takes system messages and not connection losses.
type onlySystem struct{ n int }

func (o *onlySystem) HandleSystem(feed.Event) { o.n++ }

// An AliveMarker marks on its Stream the alives with subscribed=1 and a timestamp, and
// hands every system message and connection loss on, the ones it does not mark included.
func TestMarkAlivesMarksSubscribedAlivesAndPassesEverythingOn(t *testing.T) {
	tracker := concurrent.NewTaskLifecycleTracker()
	stream := tracker.NewStream()
	next := &systemLog{}
	marker := stream.MarkAlives(next)
	t1, t2 := time.UnixMilli(1_700_000_001_000).UTC(), time.UnixMilli(1_700_000_002_000).UTC()

	marker.HandleSystem(aliveEvent(t, 1, t1, true))
	through, ok := tracker.Processed(1)
	require.True(t, ok, "nothing was pending: the point is at the alive")
	assert.Equal(t, t1, through)

	marker.HandleSystem(aliveEvent(t, 1, t2, false)) // not subscribed: no mark
	bad := aliveEvent(t, 1, t2, true)
	bad.Body = []byte(`<alive product="1" timestamp="x" subscribed="1"/>`)
	marker.HandleSystem(bad)                                 // does not decode: no mark
	marker.HandleSystem(aliveEvent(t, 1, time.Time{}, true)) // no timestamp: no mark
	marker.HandleSystem(systemEvent(t, &feed.SnapshotComplete{Header: feed.Header{Producer: 1, Timestamp: t2, RequestID: 3}}))
	through, _ = tracker.Processed(1)
	assert.Equal(t, t1, through, "only a decoded, subscribed, stamped alive moves the point")

	lost := errors.New("connection lost")
	marker.HandleConnectionDown(feed.SessionRef{}, lost)
	assert.Equal(t, []string{"alive", "alive", "alive", "alive", "snapshot_complete"}, next.got, "every message is handed on")
	assert.Equal(t, []error{lost}, next.downs)

	// A next handler that takes no connection losses, or none at all, is no trouble.
	plain := &onlySystem{}
	stream.MarkAlives(plain).HandleConnectionDown(feed.SessionRef{}, lost)
	stream.MarkAlives(plain).HandleSystem(aliveEvent(t, 1, t2, true))
	assert.Equal(t, 1, plain.n)
	stream.MarkAlives(nil).HandleConnectionDown(feed.SessionRef{}, lost)
	t3 := t2.Add(time.Second)
	stream.MarkAlives(nil).HandleSystem(aliveEvent(t, 1, t3, true))
	through, _ = tracker.Processed(1)
	assert.Equal(t, t3, through)
}
