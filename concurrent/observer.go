package concurrent

import (
	"errors"
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
	// ListenerCalled is told after each listener call for a message, on the goroutine
	// that made it: a worker, the SerialDispatcher's goroutine, or the dispatching one for
	// an unroutable message delivered at once (Config.HandleErrorsAsynchronously false). A
	// cashout for a listener that is no feed.CashoutListener is no call: it is not told,
	// though the Stats count it completed.
	ListenerCalled(c Call)
	// ProducerUpHeld is told when a producer's up, or an event recovery's end, is held
	// back until the messages of its recovery are processed: kind is
	// feed.ProducerRecovery for an up, the event recovery's kind for its end. It is told
	// on the goroutine that calls the StatusGate, after the gate's lock is released.
	ProducerUpHeld(producer int, kind feed.RecoveryKind)
	// ProducerUpReleased is told when a held up or event recovery's end is forwarded to
	// the listener, with how long it was held, on the goroutine that completed the last
	// task of the recovery. One that is dropped instead (cancelled by a down, superseded
	// by a newer recovery, abandoned, or held at Close) is not told.
	ProducerUpReleased(producer int, kind feed.RecoveryKind, held time.Duration)
}

// Call is what an Observer is told of one listener call.
type Call struct {
	Pool     string // the pool's Config.Name, or the SerialConfig.Name
	Producer int    // the message's producer; 0 for a message that could not be decoded
	// Type is the message's type; for one that could not be decoded, the type its body
	// was decoded as (feed.DecodeError), MessageUnknown when its routing key was
	// malformed or its body too large.
	Type   feed.MessageType
	Result CallResult
	// Timed says whether Wait and Duration were measured. The clock is read for one call
	// in Config.TimingSample only: the three readings a timed call takes (queued, started,
	// returned) cost about 100 ns, a fifth to a third of the pool's own work per message.
	Timed    bool
	Wait     time.Duration // from the message's dispatch (queued for a worker) to the call's start
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

// clockOrigin is the origin of the monotonic clock readings kept for sampled calls: an
// int64 of nanoseconds since it is a third of a time.Time in every task, and
// time.Since reads the clock for less than time.Now does.
var clockOrigin = time.Now()

// monotonic reads the monotonic clock, in nanoseconds since clockOrigin; never 0, which
// marks a task that is not timed.
func monotonic() int64 { return int64(time.Since(clockOrigin)) | 1 }

// sampler picks one call in n for timing. It is not safe for concurrent use: each sits
// under the lock its dispatcher holds to queue a message anyway, so that the choice costs
// no atomic operation.
type sampler struct {
	n, left int // n is 0 when nothing is timed
}

// next reports whether the next call is timed: the first, then one in n.
func (s *sampler) next() bool {
	if s.n == 0 {
		return false
	}
	if s.left--; s.left > 0 {
		return false
	}
	s.left = s.n
	return true
}

// unparsableType returns the type an unparsable message's body was decoded as;
// MessageUnknown when its routing key was malformed or its body too large.
func unparsableType(err error) feed.MessageType {
	var de *feed.DecodeError
	if errors.As(err, &de) {
		return de.Type
	}
	return feed.MessageUnknown
}
