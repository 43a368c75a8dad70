//go:build crash

package group_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit"
	carouselpg "github.com/feedkit/feedkit/carousel/pgstore"
	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/rabbitmq"
	"github.com/feedkit/feedkit/group"
	"github.com/feedkit/feedkit/internal/crashtest"
	"github.com/feedkit/feedkit/recovery"
	recoverypg "github.com/feedkit/feedkit/recovery/pgstore"
)

// The children of TestCrashGroup: an ingress process and a worker process of the group,
// each as a host would run it, with what they did recorded in PostgreSQL (which
// outlives their kills) and told to the parent on their stdout, as lines
// "crashgroup: WORD ARGS..." that the parent's crashLog reads:
//
//	ingress: active EPOCH | passive EPOCH      its IngressConfig.OnStateChange
//	         recovery REQUEST KIND             what its SDK.Global hears, that is what
//	         status up|down REASON UNIXNANO    the group is told
//	worker:  connected                         its first link consumes its shard
//	         active 0|1                        its ShardStats.Active changed
//	         replaying REQUEST N               its Nth listener call of a replay (the
//	                                           first, and every crashReplayStep-th)
//	both:    error TEXT                        an OnError
//
// The environment the parent gives its children.
const (
	crashFeedVar  = "FEEDKIT_CRASH_GROUP_FEED"  // the feed's RabbitMQ, with its vhost
	crashGroupVar = "FEEDKIT_CRASH_GROUP_AMQP"  // the group's RabbitMQ, with its vhost
	crashPGVar    = "FEEDKIT_CRASH_GROUP_PG"    // the database, with the test's schema
	crashAPIVar   = "FEEDKIT_CRASH_GROUP_API"   // the simulator's API
	crashNameVar  = "FEEDKIT_CRASH_GROUP_NAME"  // the child's name
	crashShardVar = "FEEDKIT_CRASH_GROUP_SHARD" // a worker's shard
	crashSlowVar  = "FEEDKIT_CRASH_GROUP_SLOW"  // how long a worker's listener takes per replayed message
)

// crashSchema is the record: every listener call of every worker, and every global
// event each process heard. The times are the database's (clock_timestamp()), one clock
// for every process: a call's row is written before the listener returns, so it was
// processed by then.
const crashSchema = `
CREATE TABLE crash_calls (
	id          bigserial   PRIMARY KEY,
	life        text        NOT NULL, -- the worker's name#start
	shard       int         NOT NULL,
	event       text        NOT NULL,
	typ         int         NOT NULL, -- feed.MessageType
	at_ms       bigint      NOT NULL, -- the message's timestamp
	request     bigint      NOT NULL, -- its request id: 0 live, else a replay's
	recorded_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE TABLE crash_globals (
	id            bigserial   PRIMARY KEY,
	life          text        NOT NULL,
	role          text        NOT NULL, -- ingress or worker
	seq           int         NOT NULL, -- the call's number in its life
	kind          text        NOT NULL, -- up, down, recovery, event-recovery, connection-down, connection-up
	producer      int         NOT NULL DEFAULT 0,
	reason        int         NOT NULL DEFAULT 0, -- a status's feed.StatusReason
	request       bigint      NOT NULL DEFAULT 0, -- a recovery's request id
	recovery_kind int         NOT NULL DEFAULT 0, -- its feed.RecoveryKind
	status_ns     bigint      NOT NULL DEFAULT 0, -- a status's Timestamp, Unix ns
	recorded_at   timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE TABLE crash_status (
	life  text        PRIMARY KEY,
	stats jsonb       NOT NULL, -- the process's Stats, for a failure's diagnosis
	at    timestamptz NOT NULL DEFAULT clock_timestamp()
)`

// crashStatusEvery is how often a child writes its Stats to crash_status.
const crashStatusEvery = 500 * time.Millisecond

// crashWriteStatus writes a child's Stats to crash_status, for the parent to show when
// the run fails; an error is the parent's to see in the table's age.
func crashWriteStatus(pool *pgxpool.Pool, life string, stats any) {
	body, err := json.Marshal(stats)
	if err != nil {
		crashSayError(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), crashStatusEvery)
	defer cancel()
	_, _ = pool.Exec(ctx, `INSERT INTO crash_status (life, stats) VALUES ($1, $2)
		ON CONFLICT (life) DO UPDATE SET stats = excluded.stats, at = clock_timestamp()`, life, body)
}

// crashTopology is the group's, in its own vhost.
var crashTopology = group.Topology{Prefix: "crash", Shards: crashShards}

