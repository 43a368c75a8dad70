package group_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/carousel"
	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/group"
	"github.com/feedkit/feedkit/internal/grouptest"
	"github.com/feedkit/feedkit/internal/testenv"
	"github.com/feedkit/feedkit/recovery"
)

// The feed's timings in these tests: alives every 200 ms, a producer down after 2 s
// without one (a busy machine under -race delays alives by a second at times), checked
// every 100 ms.
const (
	aliveInterval  = 200 * time.Millisecond
	heartbeatLimit = 2 * time.Second
	checkInterval  = 100 * time.Millisecond
	guard          = 2 * time.Minute // bounds a wait that only a hang would reach
)

// handOver is a carousel.Toggle shared by the test's ingresses: the one it names is
// active, in the generation it was named in.
type handOver struct {
	mu   sync.Mutex
	name string
	gen  carousel.Generation
}

func (h *handOver) set(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.name = name
	h.gen++
}

// toggle is ingress name's view of h.
type toggle struct {
	h    *handOver
	name string
}

func (t toggle) Active(context.Context) (bool, carousel.Generation, error) {
	t.h.mu.Lock()
	defer t.h.mu.Unlock()
	return t.h.name == t.name, t.h.gen, nil
}

// msgID names a feed message as the feed sent it: a replay of it has the same.
type msgID struct {
	event feed.URN
	typ   feed.MessageType
	at    int64 // its timestamp, ms
}

func idOf(m feed.Message) msgID {
	h := m.MessageHeader()
	return msgID{event: h.Event, typ: m.Type(), at: h.Timestamp.UnixMilli()}
}

// processed is every listener call of every worker, in the order they were made.
type processed struct {
	mu    sync.Mutex
	calls []call
	seen  map[msgID]int
	more  chan struct{} // closed and replaced at every call
}

type call struct {
	worker  string
	id      msgID
	request int64
}

func newProcessed() *processed {
	return &processed{seen: map[msgID]int{}, more: make(chan struct{})}
}

func (p *processed) listener(worker string) feed.OddsFeedListener {
	rec := feedtest.NewRecorder()
	rec.Hook = func(m feed.Message) error {
		p.mu.Lock()
		defer p.mu.Unlock()
		id := idOf(m)
		p.calls = append(p.calls, call{worker: worker, id: id, request: m.MessageHeader().RequestID})
		p.seen[id]++
		close(p.more)
		p.more = make(chan struct{})
		return nil
	}
	return rec
}

// missing returns the ids of want not processed as often as want has them (a match may
// send two messages of a type in one millisecond), and a channel closed at the next call.
func (p *processed) missing(want []msgID) ([]msgID, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	need := map[msgID]int{}
	for _, id := range want {
		need[id]++
	}
	var out []msgID
	for id, n := range need {
		if p.seen[id] < n {
			out = append(out, id)
		}
	}
	return out, p.more
}

// app is the application's global events listener on one worker: it records the
// statuses, and checks at each up that every replayed message of the recovery behind
// it has been processed by some worker.
type app struct {
	name string
	sim  *feedtest.Simulator
	done *processed

	mu       sync.Mutex
	log      []string // "down REASON", "up REASON", "recovery N"
	lastReq  map[int]int64
	early    []string // ups that came before their recovery's messages were processed
	statuses chan feed.ProducerStatus
}

func newApp(name string, sim *feedtest.Simulator, done *processed) *app {
	return &app{name: name, sim: sim, done: done, lastReq: map[int]int64{}, statuses: make(chan feed.ProducerStatus, 64)}
}

func (a *app) OnConnectionDown(context.Context, feed.SessionRef, error) {}
func (a *app) OnConnectionUp(context.Context, feed.SessionRef)          {}
func (a *app) OnEventRecoveryCompleted(context.Context, feed.EventRecoveryCompleted) {
}

func (a *app) OnRecoveryInitiated(_ context.Context, r feed.RecoveryInitiated) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.lastReq[r.Producer] = r.RequestID
	a.log = append(a.log, fmt.Sprintf("recovery %d", r.RequestID))
}

