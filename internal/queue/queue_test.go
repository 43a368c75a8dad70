package queue

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFIFOAcrossWrapAround(t *testing.T) {
	q := New[int](3)
	ctx := context.Background()
	for round := 0; round < 4; round++ {
		for i := 0; i < 3; i++ {
			require.NoError(t, q.Put(ctx, round*10+i))
		}
		assert.Equal(t, 3, q.Len())
		for i := 0; i < 3; i++ {
			v, ok := q.Get()
			require.True(t, ok)
			assert.Equal(t, round*10+i, v)
		}
	}
	assert.Equal(t, 3, q.Cap())
}

func TestPutBlocksWhenFullUntilGet(t *testing.T) {
	q := New[int](1)
	require.NoError(t, q.Put(context.Background(), 1))
	put := make(chan error)
	go func() { put <- q.Put(context.Background(), 2) }()

	v, ok := q.Get() // makes room; the blocked Put completes
	require.True(t, ok)
	assert.Equal(t, 1, v)
	require.NoError(t, <-put)
	v, _ = q.Get()
	assert.Equal(t, 2, v)
}

func TestPutHonoursContextWhenFull(t *testing.T) {
	q := New[int](1)
	require.NoError(t, q.Put(context.Background(), 1))
	ctx, cancel := context.WithCancel(context.Background())
	put := make(chan error)
	go func() { put <- q.Put(ctx, 2) }()
	cancel()
	assert.ErrorIs(t, <-put, context.Canceled)
	assert.Equal(t, 1, q.Len(), "the refused item is not queued")
}

func TestCloseKeepsQueuedItemsAndRefusesNewOnes(t *testing.T) {
	q := New[int](4)
	ctx := context.Background()
	require.NoError(t, q.Put(ctx, 1))
	require.NoError(t, q.Put(ctx, 2))
	q.Close()
	assert.ErrorIs(t, q.Put(ctx, 3), ErrClosed)
	for _, want := range []int{1, 2} {
		v, ok := q.Get()
		require.True(t, ok)
		assert.Equal(t, want, v)
	}
	_, ok := q.Get()
	assert.False(t, ok)
}

func TestCloseWakesBlockedPutAndGet(t *testing.T) {
	full := New[int](1)
	require.NoError(t, full.Put(context.Background(), 1))
	empty := New[int](1)
	var wg sync.WaitGroup
	wg.Add(2)
	var putErr error
	var got bool
	go func() { defer wg.Done(); putErr = full.Put(context.Background(), 2) }()
	go func() { defer wg.Done(); _, got = empty.Get() }()
	full.Close()
	empty.Close()
	wg.Wait()
	assert.ErrorIs(t, putErr, ErrClosed)
	assert.False(t, got)
}

func TestConcurrentProducersLoseNothing(t *testing.T) {
	q := New[int](8)
	const producers, each = 4, 1000
	var wg sync.WaitGroup
	for p := 0; p < producers; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if err := q.Put(context.Background(), p*each+i); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	seen := make(map[int]bool)
	lastOf := make(map[int]int)
	done := make(chan struct{})
	go func() {
		for range producers * each {
			got, ok := q.Get()
			if !ok {
				break
			}
			seen[got] = true
			p := got / each
			if last, ok := lastOf[p]; ok && got < last {
				t.Errorf("producer %d: %d after %d", p, got, last)
			}
			lastOf[p] = got
		}
		close(done)
	}()
	wg.Wait()
	<-done
	assert.Len(t, seen, producers*each)
}

func TestNewPanicsOnBadCapacity(t *testing.T) {
	assert.Panics(t, func() { New[int](0) })
}

func TestWaitReturnsWhenSignalledOrWhenTheContextEnds(t *testing.T) {
	var mu sync.Mutex
	c := sync.NewCond(&mu)

	ctx, cancel := context.WithCancel(context.Background())
	mu.Lock()
	go cancel()
	// Nobody signals c: only the cancellation can end this wait, before it starts (an
	// error) or during it (nil; the caller's loop then sees ctx ended).
	if err := Wait(ctx, c); err != nil {
		assert.ErrorIs(t, err, context.Canceled)
	}
	assert.ErrorIs(t, Wait(ctx, c), context.Canceled, "an ended ctx returns at once")
	mu.Unlock()

	mu.Lock()
	go func() { mu.Lock(); c.Signal(); mu.Unlock() }()
	require.NoError(t, Wait(context.Background(), c))
	mu.Unlock()
}
