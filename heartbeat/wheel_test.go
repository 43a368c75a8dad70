package heartbeat

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCeilAndFloorDiv(t *testing.T) {
	tests := []struct{ a, b, ceil, floor int64 }{
		{0, 10, 0, 0}, {1, 10, 1, 0}, {9, 10, 1, 0}, {10, 10, 1, 1}, {11, 10, 2, 1},
		{-1, 10, 0, -1}, {-10, 10, -1, -1}, {-11, 10, -1, -2},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.ceil, ceilDiv(tt.a, tt.b), "ceil %d/%d", tt.a, tt.b)
		assert.Equal(t, tt.floor, floorDiv(tt.a, tt.b), "floor %d/%d", tt.a, tt.b)
	}
}

// TestTimeoutsBeyondTheWheelSpan: a monitor of a few keys keeps a small wheel (no more
// buckets than keys), so long timeouts go around it, and are still found on time.
func TestTimeoutsBeyondTheWheelSpan(t *testing.T) {
	m, _, rec := newTest(t, Config[string]{Timeout: 10 * time.Second, Shards: 1})
	m.BeatAt("day", at(0))
	m.BeatAt("odd", at(0))
	m.BeatAt("sec", at(0))
	require.NoError(t, m.SetTimeout("day", 24*time.Hour))
	require.NoError(t, m.SetTimeout("odd", 1000*time.Second+time.Millisecond))
	require.Equal(t, minBuckets, len(m.shards[0].heads), "3 keys: the wheel does not grow")

	for s := time.Second; s <= 25*time.Hour; s += time.Second {
		m.Advance(at(s))
		switch ev := rec.take(); s {
		case 10 * time.Second:
			assert.Equal(t, []string{"lost sec @0s"}, ev)
		case 1001 * time.Second:
			assert.Equal(t, []string{"lost odd @0s"}, ev)
		case 24 * time.Hour:
			assert.Equal(t, []string{"lost day @0s"}, ev)
		default:
			require.Empty(t, ev, "at %v", s)
		}
	}
	// The day-long key went around the 16-tick wheel once per turn: 86400/16 = 5400 times.
	assert.InDelta(t, 86400/16+1000/16, m.Stats().Revisits, 4)
}

func TestWheelGrowsWithKeysToSpanTheTimeout(t *testing.T) {
	m, _, rec := newTest(t, Config[string]{Timeout: time.Hour, Shards: 1})
	for i := range 5000 {
		m.BeatAt(key(i), at(time.Duration(i)*time.Millisecond))
	}
	s := &m.shards[0]
	assert.Equal(t, 4096, len(s.heads), "spans 3601 ticks, and 5000 keys pay for it")

	// An Advance of one tick with 5000 live keys, none due, looks at one empty bucket.
	assert.Zero(t, m.Advance(at(time.Second)))
	assert.Zero(t, m.Stats().Revisits)

	assert.Equal(t, 5000, m.Advance(at(time.Hour+5*time.Second)))
	assert.Len(t, rec.take(), 5000)
	assert.Zero(t, m.Stats().Revisits, "each key was visited once, when due")
}

// TestLazyReschedulingVisitsALiveKeyOncePerTimeout: beats do not move entries; a key
// that beats every second is moved when its bucket comes up, about once per timeout.
func TestLazyReschedulingVisitsALiveKeyOncePerTimeout(t *testing.T) {
	m, _, rec := newTest(t, Config[string]{Timeout: 100 * time.Second, Shards: 1})
	for i := range 200 {
		m.BeatAt(key(i), at(0))
	}
	for s := time.Second; s <= 1000*time.Second; s += time.Second {
		for i := range 200 {
			m.BeatAt(key(i), at(s))
		}
		require.Zero(t, m.Advance(at(s)))
	}
	assert.Empty(t, rec.take())
	// 1000 s of beats every second with a 100 s timeout: each key revisited about 10 times.
	assert.InDelta(t, 200*10, m.Stats().Revisits, 200)
}

func TestAdvanceFarBeyondTheSpanVisitsEachBucketOnce(t *testing.T) {
	m, _, rec := newTest(t, Config[string]{Timeout: 10 * time.Second, Shards: 1})
	for i := range 100 {
		m.BeatAt(key(i), at(time.Duration(i)*time.Second))
	}
	require.NoError(t, m.SetTimeout(key(99), 10000*time.Hour))
	// One jump of a year: every key but one is found, with work bounded by the wheel.
	assert.Equal(t, 99, m.Advance(at(365*24*time.Hour)))
	assert.Len(t, rec.take(), 99)
	assert.Equal(t, 1, m.Advance(at(10000*time.Hour+99*time.Second)))
}

