package group

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/internal/amqpconn"
	"github.com/feedkit/feedkit/internal/backoff"
)

// Defaults of WorkerConfig's zero fields; the connection's are feed/rabbitmq's.
const (
	// DefaultWorkerPrefetch is how many unacknowledged deliveries of one shard queue
	// the broker sends ahead of a worker.
	DefaultWorkerPrefetch = 1000
	// DefaultDrainTimeout bounds the listener calls in progress when a worker stops.
	DefaultDrainTimeout = 30 * time.Second
	// DefaultWorkerConnectionName is the name the broker shows for a worker's
	// connection.
	DefaultWorkerConnectionName = "feedkit-group-worker"

	workerDefaultHeartbeat         = 10 * time.Second
	workerDefaultDialTimeout       = 15 * time.Second
	workerDefaultReconnectDelay    = 500 * time.Millisecond
	workerDefaultMaxReconnectDelay = 30 * time.Second
)

const (
	// workerCloseTimeout bounds the AMQP close of a link.
	workerCloseTimeout = time.Second
	// workerWriteTimeout bounds one write of the worker's (an ack, a barrier's
	// acknowledgement): a write stuck on a silent network would hold amqp091-go's locks
	// and keep even its heartbeat timeout from ending the connection.
	workerWriteTimeout = 30 * time.Second
	// workerConfirmTimeout bounds the wait for the broker's confirmation of a barrier's
	// acknowledgement; past it the link is taken for broken, and the barrier comes again.
	workerConfirmTimeout = 30 * time.Second
	// workerJitter spreads the reconnections of a group's processes.
	workerJitter = 0.5
)

// WorkerConfig configures a Worker. URL, Topology, Shards and Listener are required;
// every other field has a default.
type WorkerConfig struct {
	// URL is the amqp:// or amqps:// URL of the operator's RabbitMQ, virtual host
	// included: the ingress's.
	URL string
	// Topology names the group's exchanges and queues: the ingress's.
	Topology Topology
	// Shards are the shard queues the worker consumes, numbers from 0 to
	// Topology.Shards-1. Each is a single-active-consumer queue: the first worker
	// consuming it gets its messages, and another worker consuming the same shard is its
	// standby, which the broker switches to when the active one's connection ends.
	Shards []int
	// Listener receives the events, as a session's listener does: each match's
	// messages in order, matches in parallel (one match is in one shard).
	Listener feed.OddsFeedListener
	// Global receives the group's global events (producer statuses, recoveries, the
	// ingress's connection): the application's listener. nil ignores them. Only those
	// published while the worker is connected reach it.
	Global feed.GlobalEventsListener
	// Concurrent configures the pool that delivers the events of every shard of the
	// worker.
	Concurrent concurrent.Config
	// Prefetch is how many unacknowledged deliveries of each shard queue the broker
	// sends ahead; 0 means DefaultWorkerPrefetch. A delivery is acknowledged once it is
	// processed and every one before it in its queue is, so Prefetch also bounds how
	// far a match can get ahead of a stalled one in the same shard.
	Prefetch int
	// MaxBodySize is the largest body delivered as it is; a larger one goes to
	// OnUnparsableMessage with feed.ErrBodyTooLarge, as in a session. 0 means
	// feed.DefaultMaxBodySize.
	MaxBodySize int
	// DrainTimeout bounds how long Run, once its context ends, waits for the listener
	// calls in progress; 0 means DefaultDrainTimeout. Events it gives up on are left to
	// the broker, which delivers them to the standby.
	DrainTimeout time.Duration
	// Heartbeat is the AMQP heartbeat interval, whole seconds; 0 means 10s.
	Heartbeat time.Duration
	// DialTimeout bounds one connection attempt (TCP, TLS and AMQP handshakes); 0 means
	// 15s.
	DialTimeout time.Duration
	// ReconnectDelay is the wait before the first reconnection; each later one doubles,
	// with jitter, up to MaxReconnectDelay. 0 means 500ms and 30s.
	ReconnectDelay, MaxReconnectDelay time.Duration
	// Clock times the waits between reconnections; nil is the wall clock.
	Clock clock.Clock
	// OnError hears every failure the worker recovers from: a lost connection, a failed
	// reconnection, a message that is not the group's, a global event that does not
	// decode. It is called from the worker's goroutines and must be safe for concurrent
	// use. The listener's own errors go to Concurrent.OnError.
	OnError func(error)
	// Logger logs the same errors and the connection's life; nil is silent.
	Logger *slog.Logger
	// ConnectionName is the name the broker shows for the worker's connection; "" means
	// DefaultWorkerConnectionName.
	ConnectionName string
}