func (a *app) OnProducerStatusChange(_ context.Context, s feed.ProducerStatus) {
	a.mu.Lock()
	if s.Down {
		a.log = append(a.log, "down "+s.Reason.String())
	} else {
		a.log = append(a.log, "up "+s.Reason.String())
		req := a.lastReq[s.Producer]
		var replay []msgID
		for _, sent := range a.sim.Sent() {
			if sent.Replay && sent.Message.MessageHeader().RequestID == req && !sent.Key.Type.IsSystem() {
				replay = append(replay, idOf(sent.Message))
			}
		}
		if missing, _ := a.done.missing(replay); len(missing) > 0 {
			a.early = append(a.early, fmt.Sprintf("up after recovery %d with %d of its %d messages unprocessed", req, len(missing), len(replay)))
		}
	}
	a.mu.Unlock()
	a.statuses <- s
}

// waitFor waits for a status of the producer that up says, up or down.
func (a *app) waitFor(t *testing.T, up bool) feed.ProducerStatus {
	t.Helper()
	timeout := time.After(guard)
	for {
		select {
		case s := <-a.statuses:
			if s.Down != up {
				return s
			}
		case <-timeout:
			t.Fatalf("%s: no producer %s within %v; log %v", a.name, map[bool]string{true: "up", false: "down"}[up], guard, a.history())
		}
	}
}

func (a *app) history() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.log...)
}

