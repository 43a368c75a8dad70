package feed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/feedkit/feedkit/internal/queue"
)

// Dispatcher takes the event messages a session reads and delivers them to a listener,
// decoding each body on a goroutine of its own (Deliver does both). The session calls
// Dispatch from the transport's reading goroutine, in arrival order.
//
// SerialDispatcher delivers every event in arrival order on one goroutine. The concurrent
// package provides one that delivers the events of different matches in parallel.
//
// A Dispatcher calls the Handled function of each event it accepted exactly once, when
// it is done with it, delivered or abandoned (see Event.Handled).
type Dispatcher interface {
	// Dispatch queues ev for delivery. It blocks while the dispatcher is full, which slows
	// the transport down rather than drop anything, and returns ctx.Err() if ctx ends first
	// or ErrDispatcherClosed after Close; ev is then not delivered, and its Handled is
	// not called.
	Dispatch(ctx context.Context, ev Event) error
	// Close stops taking events, delivers those already queued and returns once its
	// goroutines have exited. If ctx ends first, the queued events are abandoned, the
	// context passed to the listener is cancelled, and Close returns ctx.Err() without
	// waiting for a listener call that ignores its context.
	Close(ctx context.Context) error
}

// abandonedError is the reason given to Event.Handled for an event that a Close
// dropped because ctx ended first: it matches ErrDispatcherClosed and ctx's error.
func abandonedError(ctx context.Context) error {
	return fmt.Errorf("%w before the event was delivered: %w", ErrDispatcherClosed, context.Cause(ctx))
}

// ErrDispatcherClosed is returned by Dispatch after Close.
var ErrDispatcherClosed = errors.New("feed: dispatcher closed")

// DefaultQueueSize is the number of events a SerialDispatcher holds before Dispatch blocks.
const DefaultQueueSize = 1024

// DispatcherOptions configures a SerialDispatcher.
type DispatcherOptions struct {
	// QueueSize bounds the events waiting for delivery; 0 means DefaultQueueSize.
	QueueSize int
	// OnError, if set, receives every delivery error: unparsable messages (after the
	// listener's OnUnparsableMessage) and *ListenerError for listeners that failed or panicked.
	OnError func(error)
	// Logger receives the same errors; nil is silent.
	Logger *slog.Logger
}

// DispatcherStats counts what a SerialDispatcher did.
type DispatcherStats struct {
	Queued     int    `json:"queued"`     // events waiting now
	Delivered  uint64 `json:"delivered"`  // events decoded and accepted by the listener
	Unparsable uint64 `json:"unparsable"` // events given to OnUnparsableMessage
	Failed     uint64 `json:"failed"`     // listener calls that returned an error
	Panicked   uint64 `json:"panicked"`   // listener calls that panicked
	Abandoned  uint64 `json:"abandoned"`  // events dropped because Close's context ended first
}

// SerialDispatcher delivers events to one listener, one at a time, in the order they were
// dispatched. It is the default Dispatcher of a session.
type SerialDispatcher struct {
	l      OddsFeedListener
	q      *queue.Queue[Event]
	rep    *DeliveryReporter
	ctx    context.Context // passed to the listener; cancelled when Close gives up, with the reason of the events it abandons
	cancel context.CancelCauseFunc
	done   chan struct{}
	close  sync.Once

	delivered, abandoned atomic.Uint64
}

// NewSerialDispatcher starts a dispatcher that delivers to l.
func NewSerialDispatcher(l OddsFeedListener, opts DispatcherOptions) (*SerialDispatcher, error) {
	if l == nil {
		return nil, errors.New("feed: NewSerialDispatcher: listener is nil")
	}
	size := opts.QueueSize
	if size < 0 {
		return nil, fmt.Errorf("feed: DispatcherOptions.QueueSize %d must not be negative", size)
	}
	if size == 0 {
		size = DefaultQueueSize
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	d := &SerialDispatcher{
		l:      l,
		q:      queue.New[Event](size),
		rep:    NewDeliveryReporter(opts.OnError, opts.Logger),
		ctx:    ctx,
		cancel: cancel,
		done:   make(chan struct{}),
	}
	go d.run()
	return d, nil
}

// Dispatch queues ev for delivery; see Dispatcher.
func (d *SerialDispatcher) Dispatch(ctx context.Context, ev Event) error {
	if err := d.q.Put(ctx, ev); err != nil {
		if errors.Is(err, queue.ErrClosed) {
			return ErrDispatcherClosed
		}
		return err
	}
	return nil
}

// Close stops the dispatcher; see Dispatcher.
func (d *SerialDispatcher) Close(ctx context.Context) error {
	d.close.Do(d.q.Close)
	select {
	case <-d.done:
		return nil
	default:
	}
	select {
	case <-d.done:
		return nil
	case <-ctx.Done():
		// The worker abandons what is queued and exits as soon as the listener call in
		// progress returns; that call sees its context cancelled.
		d.cancel(abandonedError(ctx))
		return ctx.Err()
	}
}

// Stats returns the dispatcher's counters.
func (d *SerialDispatcher) Stats() DispatcherStats {
	errs := d.rep.Counts()
	return DispatcherStats{
		Queued:     d.q.Len(),
		Delivered:  d.delivered.Load(),
		Unparsable: errs.Unparsable,
		Failed:     errs.Failed,
		Panicked:   errs.Panicked,
		Abandoned:  d.abandoned.Load(),
	}
}

func (d *SerialDispatcher) run() {
	defer close(d.done)
	defer d.cancel(nil)
	for {
		ev, ok := d.q.Get()
		if !ok {
			return
		}
		if d.ctx.Err() != nil {
			d.abandoned.Add(1)
			if ev.Handled != nil {
				ev.Handled(context.Cause(d.ctx))
			}
			continue
		}
		err := Deliver(d.ctx, d.l, &ev)
		d.count(err)
		if ev.Handled != nil {
			ev.Handled(err)
		}
	}
}

func (d *SerialDispatcher) count(err error) {
	if err == nil {
		d.delivered.Add(1)
		return
	}
	d.rep.Report(d.ctx, err)
}
