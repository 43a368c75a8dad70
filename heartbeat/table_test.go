package heartbeat

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkShard verifies a shard's invariants: every key is found at its slot, the counts
// are right, and the wheel's lists are well linked and hold each alive key exactly once.
func checkShard[K comparable](t *testing.T, s *shard[K]) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	keys, lost := 0, 0
	for i := range s.slots {
		e := &s.slots[i]
		if e.hash == 0 {
			continue
		}
		keys++
		if e.prev == prevLost {
			lost++
		}
		j, ok := s.find(e.key, e.hash)
		require.True(t, ok, "slot %d: key %v not found", i, e.key)
		require.Equal(t, int32(i), j, "key %v", e.key)
	}
	require.Equal(t, s.keys, keys)
	require.Equal(t, s.lost, lost)

	seen := map[int32]bool{}
	walk := func(head, mark int32) {
		prev := mark
		for i := head; i != nilIndex; i = s.at(i).next {
			e := s.at(i)
			require.NotZero(t, e.hash, "slot %d is listed but empty", i)
			require.NotEqual(t, prevLost, e.prev, "slot %d is listed but lost", i)
			require.Equal(t, prev, e.prev, "slot %d: prev", i)
			require.False(t, seen[i], "slot %d listed twice", i)
			seen[i] = true
			prev = i
		}
	}
	walk(s.overdue, prevOverdue)
	for b, h := range s.heads {
		walk(h, ^int32(b))
	}
	require.Equal(t, keys-lost, len(seen), "every alive key is listed")
}

// TestTableAgainstAMap inserts and forgets random keys in one small-keyed shard (many
// collisions, many probe runs that wrap around), checking the table against a map and the
// shard's invariants as it goes.
func TestTableAgainstAMap(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	m, _, _ := newTest(t, Config[string]{Timeout: 10 * time.Second, Shards: 1})
	s := &m.shards[0]
	want := map[string]bool{}
	for step := range 30000 {
		k := key(rnd.IntN(600))
		if rnd.IntN(3) == 0 {
			require.Equal(t, want[k], m.Forget(k), "step %d", step)
			delete(want, k)
		} else {
			m.BeatAt(k, at(time.Duration(step)*time.Millisecond))
			want[k] = true
		}
		if step%1000 == 0 {
			m.Advance(at(time.Duration(step) * time.Millisecond)) // some keys lost
			checkShard(t, s)
		}
	}
	checkShard(t, s)
	assert.Equal(t, len(want), m.Len())
	for k := range want {
		_, ok := m.Get(k)
		assert.True(t, ok, k)
	}
	load := float64(s.keys) / float64(len(s.slots))
	assert.LessOrEqual(t, load, 0.8)
}

func TestTableGrowsByHalf(t *testing.T) {
	m, _, _ := newTest(t, Config[string]{Timeout: 10 * time.Second, Shards: 1})
	s := &m.shards[0]
	var sizes []int
	for i := range 100 {
		m.BeatAt(key(i), at(0))
		if len(sizes) == 0 || sizes[len(sizes)-1] != len(s.slots) {
			sizes = append(sizes, len(s.slots))
		}
	}
	assert.Equal(t, []int{8, 12, 18, 27, 40, 60, 90, 135}, sizes)
	checkShard(t, s)
	assert.Equal(t, 100, m.Advance(at(10*time.Second)), "the wheel was rebuilt at each growth")
}

func TestHomeScalesTheHash(t *testing.T) {
	assert.Equal(t, 0, home(1, 10))
	assert.Equal(t, 9, home(^uint32(0), 10))
	assert.Equal(t, 5, home(1<<31, 10))
}
