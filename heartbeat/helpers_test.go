package heartbeat

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
)

// t0 is the fake clock's start in the tests: the monitors' epoch, so that tick boundaries
// fall on whole seconds after it.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// at is t0 plus d.
func at(d time.Duration) time.Time { return t0.Add(d) }

// recorder collects the callbacks of a monitor as lines like "lost k @10s" (last seen
// relative to t0) and "restored k 25s" (silent for).
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) onLost(key string, lastSeen time.Time) {
	r.add(fmt.Sprintf("lost %s @%v", key, lastSeen.Sub(t0)))
}

func (r *recorder) onRestored(key string, silentFor time.Duration) {
	r.add(fmt.Sprintf("restored %s %v", key, silentFor))
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, s)
}

// take returns the events so far, sorted (keys found lost by one Advance come in no
// particular order), and forgets them.
func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ev := r.events
	r.events = nil
	slices.Sort(ev)
	return ev
}

// newTest returns a monitor of string keys with a fake clock at t0, Tick 1s and the
// recorder's callbacks; cfg's other fields are kept.
func newTest(t testing.TB, cfg Config[string]) (*Monitor[string], *clocktest.Fake, *recorder) {
	t.Helper()
	fake := clocktest.NewFake(t0)
	rec := &recorder{}
	cfg.Clock = fake
	if cfg.Tick == 0 {
		cfg.Tick = time.Second
	}
	cfg.OnLost, cfg.OnRestored = rec.onLost, rec.onRestored
	m, err := New(cfg)
	require.NoError(t, err)
	return m, fake, rec
}

// state fetches a key's state and requires it to be tracked.
func state(t *testing.T, m *Monitor[string], key string) State {
	t.Helper()
	st, ok := m.Get(key)
	require.True(t, ok, "key %s must be tracked", key)
	return st
}

// key is the i-th key of tests with many keys.
func key(i int) string { return fmt.Sprintf("k%05d", i) }