// crashSay tells the parent one line.
func crashSay(format string, args ...any) {
	// One write of a short line: whole, whichever goroutine writes beside it.
	fmt.Print("crashgroup: " + fmt.Sprintf(format, args...) + "\n")
}

// crashSayError tells the parent of an error, on one line.
func crashSayError(err error) {
	crashSay("error %s", strings.ReplaceAll(err.Error(), "\n", " "))
}

// crashChildEnv reads the child's environment.
func crashChildEnv(t *testing.T, name string) string {
	v := os.Getenv(name)
	require.NotEmpty(t, v, name)
	return v
}

// crashChildPool opens the child's pool on the test's schema.
func crashChildPool(t *testing.T) *pgxpool.Pool {
	ctx, cancel := context.WithTimeout(context.Background(), crashGuard)
	defer cancel()
	pool, err := pgxpool.New(ctx, crashChildEnv(t, crashPGVar))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

// crashChildLife names the child's life: its name and start number.
func crashChildLife(t *testing.T) string {
	return crashChildEnv(t, crashNameVar) + "#" + strconv.Itoa(crashtest.StartNumber())
}

// TestCrashChildGroupIngress is an ingress of the group: the SDK on the feed's
// RabbitMQ, its recovery records, ledger and lease in PostgreSQL, shared with the other
// ingress.
func TestCrashChildGroupIngress(t *testing.T) {
	ctx := crashtest.Child(t)
	life := crashChildLife(t)
	pool := crashChildPool(t)
	store, err := recoverypg.NewStore(ctx, pool, recoverypg.Options{})
	require.NoError(t, err)
	ledger, err := recoverypg.NewLedger(ctx, pool, recoverypg.Options{})
	require.NoError(t, err)
	lease, err := carouselpg.NewLease(pool, carouselpg.LeaseOptions{Name: "crash-ingress", Failover: true})
	require.NoError(t, err)
	transport, err := rabbitmq.New(rabbitmq.Config{URL: crashChildEnv(t, crashFeedVar), DeclareExchange: true,
		ConnectionName: "crash-feed-" + life, OnError: crashSayError})
	require.NoError(t, err)
	env := feedkit.CustomEnvironment("", crashChildEnv(t, crashAPIVar))
	lo := crashProducer()
	in, err := group.NewIngress(group.IngressConfig{
		SDK: feedkit.Config{Environment: &env, AccessToken: feedtest.DefaultAccessToken, Transport: transport,
			Node: feed.Node(1), Global: &crashGlobals{pool: pool, life: life, role: "ingress", say: true},
			OnError: crashSayError,
			Recovery: recovery.Config{HeartbeatLimits: map[int]time.Duration{lo.ID: crashHeartbeat},
				CheckInterval: crashCheckInterval, Store: store, Ledger: ledger,
				// The feed's limits would hold the run's many short recoveries back.
				Limits: recovery.Limits{{Windows: []recovery.Window{{Length: time.Hour, Max: 10000}}}}}},
		URL: crashChildEnv(t, crashGroupVar), Topology: crashTopology, Toggle: lease, ToggleInterval: crashToggleInterval,
		BarrierTimeout: crashBarrierTimeout, StatusInterval: crashStatusInterval, OnError: crashSayError,
		OnStateChange: func(active bool, epoch int64) {
			if active {
				crashSay("active %d", epoch)
			} else {
				crashSay("passive %d", epoch)
			}
		},
	})
	require.NoError(t, err)
	statusDone := make(chan struct{})
	go func() {
		defer close(statusDone)
		tick := time.NewTicker(crashStatusEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				crashWriteStatus(pool, life, in.Stats())
			}
		}
	}()
	crashtest.Ready()
	err = in.Run(ctx)
	<-statusDone
	require.ErrorIs(t, err, context.Canceled)
	closeCtx, cancel := context.WithTimeout(context.Background(), crashGuard)
	defer cancel()
	require.NoError(t, lease.Close(closeCtx))
}

