package feedkit_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/internal/pgtest"
	"github.com/feedkit/feedkit/recovery"
	"github.com/feedkit/feedkit/recovery/pgstore"
)

// These tests count: every event message the feed's live stream carried reaches the
// listener, live or replayed, whatever the feed's lag, through an outage or a restart,
// with serial or concurrent delivery, behind a listener that gets stuck, fails or panics.
// The feed and the SDK's recovery share one fake clock that only the test moves, so the
// feed's lag is exact and no check fires but when the test says.

const (
	// lostMessageGap is the fake time between two event messages: each has a timestamp
	// of its own, which is what identity relies on.
	lostMessageGap = 10 * time.Millisecond
	// alivesEvery is how many event messages go between two alives: 500 ms of fake time,
	// within the heartbeat limit.
	alivesEvery = 50
	// phaseMessages is the traffic before and after a fault: 15 s of fake time, past one
	// check interval, so that the recovery point has been saved since the first recovery.
	phaseMessages = 1500
	// faultMessages is the traffic published while the SDK is away.
	faultMessages = 500
)

// lossRig is one run: a simulator on a fake clock, a broker, the recovery API, a producer
// store, and the SDK, which a restart replaces.
type lossRig struct {
	t       *testing.T
	ctx     context.Context
	clk     *clocktest.Fake
	link    feedLink
	sim     *feedtest.Simulator
	api     string
	store   recovery.Store
	lag     time.Duration
	threads int
	lo      feed.Producer
	ledger  *receipts
	global  *feedtest.GlobalRecorder
	sdk     *feedkit.SDK
	// lastAlive is the feed's timestamp of the last alive sent.
	lastAlive time.Time
	// listening is set while the SDK is open and connected: its manager hears the alives.
	listening bool
}

func newLossRig(t *testing.T, link feedLink, lag time.Duration, store recovery.Store, threads int) *lossRig {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	r := &lossRig{t: t, ctx: ctx, clk: clocktest.NewFake(e2eEpoch), link: link, store: store, lag: lag, threads: threads, ledger: newReceipts()}
	r.lo, _ = feed.LookupProducer(feed.DefaultProducers(), 1)
	var err error
	r.sim, err = feedtest.NewSimulator(link.pub, feedtest.SimulatorConfig{
		Matches: 30, Rate: feedtest.Unlimited, Seed: 24, Producers: []feed.Producer{r.lo}, Clock: r.clk})
	require.NoError(t, err)
	r.sim.SetDelay(lag)
	api := r.sim.NewRecoveryServer()
	t.Cleanup(api.Close)
	r.api = api.URL
	return r
}

// open starts an SDK on the rig's store and waits for its connection.
func (r *lossRig) open() {
	r.t.Helper()
	r.global = feedtest.NewGlobalRecorder()
	sdk, err := feedkit.New(feedkit.Config{
		Transport: r.link.transport,
		Node:      feed.Node(3),
		Global:    r.global,
		API:       feedapi.Config{BaseURL: r.api, AccessToken: feedtest.DefaultAccessToken},
		Recovery: recovery.Config{
			Producers:       []feed.Producer{r.lo},
			HeartbeatLimits: map[int]time.Duration{r.lo.ID: e2eHeartbeatLimit},
			CheckInterval:   e2eCheckInterval,
			Store:           r.store,
		},
		Clock:      r.clk,
		Concurrent: delivery(r.threads),
	})
	require.NoError(r.t, err)
	require.NoError(r.t, sdk.AddSession(feed.AllMessages, r.ledger))
	require.NoError(r.t, sdk.Open(r.ctx))
	r.sdk = sdk
	r.t.Cleanup(func() { r.ledger.openGate(); _ = sdk.Close(context.Background()) })
	require.Equal(r.t, fmt.Sprintf("producer %d down (InitialState)", r.lo.ID), r.global.RequireNext(r.t).String())
	require.Equal(r.t, "connection up on session 0 (all messages)", r.global.RequireNext(r.t).String())
	r.listening = true
}

// alive sends an alive of the producer, a step of fake time after what went before, and
// while the SDK listens waits until its manager has taken it in: the fake clock must not
// run ahead of the reading, or the gap between two alives would look longer than it is.
func (r *lossRig) alive() {
	r.t.Helper()
	r.clk.Advance(lostMessageGap)
	var before uint64
	if r.listening {
		before = r.sdk.Stats().Recovery.Alives
	}
	require.NoError(r.t, r.sim.SendAlive(r.ctx, r.lo.ID, true))
	r.lastAlive = r.clk.Now().Add(-r.lag).Truncate(time.Millisecond)
	if r.listening {
		require.NoError(r.t, r.link.settle(r.ctx, r.sdk, func() bool { return r.sdk.Stats().Recovery.Alives > before }))
	}
}

