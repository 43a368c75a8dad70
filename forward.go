package feedkit

import (
	"errors"
	"fmt"

	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
)

// Forwarder takes the messages of a forwarding session (SDK.AddForwardingSession) as
// they arrive, to hand them on rather than to listeners: a group's ingress republishes
// them to the workers' queues. The session calls its methods on its reading goroutine,
// in arrival order.
//
// Dispatch takes each event message, unroutable ones included (ev.Err set). Before it
// returns, it allocates the event's ticket on the session's Stream, the one
// AddForwardingSession gave the Forwarder's maker:
//
//	k := stream.Allocate(concurrent.RecoveryContext{Producer: ev.Producer, RequestID: ev.RequestID})
//	k.Start()
//
// and later completes it (k.Complete) once the event is handed on for good (published
// and confirmed), or abandons it (k.Abandon) if it never will be. Each ticket is finished
// exactly once. The SDK holds a producer's up back until the tickets of the recovery
// behind it are finished, drops the up if one was abandoned, and moves a producer's
// recovery point past an alive only once every ticket allocated before it is completed:
// an abandoned ticket holds the point for good, so that a restart's recovery brings its
// event back. ev.Body is the Forwarder's to keep: the session hands each body over for
// good. Close is called
// when the session closes, after its last Dispatch; it should return once the tickets of
// the events it took are finished, so that the recovery point the SDK saves when it
// closes covers them.
//
// HandleSystem takes each system message (alive, snapshot_complete), in order with the
// events, before the SDK's recovery manager does; an alive with subscribed=1 has been
// reported to the Stream by then. A Forwarder that also implements
// feed.ConnectionLossHandler is told of the session's connection losses, in order with
// the messages, before the recovery manager.
type Forwarder interface {
	feed.Dispatcher
	feed.SystemHandler
}

// AddForwardingSession adds a session whose messages go to a Forwarder rather than to
// listeners: the messages of one interest, as AddSession's, handed to the Forwarder that
// newForwarder makes. newForwarder is given the session's Stream, a stream of the SDK's
// task tracker, on which the Forwarder allocates a ticket for each event and finishes it
// (see Forwarder): the SDK's producer ups, its recovery point and Flush then follow what
// the Forwarder has handed on, as they follow what listeners processed in a session of
// AddSession. The recovery manager hears the session's system messages and connection
// losses as it does another session's.
//
// An SDK may mix both kinds of session: a producer's up then waits for the recovery's
// events on every session, forwarded or processed, and its recovery point for the
// slowest. Config.Concurrent and Config.QueueSize concern the listener sessions only.
// The processing-delay check (Config.Recovery.MaxProcessingDelay) hears of listener
// calls only, so the events a Forwarder takes do not count in it. Call it after New
// and before Open. Stats().Delivery has no counts of a forwarding session's (its
// Forwarding is set): the session's own (Stats().Sessions) and the tasks (Stats().Tasks)
// say what it read and how many of its tickets are finished; the Forwarder keeps its
// own.
func (s *SDK) AddForwardingSession(interest feed.MessageInterest, newForwarder func(*concurrent.Stream) (Forwarder, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != 0 {
		return errors.New("feedkit: AddForwardingSession after Open: the sessions are fixed when the SDK opens")
	}
	if newForwarder == nil {
		return fmt.Errorf("feedkit: AddForwardingSession(%s): newForwarder is nil", interest)
	}
	i := len(s.sessions)
	if err := s.checkSession(interest, i); err != nil {
		return fmt.Errorf("feedkit: AddForwardingSession(%s): %w", interest, err)
	}
	stream := s.tracker.NewStream()
	f, err := newForwarder(stream)
	if err == nil && f == nil {
		err = errors.New("newForwarder returned no Forwarder and no error")
	}
	if err != nil {
		// The stream stays in the tracker, which cannot forget it: with no session to
		// report alives to it, it would hold every producer's processed point for good.
		s.broken = fmt.Errorf("AddForwardingSession(%s) failed: %w", interest, err)
		return fmt.Errorf("feedkit: AddForwardingSession(%s): %w (the SDK cannot be opened now: make a new one)", interest, err)
	}
	return s.addSession(interest, f, stream.MarkAlives(forwardSystem{f: f, next: s.manager.SystemHandler()}), nil, nil, f)
}

// forwardSystem hands a forwarding session's system messages and connection losses to
// its Forwarder, then to the recovery manager's handler.
type forwardSystem struct {
	f    Forwarder
	next feed.SystemHandler
}

var _ feed.ConnectionLossHandler = forwardSystem{}

// HandleSystem hands ev to the Forwarder, then to the manager, which hears it even when
// the Forwarder panics (the session reports the panic).
func (c forwardSystem) HandleSystem(ev feed.Event) {
	defer c.next.HandleSystem(ev)
	c.f.HandleSystem(ev)
}

// HandleConnectionDown tells the Forwarder of the loss, when it takes it, then the manager.
func (c forwardSystem) HandleConnectionDown(r feed.SessionRef, err error) {
	if h, ok := c.next.(feed.ConnectionLossHandler); ok {
		defer h.HandleConnectionDown(r, err)
	}
	if h, ok := c.f.(feed.ConnectionLossHandler); ok {
		h.HandleConnectionDown(r, err)
	}
}