// TestCrashChildGroupWorker is a worker of the group consuming one shard, whose listener
// records every call before it returns.
func TestCrashChildGroupWorker(t *testing.T) {
	ctx := crashtest.Child(t)
	life := crashChildLife(t)
	shard, err := strconv.Atoi(crashChildEnv(t, crashShardVar))
	require.NoError(t, err)
	var slow time.Duration
	if v := os.Getenv(crashSlowVar); v != "" {
		slow, err = time.ParseDuration(v)
		require.NoError(t, err, crashSlowVar)
	}
	pool := crashChildPool(t)
	calls := &crashCalls{pool: pool, life: life, shard: shard, batch: newCrashBatch(), kick: make(chan struct{}, 1)}
	flushCtx, stopFlush := context.WithCancel(context.Background())
	flushed := make(chan struct{})
	go func() {
		defer close(flushed)
		calls.run(flushCtx)
	}()
	w, err := group.NewWorker(group.WorkerConfig{URL: crashChildEnv(t, crashGroupVar), Topology: crashTopology,
		Shards: []int{shard}, Listener: &crashListener{calls: calls, slow: slow, replaying: map[int64]int{}},
		Global:     &crashGlobals{pool: pool, life: life, role: "worker"},
		Concurrent: concurrent.Config{Threads: 32, OnError: crashSayError}, OnError: crashSayError,
		ConnectionName: "crash-" + life})
	require.NoError(t, err)
	ran := make(chan error, 1)
	go func() { ran <- w.Run(ctx) }()

	// The worker tells of neither its first link nor its becoming the shard's active
	// consumer: its Stats are polled, here in the child, and the parent told of the
	// changes.
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	connected, active := false, false
	var written time.Time
	for {
		select {
		case err := <-ran:
			stopFlush()
			<-flushed
			require.NoError(t, err)
			return
		case <-tick.C:
		}
		st := w.Stats()
		if st.Connected && !connected {
			connected = true
			crashSay("connected")
			crashtest.Ready()
		}
		if a := len(st.Shards) == 1 && st.Shards[0].Active; a != active {
			active = a
			crashSay("active %d", map[bool]int{false: 0, true: 1}[a])
		}
		if time.Since(written) >= crashStatusEvery {
			crashWriteStatus(pool, life, st)
			written = time.Now()
		}
	}
}

// crashProducer is the producer the simulator feeds: LO, live.
func crashProducer() feed.Producer {
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	return lo
}

// crashReplayStep is how often a worker tells the parent how far it is in a replay.
const crashReplayStep = 50

// crashListener is a worker's listener: each call is recorded, and committed, before it
// returns. It tells the parent how far it is in each replay.
type crashListener struct {
	calls *crashCalls
	slow  time.Duration // the time each replayed message takes

	mu        sync.Mutex
	replaying map[int64]int // calls of each replay
}

var _ feed.CashoutListener = (*crashListener)(nil)

func (l *crashListener) handle(m feed.Message) error {
	h := m.MessageHeader()
	if h.RequestID != 0 {
		l.mu.Lock()
		l.replaying[h.RequestID]++
		n := l.replaying[h.RequestID]
		l.mu.Unlock()
		if n == 1 || n%crashReplayStep == 0 {
			crashSay("replaying %d %d", h.RequestID, n)
		}
		if l.slow > 0 {
			_ = crashtest.Pause(context.Background(), l.slow) // the listener's work
		}
	}
	l.calls.record([]any{l.calls.life, l.calls.shard, h.Event.String(), int(m.Type()), h.Timestamp.UnixMilli(), h.RequestID})
	return nil
}

func (l *crashListener) OnOddsChange(_ context.Context, m *feed.OddsChange) error { return l.handle(m) }
func (l *crashListener) OnBetStop(_ context.Context, m *feed.BetStop) error       { return l.handle(m) }
func (l *crashListener) OnBetSettlement(_ context.Context, m *feed.BetSettlement) error {
	return l.handle(m)
}
func (l *crashListener) OnRollbackBetSettlement(_ context.Context, m *feed.RollbackBetSettlement) error {
	return l.handle(m)
}
func (l *crashListener) OnBetCancel(_ context.Context, m *feed.BetCancel) error { return l.handle(m) }
func (l *crashListener) OnRollbackBetCancel(_ context.Context, m *feed.RollbackBetCancel) error {
	return l.handle(m)
}
func (l *crashListener) OnFixtureChange(_ context.Context, m *feed.FixtureChange) error {
	return l.handle(m)
}
func (l *crashListener) OnCashout(_ context.Context, m *feed.Cashout) error { return l.handle(m) }

// OnUnparsableMessage records the message under its routing key's event, with no type:
// the accounting finds it unknown.
func (l *crashListener) OnUnparsableMessage(_ context.Context, m *feed.UnparsableMessage) error {
	crashSayError(fmt.Errorf("unparsable message %s: %v", m.RoutingKey, m.Err))
	l.calls.record([]any{l.calls.life, l.calls.shard, m.Event.String(), int(feed.MessageUnknown), int64(0), int64(0)})
	return nil
}

