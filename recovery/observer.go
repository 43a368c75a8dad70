package recovery

import (
	"time"

	"github.com/feedkit/feedkit/feed"
)

// Observer is told what a Manager does with the producers it follows, so that a metrics
// library can count and time it (Config.Observer; the otelfeedkit and promfeedkit
// modules implement it). The Stats snapshot counts the same things.
//
// Its methods are called with no lock of the manager held, on its goroutines and the
// sessions': they must be quick, must not block and must not call back into the
// manager.
type Observer interface {
	// ProducerStatusChanged is told of each status change the manager tells its
	// listener, InitialState included, with the same ProducerStatus.
	ProducerStatusChanged(s feed.ProducerStatus)
	// ProducerAlive is told of each alive of a followed producer that the manager
	// processes; lag is the local clock at its receipt minus its timestamp: how late the
	// feed runs, the broker's queue included (ProducerState.ClockDrift). The copies of
	// an alive that other sessions deliver are not told, nor an alive without a
	// timestamp, which has no lag.
	ProducerAlive(producer int, lag time.Duration)
	// RecoveryRequested is told of each recovery request the manager tried to send,
	// with how it went: Stats counts the same in RecoveriesRequested (or
	// EventRecoveriesRequested), RequestsRateLimited and RequestsFailed. A recovery
	// skipped because recoveries are disabled is no request.
	RecoveryRequested(producer int, kind feed.RecoveryKind, result RequestResult)
	// RecoveryEnded is told when a recovery the API accepted ends, with how it ended
	// and how long it took from its acceptance, on the manager's clock. A producer's
	// recovery cut short by a lost connection or subscribed=0 is not ended: it is
	// requested again, and that request ends in its turn.
	RecoveryEnded(producer int, kind feed.RecoveryKind, result RecoveryResult, took time.Duration)
}

// RequestResult says how a recovery request went.
type RequestResult uint8

// The ways a recovery request goes.
const (
	RequestAccepted    RequestResult = iota // the API accepted it
	RequestRateLimited                      // postponed by the rate limits, not sent
	RequestFailed                           // the API or the ledger failed it
)

// String names the result in lower case ("accepted", "rate_limited", "failed"), as a
// metric's label.
func (r RequestResult) String() string {
	switch r {
	case RequestAccepted:
		return "accepted"
	case RequestRateLimited:
		return "rate_limited"
	case RequestFailed:
		return "failed"
	}
	return "unknown"
}

// RecoveryResult says how an accepted recovery ended.
type RecoveryResult uint8

// The ways an accepted recovery ends.
const (
	RecoveryCompleted RecoveryResult = iota // its snapshot_complete came
	RecoveryTimedOut                        // its snapshot_complete did not come in time
)

// String names the result in lower case ("completed", "timed_out"), as a metric's
// label.
func (r RecoveryResult) String() string {
	switch r {
	case RecoveryCompleted:
		return "completed"
	case RecoveryTimedOut:
		return "timed_out"
	}
	return "unknown"
}
