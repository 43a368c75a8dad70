package heartbeat

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
)

func sortedEntries(es []Entry[string]) []Entry[string] {
	slices.SortFunc(es, func(a, b Entry[string]) int { return strings.Compare(a.Key, b.Key) })
	return es
}

func TestSnapshot(t *testing.T) {
	m, _, _ := newTest(t, Config[string]{Timeout: 10 * time.Second})
	m.BeatAt("alive", at(5*time.Second))
	m.BeatAt("lost", at(0))
	m.BeatAt("long", at(0))
	require.NoError(t, m.SetTimeout("long", time.Hour))
	m.BeatAt("gone", at(0))
	m.Forget("gone")
	m.Advance(at(12 * time.Second))

	assert.Equal(t, []Entry[string]{
		{Key: "alive", LastSeen: at(5 * time.Second), Timeout: 10 * time.Second},
		{Key: "long", LastSeen: at(0), Timeout: time.Hour},
		{Key: "lost", LastSeen: at(0), Timeout: 10 * time.Second, Lost: true},
	}, sortedEntries(m.Snapshot()))
}

// TestSnapshotRestoreResumes: a process saves its state (as JSON), stops, and a new one
// restores it: keys whose deadline passed during the downtime are found lost once by the
// first Advance, a key that was lost stays lost and is restored by its next beat.
func TestSnapshotRestoreResumes(t *testing.T) {
	m1, fake, rec1 := newTest(t, Config[string]{Timeout: 10 * time.Second})
	m1.Beat("was-lost")
	fake.Advance(10 * time.Second)
	m1.Advance(fake.Now())
	assert.Equal(t, []string{"lost was-lost @0s"}, rec1.take())
	m1.Beat("expires-while-down") // due at 20s
	fake.Advance(5 * time.Second)
	m1.Beat("survives") // due at 25s
	m1.Beat("custom")
	require.NoError(t, m1.SetTimeout("custom", time.Minute)) // due at 75s
	saved, err := json.Marshal(m1.Snapshot())
	require.NoError(t, err)

	// Down from 15s to 22s. The new process's monitor starts at 22s, with ticks of its own.
	fake.Advance(7 * time.Second)
	rec2 := &recorder{}
	m2, err := New(Config[string]{Timeout: 10 * time.Second, Tick: time.Second, Clock: fake,
		OnLost: rec2.onLost, OnRestored: rec2.onRestored})
	require.NoError(t, err)
	var entries []Entry[string]
	require.NoError(t, json.Unmarshal(saved, &entries))
	require.NoError(t, m2.Restore(entries))
	assert.Empty(t, rec2.take(), "Restore itself reports nothing")
	assert.Equal(t, 4, m2.Len())
	assert.True(t, state(t, m2, "was-lost").Lost)
	assert.Equal(t, time.Minute, state(t, m2, "custom").Timeout)

	assert.Equal(t, 1, m2.Advance(fake.Now()), "the first Advance, at once")
	assert.Equal(t, []string{"lost expires-while-down @10s"}, rec2.take())
	assert.Zero(t, m2.Advance(fake.Now()), "once")

	fake.Advance(3 * time.Second) // 25s
	m2.Advance(fake.Now())
	assert.Equal(t, []string{"lost survives @15s"}, rec2.take())
	m2.Beat("was-lost")
	assert.Equal(t, []string{"restored was-lost 25s"}, rec2.take())
	m2.Advance(at(75 * time.Second))
	assert.Equal(t, []string{"lost custom @15s", "lost was-lost @25s"}, rec2.take())
	st := m2.Stats()
	assert.Equal(t, uint64(4), st.Expired)
	assert.Equal(t, uint64(1), st.Restored)
}

