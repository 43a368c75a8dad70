package recovery

import (
	"fmt"
	"slices"
	"time"
)

// Window is one sliding-window limit: at most Max requests in any span of Length.
type Window struct {
	Length time.Duration
	Max    int
}

// Tier is the limit on recoveries of one length class: requests that go back more than
// MinLength (inclusive) and less than MaxLength (exclusive; 0 means no upper bound). Every
// window of the tier must allow a request.
type Tier struct {
	MinLength, MaxLength time.Duration
	Windows              []Window
}

// Limits are the account-wide limits on recovery requests, one Tier per length class.
// Each tier counts the successful requests of its own class, summed over every node id of
// the account.
type Limits []Tier

// DefaultLimits returns the feed's limits on recovery requests per account:
//
//	recovery length   limits
//	24 h – 60 h       4 per 2 h, 2 per 30 min
//	30 min – 24 h     10 per hour, 4 per 10 min
//	under 30 min      60 per hour, 20 per 10 min
//
// The slice is new on every call.
func DefaultLimits() Limits {
	return Limits{
		{MinLength: 0, MaxLength: 30 * time.Minute, Windows: []Window{{time.Hour, 60}, {10 * time.Minute, 20}}},
		{MinLength: 30 * time.Minute, MaxLength: 24 * time.Hour, Windows: []Window{{time.Hour, 10}, {10 * time.Minute, 4}}},
		{MinLength: 24 * time.Hour, MaxLength: 0, Windows: []Window{{2 * time.Hour, 4}, {30 * time.Minute, 2}}},
	}
}

// Validate reports limits that cannot be applied, naming the tier and field at fault.
func (ls Limits) Validate() error {
	if len(ls) == 0 {
		return fmt.Errorf("recovery: Limits is empty")
	}
	for i, t := range ls {
		switch {
		case t.MinLength < 0:
			return fmt.Errorf("recovery: Limits[%d].MinLength %v must not be negative", i, t.MinLength)
		case t.MaxLength != 0 && t.MaxLength <= t.MinLength:
			return fmt.Errorf("recovery: Limits[%d].MaxLength %v must be above MinLength %v (or 0 for none)", i, t.MaxLength, t.MinLength)
		case len(t.Windows) == 0:
			return fmt.Errorf("recovery: Limits[%d].Windows is empty", i)
		}
		for j, w := range t.Windows {
			if w.Length <= 0 || w.Max <= 0 {
				return fmt.Errorf("recovery: Limits[%d].Windows[%d] {%v, %d}: Length and Max must be positive", i, j, w.Length, w.Max)
			}
		}
	}
	return nil
}

// Class returns the index of the tier a recovery of the given length falls in, or -1 when
// none does (the request is then not limited).
func (ls Limits) Class(length time.Duration) int {
	for i, t := range ls {
		if length >= t.MinLength && (t.MaxLength == 0 || length < t.MaxLength) {
			return i
		}
	}
	return -1
}

// Horizon returns the longest window of tier class: requests older than that no longer
// count, so a ledger may forget them.
func (ls Limits) Horizon(class int) time.Duration {
	var h time.Duration
	for _, w := range ls[class].Windows {
		h = max(h, w.Length)
	}
	return h
}

// Allow reports whether a request at now is within every window, given the times of the
// earlier successful requests of its class (sorted, oldest first). When it is not, retryAt
// is the earliest moment at which every window allows it: exact sliding windows, so a
// request is refused only while the count of a window is at its maximum, and allowed as
// soon as the oldest request counted there leaves it. A request at t counts in the window
// ending at now while now - t < Length.
func Allow(past []time.Time, now time.Time, windows []Window) (ok bool, retryAt time.Time) {
	ok = true
	for _, w := range windows {
		// The requests inside the window are past[first:]; times after now (another node's
		// clock slightly ahead) count too.
		first, _ := slices.BinarySearchFunc(past, now.Add(-w.Length), func(t, edge time.Time) int {
			if t.After(edge) {
				return 1
			}
			return -1
		})
		inside := len(past) - first
		if inside < w.Max {
			continue
		}
		ok = false
		// Allowed again once inside-Max+1 of them have left: the one at that position is
		// the last to leave.
		leaves := past[first+inside-w.Max].Add(w.Length)
		if leaves.After(retryAt) {
			retryAt = leaves
		}
	}
	if ok {
		return true, time.Time{}
	}
	return false, retryAt
}