// Worker consumes shard queues of a group and delivers their events to the
// application's listener, with the guarantees of a single-process SDK: each match's
// messages in order, each message at least once. It acknowledges a delivery to the
// broker only once its listener call ended and every delivery before it in its queue is
// done, so a worker that dies leaves the broker whatever it had not finished, for the
// standby. It acknowledges each barrier to the ingress once everything before the
// barrier in its queue is processed.
//
// Duplicates: after a worker's connection is lost (or it is killed), its standby gets
// again every delivery it had not acknowledged, some of them processed already; and a
// worker whose connection was lost finishes the listener calls it had started, while the
// standby may make them again.
type Worker struct {
	cfg     WorkerConfig
	uri     amqp.URI
	backoff backoff.Policy
	clock   clock.Clock
	log     *slog.Logger
	shards  []*shardState
	every   int // acknowledge at least every this many deliveries of a shard

	running   atomic.Bool
	disp      atomic.Pointer[concurrent.Dispatcher]
	connected atomic.Bool
	connects, drops, errs,
	globals, badGlobals atomic.Uint64

	mu        sync.Mutex
	lastErr   string
	lastErrAt time.Time

	statuses statusMemory // the last status of each producer passed to Global

	// linkUp, set by tests, is called once a link consumes every queue.
	linkUp func()
}

// shardState is what a worker keeps of one shard across its links.
type shardState struct {
	n     int
	queue string

	active atomic.Bool
	delivered, redelivered, batches, events, system, barriers, barriersAcked,
	processed, abandoned, acked, invalid, fenced atomic.Uint64
	// epoch is the latest ingress epoch seen in the queue: a message of an earlier one
	// comes from an ingress that lost its lease and did not know it yet.
	epoch atomic.Int64
}

