package locks

import (
	"time"

	"github.com/feedkit/feedkit/internal/backoff"
)

// Backoff spaces retries: Initial before the first, each next one Multiplier times the
// one before (0 means 2), never more than Max, each drawn at random from the Jitter
// fraction (0 to 1) below it, so that the retries of many processes spread out instead of
// arriving together after an outage.
type Backoff struct {
	// Initial is the delay before the first retry; it must be positive.
	Initial time.Duration
	// Max caps every delay; it must be at least Initial.
	Max time.Duration
	// Multiplier is the growth from one delay to the next; 0 means 2, and otherwise it
	// must be at least 1.
	Multiplier float64
	// Jitter, in [0, 1], is the fraction of each delay drawn at random: the delay is
	// drawn from [d*(1-Jitter), d].
	Jitter float64
}

// Validate reports the first field out of range, naming it after prefix (e.g.
// "LivenessConfig.Retry.").
func (b Backoff) Validate(prefix string) error { return backoff.Policy(b).Validate(prefix) }

// Delay returns the delay before retry number attempt (0 for the first), with jitter.
func (b Backoff) Delay(attempt int) time.Duration { return backoff.Policy(b).Delay(attempt) }

// Nominal returns the delay before retry number attempt (0 for the first) without jitter:
// Initial * Multiplier^attempt, capped at Max. A drawn delay is at most this.
func (b Backoff) Nominal(attempt int) time.Duration { return backoff.Policy(b).Nominal(attempt) }