// A group on a real RabbitMQ: two ingresses, an active and a standby, and four shards,
// each consumed by an active worker and a standby, the simulator publishing throughout.
// An active worker stops mid-stream, the producer has an outage, the active ingress
// hands over to the standby: every live message the feed sent is processed (as itself
// or replayed), each match's messages in order by their first processing, and the
// group's up comes once per recovery, only after every message of the recovery was
// processed by the workers.
func TestGroupDeliversEverythingAcrossFailOvers(t *testing.T) {
	url := testenv.AMQPVhost(t)
	top := group.Topology{Prefix: "g", Shards: 4}
	ctx, cancel := context.WithTimeout(t.Context(), 5*guard)
	defer cancel()

	f := grouptest.NewFeed(t, grouptest.FeedOptions{Matches: 40, Rate: 1000, AliveInterval: aliveInterval, Seed: 35})
	sim, lo := f.Sim, f.Producer
	store := recovery.NewMemoryStore() // the ingresses' shared recovery point

	errs := make(chan error, 1000)
	onError := func(err error) {
		select {
		case errs <- err:
		default:
		}
	}
	owner := &handOver{}
	owner.set("a")
	ingresses := map[string]*group.Ingress{}
	passive := map[string]chan int64{}
	for _, name := range []string{"a", "b"} {
		passive[name] = make(chan int64, 4)
		in, err := group.NewIngress(group.IngressConfig{
			SDK: f.SDKConfig(onError, heartbeatLimit, checkInterval, store),
			URL: url, Topology: top, Toggle: toggle{owner, name}, ToggleInterval: 50 * time.Millisecond,
			BarrierTimeout: time.Minute, StatusInterval: 200 * time.Millisecond, OnError: onError,
			OnStateChange: func(active bool, epoch int64) {
				if !active {
					passive[name] <- epoch
				}
			},
		})
		require.NoError(t, err)
		ingresses[name] = in
	}

	done := newProcessed()
	type worker struct {
		w    *group.Worker
		app  *app
		stop context.CancelFunc
		ran  chan error
	}
	workers := map[string]*worker{}
	for _, spec := range []struct {
		name   string
		shards []int
	}{{"w01", []int{0, 1}}, {"w23", []int{2, 3}}, {"w01-standby", []int{0, 1}}, {"w23-standby", []int{2, 3}}} {
		a := newApp(spec.name, sim, done)
		w, err := group.NewWorker(group.WorkerConfig{URL: url, Topology: top, Shards: spec.shards,
			Listener: done.listener(spec.name), Global: a, Concurrent: concurrent.Config{Threads: 4},
			OnError: onError, ConnectionName: "worker-" + spec.name})
		require.NoError(t, err)
		wctx, stop := context.WithCancel(ctx)
		ran := make(chan error, 1)
		go func() { ran <- w.Run(wctx) }()
		workers[spec.name] = &worker{w: w, app: a, stop: stop, ran: ran}
		t.Cleanup(stop)
	}
	ingressRan := map[string]chan error{}
	for name, in := range ingresses {
		ran := make(chan error, 1)
		go func() { ran <- in.Run(ctx) }()
		ingressRan[name] = ran
	}
	simCtx, stopSim := context.WithCancel(ctx)
	simRan := make(chan error, 1)
	go func() { simRan <- sim.Run(simCtx) }()

	watcher := workers["w23"].app // it runs throughout
	require.Equal(t, feed.FirstRecoveryCompleted, watcher.waitFor(t, true).Reason)

	// A worker that connects after the up learns it from the statuses told again.
	late := newApp("late", sim, done)
	lw, err := group.NewWorker(group.WorkerConfig{URL: url, Topology: top, Shards: []int{0},
		Listener: done.listener("late"), Global: late, OnError: onError, ConnectionName: "worker-late"})
	require.NoError(t, err)
	lateCtx, stopLate := context.WithCancel(ctx)
	lateRan := make(chan error, 1)
	go func() { lateRan <- lw.Run(lateCtx) }()
	assert.Equal(t, feed.FirstRecoveryCompleted, late.waitFor(t, true).Reason)
	stopLate()
	require.NoError(t, <-lateRan)

	// An active worker stops; its standby takes its shards over.
	workers["w01"].stop()
	require.NoError(t, <-workers["w01"].ran)
	waitProcessedMore(t, done, 500)

	// An outage: the producer goes down, and comes back after its recovery.
	sim.StopAlives(lo.ID)
	require.Equal(t, feed.AliveIntervalViolation, watcher.waitFor(t, false).Reason)
	sim.ResumeAlives(lo.ID)
	require.Equal(t, feed.ReturnedFromInactivity, watcher.waitFor(t, true).Reason)
	waitProcessedMore(t, done, 500)

	// The active ingress hands over to the standby, which resumes from the recovery
	// point the first saved. As a lease does, the standby gets it once the first has
	// let it go.
	owner.set("")
	select {
	case <-passive["a"]:
	case <-time.After(guard):
		t.Fatal("ingress a did not step down")
	}
	owner.set("b")
	require.True(t, watcher.waitFor(t, true).Reason.IsUp(), "up again under ingress b")
	waitProcessedMore(t, done, 500)

	stopSim()
	require.NoError(t, <-simRan)

	// Every live message the feed sent is processed, as itself or replayed.
	byMatch := sim.EventsByMatch()
	var want []msgID
	for _, msgs := range byMatch {
		for _, s := range msgs {
			want = append(want, idOf(s.Message))
		}
	}
	require.NotEmpty(t, want)
	timeout := time.After(guard)
	for {
		missing, more := done.missing(want)
		if len(missing) == 0 {
			break
		}
		select {
		case <-more:
		case <-timeout:
			t.Fatalf("%d of %d live messages never processed, e.g. %v", len(missing), len(want), missing[:min(5, len(missing))])
		}
	}
	done.mu.Lock()
	calls := append([]call(nil), done.calls...)
	done.mu.Unlock()
	acct := account(byMatch, calls)
	assert.Zero(t, acct.lost, "live messages never processed")
	assert.Zero(t, acct.reordered, "live messages processed out of their match's order")
	t.Logf("%d live messages sent, %d listener calls: %d live, %d replayed, %d again in a replay, %d delivered again after a fail-over",
		len(want), len(calls), acct.live, acct.recovered, acct.replayedAgain, acct.redelivered)

	// The group's up: once per recovery, each after its messages were processed.
	log := watcher.history()
	var ups []int
	for i, l := range log {
		if strings.HasPrefix(l, "up ") {
			ups = append(ups, i)
		}
	}
	// At least the first recovery, the one after the outage and the one after the
	// hand-over; more when a busy machine delayed alives past the limit. Each up has a
	// recovery of its own.
	assert.GreaterOrEqual(t, len(ups), 3, "first recovery, after the outage, after the hand-over: %v", log)
	for k := 1; k < len(ups); k++ {
		between := log[ups[k-1]+1 : ups[k]]
		assert.True(t, containsPrefix(between, "recovery "), "two ups without a recovery between them: %v", log)
	}
	watcher.mu.Lock()
	assert.Empty(t, watcher.early, "ups before their recovery was processed")
	watcher.mu.Unlock()

	cancel()
	for name, ran := range ingressRan {
		assert.ErrorIs(t, <-ran, context.Canceled, "ingress %s", name)
	}
	stats := map[string]group.IngressStats{}
	for name, in := range ingresses {
		stats[name] = in.Stats()
	}
	assert.Equal(t, uint64(1), stats["a"].Activations)
	assert.Equal(t, uint64(1), stats["b"].Activations)
	keys := make([]string, 0)
	for e := range drain(errs) {
		keys = append(keys, e)
	}
	sort.Strings(keys)
	t.Logf("errors reported (%d): %v", len(keys), keys)
}

