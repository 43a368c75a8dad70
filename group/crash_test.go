//go:build crash

package group_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/rabbitmq"
	"github.com/feedkit/feedkit/internal/crashtest"
	"github.com/feedkit/feedkit/internal/pgtest"
	"github.com/feedkit/feedkit/internal/testenv"
)

// The crash test of the group: the acceptance of issue 35 on one machine, with a real
// RabbitMQ and PostgreSQL. The parent runs the feed: the simulator publishing 2,000
// messages a second into a vhost of RabbitMQ, its API on loopback. Its children run the
// group: two ingress processes sharing a lease, recovery records and a ledger in
// PostgreSQL, and K = 4 shards, each consumed by two worker processes (the active one and
// its standby), whose listeners record every call in PostgreSQL before returning
// (crash_child_test.go). The parent kills, with SIGKILL, the active worker of a shard
// mid-recovery (right after it began processing the replay of an outage's recovery),
// and the active ingress mid-stream, several times a run, and restarts each at once, so
// that every shard keeps a standby. At the end every message the feed sent is accounted
// for (crash_account_test.go).
const (
	crashShards  = 4
	crashRate    = 2000 // event messages a second
	crashMatches = 100
	// The feed's timings, as in the in-process test: alives every 200 ms, a producer
	// down after 2 s without one, checked every 100 ms.
	crashAliveInterval  = 200 * time.Millisecond
	crashHeartbeat      = 2 * time.Second
	crashCheckInterval  = 100 * time.Millisecond
	crashToggleInterval = 200 * time.Millisecond
	// crashBarrierTimeout is longer than any wait of the run: a recovery that a busy
	// machine drains slowly is not recovered again (and again, each replay longer than
	// the last), and a barrier that is never acknowledged fails the wait for its up.
	crashBarrierTimeout = 2 * crashGuard
	// crashStatusInterval is how often the statuses are told again: often, so that a
	// restarted worker learns them at once, and the statuses told again meet the
	// changes often.
	crashStatusInterval = 200 * time.Millisecond
	// The kills of each component (FEEDKIT_CRASH_KILLS sets both).
	crashWorkerKills  = 3
	crashIngressKills = 2
	// crashReplayDepth bounds how far into its recovery a worker is killed.
	crashReplayDepth = 150
	// crashSlowReplay is the time the listeners of the slow shard take per replayed
	// message: some 40 of an outage's in a row for each match, half a second.
	crashSlowReplay = 10 * time.Millisecond
	// crashGuard bounds one wait that only a hang would reach; crashDeadline the run.
	crashGuard    = 5 * time.Minute
	crashDeadline = 25 * time.Minute // within go test's -timeout 30m, to fail with a diagnosis
)

// crashFeedPublisher lets a publish under way finish when the simulator stops: a write
// cut short would leave the publisher's connection unusable (as in examples/oddsfeed).
type crashFeedPublisher struct{ *rabbitmq.Publisher }

func (p crashFeedPublisher) Publish(ctx context.Context, key string, body []byte) error {
	return p.Publisher.Publish(context.WithoutCancel(ctx), key, body)
}

// crashKill is a kill the parent made.
type crashKill struct {
	role  string
	life  crashLife
	at    time.Time // just before the kill
	shard int       // a worker's
	// A worker's: the recovery it was killed in, whether it was the shard's active
	// consumer by its own report, and whether the kill came before the group's up.
	request     int64
	depth       int // its calls of the recovery's replay when killed, at least
	activeSaid  bool
	midRecovery bool
	// An ingress's: its epoch, and whether the producer was up (the stream flowing).
	epoch     int64
	midStream bool
}

