package backoff_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/internal/backoff"
)

func TestNominalGrowsAndCaps(t *testing.T) {
	p := backoff.Policy{Initial: 100 * time.Millisecond, Max: time.Second}
	want := []time.Duration{100, 200, 400, 800, 1000, 1000}
	for i, w := range want {
		assert.Equal(t, w*time.Millisecond, p.Nominal(i), "attempt %d", i)
	}
	assert.Equal(t, time.Second, p.Nominal(10_000), "a huge attempt number stays at Max, not overflowed")
	assert.Equal(t, 100*time.Millisecond, p.Nominal(-1), "a negative attempt is the first")

	p.Multiplier = 3
	assert.Equal(t, 900*time.Millisecond, p.Nominal(2))
}

func TestJitterStaysInRange(t *testing.T) {
	p := backoff.Policy{Initial: time.Second, Max: time.Minute, Jitter: 0.5}
	assert.Equal(t, time.Second, p.DelayWith(1, 0), "u=0 gives the bottom of the range: half of 2s")
	assert.Equal(t, 1500*time.Millisecond, p.DelayWith(1, 0.5))
	for i := 0; i < 1000; i++ {
		d := p.Delay(3)
		assert.GreaterOrEqual(t, d, 4*time.Second)
		assert.LessOrEqual(t, d, 8*time.Second)
	}
	p.Jitter = 0
	assert.Equal(t, 8*time.Second, p.Delay(3))
}

func TestValidateNamesTheField(t *testing.T) {
	ok := backoff.Policy{Initial: time.Second, Max: time.Second}
	require.NoError(t, ok.Validate("x."))
	cases := map[string]backoff.Policy{
		"x.Initial":    {Max: time.Second},
		"x.Max":        {Initial: time.Second, Max: time.Millisecond},
		"x.Multiplier": {Initial: time.Second, Max: time.Second, Multiplier: 0.5},
		"x.Jitter":     {Initial: time.Second, Max: time.Second, Jitter: 1.5},
	}
	for field, p := range cases {
		err := p.Validate("x.")
		require.Error(t, err, field)
		assert.True(t, strings.HasPrefix(err.Error(), field+" "), "%q names %s", err, field)
	}
}