// accounts are what the listener calls made of the live messages the feed sent.
type accounts struct {
	live, recovered int // live messages processed first as themselves, or in a replay
	lost, reordered int
	// Calls that found no live message left to account for: a replay of one processed
	// already, and a delivery made again (a worker's standby taking over, an ingress
	// republishing).
	replayedAgain, redelivered int
}

// account strikes each call off its match's live messages, as the single-process
// example's ledger does: a message is known by its type and timestamp, and of two with
// the same, a live call takes the oldest its match's live stream has not passed yet,
// a replayed one the oldest it has passed; failing that, the oldest.
func account(byMatch map[feed.URN][]feedtest.Sent, calls []call) accounts {
	type entry struct {
		seq int
		typ feed.MessageType
		at  int64
	}
	outstanding := map[feed.URN][]entry{}
	for event, msgs := range byMatch {
		for i, s := range msgs {
			id := idOf(s.Message)
			outstanding[event] = append(outstanding[event], entry{seq: i, typ: id.typ, at: id.at})
		}
	}
	lastLive := map[feed.URN]int{}
	var a accounts
	for _, c := range calls {
		list := outstanding[c.id.event]
		replay := c.request != 0
		found := -1
		for i, e := range list {
			if e.typ != c.id.typ || e.at != c.id.at {
				continue
			}
			if found < 0 {
				found = i
			}
			if passed := e.seq < lastLive[c.id.event]; passed == replay {
				found = i
				break
			}
		}
		if found < 0 {
			if replay {
				a.replayedAgain++
			} else {
				a.redelivered++
			}
			continue
		}
		e := list[found]
		outstanding[c.id.event] = append(list[:found:found], list[found+1:]...)
		if replay {
			a.recovered++
			continue
		}
		a.live++
		if e.seq < lastLive[c.id.event] {
			a.reordered++
		}
		lastLive[c.id.event] = max(lastLive[c.id.event], e.seq)
	}
	for _, list := range outstanding {
		a.lost += len(list)
	}
	return a
}

func containsPrefix(lines []string, prefix string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

// waitProcessedMore waits until n more listener calls have been made.
func waitProcessedMore(t *testing.T, p *processed, n int) {
	t.Helper()
	p.mu.Lock()
	target := len(p.calls) + n
	p.mu.Unlock()
	timeout := time.After(guard)
	for {
		p.mu.Lock()
		got, more := len(p.calls), p.more
		p.mu.Unlock()
		if got >= target {
			return
		}
		select {
		case <-more:
		case <-timeout:
			t.Fatalf("only %d of %d listener calls within %v", got, target, guard)
		}
	}
}

// drain returns what errs holds, as text, without waiting.
func drain(errs chan error) map[string]struct{} {
	out := map[string]struct{}{}
	for {
		select {
		case err := <-errs:
			out[err.Error()] = struct{}{}
		default:
			return out
		}
	}
}