func (k crashKill) String() string {
	if k.role == "worker" {
		return fmt.Sprintf("worker %s (shard %d, active %v) at %s, %d calls into recovery %d (before its up: %v)",
			k.life, k.shard, k.activeSaid, k.at.Format(time.StampMicro), k.depth, k.request, k.midRecovery)
	}
	return fmt.Sprintf("ingress %s (epoch %d) at %s, producer up: %v", k.life, k.epoch, k.at.Format(time.StampMicro), k.midStream)
}

// TestCrashGroup runs the group under the simulator at 2,000 messages a second, with an
// outage before each worker kill, and FEEDKIT_CRASH_KILLS times (3 workers and 2
// ingresses by default) kills the active worker of a shard drawn at random while it
// processes the outage's recovery, or the active ingress while the stream flows. At the
// end: every live message the feed sent was processed, as itself or replayed; each
// match's live messages in order, by their first processing, across every fail-over;
// every message processed more often than the feed sent it (with its request) was a
// killed worker's, made again by its successor after the kill; the statuses reached
// every process in the order they changed; each up of the group follows a recovery of
// its own, one per recovery and a recovery between two, and was told only after every
// shard had processed every message that recovery replayed.
func TestCrashGroup(t *testing.T) {
	workerKills := crashtest.Kills(t, crashWorkerKills)
	ingressKills := crashtest.Kills(t, crashIngressKills)
	rng := crashtest.Rand(t, "group")
	feedURL, groupURL, pgURL := testenv.AMQPVhost(t), testenv.AMQPVhost(t), pgtest.URL(t)
	ctx, cancel := context.WithTimeout(t.Context(), crashDeadline)
	defer cancel()

	pool, err := pgxpool.New(ctx, pgURL)
	require.NoError(t, err)
	t.Cleanup(pool.Close) // before pgtest drops the schema
	_, err = pool.Exec(ctx, crashSchema)
	require.NoError(t, err)

	// The feed.
	lo := crashProducer()
	pub, err := rabbitmq.NewPublisher(ctx, rabbitmq.Config{URL: feedURL, DeclareExchange: true, ConnectionName: "crash-simulator"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = pub.Close(context.Background()) })
	sim, err := feedtest.NewSimulator(crashFeedPublisher{pub}, feedtest.SimulatorConfig{Producers: []feed.Producer{lo},
		Matches: crashMatches, Rate: crashRate, AliveInterval: crashAliveInterval,
		HistoryAge: time.Hour, HistoryBytes: 2 << 30, Seed: rng.Uint64()}) // the history holds the whole run
	require.NoError(t, err)
	u, err := url.Parse(feedURL)
	require.NoError(t, err)
	api := httptest.NewServer(sim.APIHandler(feedtest.Account{VirtualHost: strings.TrimPrefix(u.Path, "/")}))
	t.Cleanup(api.Close)

	// The group.
	log := newCrashLog(t)
	gu, err := url.Parse(groupURL)
	require.NoError(t, err)
	log.diagnose = func() string { return crashDiagnosis(t, pool, strings.TrimPrefix(gu.Path, "/")) }
	env := []string{crashFeedVar + "=" + feedURL, crashGroupVar + "=" + groupURL, crashPGVar + "=" + pgURL, crashAPIVar + "=" + api.URL}
	var ingresses, workers []*crashtest.Process
	for _, name := range []string{"in-a", "in-b"} {
		ingresses = append(ingresses, crashtest.Start(t, crashtest.Spec{Name: name, Test: "TestCrashChildGroupIngress",
			Env: append(slices.Clone(env), crashNameVar+"="+name), Output: log}))
	}
	// One shard, drawn at random, is slow to process a recovery: the others are done
	// with theirs well before it, so that an up told before every shard had processed
	// its recovery would be seen.
	slow := rng.IntN(crashShards)
	shards := make([][]*crashtest.Process, crashShards)
	for s := range shards {
		for _, standby := range []string{"a", "b"} {
			name := fmt.Sprintf("w%d%s", s, standby)
			wenv := append(slices.Clone(env), crashNameVar+"="+name, crashShardVar+"="+strconv.Itoa(s))
			if s == slow {
				wenv = append(wenv, crashSlowVar+"="+crashSlowReplay.String())
			}
			p := crashtest.Start(t, crashtest.Spec{Name: name, Test: "TestCrashChildGroupWorker", Env: wenv, Output: log})
			shards[s] = append(shards[s], p)
			workers = append(workers, p)
		}
	}
	all := append(slices.Clone(ingresses), workers...)
	crashAwaitReady(ctx, t, all)
	log.must(t, log.await(ctx, "an active ingress", func(lines []crashLine) bool {
		return crashFind(lines, 0, func(l crashLine) bool { return crashIsIngress(l) && l.is("active") }) >= 0
	}))

	simCtx, stopSim := context.WithCancel(ctx)
	defer stopSim()
	simRan := make(chan error, 1)
	began := time.Now()
	go func() { simRan <- sim.Run(simCtx) }()
	log.must(t, log.await(ctx, "the first up", crashStatusFrom(0, "up")))

	// The kills, in an order drawn at random, each after a pause of streaming.
	steps := append(slices.Repeat([]string{"worker"}, workerKills), slices.Repeat([]string{"ingress"}, ingressKills)...)
	rng.Shuffle(len(steps), func(i, j int) { steps[i], steps[j] = steps[j], steps[i] })
	var kills []crashKill
	for _, step := range steps {
		crashAwaitReady(ctx, t, all)
		// A pause that shapes the load: the group streams a while between kills.
		require.NoError(t, crashtest.Pause(ctx, crashtest.Between(rng, time.Second, 3*time.Second)))
		if step == "worker" {
			kills = append(kills, crashKillWorker(ctx, t, rng, log, sim, lo.ID, shards))
		} else {
			kills = append(kills, crashKillIngress(ctx, t, rng, log, ingresses))
		}
		t.Logf("killed %v", kills[len(kills)-1])
	}

	// The end: the feed stops its events, but not its alives, so that the producer
	// stays up; every live message it sent is processed.
	crashAwaitReady(ctx, t, all)
	require.NoError(t, crashtest.Pause(ctx, crashtest.Between(rng, time.Second, 2*time.Second)))
	stopSim()
	require.NoError(t, <-simRan)
	streamed := time.Since(began)
	alivesCtx, stopAlives := context.WithCancel(ctx)
	alivesDone := make(chan struct{})
	go func() {
		defer close(alivesDone)
		tick := time.NewTicker(crashAliveInterval)
		defer tick.Stop()
		for {
			select {
			case <-alivesCtx.Done():
				return
			case <-tick.C:
				_ = sim.SendAlive(alivesCtx, lo.ID, true)
			}
		}
	}()
	defer func() {
		stopAlives()
		<-alivesDone
	}()
	byMatch := sim.EventsByMatch()
	want := map[crashMsgKey]int{}
	live := 0
	for _, msgs := range byMatch {
		for _, s := range msgs {
			want[crashKeyOf(idOf(s.Message))]++
			live++
		}
	}
	require.NotZero(t, live)
	// A message never processed fails the test, but the accounting goes on: it says
	// what became of the others.
	if err := crashAwaitRecorded(ctx, t, pool, want); err != nil {
		t.Errorf("%v\n%s", err, log.diagnosis())
	}

	// The children stop: the standby ingress first, so that the active one hands over
	// to none; then the workers.
	order := slices.Clone(ingresses)
	if active, _ := log.activeIngress(ingresses); active != nil {
		i := slices.Index(order, active)
		order = append(slices.Delete(order, i, i+1), active)
	}
	stopCtx, cancelStop := context.WithTimeout(ctx, crashGuard)
	defer cancelStop()
	for _, p := range append(order, workers...) {
		require.NoError(t, p.Stop(stopCtx), "stopping %s", p.Name())
	}

	// The record.
	calls, err := crashLoadCalls(ctx, pool)
	require.NoError(t, err)
	globals, err := crashLoadGlobals(ctx, pool)
	require.NoError(t, err)
	sent := sim.Sent()
	require.Zero(t, sim.Forgotten(), "the simulator's history must hold the whole run")
	killedAt := map[string]time.Time{}
	counts := crashtest.NewCounts("group")
	kinds := map[string]int{}
	midRecovery, midStream := 0, 0
	for _, k := range kills {
		killedAt[k.life.String()] = k.at
		kinds[k.role]++
		if k.midRecovery {
			midRecovery++
		}
		if k.midStream {
			midStream++
		}
	}

	plain := make([]call, len(calls))
	for i, c := range calls {
		plain[i] = call{worker: c.life, id: c.id, request: c.request}
	}
	acct := account(byMatch, plain)
	dups := crashCheckDuplicates(calls, crashExpected(byMatch, sent), killedAt, log.linksLost())
	ups := crashCheckUps(globals, calls, sent, killedAt, log.linksLost())
	stats := sim.Stats()

	counts.Set("slow_shard", slow)
	counts.Set("seconds", int(streamed.Seconds()))
	counts.Set("sent", live)
	counts.Set("rate", int(float64(stats.Events)/streamed.Seconds()))
	counts.Set("replays_sent", int(stats.Replayed))
	counts.Set("calls", len(calls))
	counts.Set("live", acct.live)
	counts.Set("recovered", acct.recovered)
	counts.Set("lost", acct.lost)
	counts.Set("reordered", acct.reordered)
	counts.Set("replayed_again", acct.replayedAgain)
	counts.Set("redelivered", dups.live)
	counts.Set("redelivered_replays", dups.replayed)
	counts.Set("after_lost_link", dups.afterLoss)
	counts.Set("unexplained", len(dups.unexplained))
	counts.Set("kills_worker", kinds["worker"])
	counts.Set("kills_worker_mid_recovery", midRecovery)
	counts.Set("kills_ingress", kinds["ingress"])
	counts.Set("kills_ingress_mid_stream", midStream)
	counts.Set("recoveries", ups.recoveries)
	counts.Set("ups", ups.ups)
	counts.Set("early_ups", len(ups.early))
	counts.Set("up_problems", len(ups.problems))
	counts.Set("errors", log.errorCount())
	counts.Print()

	for _, k := range kills {
		t.Logf("kill: %v; its calls made again by its successor: %d", k, dups.byKill[k.life.String()])
	}
	for _, line := range ups.timeline {
		t.Log(line)
	}
	t.Logf("recoveries without an up: %v", ups.abandoned)
	assert.Zero(t, acct.lost, "live messages never processed")
	assert.Zero(t, acct.reordered, "live messages processed out of their match's order")
	assert.Equal(t, acct.redelivered, dups.live, "live messages processed again, each across a kill")
	assert.Empty(t, dups.unexplained, "messages processed again that no kill accounts for")
	assert.Empty(t, dups.unknown, "calls of messages the feed never sent")
	assert.Empty(t, ups.problems, "the group's ups")
	assert.Empty(t, ups.early, "ups told before their recovery was processed")
	assert.Equal(t, workerKills, kinds["worker"])
	assert.Equal(t, ingressKills, kinds["ingress"])
	assert.Equal(t, workerKills, midRecovery, "every worker killed mid-recovery")
	assert.Equal(t, ups.completed, ups.ups, "an up for each recovery completed")
	// The first recovery, one per outage and one per ingress taking over, at least.
	assert.GreaterOrEqual(t, ups.ups, 1+workerKills+ingressKills, "ups")
}

