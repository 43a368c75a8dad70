package carouseltest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/carousel"
	"github.com/feedkit/feedkit/clock/clocktest"
)

// The schedule of TestFailover: one publish a second, progress saved every five seconds
// of a running cycle (at its 6th, 11th, 16th... publish of an activation), so that at
// most five publishes are not saved when an instance dies.
const (
	failoverThrottle   = time.Second
	failoverCheckpoint = 5 * time.Second
	// checkpointPublishes is the most publishes an instance makes between two saves:
	// what a kill may leave unsaved, and the bound on what a switch republishes.
	checkpointPublishes = int(failoverCheckpoint / failoverThrottle)
	failoverItems       = 200
	failoverCollection  = "carouseltest-failover"
)

// hangGuard bounds how long a scenario waits in real time for a scheduler to act on its
// fake clock: a guard against a hang that fails only on a real one.
const hangGuard = time.Minute

var failoverCycle = carousel.CycleConfig{Name: "carouseltest-failover", Type: carousel.ThrottledWholeCollection,
	Origin: "carouseltest", Collection: failoverCollection, CoolDown: time.Minute, Throttle: failoverThrottle}

// TestFailover checks a MetadataStore under two schedulers, A and B, that hand a cycle to
// each other through a lease that numbers its activations, as two instances of a
// deployment do: every activation resumes from the progress saved in the store, none
// from what it remembers, and the store refuses the saves of an instance that lost the
// lease. Every item is published at least once, and the items published twice are
// counted exactly: none across a switch of a living instance, which saves on its way
// out, and at most one checkpoint interval's (five) across a kill. Every publication,
// first or second, carries the iteration and the position of its item. newStore returns
// an empty store, which both schedulers use.
//
// Each scheduler has a fake clock of its own, moved one throttle at a time, so that the
// publishes and checkpoints fall at the same instants on every run.
func TestFailover(t *testing.T, newStore func(t *testing.T) carousel.MetadataStore) {
	t.Run("A to B to A", func(t *testing.T) {
		f := newFailover(t, newStore(t))
		f.activate(f.a)
		f.a.run(12)
		f.a.shutdown()
		f.activate(f.b)
		assertIDs(t, numbered(12, 27), f.b.run(15), "B resumes after A's last")
		f.b.shutdown()
		f.activate(f.a)
		assertIDs(t, numbered(27, 37), f.a.run(10), "A resumes after B's last, not its own")
		f.a.shutdown()
		f.assertPublished(37, nil)
		assert.Equal(t, 37, f.saved().Completed, "A's last save continues B's progress")
	})

	t.Run("A to B, B killed, to A", func(t *testing.T) {
		f := newFailover(t, newStore(t))
		f.activate(f.a)
		f.a.run(12)
		f.a.shutdown()
		f.activate(f.b)
		assertIDs(t, numbered(12, 27), f.b.run(15), "B resumes after A's last")
		f.b.kill()
		// B saved at its 6th and 11th publishes: the 12th to 15th died with it.
		require.Equal(t, 12+11, f.saved().Completed, "B's last checkpoint")
		f.activate(f.a)
		assertIDs(t, numbered(23, 33), f.a.run(10), "A resumes after B's last checkpoint")
		f.a.shutdown()
		f.assertPublished(33, numbered(23, 27))
	})

	// A loses the lease without knowing it yet; B takes over at once, without waiting
	// for A's last save, and claims the progress it restored. A's save after that, on its
	// way out, is refused, although B has not saved progress of its own yet.
	t.Run("a stale instance's save after a takeover is refused", func(t *testing.T) {
		f := newFailover(t, newStore(t))
		f.activate(f.a)
		f.a.run(8) // saved at its 6th publish
		f.activate(f.b)
		assertIDs(t, numbered(6, 7), f.b.run(1), "B resumes after A's last checkpoint")
		f.a.shutdown()
		assert.Equal(t, int32(1), f.a.store.refused.Load(), "A's exit save refused")
		assert.Equal(t, 6, f.saved().Completed, "A's exit save (8 completed) did not overwrite the progress B restored")
		assertIDs(t, numbered(7, 13), f.b.run(6), "B goes on")
		require.Equal(t, 12, f.saved().Completed, "B's checkpoint at its 6th publish")
		f.b.shutdown()
		f.activate(f.a)
		assertIDs(t, numbered(13, 16), f.a.run(3), "A resumes after B's last")
		f.a.shutdown()
		f.assertPublished(16, numbered(6, 8))
	})

	// A stale instance that goes on publishing stops the cycle at its next checkpoint,
	// which the store refuses: it republishes at most one checkpoint interval.
	t.Run("a stale instance stops at its next checkpoint", func(t *testing.T) {
		f := newFailover(t, newStore(t))
		f.activate(f.a)
		f.a.run(8)
		f.activate(f.b)
		assertIDs(t, numbered(6, 13), f.b.run(7), "B resumes after A's last checkpoint")
		// A's 9th and 10th publishes, then its 11th, after which it saves, refused.
		assertIDs(t, numbered(8, 10), f.a.run(2), "A, stale, publishes on")
		f.a.clk.Advance(failoverThrottle)
		assert.Equal(t, numbered(10, 11)[0], f.a.next(), "A's 11th publish")
		f.a.store.awaitRefusal(t)
		f.a.shutdown()
		assertIDs(t, numbered(0, 11), f.a.all(), "A stopped at its refused checkpoint")
		assert.Equal(t, int32(1), f.a.store.refused.Load(), "nothing saved after the refusal")
		st, err := f.a.s.Cycle(failoverCycle.Name)
		require.NoError(t, err)
		assert.Contains(t, st.Metadata.LastError, "later activation", "A tells why it stopped")
		assert.Equal(t, 12, f.saved().Completed, "B's progress stands")
		f.b.shutdown()
		f.assertPublished(13, numbered(6, 11))
	})
}