// publish sends n event messages with an alive every alivesEvery, ending with an alive.
func (r *lossRig) publish(n int) {
	r.t.Helper()
	for i := range n {
		r.clk.Advance(lostMessageGap)
		require.NoError(r.t, r.sim.Publish(r.ctx, 1))
		if (i+1)%alivesEvery == 0 {
			r.alive()
		}
	}
	r.alive()
	require.NoError(r.t, r.link.flush(r.ctx))
}

// recover sends the alive that brings a recovery and returns its request, once the
// producer is up again.
func (r *lossRig) recover(up string) feedtest.RecoveryRequest {
	r.t.Helper()
	r.alive()
	initiated := r.global.RequireNext(r.t)
	require.Equal(r.t, feedtest.CallRecoveryInitiated, initiated.Kind, initiated.String())
	require.Equal(r.t, fmt.Sprintf("producer %d up (%s)", r.lo.ID, up), r.global.RequireNext(r.t).String())
	reqs := r.sim.RecoveryRequests()
	return reqs[len(reqs)-1]
}

// waitPoint waits until the producer's recovery point is want.
func (r *lossRig) waitPoint(want time.Time) {
	r.t.Helper()
	err := r.link.settle(r.ctx, r.sdk, func() bool {
		st, _ := r.sdk.Producer(r.lo.ID)
		return st.LastSubscribedAt.Equal(want)
	})
	st, _ := r.sdk.Producer(r.lo.ID)
	require.NoError(r.t, err, "recovery point %v, want %v; %+v; stats %+v", st.LastSubscribedAt, want, st, r.sdk.Stats())
}

// drop drops the connection and waits for the news of it and of the producer down, which
// come from two goroutines in either order.
func (r *lossRig) drop() {
	r.t.Helper()
	r.listening = false
	r.link.drop()
	got := []feedtest.GlobalCall{r.global.RequireNext(r.t), r.global.RequireNext(r.t)}
	slices.SortFunc(got, func(a, b feedtest.GlobalCall) int { return cmp.Compare(a.Kind, b.Kind) })
	require.Equal(r.t, feedtest.CallConnectionDown, got[0].Kind, got[0].String())
	require.Equal(r.t, fmt.Sprintf("producer %d down (ConnectionDown) on session 0 (all messages)", r.lo.ID), got[1].String())
}

// start opens the SDK and gets the producer up through its first recovery, then sends
// the first phase of traffic, all processed.
func (r *lossRig) start() {
	r.t.Helper()
	r.open()
	r.recover("FirstRecoveryCompleted")
	r.publish(phaseMessages)
	r.waitPoint(r.lastAlive)
}

// checkNothingLost waits until every event message of the live stream has been received,
// and checks nothing was received that was not sent.
func (r *lossRig) checkNothingLost() {
	r.t.Helper()
	sent := map[string]bool{}
	for _, s := range r.sim.Sent() {
		if !s.Replay && !s.Key.Type.IsSystem() {
			sent[identity(s.Message)] = true
		}
	}
	require.Zero(r.t, r.sim.Forgotten(), "the simulator kept everything it sent")
	err := r.link.settle(r.ctx, r.sdk, func() bool { return len(r.ledger.missing(sent)) == 0 })
	missing := r.ledger.missing(sent)
	require.NoError(r.t, err, "%d of %d messages sent were never received, e.g. %v", len(missing), len(sent), missing[:min(len(missing), 5)])
	for id := range r.ledger.received() {
		assert.True(r.t, sent[id], "received but not sent: %s", id)
	}
}

// receipts is the customer's listener: it counts each message received by what the feed
// put in it, and can hold messages up or fail one.
type receipts struct {
	feed.BaseOddsFeedListener
	mu   sync.Mutex
	got  map[string]int
	hook func(m feed.Message) error // nil: accept

	gate     chan struct{}
	gateOnce sync.Once
}

func newReceipts() *receipts {
	return &receipts{got: map[string]int{}, gate: make(chan struct{})}
}

func (r *receipts) openGate() { r.gateOnce.Do(func() { close(r.gate) }) }