// crashIsIngress reports whether l is an ingress's.
func crashIsIngress(l crashLine) bool { return strings.HasPrefix(l.life.name, "in-") }

// crashStatusFrom is a condition: an ingress told of a status of kind ("up", "down")
// at or after line from.
func crashStatusFrom(from int, kind string) func([]crashLine) bool {
	return func(lines []crashLine) bool {
		return crashFind(lines, from, func(l crashLine) bool { return crashIsIngress(l) && l.is("status", kind) }) >= 0
	}
}

// crashAwaitReady waits until every child of procs is at work: started again after a
// kill, and connected.
func crashAwaitReady(ctx context.Context, t *testing.T, procs []*crashtest.Process) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, crashGuard)
	defer cancel()
	for _, p := range procs {
		select {
		case <-p.Ready():
		case <-p.Done():
			t.Fatalf("%s exited before it was at work: %v", p.Name(), p.Err())
		case <-ctx.Done():
			t.Fatalf("%s not at work: %v", p.Name(), ctx.Err())
		}
	}
}

// crashKillWorker makes an outage, and kills the active worker of a shard drawn at
// random as soon as it processes the outage's recovery, then restarts it.
func crashKillWorker(ctx context.Context, t *testing.T, rng *rand.Rand, log *crashLog, sim *feedtest.Simulator,
	producer int, shards [][]*crashtest.Process) crashKill {
	t.Helper()
	mark := log.mark()
	sim.StopAlives(producer)
	down := -1
	log.must(t, log.await(ctx, "the outage's down", func(lines []crashLine) bool {
		down = crashFind(lines, mark, func(l crashLine) bool { return crashIsIngress(l) && l.is("status", "down") })
		return down >= 0
	}))
	sim.ResumeAlives(producer)
	rec, request := -1, int64(0)
	log.must(t, log.await(ctx, "the outage's recovery", func(lines []crashLine) bool {
		rec = crashFind(lines, down, func(l crashLine) bool {
			return crashIsIngress(l) && l.is("recovery") && l.arg(2) == int64(feed.ProducerRecovery)
		})
		if rec >= 0 {
			request = lines[rec].arg(1)
		}
		return rec >= 0
	}))
	// The shard, and how far into its share of the replay its worker dies: up to
	// crashReplayDepth calls, far fewer than a shard's share of an outage of at least
	// crashHeartbeat at crashRate (some 1,000; several hundred at half the rate), so
	// that the kill comes before the up however fast the machine.
	s := rng.IntN(len(shards))
	depth := max(1, crashReplayStep*rng.IntN(crashReplayDepth/crashReplayStep+1))
	var victim *crashtest.Process
	upFirst := false
	what := fmt.Sprintf("shard %d at call %d of recovery %d", s, depth, request)
	log.must(t, log.await(ctx, what, func(lines []crashLine) bool {
		for _, p := range shards[s] {
			life := crashLifeOf(p)
			if crashFind(lines, rec, func(l crashLine) bool {
				return l.life == life && l.is("replaying", strconv.FormatInt(request, 10)) && l.arg(2) >= int64(depth)
			}) >= 0 {
				victim = p
				return true
			}
		}
		upFirst = crashStatusFrom(rec, "up")(lines)
		return upFirst
	}))
	if victim == nil {
		// The recovery ended before the shard told of it: its active worker dies
		// mid-stream instead, and the count of kills mid-recovery says so.
		victim = log.activeWorker(shards[s])
		require.NotNil(t, victim, "no active worker of shard %d", s)
	}
	k := crashKill{role: "worker", life: crashLifeOf(victim), shard: s, request: request, depth: depth,
		activeSaid: log.activeWorker(shards[s]) == victim, at: time.Now()}
	require.True(t, victim.Kill(), "killing %s", victim.Name())
	dead := time.Now()
	log.mu.Lock()
	upAt := crashFind(log.lines, rec, func(l crashLine) bool { return crashIsIngress(l) && l.is("status", "up") })
	k.midRecovery = !upFirst && (upAt < 0 || log.lines[upAt].at.After(dead))
	log.mu.Unlock()
	victim.Restart()
	log.must(t, log.await(ctx, fmt.Sprintf("the up after recovery %d", request), crashStatusFrom(rec, "up")))
	return k
}