// TestAgainstAReferenceModel drives a monitor and a plain map with the same random
// operations (fixed seed) and compares every callback and every key's state.
func TestAgainstAReferenceModel(t *testing.T) {
	for _, shards := range []int{1, 4} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) {
			runModel(t, shards, rand.New(rand.NewPCG(1, uint64(shards))))
		})
	}
}

type modelKey struct {
	lastSeen, timeout time.Duration // since t0
	lost              bool
}

func runModel(t *testing.T, shards int, rnd *rand.Rand) {
	const tick = time.Second
	m, _, rec := newTest(t, Config[string]{Timeout: 30 * time.Second, Tick: tick, Shards: shards})
	model := map[string]*modelKey{}
	var now, done time.Duration // done: the latest Advance, whole ticks
	timeouts := []time.Duration{1500 * time.Millisecond, 7 * time.Second, 30 * time.Second,
		time.Minute + 300*time.Millisecond, 20 * time.Minute, 3 * time.Hour}
	dueTick := func(k *modelKey) time.Duration {
		d := k.lastSeen + k.timeout
		return (d + tick - 1) / tick * tick // deadlines are positive here
	}

	for step := range 20000 {
		k := key(rnd.IntN(40))
		mk := model[k]
		var want []string
		switch op := rnd.IntN(100); {
		case op < 55: // a beat now, or a little in the past
			when := now - time.Duration(rnd.IntN(8))*time.Second/2
			when = max(when, 0)
			m.BeatAt(k, at(when))
			switch {
			case mk == nil:
				model[k] = &modelKey{lastSeen: when, timeout: 30 * time.Second}
			case when <= mk.lastSeen:
			case mk.lost:
				want = []string{fmt.Sprintf("restored %s %v", k, when-mk.lastSeen)}
				mk.lastSeen, mk.lost = when, false
			default:
				mk.lastSeen = when
			}
		case op < 62:
			d := timeouts[rnd.IntN(len(timeouts))]
			err := m.SetTimeout(k, d)
			if mk == nil {
				require.ErrorIs(t, err, ErrUnknownKey)
			} else {
				require.NoError(t, err)
				mk.timeout = d
			}
		case op < 64:
			require.Equal(t, mk != nil, m.Forget(k))
			delete(model, k)
		default: // time passes: mostly a fraction of a tick, sometimes hours
			switch r := rnd.IntN(1000); {
			case r < 950:
				now += time.Duration(rnd.Int64N(int64(tick)))
			case r < 999:
				now += time.Duration(rnd.Int64N(int64(time.Minute)))
			default:
				now += time.Duration(rnd.Int64N(int64(5 * time.Hour)))
			}
			done = max(done, now/tick*tick)
			n := m.Advance(at(now))
			for key, mk := range model {
				if !mk.lost && dueTick(mk) <= done {
					mk.lost = true
					want = append(want, fmt.Sprintf("lost %s @%v", key, mk.lastSeen))
				}
			}
			require.Equal(t, len(want), n, "step %d", step)
		}
		slices.Sort(want)
		got := rec.take()
		require.Equal(t, fmt.Sprint(want), fmt.Sprint(got), "step %d at %v", step, now)
		if step%500 == 0 {
			for i := range m.shards {
				checkShard(t, &m.shards[i])
			}
		}
	}

	require.Equal(t, len(model), m.Len())
	lost := 0
	for k, mk := range model {
		st := state(t, m, k)
		require.Equal(t, State{LastSeen: at(mk.lastSeen), Timeout: mk.timeout, Lost: mk.lost}, st, k)
		if mk.lost {
			lost++
		}
	}
	st := m.Stats()
	assert.Equal(t, lost, st.Lost)
	t.Logf("%+v", st)
	// The walk must have exercised every path: losses, restores, stale beats, revisits.
	assert.Greater(t, st.Expired, uint64(500))
	assert.Greater(t, st.Restored, uint64(500))
	assert.Greater(t, st.Stale, uint64(500))
	assert.Greater(t, st.Revisits, uint64(500))
}
