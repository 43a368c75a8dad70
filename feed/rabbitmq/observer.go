package rabbitmq

// Observer is told when the Transport's links to the broker come and go, so that a
// metrics library can count them (Config.Observer; the otelfeedkit and promfeedkit
// modules implement it). Bytes and deliveries are in Stats, counted once per message
// without a call.
//
// Its methods are called on the transport's goroutines, concurrently: they must be
// quick, must not block and must not call back into the transport.
type Observer interface {
	// TransportLinkUp is told when a subscription's link is established and consuming:
	// the first one or a reconnection.
	TransportLinkUp()
	// TransportLinkDown is told when an established link is lost (not at Close).
	TransportLinkDown(err error)
	// TransportAttemptFailed is told of each connection attempt that failed, the first
	// ones included.
	TransportAttemptFailed(err error)
}