// NewWorker checks cfg, naming the first field that is wrong, and returns a worker that
// Run starts.
func NewWorker(cfg WorkerConfig) (*Worker, error) {
	const prefix = "group.WorkerConfig."
	uri, err := amqpconn.ParseURL(prefix, cfg.URL)
	if err != nil {
		return nil, err
	}
	top, err := cfg.Topology.withDefaults()
	if err != nil {
		return nil, errors.New("group: WorkerConfig." + strings.TrimPrefix(err.Error(), "group: "))
	}
	cfg.Topology = top
	switch {
	case len(cfg.Shards) == 0:
		return nil, errors.New(prefix + "Shards is empty: name the shard queues to consume")
	case cfg.Listener == nil:
		return nil, errors.New(prefix + "Listener is required")
	case cfg.Prefetch < 0 || cfg.Prefetch > 65535:
		return nil, fmt.Errorf("%sPrefetch %d must be from 0 to 65535 (AMQP's limit)", prefix, cfg.Prefetch)
	case cfg.MaxBodySize < 0:
		return nil, fmt.Errorf("%sMaxBodySize %d must not be negative", prefix, cfg.MaxBodySize)
	case cfg.DrainTimeout < 0:
		return nil, fmt.Errorf("%sDrainTimeout %v must not be negative", prefix, cfg.DrainTimeout)
	case cfg.Heartbeat < 0 || cfg.Heartbeat%time.Second != 0:
		return nil, fmt.Errorf("%sHeartbeat %v must be whole seconds, not negative", prefix, cfg.Heartbeat)
	case cfg.DialTimeout < 0:
		return nil, fmt.Errorf("%sDialTimeout %v must not be negative", prefix, cfg.DialTimeout)
	case cfg.ReconnectDelay < 0:
		return nil, fmt.Errorf("%sReconnectDelay %v must not be negative", prefix, cfg.ReconnectDelay)
	case cfg.MaxReconnectDelay < 0:
		return nil, fmt.Errorf("%sMaxReconnectDelay %v must not be negative", prefix, cfg.MaxReconnectDelay)
	}
	seen := make(map[int]bool, len(cfg.Shards))
	for _, n := range cfg.Shards {
		switch {
		case n < 0 || n >= top.Shards:
			return nil, fmt.Errorf("%sShards: shard %d is not from 0 to %d (Topology.Shards-1)", prefix, n, top.Shards-1)
		case seen[n]:
			return nil, fmt.Errorf("%sShards: shard %d is listed twice", prefix, n)
		}
		seen[n] = true
	}
	// The pool's configuration is checked by making one, which starts and stops its
	// workers: Run makes its own.
	p, err := concurrent.NewPool(concurrent.NewTaskLifecycleTracker(), cfg.Concurrent)
	if err != nil {
		return nil, errors.New("group: WorkerConfig.Concurrent." + strings.TrimPrefix(err.Error(), "concurrent: Config."))
	}
	_ = p.Close(context.Background())

	cfg.Shards = slices.Clone(cfg.Shards)
	if cfg.Prefetch == 0 {
		cfg.Prefetch = DefaultWorkerPrefetch
	}
	if cfg.MaxBodySize == 0 {
		cfg.MaxBodySize = feed.DefaultMaxBodySize
	}
	if cfg.DrainTimeout == 0 {
		cfg.DrainTimeout = DefaultDrainTimeout
	}
	if cfg.Heartbeat == 0 {
		cfg.Heartbeat = workerDefaultHeartbeat
	}
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = workerDefaultDialTimeout
	}
	if cfg.ReconnectDelay == 0 {
		cfg.ReconnectDelay = workerDefaultReconnectDelay
	}
	if cfg.MaxReconnectDelay == 0 {
		cfg.MaxReconnectDelay = max(workerDefaultMaxReconnectDelay, cfg.ReconnectDelay)
	}
	if cfg.ConnectionName == "" {
		cfg.ConnectionName = DefaultWorkerConnectionName
	}
	w := &Worker{cfg: cfg, uri: uri, clock: clock.OrReal(cfg.Clock), log: cfg.Logger,
		every: max(1, cfg.Prefetch/4)}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	w.backoff = backoff.Policy{Initial: cfg.ReconnectDelay, Max: cfg.MaxReconnectDelay, Jitter: workerJitter}
	if err := w.backoff.Validate(prefix + "Reconnect"); err != nil {
		return nil, fmt.Errorf("%sMaxReconnectDelay %v must be at least ReconnectDelay (%v)", prefix, cfg.MaxReconnectDelay, cfg.ReconnectDelay)
	}
	for _, n := range cfg.Shards {
		w.shards = append(w.shards, &shardState{n: n, queue: top.ShardQueue(n)})
	}
	return w, nil
}

// Run consumes the worker's shard queues until ctx ends, reconnecting with backoff
// whenever the connection is lost (the topology is declared on each connection). When
// ctx ends it stops taking deliveries, waits (at most DrainTimeout) for the listener
// calls in progress, acknowledges what is done and closes the connection: every delivery
// it took is then acknowledged or left to the broker, which delivers it to the standby.
// It returns nil then, or the error of a drain that ran out of time. A Worker runs once.
func (w *Worker) Run(ctx context.Context) error {
	if !w.running.CompareAndSwap(false, true) {
		return errors.New("group: Worker.Run called twice")
	}
	disp, err := concurrent.NewDispatcher(w.cfg.Listener, concurrent.NewTaskLifecycleTracker(), w.cfg.Concurrent)
	if err != nil {
		return fmt.Errorf("group: WorkerConfig.Concurrent: %w", err)
	}
	w.disp.Store(disp)
	attempt := 0 // attempts since the last link that lasted
	for {
		if attempt > 0 && !w.wait(ctx, w.backoff.Delay(attempt-1)) {
			break
		}
		l, err := w.connect(ctx)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			w.report(fmt.Errorf("group: worker connecting to %s (attempt %d): %w", amqpconn.RedactedURL(w.uri), attempt+1, err))
			attempt++
			continue
		}
		up := w.clock.Now()
		cause, stopped := w.serve(ctx, l, disp)
		if stopped {
			return cause
		}
		w.drops.Add(1)
		w.report(fmt.Errorf("group: worker lost its connection to %s: %w", amqpconn.RedactedURL(w.uri), cause))
		if w.clock.Since(up) >= w.cfg.MaxReconnectDelay {
			attempt = 0
		}
		attempt++
	}
	// Stopped while not connected: what the pool still holds came from lost links,
	// whose deliveries the broker has taken back. The calls in progress may finish.
	return w.drain(disp)
}

