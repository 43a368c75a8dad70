package feedtest

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// journal is an append-only record with a reading cursor, shared by the recorders whose
// tests read what they heard one at a time (next) or all at once (wait). A waiter sleeps
// on changed, which every append closes and replaces, so nothing polls.
type journal[T any] struct {
	mu      sync.Mutex
	changed chan struct{}
	items   []T
	read    int // how many items next has returned
}

func newJournal[T any]() journal[T] { return journal[T]{changed: make(chan struct{})} }

// add appends v, after set, if not nil, has completed it under the lock (to number it in
// the order of the record).
func (j *journal[T]) add(v T, set func(*T)) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if set != nil {
		set(&v)
	}
	j.items = append(j.items, v)
	close(j.changed)
	j.changed = make(chan struct{})
}

// all returns a copy of the record.
func (j *journal[T]) all() []T {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]T(nil), j.items...)
}

// unread returns a copy of what next has not returned yet.
func (j *journal[T]) unread() []T {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]T(nil), j.items[j.read:]...)
}

// next returns the oldest item next has not returned yet, waiting for one until ctx ends.
func (j *journal[T]) next(ctx context.Context, what string) (T, error) {
	for {
		j.mu.Lock()
		if j.read < len(j.items) {
			v := j.items[j.read]
			j.read++
			j.mu.Unlock()
			return v, nil
		}
		changed := j.changed
		j.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			var zero T
			return zero, fmt.Errorf("feedtest: waiting for %s number %d: %w", what, j.readCount()+1, ctx.Err())
		}
	}
}

func (j *journal[T]) readCount() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.read
}

// wait returns the whole record once it holds at least n items, or an error saying how
// many it holds when ctx ends first.
func (j *journal[T]) wait(ctx context.Context, n int, what string) ([]T, error) {
	for {
		j.mu.Lock()
		items, changed := append([]T(nil), j.items...), j.changed
		j.mu.Unlock()
		if len(items) >= n {
			return items, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, fmt.Errorf("feedtest: %d %s recorded, want %d %v: %w", len(items), what, n, items, ctx.Err())
		}
	}
}

// guarded runs f with a context that ends with t's or after hangGuard, failing t if f
// fails: the t-taking methods' bound, which only a real hang reaches.
func guarded[R any](t testing.TB, f func(ctx context.Context) (R, error)) R {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	defer cancel()
	v, err := f(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
