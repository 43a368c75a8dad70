package concurrent

import (
	"time"

	"github.com/feedkit/feedkit/feed"
)

// Observer is told of the listener calls a Pool's workers make and of the ups a
// StatusGate holds back, so that a metrics library can count and time them
// (Config.Observer, GateConfig.Observer; the otelfeedkit and promfeedkit modules
// implement it). The Stats snapshots count the same things.
//
// Its methods are called on the workers and the gate's goroutines, concurrently: they
// must be quick, must not block and must not call back into the pool or the gate.
type Observer interface {
	// ListenerCalled is told after each listener call for a message, on the worker that
	// made it.
	ListenerCalled(c Call)
	// ProducerUpHeld is told when a producer's up, or an event recovery's end, is held
	// back until the messages of its recovery are processed.
	ProducerUpHeld(producer int, kind feed.RecoveryKind)
	// ProducerUpReleased is told when a held up or event recovery's end is forwarded to
	// the listener, with how long it was held.
	ProducerUpReleased(producer int, kind feed.RecoveryKind, held time.Duration)
}

// Call is what an Observer is told of one listener call.
type Call struct {
	Pool     string           // the pool's Config.Name
	Producer int              // the message's producer; 0 for a message that could not be decoded
	Type     feed.MessageType // the message's type; MessageUnknown when its routing key was malformed
	Result   CallResult
	// Timed says whether Wait and Duration were measured. The clock is read for one call
	// in Config.TimingSample only: reading it for each would cost more than the pool's
	// own work per message.
	Timed    bool
	Wait     time.Duration // from the message's dispatch to the call's start
	Duration time.Duration // the call itself
}

// CallResult says how a listener call ended.
type CallResult uint8

// The ways a listener call ends.
const (
	CallReturned   CallResult = iota // returned nil
	CallFailed                       // returned an error
	CallPanicked                     // panicked
	CallUnparsable                   // the message could not be decoded: OnUnparsableMessage was called
)

// String names the result in lower case ("returned", "failed", "panicked",
// "unparsable"), as a metric's label.
func (r CallResult) String() string {
	switch r {
	case CallReturned:
		return "returned"
	case CallFailed:
		return "failed"
	case CallPanicked:
		return "panicked"
	case CallUnparsable:
		return "unparsable"
	}
	return "unknown"
}
