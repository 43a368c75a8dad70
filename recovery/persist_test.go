package recovery_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/recovery"
)

// stores opens, for a restart, the store a previous process used: the same MemoryStore
// (a restart within the process), or a new FileStore over the same file.
var stores = []struct {
	name string
	open func(t *testing.T) func() recovery.Store
}{
	{"MemoryStore", func(*testing.T) func() recovery.Store {
		s := recovery.NewMemoryStore()
		return func() recovery.Store { return s }
	}},
	{"FileStore", func(t *testing.T) func() recovery.Store {
		path := filepath.Join(t.TempDir(), "producers.json")
		return func() recovery.Store { return recovery.NewFileStore(path) }
	}},
}

// Manager A gets producer 1 healthy and receives alives every 5 s, then closes. Manager B
// on the same store starts with the producer down, and its first alive recovers from the
// last subscription A saved (rule 2a).
//
// While it runs, A saves an alive that changes nothing else at most once per
// CheckInterval: what a process killed at that moment leaves in the store lags the true
// last alive by less than one CheckInterval (B would recover a few seconds more than it
// lost, never less). A graceful Close saves the last one: B recovers from exactly there.
func TestRestartRecoversFromTheLastSavedSubscription(t *testing.T) {
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			open := s.open(t)
			store := open()
			a := newRigAt(t, recovery.Config{Store: store}, t0)
			a.healthy(1)
			aState := a.state(1)
			for range 8 { // alives at t0+5s ... t0+40s
				a.advance(5*time.Second, check)
				a.alive(1, true)
			}
			lastAlive := a.clk.Now()
			require.Equal(t, lastAlive, a.state(1).LastSubscribedAt)
			killed := savedPoint(t, store, 1) // what a SIGKILL now would leave
			assert.False(t, killed.After(lastAlive), "saved %v, last alive %v", killed, lastAlive)
			assert.False(t, killed.Before(lastAlive.Add(-check)), "saved %v, last alive %v", killed, lastAlive)
			assert.True(t, killed.Before(lastAlive), "the alives since the last check are not saved yet")
			require.NoError(t, a.m.Close(context.Background()))
			assert.Equal(t, lastAlive, savedPoint(t, store, 1), "Close saves the latest recovery point")

			start := lastAlive.Add(time.Minute)
			b := newRigAt(t, recovery.Config{Store: open()}, start)
			st := b.state(1)
			assert.Equal(t, recovery.Disconnected, st.State, "a producer starts down after a restart")
			assert.False(t, st.Up)
			assert.Zero(t, st.LastDisconnectedAt)
			assert.True(t, st.LastSubscribedAt.Equal(lastAlive), "loaded %v, last alive %v", st.LastSubscribedAt, lastAlive)
			b.api.none(t)

			b.alive(1, true)
			c := b.recovered()
			assert.True(t, c.after.Equal(lastAlive), "rule 2a: from %v, want %v", c.after, lastAlive)
			assert.Greater(t, c.id, aState.RecoverySnapshotID, "B's request ids follow A's")
			b.snapshot(0, 1, c.id)
			assert.Equal(t, "producer 1 up (FirstRecoveryCompleted)", b.next(), "first in B's process")
			b.quiet()
		})
	}
}

// savedPoint returns the recovery point of producer p saved in store.
func savedPoint(t *testing.T, store recovery.Store, p int) time.Time {
	t.Helper()
	recs, err := store.Load(context.Background())
	require.NoError(t, err)
	for _, r := range recs {
		if r.Producer == p {
			return r.LastSubscribedAt
		}
	}
	t.Fatalf("no record of producer %d", p)
	return time.Time{}
}

// A Close with nothing changed since the last save writes nothing.
func TestCloseSavesOnlyWhatChanged(t *testing.T) {
	store := &countingStore{}
	a := newRigAt(t, recovery.Config{Store: store}, t0)
	a.healthy(1)
	before := store.saves()
	require.NoError(t, a.m.Close(context.Background()))
	assert.Equal(t, before, store.saves())
}

// countingStore is a MemoryStore that counts its saves.
type countingStore struct {
	recovery.MemoryStore
	mu sync.Mutex
	n  int
}