// crashKillIngress kills the active ingress, restarts it, and waits until the other has
// taken over and told the group's up.
func crashKillIngress(ctx context.Context, t *testing.T, rng *rand.Rand, log *crashLog, ingresses []*crashtest.Process) crashKill {
	t.Helper()
	// A pause that shapes the load: the kill lands a while into the stream.
	require.NoError(t, crashtest.Pause(ctx, crashtest.Between(rng, 0, time.Second)))
	victim, epoch := log.activeIngress(ingresses)
	require.NotNil(t, victim, "no active ingress")
	mark := log.mark()
	log.mu.Lock()
	last := ""
	for _, l := range log.lines {
		if crashIsIngress(l) && l.is("status") {
			last = l.words[1]
		}
	}
	log.mu.Unlock()
	k := crashKill{role: "ingress", life: crashLifeOf(victim), epoch: epoch, midStream: last == "up", at: time.Now()}
	require.True(t, victim.Kill(), "killing %s", victim.Name())
	victim.Restart()
	took := -1
	log.must(t, log.await(ctx, "another ingress taking over", func(lines []crashLine) bool {
		took = crashFind(lines, mark, func(l crashLine) bool { return crashIsIngress(l) && l.is("active") && l.arg(1) > epoch })
		return took >= 0
	}))
	log.must(t, log.await(ctx, "the up after the take-over", crashStatusFrom(took, "up")))
	return k
}

