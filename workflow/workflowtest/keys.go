package workflowtest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/workflow"
)

// keyRacers is how many goroutines race CreateOrGetProcess on one key.
const keyRacers = 16

// keyed is a new process of type typ holding idempotency key key.
func keyed(id, typ, key string) workflow.Process {
	p := processKind.sample(id)
	p.Type, p.IdempotencyKey, p.RequestDigest = typ, key, "digest-"+id
	return p
}

// stored is p as a store keeps it after its creation: version 1.
func stored(p workflow.Process) workflow.Process {
	p.Version = 1
	return processKind.norm(p)
}

// testIdempotencyKeys checks the unique (Type, IdempotencyKey) of processes: what
// CreateOrGetProcess finds or creates, what CreateProcess and UpdateProcess refuse, and
// that of racing creations on one key exactly one is saved.
func testIdempotencyKeys(t *testing.T, newStore func(*testing.T) workflow.Store) {
	// create runs CreateOrGetProcess and requires it to succeed.
	create := func(t *testing.T, s workflow.Store, p workflow.Process) (workflow.Process, bool) {
		t.Helper()
		got, created, err := s.CreateOrGetProcess(t.Context(), p)
		require.NoError(t, err)
		return processKind.norm(got), created
	}
	// count is how many processes the store holds.
	count := func(t *testing.T, s workflow.Store) int {
		t.Helper()
		_, total, err := s.SearchProcesses(t.Context(), workflow.Query{})
		require.NoError(t, err)
		return total
	}

	t.Run("SameKeyGetsTheProcess", func(t *testing.T) {
		s := newStore(t)
		first := keyed("p1", "order", "k")
		got, created := create(t, s, first)
		assert.True(t, created)
		assert.Equal(t, stored(first), got, "the process as stored")

		second := keyed("p2", "order", "k")
		second.CustomID, second.Start.Args = "other", []byte("other")
		got, created = create(t, s, second)
		assert.False(t, created, "the key is held")
		assert.Equal(t, stored(first), got, "the process that holds the key, as stored")
		_, err := s.Process(t.Context(), "p2")
		assert.ErrorIs(t, err, workflow.ErrNotFound, "nothing of the second is saved")
		assert.Equal(t, 1, count(t, s))
	})

	t.Run("KeyPerType", func(t *testing.T) {
		s := newStore(t)
		order, created := create(t, s, keyed("p1", "order", "k"))
		require.True(t, created)
		refund, created := create(t, s, keyed("p2", "refund", "k"))
		assert.True(t, created, "a key is unique within its process type only")
		assert.Equal(t, "p1", order.ID)
		assert.Equal(t, "p2", refund.ID)
		assert.Equal(t, 2, count(t, s))
	})

	t.Run("EmptyKeyIsNoKey", func(t *testing.T) {
		s := newStore(t)
		for _, id := range []string{"p1", "p2"} {
			got, created := create(t, s, keyed(id, "order", ""))
			assert.True(t, created, id)
			assert.Equal(t, stored(keyed(id, "order", "")), got)
		}
		assert.Equal(t, 2, count(t, s))
		_, _, err := s.CreateOrGetProcess(t.Context(), keyed("p1", "order", ""))
		assert.ErrorIs(t, err, workflow.ErrExists, "without a key, a taken id is ErrExists")
	})

	t.Run("TakenIDIsErrExists", func(t *testing.T) {
		s := newStore(t)
		create(t, s, keyed("p1", "order", "k1"))
		_, _, err := s.CreateOrGetProcess(t.Context(), keyed("p1", "order", "k2"))
		assert.ErrorIs(t, err, workflow.ErrExists, "an id taken under another key")
		_, created := create(t, s, keyed("p2", "order", "k2"))
		assert.True(t, created, "the refused creation left its key free")
	})

	t.Run("CreateProcessRefusesATakenKey", func(t *testing.T) {
		s := newStore(t)
		require.NoError(t, s.CreateProcess(t.Context(), keyed("p1", "order", "k")))
		assert.ErrorIs(t, s.CreateProcess(t.Context(), keyed("p2", "order", "k")), workflow.ErrExists)
		_, err := s.Process(t.Context(), "p2")
		assert.ErrorIs(t, err, workflow.ErrNotFound)
		got, created := create(t, s, keyed("p3", "order", "k"))
		assert.False(t, created, "CreateProcess's key is held as CreateOrGetProcess's")
		assert.Equal(t, "p1", got.ID)
	})

	t.Run("KeyOutlivesTheProcess", func(t *testing.T) {
		s := newStore(t)
		for i, state := range []workflow.ProcessState{workflow.ProcessFinished, workflow.ProcessAborted,
			workflow.ProcessFailed, workflow.ProcessBroken} {
			id, key := fmt.Sprint("p", i), fmt.Sprint("k", i)
			p, _ := create(t, s, keyed(id, "order", key))
			p.State, p.Run = state, 1
			p, err := s.UpdateProcess(t.Context(), p)
			require.NoError(t, err)
			got, created := create(t, s, keyed("again-"+id, "order", key))
			assert.False(t, created, "a %s process keeps its key", state)
			assert.Equal(t, processKind.norm(p), got)
		}
		assert.Equal(t, 4, count(t, s))
	})

	t.Run("UpdateKeepsKeysUnique", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		create(t, s, keyed("p1", "order", "k1"))
		p2, _ := create(t, s, keyed("p2", "order", "k2"))

		taken := p2
		taken.IdempotencyKey = "k1"
		_, err := s.UpdateProcess(ctx, taken)
		assert.ErrorIs(t, err, workflow.ErrExists, "an update to a key another process holds")
		got, err := s.Process(ctx, "p2")
		require.NoError(t, err)
		assert.Equal(t, p2, processKind.norm(got), "the refused update changed nothing")

		moved := p2
		moved.IdempotencyKey = "k3"
		moved, err = s.UpdateProcess(ctx, moved)
		require.NoError(t, err)
		again, created := create(t, s, keyed("p3", "order", "k3"))
		assert.False(t, created)
		assert.Equal(t, processKind.norm(moved), again, "the key follows the update")
		freed, created := create(t, s, keyed("p4", "order", "k2"))
		assert.True(t, created, "the key the update left is free")
		assert.Equal(t, "p4", freed.ID)

		other := moved
		other.Type = "refund" // (refund, k3) is free: the key is unique per type
		_, err = s.UpdateProcess(ctx, other)
		require.NoError(t, err)
		_, created = create(t, s, keyed("p5", "order", "k3"))
		assert.True(t, created, "the type the update left frees the key there")
	})

	t.Run("Race", func(t *testing.T) {
		s := newStore(t)
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			created []string
			got     = make(map[string]int) // id returned → how many times
		)
		start := make(chan struct{})
		for i := range keyRacers {
			wg.Go(func() {
				<-start
				p, ok, err := s.CreateOrGetProcess(t.Context(), keyed(fmt.Sprint("p", i), "order", "k"))
				if err != nil {
					t.Errorf("racer %d: %v", i, err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				got[p.ID]++
				if ok {
					created = append(created, p.ID)
				}
			})
		}
		close(start)
		wg.Wait()
		require.Len(t, created, 1, "one racer creates the process")
		assert.Equal(t, map[string]int{created[0]: keyRacers}, got, "every racer gets it")
		assert.Equal(t, 1, count(t, s))
	})
}
