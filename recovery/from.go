package recovery

import "time"

// Defaults of the recovery-from rules.
const (
	// DefaultMaxRecoveryLength is the longest span a recovery goes back: an older
	// disconnection is recovered from this long ago.
	DefaultMaxRecoveryLength = 60 * time.Hour
	// DefaultAssumedDowntime is how far back a recovery goes for a producer of which
	// nothing is known (no subscription, no disconnection): an approximation of when the
	// system went down.
	DefaultAssumedDowntime = 10 * time.Minute
)

// FromRule names the rule that chose a recovery's start, for logs and tests.
type FromRule uint8

// The recovery-from rules, in the order they are tried.
const (
	FromRecoveryRequested FromRule = iota + 1 // (1) recovering: the last recovery's request time
	FromLastSubscribed                        // (2a) no disconnection: the last subscription
	FromAssumedDowntime                       // (2b) nothing known: an approximate down time
	FromMaxLength                             // (3) a disconnection too old: the maximum length
	FromLastDisconnected                      // (4) the registered disconnection
)

var fromRuleNames = [...]string{"", "recovery_requested_at", "last_subscribed_at", "assumed downtime", "max recovery length", "last_disconnected_at"}

// String names the rule by the attribute it took the time from.
func (r FromRule) String() string {
	if int(r) < len(fromRuleNames) && r != 0 {
		return fromRuleNames[r]
	}
	return "unknown rule"
}

// RecoveryFrom returns the moment a recovery requested at now should replay the feed
// from, and the rule that chose it, the first that applies:
//
//  1. a producer that is recovering re-uses its RecoveryRequestedAt, or the disconnection
//     that recovery covers when it is earlier: a recovering producer is recovered again
//     because its replay may be lost, and going back to the request time only would leave
//     the span from the disconnection to the request unreplayed;
//  2. with no LastDisconnectedAt: LastSubscribedAt, or else assumedDowntime before now;
//  3. a LastDisconnectedAt more than maxLength ago is clamped to maxLength before now;
//  4. else LastDisconnectedAt.
//
// maxLength also bounds the results of rules 1 and 2: the feed refuses a request that goes
// back further than a producer's recovery window, so asking for it would only fail.
func RecoveryFrom(r Record, now time.Time, maxLength, assumedDowntime time.Duration) (time.Time, FromRule) {
	from, rule := pickFrom(r, now, assumedDowntime)
	if earliest := now.Add(-maxLength); from.Before(earliest) {
		return earliest, FromMaxLength
	}
	if from.After(now) { // a record written by a clock ahead of this one
		return now, rule
	}
	return from, rule
}

func pickFrom(r Record, now time.Time, assumedDowntime time.Duration) (time.Time, FromRule) {
	switch {
	case r.State == Recovering && !r.RecoveryRequestedAt.IsZero():
		if !r.LastDisconnectedAt.IsZero() && r.LastDisconnectedAt.Before(r.RecoveryRequestedAt) {
			// A recovering producer is recovered again because its replay may be lost:
			// the request time alone would leave what that replay covered unreplayed.
			return r.LastDisconnectedAt, FromLastDisconnected
		}
		return r.RecoveryRequestedAt, FromRecoveryRequested
	case r.LastDisconnectedAt.IsZero() && !r.LastSubscribedAt.IsZero():
		return r.LastSubscribedAt, FromLastSubscribed
	case r.LastDisconnectedAt.IsZero():
		return now.Add(-assumedDowntime), FromAssumedDowntime
	default:
		return r.LastDisconnectedAt, FromLastDisconnected
	}
}