// failover is two instances on one store and one lease.
type failover struct {
	t     *testing.T
	store carousel.MetadataStore
	lease *lease
	a, b  *instance
}

func newFailover(t *testing.T, store carousel.MetadataStore) *failover {
	src := carousel.NewMemorySource()
	require.NoError(t, src.Put(failoverCollection, numbered(0, failoverItems)...))
	f := &failover{t: t, store: store, lease: &lease{}}
	f.a = newInstance(t, "A", src, store, f.lease)
	f.b = newInstance(t, "B", src, store, f.lease)
	return f
}

// activate gives the lease to in, a new activation, and starts its scheduler an hour
// later on its clock: the time it was passive.
func (f *failover) activate(in *instance) {
	f.t.Helper()
	f.lease.give(in.name)
	in.clk.Advance(time.Hour)
	require.NoError(f.t, in.s.Start(context.Background()), "%s starts", in.name)
}

// saved returns the cycle's progress in the store.
func (f *failover) saved() carousel.CycleMetadata {
	f.t.Helper()
	m, ok, err := f.store.Load(context.Background(), failoverCycle.Name)
	require.NoError(f.t, err)
	require.True(f.t, ok, "the cycle's progress is saved")
	return m
}

// assertPublished checks that both instances together published the first n items, none
// skipped, each once but the items of twice, each exactly twice; and that every
// publication, the second of an item too, says it is of the first iteration, at the
// item's position in the collection.
func (f *failover) assertPublished(n int, twice []carousel.Item) {
	f.t.Helper()
	times := map[string]int{}
	for _, in := range []*instance{f.a, f.b} {
		in.mu.Lock()
		for _, p := range in.published {
			times[p.Item.ID]++
			var i int
			_, err := fmt.Sscanf(p.Item.ID, "item-%04d", &i)
			require.NoError(f.t, err)
			assert.Equal(f.t, failoverCycle.Name, p.Cycle)
			assert.Equal(f.t, 1, p.Iteration, "%s published by %s", p.Item.ID, in.name)
			assert.Equal(f.t, i+1, p.Position, "%s published by %s", p.Item.ID, in.name)
		}
		in.mu.Unlock()
	}
	want := map[string]int{}
	for _, it := range numbered(0, n) {
		want[it.ID] = 1
	}
	for _, it := range twice {
		want[it.ID] = 2
	}
	assert.Equal(f.t, want, times, "the items published, and how many times")
	f.t.Logf("published %d items, %d of them twice", n, len(twice))
}

// lease is a toggle shared by the instances: the one it was last given to is active,
// under the generation of that giving.
type lease struct {
	mu     sync.Mutex
	holder string
	gen    carousel.Generation
}

func (l *lease) give(to string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.holder = to
	l.gen++
}

func (l *lease) toggle(name string) carousel.Toggle {
	return carousel.ToggleFunc(func(context.Context) (bool, carousel.Generation, error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.holder != name {
			return false, 0, nil
		}
		return true, l.gen, nil
	})
}

// instance is one of the two: a scheduler on its own fake clock, saving through a store
// that it can kill.
type instance struct {
	t     *testing.T
	name  string
	clk   *clocktest.Fake
	s     *carousel.Scheduler
	store *instanceStore
	pubs  chan string

	mu        sync.Mutex
	published []carousel.Publication
}

