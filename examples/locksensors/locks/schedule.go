package locks

import (
	"fmt"
	"math"
	"time"
)

// Schedule spaces the attempts of a notification.
type Schedule interface {
	// After returns how long after attempt n (1 for the first) starts the next one is due.
	After(n int) time.Duration
}

// Logarithmic is a schedule whose delay is Unit × (1 + ln n), so it grows with every
// attempt but ever more slowly (with Unit 10s: 10s, 17s, 21s, 24s, … 33s before the
// 11th), capped at Max when Max is positive. It suits receivers that are down for
// seconds, not hours; DefaultSchedule, exponential, waits out longer outages.
type Logarithmic struct {
	Unit time.Duration
	Max  time.Duration
}

// After implements Schedule.
func (l Logarithmic) After(n int) time.Duration {
	d := time.Duration(float64(l.Unit) * (1 + math.Log(float64(max(n, 1)))))
	if l.Max > 0 && d > l.Max {
		d = l.Max
	}
	return d
}

// Validate reports the first field out of range.
func (l Logarithmic) Validate() error {
	if l.Unit <= 0 {
		return &FieldError{Field: "Logarithmic.Unit", Problem: fmt.Sprintf("%v is not positive", l.Unit)}
	}
	if l.Max < 0 {
		return &FieldError{Field: "Logarithmic.Max", Problem: fmt.Sprintf("%v is negative", l.Max)}
	}
	return nil
}

// Exponential is a capped exponential schedule with jitter: Policy.Initial after the
// first attempt, Multiplier times longer after each next one, at most Policy.Max, each
// drawn at random from the Policy.Jitter fraction below it, so that the notifications a
// receiver's outage failed together do not all come back at the same instant.
type Exponential struct {
	Policy Backoff
}

// After implements Schedule.
func (e Exponential) After(n int) time.Duration { return e.Policy.Delay(max(n, 1) - 1) }

// Validate reports the first field out of range.
func (e Exponential) Validate() error { return e.Policy.Validate("Exponential.Policy") }

// DefaultSchedule is the notifier's schedule when none is given: 1s, 2s, 4s, … capped
// at 10 minutes, with half of each delay drawn at random; ten attempts span about 8
// minutes.
var DefaultSchedule = Exponential{Policy: Backoff{Initial: time.Second, Max: 10 * time.Minute, Multiplier: 2, Jitter: 0.5}}
