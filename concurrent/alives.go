package concurrent

import "github.com/feedkit/feedkit/feed"

// AliveMarker is a session's feed.SystemHandler in front of another one, the recovery
// manager's in an SDK: it reports each alive with subscribed=1 the session reads to the
// Stream of the session's dispatcher, so that the processed point can pass the alive once
// the messages read before it are done, then hands every system message and connection
// loss on. It runs on the session's reading goroutine, where the Stream's dispatches run
// too, which is what orders the alive after the messages read before it. Stream.MarkAlives
// makes one.
type AliveMarker struct {
	stream *Stream
	next   feed.SystemHandler
}

var _ feed.ConnectionLossHandler = AliveMarker{}

// MarkAlives returns the handler to give the session whose dispatcher allocates on s as
// its SessionConfig.System: it marks the alives on s, then passes everything on to next
// (nil for nothing).
func (s *Stream) MarkAlives(next feed.SystemHandler) AliveMarker {
	return AliveMarker{stream: s, next: next}
}

// HandleSystem marks ev on the Stream when it is an alive with subscribed=1 and a
// timestamp, then hands it on. An alive that does not decode is handed on unmarked: the
// next handler (the recovery manager decodes its own copy) reports it.
func (a AliveMarker) HandleSystem(ev feed.Event) {
	if ev.Key.Type == feed.MessageAlive {
		// An alive is a few bytes: decoding it here costs less than sharing the decode.
		if al, err := feed.DecodeAlive(ev.Body); err == nil && al.Subscribed && !al.Timestamp.IsZero() {
			a.stream.Alive(al.Producer, al.Timestamp)
		}
	}
	if a.next != nil {
		a.next.HandleSystem(ev)
	}
}

// HandleConnectionDown hands a lost connection on, when the next handler takes it.
func (a AliveMarker) HandleConnectionDown(s feed.SessionRef, err error) {
	if c, ok := a.next.(feed.ConnectionLossHandler); ok {
		c.HandleConnectionDown(s, err)
	}
}