// drain closes the dispatcher, waiting at most DrainTimeout for its listener calls.
func (w *Worker) drain(disp *concurrent.Dispatcher) error {
	ctx, cancel := context.WithTimeout(context.Background(), w.cfg.DrainTimeout)
	defer cancel()
	if err := disp.Close(ctx); err != nil {
		return fmt.Errorf("group: worker stopped with listener calls still running after %v: %w", w.cfg.DrainTimeout, err)
	}
	return nil
}

// wait waits d on the worker's clock; it reports false when ctx ended first.
func (w *Worker) wait(ctx context.Context, d time.Duration) bool {
	t := w.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-ctx.Done():
		return false
	}
}

// serve consumes on l until l is lost (it returns the cause, stopped false) or ctx ends
// (stopped true, with drain's error once the worker has stopped as Run says).
func (w *Worker) serve(ctx context.Context, l *workerLink, disp *concurrent.Dispatcher) (err error, stopped bool) {
	w.connects.Add(1)
	w.connected.Store(true)
	defer w.connected.Store(false)
	w.log.LogAttrs(ctx, slog.LevelInfo, "group: worker consuming",
		slog.String("broker", amqpconn.RedactedURL(w.uri)), slog.Any("shards", w.cfg.Shards))

	// Dispatch and the global listener see ctx's end as well as the link's loss; the
	// link's own context lives on through a graceful stop, for its acks.
	dctx, dcancel := context.WithCancel(l.ctx)
	defer dcancel()
	defer context.AfterFunc(ctx, dcancel)()

	var readers, settlers sync.WaitGroup
	stopSettlers := make(chan struct{})
	for _, s := range l.shards {
		readers.Add(1)
		go func() {
			defer readers.Done()
			w.readShard(dctx, l, s, disp)
		}()
		settlers.Add(1)
		go func() {
			defer settlers.Done()
			if err := s.acker.run(stopSettlers); err != nil {
				l.markLost(fmt.Errorf("shard %d: %w", s.st.n, err))
			}
		}()
	}
	// The global listener is the application's: a call of it that never returns must
	// not hold the worker's stop, so it is waited for apart, within a bound.
	globalsDone := make(chan struct{})
	if l.control != nil {
		go func() {
			defer close(globalsDone)
			w.readGlobals(dctx, l)
		}()
	} else {
		close(globalsDone)
	}
	if w.linkUp != nil {
		w.linkUp()
	}

	select {
	case <-l.lost:
	case <-ctx.Done():
	}
	dcancel()
	readers.Wait()
	if ctx.Err() != nil {
		// A graceful stop (or a loss while stopping: the acks then fail, harmlessly).
		// The consumers stay registered until the connection closes: cancelling them
		// first would make the standby active while this worker still holds deliveries
		// unacknowledged, which the broker would give back behind later ones.
		err = w.drain(disp)
		stopped = true
	}
	bound := time.NewTimer(w.cfg.DrainTimeout)
	select {
	case <-globalsDone:
	case <-bound.C:
		w.report(fmt.Errorf("group: the global listener's call did not return within %v", w.cfg.DrainTimeout))
	}
	bound.Stop()
	close(stopSettlers)
	settlers.Wait()
	for _, s := range l.shards {
		s.st.active.Store(false)
	}
	l.close()
	if !stopped {
		err = l.cause()
	}
	return err, stopped
}