func (s *countingStore) Save(ctx context.Context, r recovery.Record) error {
	s.mu.Lock()
	s.n++
	s.mu.Unlock()
	return s.MemoryStore.Save(ctx, r)
}

func (s *countingStore) saves() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// A record saved while recovering is requested again at B's first alive, for what the
// lost recovery covered (rule 1), with an id above the saved one; the old request's
// snapshot_complete no longer ends it.
func TestRestartWhileRecoveringRequestsAgainWhatItCovered(t *testing.T) {
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			open := s.open(t)
			a := newRigAt(t, recovery.Config{Store: open()}, t0)
			a.alive(1, true)
			old := a.recovered()
			requestedAt := a.clk.Now()
			a.advance(10*time.Second, check)
			a.alive(1, true)
			require.NoError(t, a.m.Close(context.Background()))

			b := newRigAt(t, recovery.Config{Store: open()}, t0.Add(2*time.Minute))
			st := b.state(1)
			assert.Equal(t, recovery.Recovering, st.State)
			assert.False(t, st.Up)
			assert.True(t, st.RecoveryPending)
			b.advance(time.Minute, check)
			b.api.none(t) // nothing before the first alive
			b.snapshot(0, 1, old.id)
			b.quiet() // the replay went to A's queue

			b.alive(1, true)
			c := b.recovered()
			assert.True(t, c.after.Equal(old.after), "rule 1: from %v, want what the lost recovery covered, %v", c.after, old.after)
			_ = requestedAt
			assert.Greater(t, c.id, old.id)
			b.snapshot(0, 1, old.id)
			b.quiet()
			assert.Equal(t, recovery.Recovering, b.state(1).State)
			b.snapshot(0, 1, c.id)
			assert.Equal(t, "producer 1 up (FirstRecoveryCompleted)", b.next())
		})
	}
}

// A restored disconnection (rule 4) is recovered from last_disconnected_at.
func TestRestartAfterADisconnectionRecoversFromIt(t *testing.T) {
	store := recovery.NewMemoryStore()
	a := newRigAt(t, recovery.Config{Store: store}, t0)
	a.healthy(1)
	a.advance(10*time.Second, check)
	a.alive(1, true)
	lastAlive := a.clk.Now()
	a.advance(time.Minute, check) // silence: disconnected at the last alive
	require.Equal(t, "producer 1 down (AliveIntervalViolation)", a.next())
	require.NoError(t, a.m.Close(context.Background()))

	b := newRigAt(t, recovery.Config{Store: store}, lastAlive.Add(time.Hour))
	assert.Equal(t, lastAlive, b.state(1).LastDisconnectedAt)
	b.alive(1, true)
	c := b.recovered()
	assert.Equal(t, lastAlive, c.after, "rule 4")
}

// A request A sent to the API whose answer was lost (a timeout: the API may well have
// accepted it) is followed by a restart. Its replay, and its snapshot_complete, may still
// arrive, so B must not use its id again: B would take that snapshot_complete for the end
// of its own recovery.
func TestRestartNeverReusesARequestIDSentBefore(t *testing.T) {
	store := recovery.NewMemoryStore()
	a := newRigAt(t, recovery.Config{Store: store}, t0)
	a.healthy(1)
	a.clk.Advance(5 * time.Second)
	a.api.failNext(context.DeadlineExceeded)
	a.alive(1, false)
	require.Equal(t, "producer 1 down (Other)", a.next())
	lost := a.api.next(t)
	require.ErrorIs(t, a.nextErr(), context.DeadlineExceeded)
	require.NoError(t, a.m.Close(context.Background()))

	b := newRigAt(t, recovery.Config{Store: store}, a.clk.Now().Add(time.Minute))
	b.alive(1, true)
	c := b.recovered()
	assert.Greater(t, c.id, lost.id,
		"request %d reached the API before the restart; B's request must have a new id", lost.id)
}

// failingStore is a MemoryStore whose Load and Save fail while told to.
type failingStore struct {
	recovery.MemoryStore
	mu               sync.Mutex
	loadErr, saveErr error
	loads, saves     int
}

