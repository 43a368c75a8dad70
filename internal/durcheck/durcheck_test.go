package durcheck

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestAtLeast(t *testing.T) {
	assert.NoError(t, AtLeast("Config.X", time.Second, time.Second), "the minimum itself is fine")
	assert.NoError(t, AtLeast("Config.X", time.Hour, time.Second))
	assert.EqualError(t, AtLeast("Config.RecoveryTimeout", 60, time.Second),
		"Config.RecoveryTimeout 60ns is under the minimum of 1s (a number without a unit is nanoseconds: 60 * time.Second?)")
	assert.EqualError(t, AtLeast("Config.CheckInterval", 500*time.Microsecond, time.Millisecond),
		"Config.CheckInterval 500µs is under the minimum of 1ms", "no hint where a unit was given")
	assert.EqualError(t, AtLeast("Config.X", -time.Second, time.Second), "Config.X -1s is under the minimum of 1s")
}