// readShard takes s's deliveries until ctx ends or l is lost.
func (w *Worker) readShard(ctx context.Context, l *workerLink, s *shardLink, disp *concurrent.Dispatcher) {
	for {
		select {
		case <-ctx.Done():
			return
		case d, ok := <-s.deliveries:
			if !ok {
				// amqp091-go closes the deliveries when the channel shuts down or the
				// broker cancels the consumer; a watcher has the reason.
				<-ctx.Done()
				return
			}
			w.take(ctx, s, &d, disp)
		}
	}
}

// take handles one delivery of a shard queue.
func (w *Worker) take(ctx context.Context, s *shardLink, d *amqp.Delivery, disp *concurrent.Dispatcher) {
	st, a, tag := s.st, s.acker, d.DeliveryTag
	st.delivered.Add(1)
	if d.Redelivered {
		st.redelivered.Add(1)
	}
	st.active.Store(true) // a single-active consumer gets deliveries only when active
	env, err := readEnvelope(d.Headers, d.Body)
	var batch []Envelope
	if err == nil && env.Kind == KindBatch {
		count, _ := asInt64(d.Headers[headerCount])
		batch, err = readBatch(d.Body, count)
	}
	if err == nil && env.Kind != KindEvent && env.Kind != KindBatch && env.Kind != KindSystem && env.Kind != KindBarrier {
		err = fmt.Errorf("%w: a %s message in a shard queue", ErrNotGroupMessage, env.Kind)
	}
	if err != nil {
		// Not the group's: it is dropped (acknowledged in its turn), not held for ever.
		st.invalid.Add(1)
		a.addDone(tag)
		w.report(fmt.Errorf("group: %s: delivery dropped: %w", st.queue, err))
		return
	}
	if batch != nil {
		st.batches.Add(1)
		w.takeBatch(ctx, st, a, tag, batch, disp)
		return
	}
	if !w.admit(st, &env) {
		a.addDone(tag)
		return
	}
	switch env.Kind {
	case KindSystem:
		st.system.Add(1)
		a.addDone(tag) // no listener call: done in its turn
	case KindBarrier:
		st.barriers.Add(1)
		replyTo := d.ReplyTo
		if replyTo == "" {
			replyTo = w.cfg.Topology.AcksQueue()
		}
		a.addBarrier(&shardBarrier{tag: tag, env: env, replyTo: replyTo})
	case KindEvent:
		ev := w.event(&env)
		if ev.Err == nil && ev.Key.Type.IsSystem() {
			st.system.Add(1)
			a.addDone(tag)
			return
		}
		st.events.Add(1)
		a.add(tag) // before Dispatch: the call may end before Dispatch returns
		ev.Handled = func(err error) {
			if w.settled(st, err) {
				a.done(tag)
			}
		}
		// Not taken (the worker is stopping or the link is lost): never done on this
		// channel, so never acknowledged; the broker delivers it again.
		_ = disp.Dispatch(ctx, ev)
	}
}

// takeBatch dispatches a batch's events in order. The delivery is done once every
// event's listener call has ended: one event left unprocessed (the worker stopping)
// leaves the whole batch to the broker, whose redelivery repeats the others.
func (w *Worker) takeBatch(ctx context.Context, st *shardState, a *acker, tag uint64, batch []Envelope, disp *concurrent.Dispatcher) {
	// One count per event, and one that the loop holds so that the delivery cannot be
	// done before every event is dispatched.
	var left atomic.Int64
	left.Store(int64(len(batch)) + 1)
	release := func() {
		if left.Add(-1) == 0 {
			a.done(tag)
		}
	}
	a.add(tag) // before Dispatch: the calls may end before Dispatch returns
	for i := range batch {
		env := &batch[i]
		if !w.admit(st, env) {
			release()
			continue
		}
		ev := w.event(env)
		if ev.Err == nil && ev.Key.Type.IsSystem() {
			st.system.Add(1)
			release()
			continue
		}
		st.events.Add(1)
		ev.Handled = func(err error) {
			if w.settled(st, err) {
				release()
			}
		}
		if err := disp.Dispatch(ctx, ev); err != nil {
			return // the rest is not taken: the broker delivers the batch again
		}
	}
	release()
}