// crashCalls writes the listener's calls to crash_calls in batches: each call waits for
// the commit of the batch that holds its row, and the rows of the calls that come
// meanwhile make the next batch (a group commit).
type crashCalls struct {
	pool  *pgxpool.Pool
	life  string
	shard int

	mu      sync.Mutex
	pending [][]any
	batch   *crashBatch // the batch pending goes in
	kick    chan struct{}
}

// crashBatch is closed once its rows are committed.
type crashBatch struct{ done chan struct{} }

func newCrashBatch() *crashBatch { return &crashBatch{done: make(chan struct{})} }

var crashCallColumns = []string{"life", "shard", "event", "typ", "at_ms", "request"}

// record writes row and returns once it is committed.
func (c *crashCalls) record(row []any) {
	c.mu.Lock()
	c.pending = append(c.pending, row)
	b := c.batch
	c.mu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default:
	}
	<-b.done
}

// run writes the batches until ctx ends: once every call has returned.
func (c *crashCalls) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.kick:
		}
		c.mu.Lock()
		rows, b := c.pending, c.batch
		c.pending, c.batch = nil, newCrashBatch()
		c.mu.Unlock()
		if len(rows) == 0 {
			close(b.done)
			continue
		}
		// A failed write is written again: the calls wait, as a listener whose
		// database is away does, rather than return unrecorded.
		for {
			wctx, cancel := context.WithTimeout(context.Background(), crashGuard)
			_, err := c.pool.CopyFrom(wctx, pgx.Identifier{"crash_calls"}, crashCallColumns, pgx.CopyFromRows(rows))
			cancel()
			if err == nil {
				break
			}
			crashSayError(fmt.Errorf("recording %d calls: %w", len(rows), err))
			if crashtest.Pause(ctx, 100*time.Millisecond) != nil {
				return // stopping: the calls waiting were given up on by the worker
			}
		}
		close(b.done)
	}
}

// crashGlobals is a process's global events listener: it records each call in
// crash_globals, numbered in its life, and an ingress's tells the parent too.
type crashGlobals struct {
	pool       *pgxpool.Pool
	life, role string
	say        bool

	mu  sync.Mutex // one call recorded at a time, in the order of seq
	seq int
}

func (g *crashGlobals) record(kind string, producer int, reason feed.StatusReason, request int64, rkind feed.RecoveryKind, ts time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.seq++
	var ns int64
	if !ts.IsZero() {
		ns = ts.UnixNano()
	}
	for {
		ctx, cancel := context.WithTimeout(context.Background(), crashGuard)
		_, err := g.pool.Exec(ctx, `INSERT INTO crash_globals (life, role, seq, kind, producer, reason, request, recovery_kind, status_ns)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, g.life, g.role, g.seq, kind, producer, int(reason), request, int(rkind), ns)
		cancel()
		if err == nil {
			break
		}
		crashSayError(fmt.Errorf("recording a %s: %w", kind, err))
		_ = crashtest.Pause(context.Background(), 100*time.Millisecond) // a retry's pause
	}
}

func (g *crashGlobals) OnConnectionDown(_ context.Context, _ feed.SessionRef, _ error) {
	g.record("connection-down", 0, 0, 0, 0, time.Time{})
}

func (g *crashGlobals) OnConnectionUp(_ context.Context, _ feed.SessionRef) {
	g.record("connection-up", 0, 0, 0, 0, time.Time{})
}

func (g *crashGlobals) OnProducerStatusChange(_ context.Context, s feed.ProducerStatus) {
	kind := "up"
	if s.Down {
		kind = "down"
	}
	g.record(kind, s.Producer, s.Reason, 0, 0, s.Timestamp)
	if g.say {
		crashSay("status %s %d %d", kind, int(s.Reason), s.Timestamp.UnixNano())
	}
}

func (g *crashGlobals) OnRecoveryInitiated(_ context.Context, r feed.RecoveryInitiated) {
	g.record("recovery", r.Producer, 0, r.RequestID, r.Kind, time.Time{})
	if g.say {
		crashSay("recovery %d %d", r.RequestID, int(r.Kind))
	}
}

func (g *crashGlobals) OnEventRecoveryCompleted(_ context.Context, r feed.EventRecoveryCompleted) {
	g.record("event-recovery", r.Producer, 0, r.RequestID, feed.EventRecovery, time.Time{})
}
