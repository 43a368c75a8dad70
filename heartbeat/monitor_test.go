package heartbeat

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLostOnceAfterTimeout(t *testing.T) {
	m, fake, rec := newTest(t, Config[string]{Timeout: 10 * time.Second})
	m.Beat("a")
	fake.Advance(10 * time.Second)

	assert.Equal(t, 1, m.Advance(fake.Now()))
	assert.Equal(t, []string{"lost a @0s"}, rec.take())
	assert.True(t, state(t, m, "a").Lost)

	// Found once: later Advances, however far, say nothing more.
	for _, d := range []time.Duration{time.Second, time.Hour, 100 * time.Hour} {
		fake.Advance(d)
		assert.Zero(t, m.Advance(fake.Now()))
	}
	assert.Empty(t, rec.take())
	st := m.Stats()
	assert.Equal(t, Stats{Keys: 1, Lost: 1, Beats: 1, Expired: 1}, st)
}

func TestNotLostWhenBeatingOnTime(t *testing.T) {
	tests := []struct {
		name  string
		every time.Duration // beat interval; Advance every second
	}{
		{"well within", 3 * time.Second},
		{"just within", 10*time.Second - time.Nanosecond},
		{"with an Advance between beats", 7 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, fake, rec := newTest(t, Config[string]{Timeout: 10 * time.Second})
			m.Beat("a")
			next := t0.Add(tt.every)
			for range 1000 {
				fake.Advance(time.Second / 4)
				if !fake.Now().Before(next) {
					m.BeatAt("a", next)
					next = next.Add(tt.every)
				}
				m.Advance(fake.Now())
			}
			assert.Empty(t, rec.take())
			assert.False(t, state(t, m, "a").Lost)
		})
	}
}

// TestLostWithinOneTick pins the detection rule: a key whose deadline D is reached is
// found by the first Advance(now) with now at or after D rounded up to a tick boundary
// (t0 + a whole number of seconds here), never before D, at most one Tick after it.
func TestLostWithinOneTick(t *testing.T) {
	tests := []struct {
		name     string
		beat     time.Duration // since t0
		timeout  time.Duration
		boundary time.Duration // where the key must be found; D rounded up
	}{
		{"deadline on a boundary", 0, 10 * time.Second, 10 * time.Second},
		{"deadline one ns before a boundary", time.Second - time.Nanosecond, 9 * time.Second, 10 * time.Second},
		{"deadline one ns after a boundary", time.Nanosecond, 10 * time.Second, 11 * time.Second},
		{"deadline mid tick", 500 * time.Millisecond, 10 * time.Second, 11 * time.Second},
		{"timeout shorter than a tick", 200 * time.Millisecond, 300 * time.Millisecond, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _, rec := newTest(t, Config[string]{Timeout: tt.timeout})
			m.BeatAt("a", at(tt.beat))
			deadline := tt.beat + tt.timeout
			require.LessOrEqual(t, deadline, tt.boundary)
			require.Less(t, tt.boundary-deadline, time.Second, "at most one tick late")

			// Before the boundary nothing is found, even at or after the deadline itself.
			assert.Zero(t, m.Advance(at(deadline-time.Nanosecond)))
			assert.Zero(t, m.Advance(at(tt.boundary-time.Nanosecond)))
			assert.Empty(t, rec.take())

			assert.Equal(t, 1, m.Advance(at(tt.boundary)))
			assert.Equal(t, []string{"lost a @" + tt.beat.String()}, rec.take())
		})
	}
}

// With a Tick of 1ns the deadline is not rounded: an Advance at any time finds exactly
// the keys silent for their whole timeout, as package recovery needs of its checks,
// whose times bear no relation to the monitor's creation. Each Advance goes around the
// wheel at most once, however many nanoseconds passed.
func TestLostExactlyAtTheDeadlineWithATickOf1ns(t *testing.T) {
	const timeout = 15 * time.Second
	beats := []time.Duration{0, 3*time.Second + 7, 40*time.Second + 999_999_999}
	for _, beat := range beats {
		t.Run(beat.String(), func(t *testing.T) {
			m, _, rec := newTest(t, Config[string]{Timeout: timeout, Tick: time.Nanosecond})
			m.BeatAt("a", at(beat))
			assert.Zero(t, m.Advance(at(beat+timeout-time.Nanosecond)), "silent for the timeout less 1ns")
			assert.Empty(t, rec.take())
			assert.Equal(t, 1, m.Advance(at(beat+timeout)), "silent for exactly the timeout")
			assert.Equal(t, []string{"lost a @" + beat.String()}, rec.take())
		})
	}
}

