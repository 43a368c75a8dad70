package heartbeat

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
)

// keyLog checks, per key, that callbacks alternate lost, restored, lost, ... and that no
// two callbacks of one key ever run at once.
type keyLog struct {
	t      *testing.T
	mu     sync.Mutex
	last   map[string]string // "lost" or "restored"
	counts map[string]int
	busy   sync.Map // key -> *atomic.Int32: callbacks of the key running now
}

func newKeyLog(t *testing.T) *keyLog {
	return &keyLog{t: t, last: map[string]string{}, counts: map[string]int{}}
}

func (l *keyLog) note(key, what string) {
	c, _ := l.busy.LoadOrStore(key, new(atomic.Int32))
	if c.(*atomic.Int32).Add(1) != 1 {
		l.t.Errorf("two callbacks of %s at once", key)
	}
	defer c.(*atomic.Int32).Add(-1)
	l.mu.Lock()
	defer l.mu.Unlock()
	if (what == "lost") == (l.last[key] == "lost") { // lost first, then in turns
		l.t.Errorf("%s %s after %q", what, key, l.last[key])
	}
	l.last[key] = what
	l.counts[what]++
}

// TestConcurrentBeatsWhileAdvancing: goroutines beat random keys while another advances
// the clock and the monitor, and another reads. Run it with -race.
func TestConcurrentBeatsWhileAdvancing(t *testing.T) {
	fake := clocktest.NewFake(t0)
	log := newKeyLog(t)
	var m *Monitor[string]
	m, err := New(Config[string]{
		Timeout: 3 * time.Second, Tick: 100 * time.Millisecond, Shards: 4, Clock: fake,
		OnLost: func(key string, _ time.Time) {
			log.note(key, "lost")
			_, _ = m.Get(key) // callbacks run outside the locks
		},
		OnRestored: func(key string, _ time.Duration) { log.note(key, "restored") },
	})
	require.NoError(t, err)

	// Each key beats for 3 s of fake time, then is silent for 7 s, its cycle offset by its
	// number: keys are lost and restored all the time, while beats race with Advance.
	var stop atomic.Bool
	var step atomic.Int64
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(g), 7))
			for !stop.Load() {
				i := rnd.IntN(500)
				if (int64(i)+step.Load())%200 < 60 {
					m.Beat(key(i))
				}
			}
		})
	}
	wg.Go(func() { // a reader
		for !stop.Load() {
			_ = m.Stats()
			_ = m.Len()
			_, _ = m.Get(key(1))
		}
	})
	for range 400 {
		step.Add(1)
		fake.Advance(50 * time.Millisecond)
		m.Advance(fake.Now())
	}
	stop.Store(true)
	wg.Wait()

	for i := range m.shards {
		checkShard(t, &m.shards[i])
	}
	st := m.Stats()
	lost := 0
	for i := range 500 {
		s, ok := m.Get(key(i))
		if !ok {
			continue
		}
		assert.Equal(t, log.last[key(i)] == "lost", s.Lost, key(i))
		if s.Lost {
			lost++
		}
	}
	assert.Equal(t, lost, st.Lost)
	assert.Equal(t, uint64(log.counts["lost"]), st.Expired)
	assert.Equal(t, uint64(log.counts["restored"]), st.Restored)
	t.Logf("%+v", st)
}

// TestCallbacksMayCallTheMonitor: callbacks run with no lock held, so they can read and
// beat keys, their own shard's included (one shard here), without deadlock; what they
// cause is delivered in order before the Advance returns.
func TestCallbacksMayCallTheMonitor(t *testing.T) {
	var m *Monitor[string]
	var calls []string
	m, err := New(Config[string]{
		Timeout: 10 * time.Second, Tick: time.Second, Shards: 1, Clock: clocktest.NewFake(t0),
		OnLost: func(key string, _ time.Time) {
			st, _ := m.Get(key)
			calls = append(calls, fmt.Sprintf("lost %s (lost=%v)", key, st.Lost))
			if key == "a" {
				m.BeatAt(key, at(time.Minute)) // restores a: queued behind this batch
				m.Beat("c")                    // a new key
				_ = m.SetTimeout("b", time.Hour)
				_ = m.Snapshot()
				_ = m.Stats()
			}
		},
		OnRestored: func(key string, silentFor time.Duration) {
			st, _ := m.Get(key)
			calls = append(calls, fmt.Sprintf("restored %s %v (lost=%v)", key, silentFor, st.Lost))
			m.Forget(key)
		},
	})
	require.NoError(t, err)
	m.BeatAt("a", at(0))
	m.BeatAt("b", at(0))

	assert.Equal(t, 2, m.Advance(at(10*time.Second)))
	require.Len(t, calls, 3, "everything delivered before Advance returned")
	assert.ElementsMatch(t, []string{"lost a (lost=true)", "lost b (lost=true)"}, calls[:2])
	assert.Equal(t, "restored a 1m0s (lost=false)", calls[2], "after a's OnLost returned")
	assert.Equal(t, 2, m.Len(), "b and c; a was forgotten by OnRestored")
}

func TestPanickingCallbackLeavesTheRestToTheNextAdvance(t *testing.T) {
	var lost []string
	m, err := New(Config[string]{
		Timeout: 10 * time.Second, Tick: time.Second, Shards: 1, Clock: clocktest.NewFake(t0),
		OnLost: func(key string, _ time.Time) {
			if key == "bad" {
				panic("callback bug")
			}
			lost = append(lost, key)
		},
	})
	require.NoError(t, err)
	var want []string // more keys than an event chunk holds
	for i := range 3 * eventChunk {
		m.BeatAt(key(i), at(0))
		want = append(want, key(i))
	}
	m.BeatAt("bad", at(0))
	assert.PanicsWithValue(t, "callback bug", func() { m.Advance(at(10 * time.Second)) })
	assert.Equal(t, len(want)+1, m.Stats().Lost, "the state is consistent")
	m.BeatAt("e", at(10*time.Second)) // the monitor still works; no deadlock on the shard

	assert.Zero(t, m.Advance(at(11*time.Second)), "nothing newly lost")
	assert.ElementsMatch(t, want, lost, "the rest delivered, each once")
}