func newInstance(t *testing.T, name string, src carousel.Source, store carousel.MetadataStore, l *lease) *instance {
	in := &instance{t: t, name: name, clk: clocktest.NewFake(base), pubs: make(chan string, failoverItems),
		store: &instanceStore{MetadataStore: store, refusals: make(chan struct{}, 1)}}
	pub := carousel.PublisherFunc(func(_ context.Context, p carousel.Publication) error {
		if in.store.dead.Load() {
			return errKilled
		}
		in.mu.Lock()
		in.published = append(in.published, p)
		in.mu.Unlock()
		in.pubs <- p.Item.ID
		return nil
	})
	s, err := carousel.NewScheduler(src, pub, carousel.Config{
		Store: in.store, Toggle: l.toggle(name), Clock: in.clk,
		CheckpointInterval: failoverCheckpoint, PageSize: 7,
	})
	require.NoError(t, err)
	require.NoError(t, s.Add(context.Background(), failoverCycle))
	in.s = s
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
		defer cancel()
		assert.NoError(t, s.Shutdown(ctx), "%s shuts down", name)
	})
	return in
}

// run moves the clock one throttle at a time, each time the cycle waits, until it has
// published n more items, and returns them. The cycle is left waiting for the next.
func (in *instance) run(n int) []carousel.Item {
	in.t.Helper()
	var got []carousel.Item
	for {
		in.awaitWait()
		got = in.drain(got)
		if len(got) > n {
			in.t.Fatalf("%s published %d items, more than the %d asked", in.name, len(got), n)
		}
		if len(got) == n {
			return got
		}
		in.clk.Advance(failoverThrottle)
	}
}

// drain appends to got the items published and not taken yet.
func (in *instance) drain(got []carousel.Item) []carousel.Item {
	for {
		select {
		case id := <-in.pubs:
			got = append(got, carousel.Item{ID: id})
		default:
			return got
		}
	}
}

// next returns the next item published.
func (in *instance) next() carousel.Item {
	in.t.Helper()
	select {
	case id := <-in.pubs:
		return carousel.Item{ID: id}
	case <-time.After(hangGuard):
		in.t.Fatalf("%s published nothing within %v", in.name, hangGuard)
	}
	return carousel.Item{}
}

// awaitWait returns once the cycle waits on the clock: it has published what it can
// before the clock moves.
func (in *instance) awaitWait() {
	in.t.Helper()
	waiting := make(chan struct{})
	go func() {
		in.clk.BlockUntil(1)
		close(waiting)
	}()
	select {
	case <-waiting:
	case <-time.After(hangGuard):
		in.t.Fatalf("%s's cycle did not wait on its clock within %v", in.name, hangGuard)
	}
}

// shutdown stops the scheduler as a process losing the lease does: its cycle saves on
// the way out.
func (in *instance) shutdown() {
	in.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	require.NoError(in.t, in.s.Shutdown(ctx), "%s shuts down", in.name)
	require.Empty(in.t, in.pubs, "%s published on its way out", in.name)
}

// kill stops the scheduler as SIGKILL stops a process: nothing it saves or publishes
// from now on gets anywhere.
func (in *instance) kill() {
	in.t.Helper()
	in.store.dead.Store(true)
	in.shutdown()
}

// all returns every item the instance published, in order.
func (in *instance) all() []carousel.Item {
	in.mu.Lock()
	defer in.mu.Unlock()
	out := make([]carousel.Item, len(in.published))
	for i, p := range in.published {
		out[i] = carousel.Item{ID: p.Item.ID}
	}
	return out
}

var errKilled = errors.New("carouseltest: the instance was killed")

// instanceStore is the store as one instance reaches it: dead once the instance is
// killed, and counting the saves the store refused.
type instanceStore struct {
	carousel.MetadataStore
	dead     atomic.Bool
	refused  atomic.Int32
	refusals chan struct{}
}

func (s *instanceStore) Save(ctx context.Context, m carousel.CycleMetadata, gen carousel.Generation) error {
	if s.dead.Load() {
		return errKilled
	}
	err := s.MetadataStore.Save(ctx, m, gen)
	if errors.Is(err, carousel.ErrFenced) {
		s.refused.Add(1)
		select {
		case s.refusals <- struct{}{}:
		default:
		}
	}
	return err
}

func (s *instanceStore) awaitRefusal(t *testing.T) {
	t.Helper()
	select {
	case <-s.refusals:
	case <-time.After(hangGuard):
		t.Fatalf("no save was refused within %v", hangGuard)
	}
}

// numbered returns the items from to to (excluded) of the failover collection, in its order.
func numbered(from, to int) []carousel.Item {
	out := make([]carousel.Item, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, carousel.Item{ID: fmt.Sprintf("item-%04d", i)})
	}
	return out
}

// assertIDs checks that got are the items of want, by id, in order.
func assertIDs(t *testing.T, want, got []carousel.Item, what string) {
	t.Helper()
	assert.Equal(t, idsOf(want), idsOf(got), what)
}
