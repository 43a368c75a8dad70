package concurrent

import (
	"context"
	"sync"
	"sync/atomic"
)

// mailbox runs calls one at a time, in the order they were posted, on a goroutine of its
// own. It is unbounded: posting never blocks, so a worker that releases a deferred status
// is never held up by a slow global listener. What goes through it (connection and
// producer news) is rare, a handful per producer and outage.
type mailbox struct {
	mu      sync.Mutex
	cond    sync.Cond
	calls   []call
	closed  bool
	ctx     context.Context // passed to the calls; cancelled when close gives up
	cancel  context.CancelFunc
	done    chan struct{}
	recover func(method string, p any) // reports a call that panicked

	skipped atomic.Uint64 // calls dropped because close gave up
}

// call is one call of the customer's listener, named for the reports.
type call struct {
	method string
	fn     func(context.Context)
}

func newMailbox(recover func(method string, p any)) *mailbox {
	b := &mailbox{done: make(chan struct{}), recover: recover}
	b.cond.L = &b.mu
	b.ctx, b.cancel = context.WithCancel(context.Background())
	go b.run()
	return b
}

// post queues call; it reports false, and drops call, once the mailbox is closed.
func (b *mailbox) post(method string, fn func(context.Context)) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	b.calls = append(b.calls, call{method: method, fn: fn})
	b.cond.Signal()
	return true
}

func (b *mailbox) run() {
	defer close(b.done)
	defer b.cancel()
	for {
		b.mu.Lock()
		for len(b.calls) == 0 && !b.closed {
			b.cond.Wait()
		}
		if len(b.calls) == 0 {
			b.mu.Unlock()
			return
		}
		c := b.calls[0]
		b.calls[0] = call{}
		b.calls = b.calls[1:]
		b.mu.Unlock()
		if b.ctx.Err() == nil {
			b.safeCall(c)
		} else {
			b.skipped.Add(1)
		}
	}
}

func (b *mailbox) safeCall(c call) {
	defer func() {
		if p := recover(); p != nil {
			b.recover(c.method, p)
		}
	}()
	c.fn(b.ctx)
}

// close stops taking calls and waits for the posted ones to run. If ctx ends first, the
// calls not yet run are dropped, the context of the call in progress is cancelled, and
// close returns ctx.Err().
func (b *mailbox) close(ctx context.Context) error {
	b.mu.Lock()
	b.closed = true
	b.cond.Signal()
	b.mu.Unlock()
	select {
	case <-b.done: // already closed: ctx is not needed
		return nil
	default:
	}
	select {
	case <-b.done:
		return nil
	case <-ctx.Done():
		b.cancel()
		return ctx.Err()
	}
}
