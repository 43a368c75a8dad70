package clock_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/clock/clocktest"
)

func TestOrReal(t *testing.T) {
	f := clocktest.NewFake(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	assert.Same(t, clock.Clock(f), clock.OrReal(f))
	assert.Equal(t, clock.Real(), clock.OrReal(nil))
	assert.WithinDuration(t, time.Now(), clock.Real().Now(), time.Minute)
}

func TestRealTimersFire(t *testing.T) {
	c := clock.Real()
	timer := c.NewTimer(time.Millisecond)
	<-timer.C()
	ticker := c.NewTicker(time.Millisecond)
	<-ticker.C()
	ticker.Stop()
	fired := make(chan struct{})
	c.AfterFunc(time.Millisecond, func() { close(fired) })
	<-fired
	assert.GreaterOrEqual(t, c.Since(time.Now().Add(-time.Second)), time.Second)
}