// settled counts the end of an event's listener call, and reports whether the event is
// processed: one the dispatcher dropped as it closed is not, and is left to the broker.
func (w *Worker) settled(st *shardState, err error) bool {
	var le *feed.ListenerError
	if errors.Is(err, feed.ErrDispatcherClosed) && !errors.As(err, &le) {
		st.abandoned.Add(1)
		return false
	}
	st.processed.Add(1)
	return true
}

// admit fences env by its ingress epoch, and reports whether it is to be taken.
func (w *Worker) admit(st *shardState, env *Envelope) bool {
	if latest := st.epoch.Load(); env.Epoch < latest {
		// An earlier ingress's message behind the later one's: dropped, as it may be out
		// of order with what the later one republished. Nothing is lost: the later
		// ingress recovered from a point it loaded after the earlier had confirmed
		// everything before this queue's first message of the later epoch.
		st.fenced.Add(1)
		return false
	} else if env.Epoch > latest {
		st.epoch.Store(env.Epoch) // this goroutine is the shard's only reader
	}
	return true
}

// event rebuilds the feed.Event of an event message as a session makes it (see
// feed.Session): the routing key parsed, the body's size checked and its root element
// peeked. One that cannot be routed (ev.Err) still reaches OnUnparsableMessage.
func (w *Worker) event(env *Envelope) feed.Event {
	ev := feed.Event{RawKey: env.RoutingKey, Body: env.Body, ReceivedAt: env.ReceivedAt}
	key, err := feed.ParseRoutingKey(env.RoutingKey)
	switch {
	case err != nil:
		ev.Err = err
	case len(env.Body) > w.cfg.MaxBodySize:
		ev.Key = key
		ev.Err = fmt.Errorf("%w: %d bytes, limit %d", feed.ErrBodyTooLarge, len(env.Body), w.cfg.MaxBodySize)
	default:
		ev.Key = key
		p, err := feed.Peek(env.Body)
		switch {
		case err == nil:
			ev.Producer, ev.RequestID = p.Producer, p.RequestID
			if p.Type != key.Type && key.Type.IsSystem() {
				ev.Err = &feed.DecodeError{Type: key.Type, Msg: fmt.Sprintf("routing key says %s, body is <%s>", key.Type, p.Type)}
			}
		case key.Type.IsSystem():
			ev.Err = err
		}
	}
	return ev
}

// readGlobals passes the control queue's global events to the application's listener,
// in order, until ctx ends or l is lost.
func (w *Worker) readGlobals(ctx context.Context, l *workerLink) {
	for {
		select {
		case <-ctx.Done():
			return
		case d, ok := <-l.control:
			if !ok {
				<-ctx.Done()
				return
			}
			env, err := readEnvelope(d.Headers, d.Body)
			if err == nil && env.Kind != KindGlobal {
				err = fmt.Errorf("%w: a %s message on the control exchange", ErrNotGroupMessage, env.Kind)
			}
			if err == nil {
				err = w.deliverGlobal(ctx, env.Body)
			}
			if err != nil {
				w.badGlobals.Add(1)
				w.report(fmt.Errorf("group: global event dropped: %w", err))
			} else {
				w.globals.Add(1)
			}
			_ = l.write(func() error { return d.Ack(false) })
		}
	}
}

// deliverGlobal passes one global event to the application's listener; a panic there is
// an error, not the worker's end.
func (w *Worker) deliverGlobal(ctx context.Context, body []byte) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the global listener panicked: %v", p)
		}
	}()
	return deliverGlobal(ctx, w.cfg.Global, body, w.statuses.news)
}

// report counts err, keeps it for Stats, logs it and passes it to OnError.
func (w *Worker) report(err error) {
	w.errs.Add(1)
	w.mu.Lock()
	w.lastErr, w.lastErrAt = err.Error(), w.clock.Now()
	w.mu.Unlock()
	w.log.LogAttrs(context.Background(), slog.LevelWarn, err.Error())
	if w.cfg.OnError != nil {
		w.cfg.OnError(err)
	}
}