// crashAwaitRecorded waits until every message of want is recorded at least as often.
// The workers' commits send no signal across processes: the table is polled.
func crashAwaitRecorded(ctx context.Context, t *testing.T, pool *pgxpool.Pool, want map[crashMsgKey]int) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, crashGuard)
	defer cancel()
	for {
		got, err := crashCalled(ctx, pool)
		if err != nil {
			return fmt.Errorf("counting the calls: %w", err)
		}
		var missing []crashMsgKey
		for k, n := range want {
			if got[k] < n {
				missing = append(missing, k)
			}
		}
		if len(missing) == 0 {
			return nil
		}
		if err := crashtest.Pause(ctx, 500*time.Millisecond); err != nil {
			return fmt.Errorf("%d of %d live messages never processed, e.g. %v: %w", len(missing), len(want),
				missing[:min(5, len(missing))], err)
		}
	}
}

// errorCount returns how many errors the children told.
func (l *crashLog) errorCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.errors
}

// crashDiagnosis describes the group's state, for a failure: the group's queues and
// consumers as the broker has them, and every child's last Stats.
func crashDiagnosis(t *testing.T, pool *pgxpool.Pool, vhost string) string {
	var b strings.Builder
	b.WriteString("queues:\n")
	b.WriteString(testenv.RabbitMQCtl(t, "list_queues", "-q", "-p", vhost, "name", "messages_ready", "messages_unacknowledged", "consumers"))
	b.WriteString("consumers:\n")
	b.WriteString(testenv.RabbitMQCtl(t, "list_consumers", "-q", "-p", vhost, "queue_name", "channel_pid", "active", "activity_status"))
	ctx, cancel := context.WithTimeout(context.Background(), crashGuard)
	defer cancel()
	rows, err := pool.Query(ctx, `SELECT life, at, stats FROM crash_status ORDER BY life`)
	if err != nil {
		return b.String() + "stats: " + err.Error()
	}
	defer rows.Close()
	b.WriteString("stats:\n")
	for rows.Next() {
		var life, stats string
		var at time.Time
		if err := rows.Scan(&life, &at, &stats); err != nil {
			return b.String() + err.Error()
		}
		fmt.Fprintf(&b, "%s at %s: %s\n", life, at.Format(time.StampMicro), stats)
	}
	return b.String()
}
