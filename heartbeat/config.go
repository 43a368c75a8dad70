package heartbeat

import (
	"fmt"
	"math/bits"
	"runtime"
	"time"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/internal/durcheck"
)

// DefaultTick is the expiry resolution when Config.Tick is 0: a key is found lost at most
// one second after its deadline, and the wheel of a one-hour timeout has 3,600 ticks.
const DefaultTick = time.Second

// MaxTimeout is the longest timeout a key can have (about 73 years). It keeps a deadline,
// last seen plus timeout, inside an int64 of nanoseconds.
const MaxTimeout = time.Duration(1 << 61)

// MinTimeout is the shortest timeout a key can have: a shorter one is a number written
// without its unit (Timeout: 30 is 30ns), and is refused.
const MinTimeout = time.Millisecond

// MaxShards bounds Config.Shards: more locks than this only cost memory.
const MaxShards = 1 << 12

// Config configures a Monitor. The zero value of each field means its default, except
// that a timeout must come from Timeout or TimeoutOf.
type Config[K comparable] struct {
	// Timeout is the default timeout of a key: the key is lost when it has not beaten for
	// that long, a silence of exactly Timeout included. It must be positive unless
	// TimeoutOf is set, between MinTimeout and MaxTimeout.
	Timeout time.Duration
	// TimeoutOf, if set, gives a key's timeout (per key or per class of key). It is asked
	// when the key is first seen, outside any lock, so it may call the Monitor; it should be
	// a pure function of the key, because two first beats of one key racing each other may
	// both ask it (one answer is kept). An answer <= 0 means Timeout; above MaxTimeout means
	// MaxTimeout. When it answers <= 0 and Timeout is 0, the key cannot be tracked: its beat
	// is dropped and counted in Stats.NoTimeout.
	TimeoutOf func(key K) time.Duration
	// Tick is the expiry resolution: deadlines are rounded up to the next multiple of Tick
	// after the monitor's creation, so a key is found lost at most one Tick after its
	// deadline, and Run advances once per Tick. 0 means DefaultTick (1s). It has no floor:
	// a Tick of 1ns makes expiry exact, a fair choice for a few keys advanced by hand.
	Tick time.Duration
	// OnLost, if set, is called once when a key is found silent past its timeout, with the
	// time of its last beat. See the package doc for where and in which order callbacks run.
	OnLost func(key K, lastSeen time.Time)
	// OnRestored, if set, is called when a lost key beats again, with how long it was
	// silent (the new beat minus the last one before it was lost).
	OnRestored func(key K, silentFor time.Duration)
	// Shards is the number of independently locked parts the keys are spread over; it must
	// be a power of two, at most MaxShards. 0 means four per GOMAXPROCS, at least 16 and
	// at most 1024, so that beating goroutines seldom wait for each other.
	Shards int
	// Clock is the source of time of Beat and Run; nil is the wall clock (a clocktest.Fake
	// in tests).
	Clock clock.Clock
}

// settings is a Config checked, with its defaults applied.
type settings[K comparable] struct {
	timeout    int64 // nanoseconds; 0 when only TimeoutOf gives timeouts
	timeoutOf  func(K) time.Duration
	tick       int64 // nanoseconds
	onLost     func(K, time.Time)
	onRestored func(K, time.Duration)
	shards     int
	clock      clock.Clock
}

func (c Config[K]) resolve() (settings[K], error) {
	s := settings[K]{timeout: int64(c.Timeout), timeoutOf: c.TimeoutOf, tick: int64(c.Tick),
		onLost: c.OnLost, onRestored: c.OnRestored, shards: c.Shards, clock: clock.OrReal(c.Clock)}
	switch {
	case c.Timeout < 0:
		return s, fmt.Errorf("heartbeat: Config.Timeout %v must not be negative", c.Timeout)
	case c.Timeout == 0 && c.TimeoutOf == nil:
		return s, fmt.Errorf("heartbeat: Config.Timeout %v must be positive when Config.TimeoutOf is nil", c.Timeout)
	case c.Timeout > MaxTimeout:
		return s, fmt.Errorf("heartbeat: Config.Timeout %v must be at most %v", c.Timeout, MaxTimeout)
	case c.Timeout > 0 && c.Timeout < MinTimeout:
		return s, fmt.Errorf("heartbeat: %w", durcheck.AtLeast("Config.Timeout", c.Timeout, MinTimeout))
	case c.Tick < 0:
		return s, fmt.Errorf("heartbeat: Config.Tick %v must not be negative (0 means %v)", c.Tick, DefaultTick)
	case c.Shards < 0 || c.Shards > MaxShards || bits.OnesCount(uint(c.Shards)) > 1:
		return s, fmt.Errorf("heartbeat: Config.Shards %d must be a power of two between 1 and %d (0 means %d here)",
			c.Shards, MaxShards, defaultShards())
	}
	if s.tick == 0 {
		s.tick = int64(DefaultTick)
	}
	if s.shards == 0 {
		s.shards = defaultShards()
	}
	return s, nil
}

// defaultShards is four shards per GOMAXPROCS, rounded up to a power of two, between 16
// and 1024: enough locks that goroutines beating on every core seldom meet on one.
func defaultShards() int {
	n := 4 * runtime.GOMAXPROCS(0)
	n = 1 << bits.Len(uint(n-1))
	return min(max(n, 16), 1024)
}