func TestAdvanceFindsEveryTickPassedAtOnce(t *testing.T) {
	m, _, rec := newTest(t, Config[string]{Timeout: 10 * time.Second})
	m.BeatAt("a", at(0))
	m.BeatAt("b", at(3*time.Second))
	m.BeatAt("c", at(6*time.Second))
	// One Advance past two deadlines finds both; the third key is not due yet.
	assert.Equal(t, 2, m.Advance(at(14*time.Second)))
	assert.Equal(t, []string{"lost a @0s", "lost b @3s"}, rec.take())
	assert.Equal(t, 1, m.Advance(at(16*time.Second)))
	assert.Equal(t, []string{"lost c @6s"}, rec.take())
}

func TestAdvanceNeverGoesBack(t *testing.T) {
	m, _, rec := newTest(t, Config[string]{Timeout: 10 * time.Second})
	m.Advance(at(20 * time.Second))
	// A key due before the monitor's latest Advance is found by the next Advance, even
	// one whose now lies before its deadline: the monitor's time already passed it.
	m.BeatAt("a", at(5*time.Second))
	assert.Equal(t, 1, m.Advance(at(time.Second)))
	assert.Equal(t, []string{"lost a @5s"}, rec.take())
}

func TestRestoredWithSilentFor(t *testing.T) {
	m, fake, rec := newTest(t, Config[string]{Timeout: 10 * time.Second})
	m.Beat("a")
	fake.Advance(12 * time.Second)
	m.Advance(fake.Now())
	assert.Equal(t, []string{"lost a @0s"}, rec.take())

	fake.Advance(13 * time.Second)
	m.Beat("a") // 25s after its last beat
	assert.Equal(t, []string{"restored a 25s"}, rec.take(), "delivered before Beat returns")
	st := state(t, m, "a")
	assert.False(t, st.Lost)
	assert.Equal(t, at(25*time.Second), st.LastSeen)

	// A second beat is an ordinary one.
	fake.Advance(time.Second)
	m.Beat("a")
	assert.Empty(t, rec.take())
	assert.Equal(t, uint64(1), m.Stats().Restored)
}

func TestLostAgainAfterRestore(t *testing.T) {
	m, _, rec := newTest(t, Config[string]{Timeout: 10 * time.Second})
	m.BeatAt("a", at(0))
	m.Advance(at(10 * time.Second))
	m.BeatAt("a", at(30*time.Second))
	m.Advance(at(39 * time.Second))
	assert.Equal(t, []string{"lost a @0s", "restored a 30s"}, rec.take())

	assert.Equal(t, 1, m.Advance(at(40*time.Second)))
	assert.Equal(t, []string{"lost a @30s"}, rec.take())
	m.BeatAt("a", at(41*time.Second))
	assert.Equal(t, []string{"restored a 11s"}, rec.take())
	st := m.Stats()
	assert.Equal(t, uint64(2), st.Expired)
	assert.Equal(t, uint64(2), st.Restored)
	assert.Equal(t, 0, st.Lost)
}

func TestTimeoutOf(t *testing.T) {
	var asked []string
	m, _, rec := newTest(t, Config[string]{
		Timeout: 10 * time.Second,
		TimeoutOf: func(key string) time.Duration {
			asked = append(asked, key)
			switch key[0] {
			case 'f': // fast class
				return 2 * time.Second
			case 's': // slow class
				return time.Minute
			case 'h': // beyond the maximum: capped
				return MaxTimeout + time.Hour
			}
			return 0 // the default
		},
	})
	for _, k := range []string{"fast", "slow", "other", "huge"} {
		m.BeatAt(k, at(0))
		m.BeatAt(k, at(time.Second)) // not asked again
	}
	assert.Equal(t, []string{"fast", "slow", "other", "huge"}, asked)
	assert.Equal(t, 2*time.Second, state(t, m, "fast").Timeout)
	assert.Equal(t, time.Minute, state(t, m, "slow").Timeout)
	assert.Equal(t, 10*time.Second, state(t, m, "other").Timeout)
	assert.Equal(t, MaxTimeout, state(t, m, "huge").Timeout)

	m.Advance(at(3 * time.Second))
	assert.Equal(t, []string{"lost fast @1s"}, rec.take())
	m.Advance(at(11 * time.Second))
	assert.Equal(t, []string{"lost other @1s"}, rec.take())
	m.Advance(at(61 * time.Second))
	assert.Equal(t, []string{"lost slow @1s"}, rec.take())
}