func (s *failingStore) Load(ctx context.Context) ([]recovery.Record, error) {
	s.mu.Lock()
	s.loads++
	err := s.loadErr
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return s.MemoryStore.Load(ctx)
}

func (s *failingStore) Save(ctx context.Context, r recovery.Record) error {
	s.mu.Lock()
	s.saves++
	err := s.saveErr
	s.mu.Unlock()
	if err != nil {
		return err
	}
	return s.MemoryStore.Save(ctx, r)
}

// Open fails when the store cannot be loaded, and may be tried again.
func TestOpenFailsWhenTheStoreFailsAndMayBeRetried(t *testing.T) {
	store := &failingStore{loadErr: errBoom}
	m, err := recovery.NewManager(&fakeAPI{}, nil, feed.NodeID{}, recovery.Config{Store: store})
	require.NoError(t, err)
	err = m.Open(t.Context())
	assert.ErrorIs(t, err, errBoom)
	assert.Contains(t, err.Error(), "loading producer records")
	store.mu.Lock()
	store.loadErr = nil
	store.mu.Unlock()
	require.NoError(t, m.Open(t.Context()))
	require.NoError(t, m.Close(context.Background()))
}

// A record that cannot be saved is reported, naming the producer; the manager goes on.
func TestSaveFailureIsReported(t *testing.T) {
	store := &failingStore{saveErr: errBoom}
	r := newRig(t, recovery.Config{Store: store})
	r.alive(1, true)
	err := r.nextErr()
	assert.ErrorIs(t, err, errBoom)
	assert.Contains(t, err.Error(), "producer 1")
	c := r.api.next(t)
	assert.Equal(t, fmt.Sprintf("recovery #%d of producer 1 initiated from 2026-11-21T11:50:00Z", c.id), r.next())
	require.ErrorIs(t, r.nextErr(), errBoom) // the save of the request
	r.snapshot(0, 1, c.id)
	assert.Equal(t, "producer 1 up (FirstRecoveryCompleted)", r.next())
	require.ErrorIs(t, r.nextErr(), errBoom)
	r.quiet()
}

// blockingStore is a MemoryStore whose Save, once armed, waits to be released and then
// reports whether its context was cancelled meanwhile.
type blockingStore struct {
	*recovery.MemoryStore
	armed     atomic.Bool
	entered   chan struct{}
	release   chan struct{}
	cancelled chan error
}

func (s *blockingStore) Save(ctx context.Context, r recovery.Record) error {
	if s.armed.CompareAndSwap(true, false) {
		close(s.entered)
		<-s.release
		if err := ctx.Err(); err != nil {
			s.cancelled <- err
			return err
		}
	}
	return s.MemoryStore.Save(ctx, r)
}

// A record being saved when Close is called is saved before Close returns, and its save
// is not cancelled: a store such as PostgreSQL can commit a cancelled write after the
// caller has given up on it, and a process started after Close would then read a record
// that changed under it (a stress run: the new process recovered from 200 ms after the
// record read when the old one stopped).
func TestCloseLetsARecordBeingSavedFinish(t *testing.T) {
	store := &blockingStore{MemoryStore: recovery.NewMemoryStore(), entered: make(chan struct{}),
		release: make(chan struct{}), cancelled: make(chan error, 1)}
	r := newRig(t, recovery.Config{Store: store, CheckInterval: time.Second})
	r.healthy(1)
	r.clk.Advance(5 * time.Second)
	store.armed.Store(true)
	through := r.clk.Now()
	r.aliveQueued(1, true)
	r.m.ProcessedThrough(1, through) // the recovery point moves: its record is saved
	<-store.entered

	gaveUp, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, r.m.Close(gaveUp), context.Canceled, "Close waits for the save, or for its own context")
	close(store.release)
	require.NoError(t, r.m.Close(context.Background()))
	select {
	case err := <-store.cancelled:
		t.Fatalf("Close cancelled the save of a record: %v", err)
	default:
	}
	recs, err := store.MemoryStore.Load(context.Background())
	require.NoError(t, err)
	require.Len(t, recs, 1)
	assert.Equal(t, through, recs[0].LastSubscribedAt, "the record saved is the one being saved at Close")
}