func (r *receipts) take(m feed.Message) error {
	r.mu.Lock()
	hook := r.hook
	r.mu.Unlock()
	if hook != nil {
		if err := hook(m); err != nil {
			return err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got[identity(m)]++
	return nil
}

func (r *receipts) setHook(h func(feed.Message) error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hook = h
}

func (r *receipts) count(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got[id]
}

func (r *receipts) received() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int, len(r.got))
	for k, v := range r.got {
		out[k] = v
	}
	return out
}

func (r *receipts) missing(sent map[string]bool) []string {
	got := r.received()
	var out []string
	for id := range sent {
		if got[id] == 0 {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

func (r *receipts) OnOddsChange(_ context.Context, m *feed.OddsChange) error { return r.take(m) }
func (r *receipts) OnBetStop(_ context.Context, m *feed.BetStop) error       { return r.take(m) }
func (r *receipts) OnBetSettlement(_ context.Context, m *feed.BetSettlement) error {
	return r.take(m)
}
func (r *receipts) OnRollbackBetSettlement(_ context.Context, m *feed.RollbackBetSettlement) error {
	return r.take(m)
}
func (r *receipts) OnBetCancel(_ context.Context, m *feed.BetCancel) error { return r.take(m) }
func (r *receipts) OnRollbackBetCancel(_ context.Context, m *feed.RollbackBetCancel) error {
	return r.take(m)
}
func (r *receipts) OnFixtureChange(_ context.Context, m *feed.FixtureChange) error {
	return r.take(m)
}

// stores are the producer stores a restart is tested with.
var lossStores = []struct {
	name string
	new  func(t *testing.T) recovery.Store
}{
	{"file", func(t *testing.T) recovery.Store {
		return recovery.NewFileStore(filepath.Join(t.TempDir(), "producers.json"))
	}},
	{"postgres", func(t *testing.T) recovery.Store {
		s, err := pgstore.NewStore(t.Context(), pgtest.Pool(t), pgstore.Options{})
		require.NoError(t, err)
		return s
	}},
}

var lossLags = []time.Duration{0, time.Second, 5 * time.Second}

var lossDelivery = []struct {
	name    string
	threads int
}{{"serial", 0}, {"concurrent", 4}}

// An outage: the connection drops while the feed goes on; the recovery goes back to the
// feed's timestamp of the last alive processed before it, so the messages the late feed
// stamped before the drop come back too.
func TestNothingLostThroughAnOutage(t *testing.T) {
	for _, lag := range lossLags {
		for _, d := range lossDelivery {
			t.Run(fmt.Sprintf("lag=%v/%s", lag, d.name), func(t *testing.T) {
				testOutage(t, embeddedLink(t), lag, d.threads)
			})
		}
	}
}

func TestNothingLostThroughAnOutageOnRabbitMQ(t *testing.T) {
	testOutage(t, rabbitLink(t), time.Second, 4)
}

func testOutage(t *testing.T, link feedLink, lag time.Duration, threads int) {
	r := newLossRig(t, link, lag, recovery.NewMemoryStore(), threads)
	r.start()
	point := r.lastAlive

	r.drop()
	r.publish(faultMessages)
	r.link.restore()
	require.Equal(t, "connection up on session 0 (all messages)", r.global.RequireNext(t).String())
	r.listening = true
	req := r.recover("ReturnedFromInactivity")
	assert.Equal(t, point.UnixMilli(), req.After.UnixMilli(), "from the feed's timestamp of the last alive processed")

	r.publish(phaseMessages)
	r.checkNothingLost()
}

// A restart: the process stops, the feed goes on while nothing runs, a new process on
// the same store recovers from the point the old one saved.
func TestNothingLostThroughARestart(t *testing.T) {
	for _, st := range lossStores {
		for _, lag := range lossLags {
			for _, d := range lossDelivery {
				t.Run(fmt.Sprintf("%s/lag=%v/%s", st.name, lag, d.name), func(t *testing.T) {
					r := newLossRig(t, embeddedLink(t), lag, st.new(t), d.threads)
					r.start()
					processed := r.lastAlive
					require.NoError(t, r.sdk.Close(r.ctx))
					r.listening = false
					r.publish(faultMessages) // to nobody

					recs, err := r.store.Load(r.ctx)
					require.NoError(t, err)
					require.Len(t, recs, 1)
					saved := recs[0].LastSubscribedAt
					assert.False(t, saved.After(processed), "saved %v, processed through %v", saved, processed)
					assert.False(t, saved.Before(processed.Add(-e2eCheckInterval)), "saved %v, processed through %v", saved, processed)

					r.open()
					req := r.recover("FirstRecoveryCompleted")
					assert.Equal(t, saved.UnixMilli(), req.After.UnixMilli(), "from the point the last process saved")
					r.publish(phaseMessages)
					r.checkNothingLost()
				})
			}
		}
	}
}

// A crash with a backlog: the listener is stuck on a message while alives and more
// messages arrive; the process dies; the next one recovers everything that was queued.
func TestNothingLostWhenAProcessDiesWithABacklog(t *testing.T) {
	for _, d := range lossDelivery {
		t.Run(d.name, func(t *testing.T) {
			r := newLossRig(t, embeddedLink(t), time.Second, recovery.NewFileStore(filepath.Join(t.TempDir(), "p.json")), d.threads)
			r.start()
			processed := r.lastAlive
			died := errors.New("the process died")
			stuck := make(chan feed.Message, 1)
			r.ledger.setHook(func(m feed.Message) error {
				select {
				case stuck <- m: // the first message holds the listener up
				default:
				}
				<-r.ledger.gate
				return died // never processed: the process is gone
			})
			// Alives arrive, a check interval passes. The reading side may block behind the
			// stuck listener (serial delivery's queue fills), so the alives are not waited for.
			r.listening = false
			r.publish(phaseMessages)
			first := <-stuck
			assert.Equal(t, processed, func() time.Time { st, _ := r.sdk.Producer(r.lo.ID); return st.LastSubscribedAt }(),
				"the point stays before the backlog")
			gone, cancel := context.WithCancel(context.Background())
			cancel()
			_ = r.sdk.Close(gone) // a crash: what is queued is abandoned
			r.ledger.setHook(nil)
			r.ledger.openGate()

			recs, err := r.store.Load(r.ctx)
			require.NoError(t, err)
			require.Len(t, recs, 1)
			assert.False(t, recs[0].LastSubscribedAt.After(first.MessageHeader().Timestamp), "saved before the first message not processed")

			r.open()
			req := r.recover("FirstRecoveryCompleted")
			assert.False(t, req.After.After(first.MessageHeader().Timestamp), "the recovery replays the backlog")
			r.publish(alivesEvery)
			r.checkNothingLost()
		})
	}
}

// A listener call that fails, or panics, on one message holds the point before it; an
// outage's recovery replays it once; then the point moves on.
func TestAFailedMessageIsReplayedOnce(t *testing.T) {
	for _, how := range []string{"error", "panic"} {
		for _, d := range lossDelivery {
			t.Run(how+"/"+d.name, func(t *testing.T) {
				r := newLossRig(t, embeddedLink(t), time.Second, recovery.NewMemoryStore(), d.threads)
				r.open()
				r.recover("FirstRecoveryCompleted")
				var once sync.Once
				failed := make(chan feed.Message, 1)
				r.ledger.setHook(func(m feed.Message) error {
					var fail bool
					if m.MessageHeader().RequestID == 0 && m.Type() == feed.MessageOddsChange {
						once.Do(func() { fail = true })
					}
					if !fail {
						return nil
					}
					failed <- m
					if how == "panic" {
						panic("the listener panics")
					}
					return errors.New("the listener fails")
				})
				r.publish(phaseMessages)
				m := <-failed
				at := m.MessageHeader().Timestamp
				r.waitPoint(at)
				st, _ := r.sdk.Producer(r.lo.ID)
				require.NotNil(t, st.Hold)
				assert.Equal(t, at, st.Hold.Timestamp)
				assert.Equal(t, 0, r.ledger.count(identity(m)), "not received: its call failed")

				r.drop()
				r.link.restore()
				require.Equal(t, "connection up on session 0 (all messages)", r.global.RequireNext(t).String())
				r.listening = true
				req := r.recover("ReturnedFromInactivity")
				assert.Equal(t, at.UnixMilli(), req.After.UnixMilli(), "the recovery goes back to the failed message")
				r.publish(phaseMessages)
				r.checkNothingLost()
				assert.Equal(t, 1, r.ledger.count(identity(m)), "replayed once, received once")
				r.waitPoint(r.lastAlive)
				st, _ = r.sdk.Producer(r.lo.ID)
				assert.Nil(t, st.Hold, "released")
				assert.Equal(t, uint64(1), r.sdk.Stats().Recovery.HoldsReplayed)
			})
		}
	}
}