func TestTimeoutOfMayCallTheMonitor(t *testing.T) {
	var m *Monitor[string]
	m, _, _ = newTest(t, Config[string]{TimeoutOf: func(key string) time.Duration {
		if _, ok := m.Get(key); ok { // would deadlock if asked under the shard's lock
			return time.Hour
		}
		return time.Minute
	}, Shards: 1})
	m.Beat("a")
	assert.Equal(t, time.Minute, state(t, m, "a").Timeout)
}

func TestNoTimeoutDropsTheBeatAndCountsIt(t *testing.T) {
	m, _, _ := newTest(t, Config[string]{TimeoutOf: func(key string) time.Duration {
		if key == "known" {
			return time.Minute
		}
		return 0 // and Config.Timeout is 0: no timeout at all
	}})
	m.Beat("known")
	m.Beat("stranger")
	_, ok := m.Get("stranger")
	assert.False(t, ok)
	assert.Equal(t, 1, m.Len())
	assert.Equal(t, uint64(1), m.Stats().NoTimeout)
}

func TestSetTimeout(t *testing.T) {
	tests := []struct {
		name     string
		timeout  time.Duration // set at 5s; the key beat at 0s with a 10s timeout
		lostAt   time.Duration // the first second the key is found lost
		lastSeen time.Duration
	}{
		{"longer", 30 * time.Second, 30 * time.Second, 0},
		{"shorter", 7 * time.Second, 7 * time.Second, 0},
		{"shorter and already past", 2 * time.Second, 5 * time.Second, 0},
		{"beyond the wheel", 100 * time.Hour, 100 * time.Hour, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _, rec := newTest(t, Config[string]{Timeout: 10 * time.Second})
			m.BeatAt("a", at(0))
			m.Advance(at(5 * time.Second))
			require.NoError(t, m.SetTimeout("a", tt.timeout))
			assert.Equal(t, tt.timeout, state(t, m, "a").Timeout)

			if tt.lostAt > 5*time.Second {
				assert.Zero(t, m.Advance(at(tt.lostAt-time.Nanosecond)))
			}
			assert.Equal(t, 1, m.Advance(at(tt.lostAt)))
			assert.Equal(t, []string{"lost a @0s"}, rec.take())
		})
	}
}

func TestSetTimeoutOfALostKeyKeepsItLost(t *testing.T) {
	m, _, rec := newTest(t, Config[string]{Timeout: 10 * time.Second})
	m.BeatAt("a", at(0))
	m.Advance(at(10 * time.Second))
	require.NoError(t, m.SetTimeout("a", time.Hour))
	st := state(t, m, "a")
	assert.True(t, st.Lost)
	assert.Equal(t, time.Hour, st.Timeout)
	m.BeatAt("a", at(20*time.Second))
	assert.Equal(t, []string{"lost a @0s", "restored a 20s"}, rec.take())
	assert.Zero(t, m.Advance(at(time.Hour)), "the new timeout counts from the new beat")
	assert.Equal(t, 1, m.Advance(at(time.Hour+20*time.Second)))
}

func TestSetTimeoutErrors(t *testing.T) {
	m, _, _ := newTest(t, Config[string]{Timeout: 10 * time.Second})
	err := m.SetTimeout("nobody", time.Second)
	assert.True(t, errors.Is(err, ErrUnknownKey), "%v", err)
	assert.EqualError(t, err, "heartbeat: unknown key: SetTimeout for key nobody")
	_, ok := m.Get("nobody")
	assert.False(t, ok, "SetTimeout does not track a key")

	m.Beat("a")
	for _, d := range []time.Duration{0, -time.Second, 30, MinTimeout - 1, MaxTimeout + 1} {
		err := m.SetTimeout("a", d)
		require.Error(t, err, "%v", d)
		assert.Contains(t, err.Error(), "heartbeat: SetTimeout "+d.String()+" for key a must be between 1ms and")
	}
	require.NoError(t, m.SetTimeout("a", MinTimeout))
	require.NoError(t, m.SetTimeout("a", 10*time.Second))
	assert.Equal(t, 10*time.Second, state(t, m, "a").Timeout)
}

func TestForget(t *testing.T) {
	m, _, rec := newTest(t, Config[string]{Timeout: 10 * time.Second})
	for _, k := range []string{"a", "b", "c"} {
		m.BeatAt(k, at(0))
	}
	m.Advance(at(10 * time.Second))
	assert.Len(t, rec.take(), 3)
	m.BeatAt("b", at(11*time.Second))
	m.BeatAt("c", at(11*time.Second))
	rec.take()

	assert.True(t, m.Forget("a"), "a lost key")
	assert.True(t, m.Forget("b"), "an alive key")
	assert.False(t, m.Forget("b"), "twice")
	assert.False(t, m.Forget("nobody"))
	_, ok := m.Get("a")
	assert.False(t, ok)
	assert.Equal(t, 1, m.Len())
	assert.Equal(t, 0, m.Stats().Lost)

	// Forgotten keys are never reported; a forgotten key that beats again is new.
	assert.Equal(t, 1, m.Advance(at(time.Hour)))
	assert.Equal(t, []string{"lost c @11s"}, rec.take())
	m.BeatAt("a", at(2*time.Hour))
	assert.Empty(t, rec.take(), "no OnRestored for a key that is new again")
	assert.False(t, state(t, m, "a").Lost)
}