// WorkerStats is a snapshot of a worker's gauges and counters.
type WorkerStats struct {
	Connected   bool         `json:"connected"`     // a link consumes now
	Connects    uint64       `json:"connects"`      // links made
	Drops       uint64       `json:"drops"`         // links lost
	Errors      uint64       `json:"errors"`        // failures reported to OnError
	LastError   string       `json:"last_error"`    // the last of them
	LastErrorAt time.Time    `json:"last_error_at"` // when it came
	Globals     uint64       `json:"globals"`       // global events passed to WorkerConfig.Global
	BadGlobals  uint64       `json:"bad_globals"`   // messages of the control exchange dropped: not a global event, or it did not decode
	Shards      []ShardStats `json:"shards"`        // in the order of WorkerConfig.Shards
	// Pool is the dispatcher's, zero before Run.
	Pool concurrent.Stats `json:"pool"`
}

// ShardStats counts what a worker did with one shard queue, over all its links.
type ShardStats struct {
	Shard int    `json:"shard"`
	Queue string `json:"queue"`
	// Active says whether the worker is the queue's active consumer: a single-active
	// consumer learns it when deliveries come, so it is true from the first delivery
	// of a link to the link's end (and false for an active consumer of an idle queue
	// that has had no delivery yet).
	Active        bool   `json:"active"`
	Delivered     uint64 `json:"delivered"`      // deliveries taken, of every kind
	Redelivered   uint64 `json:"redelivered"`    // of which the broker had delivered before (to this worker or another)
	Batches       uint64 `json:"batches"`        // of which batches of several events
	Events        uint64 `json:"events"`         // event messages dispatched to the listener
	System        uint64 `json:"system"`         // alives and snapshot_completes
	Barriers      uint64 `json:"barriers"`       // barriers taken
	BarriersAcked uint64 `json:"barriers_acked"` // barriers acknowledged to the ingress (confirmed by the broker)
	Processed     uint64 `json:"processed"`      // events whose listener call ended, however it ended
	Abandoned     uint64 `json:"abandoned"`      // events dropped unprocessed when a stop ran out of time: left to the broker
	Acked         uint64 `json:"acked"`          // deliveries acknowledged to the broker
	Invalid       uint64 `json:"invalid"`        // deliveries that were not the group's messages, dropped
	// Fenced counts the messages of an earlier ingress epoch found after a later one's,
	// dropped; Epoch is the latest epoch seen.
	Fenced uint64 `json:"fenced"`
	Epoch  int64  `json:"epoch"`
}

// Stats returns the worker's gauges and counters.
func (w *Worker) Stats() WorkerStats {
	st := WorkerStats{
		Connected:  w.connected.Load(),
		Connects:   w.connects.Load(),
		Drops:      w.drops.Load(),
		Errors:     w.errs.Load(),
		Globals:    w.globals.Load(),
		BadGlobals: w.badGlobals.Load(),
		Shards:     make([]ShardStats, len(w.shards)),
	}
	w.mu.Lock()
	st.LastError, st.LastErrorAt = w.lastErr, w.lastErrAt
	w.mu.Unlock()
	for i, s := range w.shards {
		st.Shards[i] = ShardStats{
			Shard: s.n, Queue: s.queue, Active: s.active.Load(),
			Delivered: s.delivered.Load(), Redelivered: s.redelivered.Load(), Batches: s.batches.Load(),
			Events: s.events.Load(), System: s.system.Load(),
			Barriers: s.barriers.Load(), BarriersAcked: s.barriersAcked.Load(),
			Processed: s.processed.Load(), Abandoned: s.abandoned.Load(),
			Acked: s.acked.Load(), Invalid: s.invalid.Load(),
			Fenced: s.fenced.Load(), Epoch: s.epoch.Load(),
		}
	}
	if d := w.disp.Load(); d != nil {
		st.Pool = d.Stats()
	}
	return st
}
