package feed

// Observer is told what a Session reads, as it happens, so that a metrics library can
// count it (SessionConfig.Observer; the otelfeedkit and promfeedkit modules implement
// it). The Session's Stats count the same messages.
//
// Its methods are called on the session's goroutines, often concurrently, once per
// message: they must be quick, must not block and must not call back into the session.
// Every argument is bounded, fit for a metric's label; SessionRef.Label names the
// session in one, and a SessionRef is comparable, so an adapter can keep what it makes
// of each in a map.
type Observer interface {
	// FeedMessageReceived is told of every message session s reads from the transport,
	// before it is routed: its producer as the root element says (0 when it does not)
	// and its type as the routing key says (MessageUnknown when the key is malformed),
	// with the size of its body in bytes.
	FeedMessageReceived(s SessionRef, producer int, typ MessageType, bytes int)
	// FeedMessageUnparsable is told of every message of session s that could not be
	// routed or decoded: an event message given to the listener's OnUnparsableMessage,
	// a system message turned away. Producer and type are as FeedMessageReceived's.
	// A message the session cannot route (a malformed key, an oversized body, a system
	// message turned away) is told as it is read, on the transport's goroutine, and
	// counted in SessionStats.Unroutable; one whose body does not decode, as the
	// dispatcher decodes it, whichever Dispatcher that is (Deliver tells it), and counted
	// in SessionStats.Undecodable. Each is told once.
	FeedMessageUnparsable(s SessionRef, producer int, typ MessageType)
}