func TestForgetFreesSlots(t *testing.T) {
	m, _, _ := newTest(t, Config[string]{Timeout: 10 * time.Second, Shards: 1})
	s := &m.shards[0]
	size := 0
	for round := range 5 {
		for i := range 3000 {
			m.BeatAt(key(i), at(time.Duration(round)*time.Second))
		}
		if round == 0 {
			size = len(s.slots)
		}
		for i := range 3000 {
			require.True(t, m.Forget(key(i)))
		}
		checkShard(t, s)
	}
	assert.Equal(t, 0, m.Len())
	assert.Equal(t, size, len(s.slots), "slots are reused, the table does not grow")
	for i := range s.slots {
		assert.Equal(t, entry[string]{}, s.slots[i], "forgotten keys are dropped")
	}
}

func TestBeatAtOlderThanLastSeenIsIgnored(t *testing.T) {
	tests := []struct {
		name  string
		lost  bool
		stale uint64
	}{{"alive key", false, 1}, {"lost key", true, 2}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _, rec := newTest(t, Config[string]{Timeout: 10 * time.Second})
			m.BeatAt("a", at(5*time.Second))
			if tt.lost {
				m.Advance(at(15 * time.Second))
				rec.take()
			}
			m.BeatAt("a", at(4*time.Second))
			m.BeatAt("a", at(5*time.Second)) // the same beat again: stale only for a lost key
			st := state(t, m, "a")
			assert.Equal(t, at(5*time.Second), st.LastSeen)
			assert.Equal(t, tt.lost, st.Lost)
			assert.Empty(t, rec.take())
			assert.Equal(t, tt.stale, m.Stats().Stale)
			if !tt.lost {
				assert.Equal(t, 1, m.Advance(at(15*time.Second)), "the deadline did not move")
			}
		})
	}
}

func TestBeatAtInThePastOfANewKeyIsDueAtOnce(t *testing.T) {
	m, _, rec := newTest(t, Config[string]{Timeout: 10 * time.Second})
	m.Advance(at(time.Minute))
	m.BeatAt("late", at(5*time.Second))
	assert.Equal(t, 1, m.Advance(at(time.Minute)), "found by the next Advance, even without a new tick")
	assert.Equal(t, []string{"lost late @5s"}, rec.take())
}

func TestOverdueKeyThatBeatsBeforeAdvanceIsNotLost(t *testing.T) {
	m, _, rec := newTest(t, Config[string]{Timeout: 10 * time.Second})
	m.Advance(at(time.Minute))
	m.BeatAt("a", at(5*time.Second)) // overdue
	m.BeatAt("a", at(time.Minute))   // and saved in time
	assert.Zero(t, m.Advance(at(time.Minute+time.Second)))
	assert.Equal(t, 1, m.Advance(at(70*time.Second)))
	assert.Equal(t, []string{"lost a @1m0s"}, rec.take())
}

func TestGetLenStats(t *testing.T) {
	m, _, _ := newTest(t, Config[string]{Timeout: 10 * time.Second})
	_, ok := m.Get("a")
	assert.False(t, ok)
	m.BeatAt("a", at(time.Second))
	m.BeatAt("b", at(2*time.Second))
	m.BeatAt("b", at(3*time.Second))
	assert.Equal(t, State{LastSeen: at(3 * time.Second), Timeout: 10 * time.Second}, state(t, m, "b"))
	assert.Equal(t, 2, m.Len())
	m.Advance(at(11 * time.Second))
	assert.Equal(t, State{LastSeen: at(time.Second), Timeout: 10 * time.Second, Lost: true}, state(t, m, "a"))
	assert.Equal(t, Stats{Keys: 2, Lost: 1, Beats: 3, Expired: 1}, m.Stats())
}

func TestIntKeys(t *testing.T) {
	var lost []int
	m, err := New(Config[int]{Timeout: time.Second, Clock: nil, OnLost: func(k int, _ time.Time) { lost = append(lost, k) }})
	require.NoError(t, err)
	now := time.Now()
	m.BeatAt(7, now)
	m.Advance(now.Add(time.Hour))
	assert.Equal(t, []int{7}, lost)
}
