package recovery

import (
	"time"

	"github.com/feedkit/feedkit/heartbeat"
)

// The heartbeat limit has one boundary, the same for the alive rule and the
// missing-heartbeat check: a producer is past its limit when it has been silent for
// longer than the limit, so a silence of exactly the limit is still within it. That is
// what the feed's rule says (a producer is down when no alive came for longer than its
// heartbeat limit) and what Sportradar's SDKs document for their inactivity limit ("if
// this value is exceeded, the producer is considered to be down"): the limit is the
// longest silence allowed.

// pastLimit reports whether a silence is too long for a heartbeat limit: the alive rule's
// comparison.
func pastLimit(silence, limit time.Duration) bool { return silence > limit }

// monitorTimeout is the heartbeat monitor's timeout for a heartbeat limit. The monitor
// finds a key lost once silent for its whole timeout (at its deadline, not after it), so
// the timeout is the limit and 1ns: durations count nanoseconds, and a silence of at least
// limit+1ns is exactly a silence longer than the limit, as pastLimit has it. A limit of
// heartbeat.MaxTimeout (73 years) or more stays there.
func monitorTimeout(limit time.Duration) time.Duration {
	if limit >= heartbeat.MaxTimeout {
		return heartbeat.MaxTimeout
	}
	return limit + time.Nanosecond
}
