package heartbeat

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewRefusesBadConfig(t *testing.T) {
	timeoutOf := func(string) time.Duration { return time.Minute }
	tests := []struct {
		name string
		cfg  Config[string]
		want string
	}{
		{"negative timeout", Config[string]{Timeout: -time.Second},
			"heartbeat: Config.Timeout -1s must not be negative"},
		{"no timeout", Config[string]{},
			"heartbeat: Config.Timeout 0s must be positive when Config.TimeoutOf is nil"},
		{"timeout too long", Config[string]{Timeout: MaxTimeout + 1},
			"heartbeat: Config.Timeout 640511h56m49.213693953s must be at most 640511h56m49.213693952s"},
		{"a number without its unit", Config[string]{Timeout: 30},
			"heartbeat: Config.Timeout 30ns is under the minimum of 1ms (a number without a unit is nanoseconds: 30 * time.Second?)"},
		{"under a millisecond", Config[string]{Timeout: 999 * time.Microsecond},
			"heartbeat: Config.Timeout 999µs is under the minimum of 1ms"},
		{"negative tick", Config[string]{Timeout: time.Minute, Tick: -time.Second},
			"heartbeat: Config.Tick -1s must not be negative (0 means 1s)"},
		{"negative shards", Config[string]{Timeout: time.Minute, Shards: -4},
			"heartbeat: Config.Shards -4 must be a power of two between 1 and 4096"},
		{"shards not a power of two", Config[string]{Timeout: time.Minute, Shards: 48},
			"heartbeat: Config.Shards 48 must be a power of two"},
		{"too many shards", Config[string]{TimeoutOf: timeoutOf, Shards: 2 * MaxShards},
			"heartbeat: Config.Shards 8192 must be a power of two"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := New(tt.cfg)
			require.Error(t, err)
			assert.Nil(t, m)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestNewAppliesDefaults(t *testing.T) {
	m, err := New(Config[int]{Timeout: time.Minute})
	require.NoError(t, err)
	assert.Equal(t, int64(DefaultTick), m.cfg.tick)
	assert.Equal(t, defaultShards(), len(m.shards))
	assert.Equal(t, 0, m.Len())

	// TimeoutOf alone is enough, and any power of two up to MaxShards is taken.
	for _, n := range []int{1, 2, 64, MaxShards} {
		m, err := New(Config[int]{TimeoutOf: func(int) time.Duration { return time.Second }, Shards: n})
		require.NoError(t, err, "shards %d", n)
		assert.Len(t, m.shards, n)
	}
}

func TestDefaultShardsIsAPowerOfTwoInRange(t *testing.T) {
	n := defaultShards()
	assert.GreaterOrEqual(t, n, 16)
	assert.LessOrEqual(t, n, 1024)
	assert.Zero(t, n&(n-1), "%d is not a power of two", n)
}
