package broadcast

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// bound guards against a hang; nothing relies on it passing.
const bound = time.Minute

func TestWaitReturnsAtOnceWhenTheConditionHolds(t *testing.T) {
	var s Signal
	calls := 0
	if err := s.Wait(context.Background(), func() bool { calls++; return true }); err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Fatalf("cond called %d times, want 1", calls)
	}
}

// Each Notify makes the waiter check again, and Wait returns at the first check that
// holds, not before. In a synctest bubble: synctest.Wait returns once the waiter has
// returned (the bug) or waits for a Notify, and the guard's time passes only when every
// goroutine is stuck, so a waiter that never checks again fails the test at once.
func TestWaitChecksAgainAfterEveryNotify(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s Signal
		var ready atomic.Bool
		checked := make(chan bool) // each check's answer, as it is made
		done := make(chan error, 1)
		go func() {
			done <- s.Wait(t.Context(), func() bool {
				ok := ready.Load()
				checked <- ok
				return ok
			})
		}()
		next := func() bool {
			t.Helper()
			select {
			case ok := <-checked:
				return ok
			case <-time.After(bound):
				t.Fatal("no check")
				return false
			}
		}
		if next() {
			t.Fatal("first check held")
		}
		s.Notify() // nothing changed: checked again, still waiting
		if next() {
			t.Fatal("second check held")
		}
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("Wait returned %v before the condition held", err)
		default:
		}
		ready.Store(true)
		s.Notify()
		if !next() {
			t.Fatal("third check did not hold")
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

func TestWaitEndsWithTheContext(t *testing.T) {
	var s Signal
	ctx, cancel := context.WithCancel(context.Background())
	checked := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() { done <- s.Wait(ctx, func() bool { checked <- struct{}{}; return false }) }()
	<-checked
	cancel()
	select {
	case err := <-done:
		if err != context.Canceled {
			t.Fatalf("Wait returned %v, want context.Canceled", err)
		}
	case <-time.After(bound):
		t.Fatal("Wait did not return when its context ended")
	}
}

// Many goroutines change the state and notify while others wait for it to reach its
// end: no wake-up is lost, whatever the interleaving (run with -race).
func TestNoNotifyIsLost(t *testing.T) {
	const writers, steps, waiters = 8, 1000, 4
	var s Signal
	var mu sync.Mutex
	n := 0
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, waiters)
	for range waiters {
		wg.Go(func() {
			errs <- s.Wait(ctx, func() bool {
				mu.Lock()
				defer mu.Unlock()
				return n == writers*steps
			})
		})
	}
	for range writers {
		wg.Go(func() {
			for range steps {
				mu.Lock()
				n++
				mu.Unlock()
				s.Notify()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a waiter missed the last change: %v", err)
		}
	}
}
