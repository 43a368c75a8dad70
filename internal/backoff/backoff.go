// Package backoff computes capped exponential delays with jitter, for loops that retry
// something that failed: reconnecting to a broker, a source that went away, a
// notification that was not delivered.
//
// Jitter matters as much as the exponent: when a broker restarts, every client that lost
// it retries, and without jitter they all retry at the same instants.
package backoff

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Policy describes the delays before successive retries: Initial, then each delay
// Multiplier times the one before, never more than Max, each spread at random by Jitter.
type Policy struct {
	// Initial is the delay before the first retry; it must be positive.
	Initial time.Duration
	// Max caps every delay; it must be at least Initial.
	Max time.Duration
	// Multiplier is the growth from one delay to the next; 0 means 2, and otherwise it
	// must be at least 1.
	Multiplier float64
	// Jitter, in [0, 1], is the fraction of each delay chosen at random: the delay is
	// drawn from [d*(1-Jitter), d]. 0 means none; 0.5 spreads retries well and keeps the
	// delay at least half the nominal.
	Jitter float64
}

// Validate reports the first field out of range, naming it; prefix names the config the
// policy belongs to (e.g. "rabbitmq.Config.Reconnect").
func (p Policy) Validate(prefix string) error {
	switch {
	case p.Initial <= 0:
		return fmt.Errorf("%sInitial %v must be positive", prefix, p.Initial)
	case p.Max < p.Initial:
		return fmt.Errorf("%sMax %v must be at least Initial (%v)", prefix, p.Max, p.Initial)
	case p.Multiplier != 0 && (p.Multiplier < 1 || math.IsNaN(p.Multiplier) || math.IsInf(p.Multiplier, 0)):
		return fmt.Errorf("%sMultiplier %v must be at least 1", prefix, p.Multiplier)
	case p.Jitter < 0 || p.Jitter > 1 || math.IsNaN(p.Jitter):
		return fmt.Errorf("%sJitter %v must be within [0, 1]", prefix, p.Jitter)
	}
	return nil
}

// Nominal returns the delay before retry number attempt (0 for the first retry) without
// jitter: Initial * Multiplier^attempt, capped at Max.
func (p Policy) Nominal(attempt int) time.Duration {
	m := p.Multiplier
	if m == 0 {
		m = 2
	}
	if attempt < 0 {
		attempt = 0
	}
	d := float64(p.Initial) * math.Pow(m, float64(attempt))
	if d >= float64(p.Max) || math.IsInf(d, 0) || math.IsNaN(d) {
		return p.Max
	}
	return time.Duration(d)
}

// Delay returns the delay before retry number attempt (0 for the first retry), with
// jitter drawn from the package's random source.
func (p Policy) Delay(attempt int) time.Duration {
	return p.DelayWith(attempt, rand.Float64())
}

// DelayWith is Delay with the random draw given: u in [0, 1) picks the point in the
// jitter range, so tests can pin it.
func (p Policy) DelayWith(attempt int, u float64) time.Duration {
	d := p.Nominal(attempt)
	if p.Jitter == 0 {
		return d
	}
	spread := float64(d) * p.Jitter
	return time.Duration(float64(d) - spread + spread*u)
}
