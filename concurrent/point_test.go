package concurrent_test

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/concurrent"
)

// points records what OnProcessed is told.
type points struct {
	mu  sync.Mutex
	got map[int][]time.Time
}

func watchPoints(t *concurrent.TaskLifecycleTracker) *points {
	p := &points{got: map[int][]time.Time{}}
	t.OnProcessed(func(producer int, through time.Time) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.got[producer] = append(p.got[producer], through)
	})
	return p
}

func (p *points) of(producer int) []time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Time(nil), p.got[producer]...)
}

var pt0 = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

func at(s int) time.Time { return pt0.Add(time.Duration(s) * time.Second) }

func live(producer int) concurrent.RecoveryContext {
	return concurrent.RecoveryContext{Producer: producer}
}

func TestProcessedPointWaitsForEveryMessageBeforeTheAlive(t *testing.T) {
	tr := concurrent.NewTaskLifecycleTracker()
	seen := watchPoints(tr)
	s := tr.NewStream()
	a, b := s.Allocate(live(1)), s.Allocate(live(1))
	s.Alive(1, at(10))
	c := s.Allocate(live(1)) // after the alive: not waited for
	_, ok := tr.Processed(1)
	assert.False(t, ok, "two messages before the alive are pending")

	a.Start()
	a.Complete()
	assert.Empty(t, seen.of(1), "one is still pending")
	b.Start()
	b.Complete()
	through, ok := tr.Processed(1)
	require.True(t, ok)
	assert.Equal(t, at(10), through)
	assert.Equal(t, []time.Time{at(10)}, seen.of(1), "told once")

	s.Alive(1, at(20))
	assert.Equal(t, []time.Time{at(10)}, seen.of(1), "the message between the alives is pending")
	c.Start()
	c.Complete()
	assert.Equal(t, []time.Time{at(10), at(20)}, seen.of(1))
}

func TestProcessedPointMovesAtOnceWhenNothingIsPending(t *testing.T) {
	tr := concurrent.NewTaskLifecycleTracker()
	seen := watchPoints(tr)
	s := tr.NewStream()
	s.Alive(1, at(1))
	assert.Equal(t, []time.Time{at(1)}, seen.of(1))
	s.Alive(1, at(2))
	through, _ := tr.Processed(1)
	assert.Equal(t, at(2), through)
}

func TestProcessedPointSkipsToTheNewestDoneAlive(t *testing.T) {
	tr := concurrent.NewTaskLifecycleTracker()
	seen := watchPoints(tr)
	s := tr.NewStream()
	first := s.Allocate(live(1))
	s.Alive(1, at(1))
	second := s.Allocate(live(1)) // another match's message, done first
	s.Alive(1, at(2))
	second.Complete()
	assert.Empty(t, seen.of(1), "the first alive's message is pending, so neither alive is passed")
	first.Complete()
	assert.Equal(t, []time.Time{at(2)}, seen.of(1), "both alives passed at once")
}

func TestProcessedPointIsTheOldestOfTheStreams(t *testing.T) {
	tr := concurrent.NewTaskLifecycleTracker()
	seen := watchPoints(tr)
	s1, s2 := tr.NewStream(), tr.NewStream()
	s1.Alive(1, at(1))
	assert.Empty(t, seen.of(1), "the second stream has not seen an alive")
	k := s2.Allocate(live(1))
	s2.Alive(1, at(1))
	s1.Alive(1, at(2))
	assert.Empty(t, seen.of(1), "the second stream's message before its alive is pending")
	k.Complete()
	assert.Equal(t, []time.Time{at(1)}, seen.of(1), "the oldest of the two streams' points")
	s2.Alive(1, at(2))
	assert.Equal(t, []time.Time{at(1), at(2)}, seen.of(1))
}

func TestProcessedPointIsPerProducer(t *testing.T) {
	tr := concurrent.NewTaskLifecycleTracker()
	seen := watchPoints(tr)
	s := tr.NewStream()
	k := s.Allocate(live(3))
	s.Alive(1, at(1))
	s.Alive(3, at(1))
	assert.Equal(t, []time.Time{at(1)}, seen.of(1), "producer 3's message does not hold producer 1")
	assert.Empty(t, seen.of(3))
	k.Complete()
	assert.Equal(t, []time.Time{at(1)}, seen.of(3))
}

func TestProcessedPointCountsReplayedMessages(t *testing.T) {
	tr := concurrent.NewTaskLifecycleTracker()
	seen := watchPoints(tr)
	s := tr.NewStream()
	k := s.Allocate(concurrent.RecoveryContext{Producer: 1, RequestID: 7})
	s.Alive(1, at(1))
	assert.Empty(t, seen.of(1), "a replayed message before the alive is a message to process too")
	k.Complete()
	assert.Equal(t, []time.Time{at(1)}, seen.of(1))
}

func TestAnAbandonedMessageHoldsTheProcessedPoint(t *testing.T) {
	tr := concurrent.NewTaskLifecycleTracker()
	seen := watchPoints(tr)
	s := tr.NewStream()
	s.Alive(1, at(1))
	k := s.Allocate(live(1))
	s.Alive(1, at(2))
	k.Abandon()
	s.Alive(1, at(3))
	assert.Equal(t, []time.Time{at(1)}, seen.of(1), "never processed: the point stays before it")
	through, _ := tr.Processed(1)
	assert.Equal(t, at(1), through)
}

// Many workers finish the messages of many alives in any order: the point ends at the
// last alive, only ever grows, and never passes a message still pending.
func TestProcessedPointUnderConcurrentCompletion(t *testing.T) {
	tr := concurrent.NewTaskLifecycleTracker()
	var mu sync.Mutex
	var last time.Time
	pending := map[int]int{} // alive index → messages before it still pending
	tr.OnProcessed(func(_ int, through time.Time) {
		mu.Lock()
		defer mu.Unlock()
		i := int(through.Sub(pt0) / time.Second)
		for j := range i + 1 {
			assert.Zero(t, pending[j], "the point passed alive %d with messages before it pending", j)
		}
		if through.After(last) {
			last = through
		}
	})
	s := tr.NewStream()
	const alives, perAlive, workers = 200, 20, 8
	work := make(chan func(), alives*perAlive)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for f := range work {
				f()
			}
		})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range alives {
		batch := make([]func(), 0, perAlive)
		for range perAlive {
			k := s.Allocate(live(1))
			mu.Lock()
			for j := i; j < alives; j++ {
				pending[j]++
			}
			mu.Unlock()
			batch = append(batch, func() {
				mu.Lock()
				for j := i; j < alives; j++ {
					pending[j]--
				}
				mu.Unlock()
				k.Complete()
			})
		}
		rng.Shuffle(len(batch), func(a, b int) { batch[a], batch[b] = batch[b], batch[a] })
		for _, f := range batch {
			work <- f
		}
		s.Alive(1, at(i))
	}
	close(work)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, at(alives-1), last)
	through, _ := tr.Processed(1)
	assert.Equal(t, at(alives-1), through)
}
