// Package durcheck refuses configured durations too short to be meant. A time.Duration
// field given a bare number, RecoveryTimeout: 60 meant as seconds, holds 60 nanoseconds;
// accepted, it turns a recovery timeout into a recovery storm. So each such field has a
// floor far below any sensible value and far above a count of nanoseconds, and a value
// under it is refused with the field, the value as Go reads it, and the unit it lacks.
package durcheck

import (
	"fmt"
	"time"
)

// AtLeast returns an error naming field when v is under minimum: "Config.RecoveryTimeout
// 60ns is under the minimum of 1s (a number without a unit is nanoseconds: 60 *
// time.Second?)". The hint is given when v is under a microsecond, where it is most
// likely a number of seconds or milliseconds written without its unit.
func AtLeast(field string, v, minimum time.Duration) error {
	if v >= minimum {
		return nil
	}
	if v > 0 && v < time.Microsecond {
		return fmt.Errorf("%s %v is under the minimum of %v (a number without a unit is nanoseconds: %d * time.Second?)", field, v, minimum, int64(v))
	}
	return fmt.Errorf("%s %v is under the minimum of %v", field, v, minimum)
}
