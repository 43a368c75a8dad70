package crashtest

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"strconv"
	"testing"
)

// Variables of the environment that shape a crash run.
const (
	// SeedVar holds the seed of the run's random schedule; unset, a seed is drawn,
	// and printed, so that setting it replays the schedule.
	SeedVar = "FEEDKIT_CRASH_SEED"
	// KillsVar holds how many kills a crash test makes of each component.
	KillsVar = "FEEDKIT_CRASH_KILLS"
)

// Rand returns the random source of a crash test's schedule, seeded from SeedVar or,
// when unset, from a seed drawn now; it prints the seed as a "crash: component:
// seed=N" line, so that a failing run can be replayed. A bad SeedVar fails the test.
func Rand(t testing.TB, component string) *mrand.Rand {
	t.Helper()
	var seed uint64
	if s := os.Getenv(SeedVar); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("crashtest: %s=%q is not an unsigned integer: %v", SeedVar, s, err)
		}
		seed = n
	} else {
		var b [8]byte
		_, _ = rand.Read(b[:])
		seed = binary.LittleEndian.Uint64(b[:]) >> 1 // fits an int64 too, for other tools
	}
	fmt.Printf("crash: %s: seed=%d (%s=%d replays the schedule)\n", component, seed, SeedVar, seed)
	return mrand.New(mrand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// Kills returns the number of kills per component from KillsVar, or def when it is
// unset (see Int).
func Kills(t testing.TB, def int) int {
	t.Helper()
	return Int(t, KillsVar, def)
}

// Int returns the positive integer of the environment variable name, or def when it is
// unset or empty; any other value fails the test, naming the variable.
func Int(t testing.TB, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("crashtest: %s=%q must be a positive integer", name, s)
	}
	return n
}