func TestRestoreMerges(t *testing.T) {
	tests := []struct {
		name  string
		setup func(m *Monitor[string]) // before Restore, at 20s
		entry Entry[string]
		want  State
		calls []string // callbacks during Restore
	}{
		{
			name:  "unknown key added",
			entry: Entry[string]{Key: "a", LastSeen: at(15 * time.Second), Timeout: time.Minute},
			want:  State{LastSeen: at(15 * time.Second), Timeout: time.Minute},
		},
		{
			name:  "timeout 0 means the default",
			entry: Entry[string]{Key: "a", LastSeen: at(15 * time.Second)},
			want:  State{LastSeen: at(15 * time.Second), Timeout: 10 * time.Second},
		},
		{
			name:  "a newer entry wins",
			setup: func(m *Monitor[string]) { m.BeatAt("a", at(10*time.Second)) },
			entry: Entry[string]{Key: "a", LastSeen: at(15 * time.Second), Timeout: time.Minute},
			want:  State{LastSeen: at(15 * time.Second), Timeout: time.Minute},
		},
		{
			name:  "an older entry gives only its timeout",
			setup: func(m *Monitor[string]) { m.BeatAt("a", at(18*time.Second)) },
			entry: Entry[string]{Key: "a", LastSeen: at(15 * time.Second), Timeout: time.Minute},
			want:  State{LastSeen: at(18 * time.Second), Timeout: time.Minute},
		},
		{
			name: "an older entry with timeout 0 changes nothing",
			setup: func(m *Monitor[string]) {
				m.BeatAt("a", at(18*time.Second))
				_ = m.SetTimeout("a", time.Hour)
			},
			entry: Entry[string]{Key: "a", LastSeen: at(15 * time.Second)},
			want:  State{LastSeen: at(18 * time.Second), Timeout: time.Hour},
		},
		{
			name:  "a lost entry of a key that beat since is restored",
			setup: func(m *Monitor[string]) { m.BeatAt("a", at(18*time.Second)) },
			entry: Entry[string]{Key: "a", LastSeen: at(time.Second), Timeout: 5 * time.Second, Lost: true},
			want:  State{LastSeen: at(18 * time.Second), Timeout: 5 * time.Second},
			calls: []string{"restored a 17s"},
		},
		{
			name: "a lost key given a newer alive entry is restored",
			setup: func(m *Monitor[string]) {
				m.BeatAt("a", at(0))
				m.Advance(at(10 * time.Second))
			},
			entry: Entry[string]{Key: "a", LastSeen: at(15 * time.Second), Timeout: 10 * time.Second},
			want:  State{LastSeen: at(15 * time.Second), Timeout: 10 * time.Second},
			calls: []string{"restored a 15s"},
		},
		{
			name:  "a newer lost entry makes the key lost, silently",
			setup: func(m *Monitor[string]) { m.BeatAt("a", at(time.Second)) },
			entry: Entry[string]{Key: "a", LastSeen: at(2 * time.Second), Timeout: time.Second, Lost: true},
			want:  State{LastSeen: at(2 * time.Second), Timeout: time.Second, Lost: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, fake, rec := newTest(t, Config[string]{Timeout: 10 * time.Second})
			if tt.setup != nil {
				tt.setup(m)
			}
			fake.Set(at(20 * time.Second))
			rec.take()
			require.NoError(t, m.Restore([]Entry[string]{tt.entry}))
			assert.Equal(t, tt.calls, rec.take())
			assert.Equal(t, tt.want, state(t, m, "a"))
			st := m.Stats()
			assert.Equal(t, 1, st.Keys)
			assert.Equal(t, map[bool]int{true: 1}[tt.want.Lost], st.Lost)
		})
	}
}

func TestRestoredKeyIsScheduled(t *testing.T) {
	m, _, rec := newTest(t, Config[string]{Timeout: 10 * time.Second})
	m.BeatAt("a", at(0)) // due at 10s
	require.NoError(t, m.Restore([]Entry[string]{{Key: "a", LastSeen: at(5 * time.Second), Timeout: 2 * time.Second}}))
	assert.Equal(t, 1, m.Advance(at(7*time.Second)), "rescheduled earlier by the entry")
	assert.Equal(t, []string{"lost a @5s"}, rec.take())
	assert.Zero(t, m.Advance(at(10*time.Second)))
}

func TestRestoreRefusesBadEntriesAndChangesNothing(t *testing.T) {
	tests := []struct {
		name  string
		entry Entry[string]
		want  string
	}{
		{"zero last seen", Entry[string]{Key: "bad"},
			"heartbeat: Restore entry 1 (key bad): LastSeen must not be zero"},
		{"negative timeout", Entry[string]{Key: "bad", LastSeen: t0, Timeout: -time.Second},
			"heartbeat: Restore entry 1 (key bad): Timeout -1s must be between 0 and"},
		{"timeout too long", Entry[string]{Key: "bad", LastSeen: t0, Timeout: MaxTimeout + 1},
			"heartbeat: Restore entry 1 (key bad): Timeout 640511h56m49.213693953s must be between 0 and"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _, _ := newTest(t, Config[string]{Timeout: 10 * time.Second})
			err := m.Restore([]Entry[string]{{Key: "good", LastSeen: t0}, tt.entry})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.Zero(t, m.Len())
		})
	}

	t.Run("no default timeout", func(t *testing.T) {
		m, err := New(Config[string]{TimeoutOf: func(string) time.Duration { return 0 }, Clock: clocktest.NewFake(t0)})
		require.NoError(t, err)
		err = m.Restore([]Entry[string]{{Key: "x", LastSeen: t0}})
		assert.EqualError(t, err, "heartbeat: Restore entry 0 (key x): Timeout 0 and no default timeout for the key")
	})
}

func TestRestoreAskTimeoutOfForTimeoutZero(t *testing.T) {
	m, _, _ := newTest(t, Config[string]{TimeoutOf: func(k string) time.Duration {
		return time.Duration(len(k)) * time.Second
	}})
	require.NoError(t, m.Restore([]Entry[string]{{Key: "abc", LastSeen: t0}, {Key: "ab", LastSeen: t0, Timeout: time.Hour}}))
	assert.Equal(t, 3*time.Second, state(t, m, "abc").Timeout)
	assert.Equal(t, time.Hour, state(t, m, "ab").Timeout)
}
