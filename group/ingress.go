package group

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/carousel"
	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/internal/backoff"
)

// Defaults of IngressConfig.
const (
	// DefaultToggleInterval is how often an ingress asks its Toggle whether it is the
	// active one: a standby takes over within about this long of the active one's end
	// (its lease's release), plus its SDK's opening.
	DefaultToggleInterval = time.Second
	// DefaultBarrierTimeout is how long a producer's up waits for every shard to
	// acknowledge its barrier before the producer is recovered again.
	DefaultBarrierTimeout = 2 * time.Minute
	// DefaultStatusInterval is how often the active ingress tells the workers every
	// producer's status again, for a worker that connected after the last change.
	DefaultStatusInterval = 5 * time.Second
)

// IngressConfig configures an Ingress.
type IngressConfig struct {
	// SDK configures the feed side as for one process: environment, access token,
	// node, recovery. Give every ingress of a group the same Recovery.Store, in
	// PostgreSQL (recovery/pgstore), so that one taking over resumes from the recovery
	// point the last active one saved; its saves are fenced by the Toggle's generation
	// (recovery.FencedStore), so that an ingress that lost the lease and does not know
	// it yet cannot save over the point of the one that took over. Give them the same
	// Recovery.Ledger too, for the account's rate limits. SDK.Global, when set, is told what the group is told.
	// SDK.Concurrent must be nil: an ingress calls no listener.
	SDK feedkit.Config
	// Interests are the sessions the ingress opens; empty means one of
	// feed.AllMessages.
	Interests []feed.MessageInterest
	// URL is the operator's RabbitMQ, which the group shares (amqp:// or amqps://, with
	// its virtual host), and Topology names the queues there; the workers are given
	// the same.
	URL      string
	Topology Topology
	// Toggle says whether this ingress is the active one and numbers its activations:
	// carousel/pgstore.Lease, a lease in PostgreSQL with Failover set, so that a
	// standby takes over when the active one dies. nil means always active: a group
	// with one ingress.
	Toggle carousel.Toggle
	// ToggleInterval is how often the Toggle is asked; 0 means DefaultToggleInterval.
	ToggleInterval time.Duration
	// BarrierTimeout bounds the wait of a producer's up for the shards'
	// acknowledgements; past it the producer is taken down (feed.ProcessingStalled) and
	// recovered again. 0 means DefaultBarrierTimeout.
	BarrierTimeout time.Duration
	// StatusInterval is how often every producer's status is told again, so that a
	// worker that connected after a change learns it within about this long; each
	// worker passes on to its Global listener only what is news to it. 0 means
	// DefaultStatusInterval.
	StatusInterval time.Duration
	// Clock is the SDK's clock too; nil is the wall clock.
	Clock clock.Clock
	// OnError hears every failure the ingress goes on after; Logger logs its life.
	OnError func(error)
	Logger  *slog.Logger
	// OnStateChange, when set, is told when the ingress becomes the active one (before
	// its SDK opens) and when it is passive again (once everything it ran is closed),
	// with the activation's epoch.
	OnStateChange func(active bool, epoch int64)
}

// Ingress is the process of a group that reads the feed. While its Toggle says it is
// the active one, it runs a feedkit.SDK whose sessions republish every message into the
// group's queues, and tells the workers of each producer's status; otherwise it waits.
type Ingress struct {
	cfg IngressConfig
	log *slog.Logger

	mu     sync.Mutex
	active *activation // nil while passive
	stats  IngressStats
}

// IngressStats counts what an ingress did.
type IngressStats struct {
	Activations uint64 `json:"activations"` // times it became the active one
	Active      bool   `json:"active"`
	Epoch       int64  `json:"epoch"` // the current or last activation's generation
	// Published and Confirmed count the messages of the current activation: events,
	// system messages, barriers and global events.
	Published uint64 `json:"published"`
	Confirmed uint64 `json:"confirmed"`
	// Unconfirmed is how many of them await the broker's confirmation now.
	Unconfirmed int `json:"unconfirmed"`
	// Batches counts the AMQP messages that carried several events, and Batched those
	// events: a busy feed's events go in batches (see Topology.ShardOf).
	Batches uint64 `json:"batches"`
	Batched uint64 `json:"batched"`
	// Republished counts messages written again after a lost link or a nack: each may
	// be in its queue twice. Returned counts those no queue took.
	Republished uint64 `json:"republished"`
	Returned    uint64 `json:"returned"`
	// Connected says whether the publisher has a link to the group's broker now;
	// Reconnects counts the links it made after its first.
	Connected  bool   `json:"connected"`
	Reconnects uint64 `json:"reconnects"`
	// Barriers counts the ups held for the group, and the global events sent.
	Barriers BarrierStats `json:"barriers"`
}

// activation is what an ingress runs while active.
type activation struct {
	epoch int64
	sdk   *feedkit.SDK
	pub   *publisher
	gate  *gate
}

// NewIngress checks cfg and returns an ingress; nothing runs until Run.
func NewIngress(cfg IngressConfig) (*Ingress, error) {
	top, err := cfg.Topology.withDefaults()
	if err != nil {
		return nil, err
	}
	cfg.Topology = top
	switch {
	case cfg.URL == "":
		return nil, errors.New("group: IngressConfig.URL is empty: the operator's RabbitMQ is needed")
	case cfg.SDK.Concurrent != nil:
		return nil, errors.New("group: IngressConfig.SDK.Concurrent must be nil: an ingress calls no listener (give it to the workers)")
	case cfg.ToggleInterval < 0:
		return nil, fmt.Errorf("group: IngressConfig.ToggleInterval %v must not be negative", cfg.ToggleInterval)
	case cfg.BarrierTimeout < 0:
		return nil, fmt.Errorf("group: IngressConfig.BarrierTimeout %v must not be negative", cfg.BarrierTimeout)
	case cfg.StatusInterval < 0:
		return nil, fmt.Errorf("group: IngressConfig.StatusInterval %v must not be negative", cfg.StatusInterval)
	}
	if cfg.StatusInterval == 0 {
		cfg.StatusInterval = DefaultStatusInterval
	}
	if cfg.ToggleInterval == 0 {
		cfg.ToggleInterval = DefaultToggleInterval
	}
	if cfg.BarrierTimeout == 0 {
		cfg.BarrierTimeout = DefaultBarrierTimeout
	}
	if len(cfg.Interests) == 0 {
		cfg.Interests = []feed.MessageInterest{feed.AllMessages}
	}
	cfg.Clock = clock.OrReal(cfg.Clock)
	if cfg.OnError == nil {
		cfg.OnError = func(error) {}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Ingress{cfg: cfg, log: log}, nil
}

// Run waits to be the active ingress, then reads the feed until ctx ends or another
// ingress takes over, and waits again. It returns ctx's error, or the error that keeps
// the SDK from being built (a bad SDK config).
func (in *Ingress) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		active, gen, err := in.ask(ctx)
		if err != nil && ctx.Err() == nil {
			in.cfg.OnError(fmt.Errorf("group: asking the Toggle: %w", err))
		}
		if active {
			if err := in.serve(ctx, int64(gen)); err != nil && ctx.Err() == nil && !errors.Is(err, errSteppedDown) {
				var bad *configError
				if errors.As(err, &bad) {
					return err
				}
				in.cfg.OnError(err)
			}
			// A failed activation (the feed's API or the broker unreachable) is tried
			// again no sooner than a standby would ask.
		}
		if !in.sleep(ctx, in.cfg.ToggleInterval) {
			break
		}
	}
	return ctx.Err()
}

// ask asks the Toggle; without one the ingress is always active, in epoch 1.
func (in *Ingress) ask(ctx context.Context) (bool, carousel.Generation, error) {
	if in.cfg.Toggle == nil {
		return true, 1, nil
	}
	return in.cfg.Toggle.Active(ctx)
}

func (in *Ingress) sleep(ctx context.Context, d time.Duration) bool {
	t := in.cfg.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}

// errSteppedDown ends an activation whose Toggle no longer says it is active: another
// ingress takes over, which is no failure.
var errSteppedDown = errors.New("group: no longer the active ingress")

// configError is an SDK config the ingress cannot use: Run returns it.
type configError struct{ err error }

func (e *configError) Error() string { return e.err.Error() }
func (e *configError) Unwrap() error { return e.err }

// serve runs one activation: the publisher, the SDK with its forwarding sessions, the
// acknowledgements' consumer; it returns when ctx ends or the Toggle no longer says
// this ingress is active in epoch.
func (in *Ingress) serve(ctx context.Context, epoch int64) error {
	cfg := in.cfg
	in.log.Info("active: reading the feed", "epoch", epoch)
	pub, err := newPublisher(publisherConfig{URL: cfg.URL, Topology: cfg.Topology, Clock: cfg.Clock,
		OnError: cfg.OnError, Logger: in.log, ConnectionName: fmt.Sprintf("feedkit-group-ingress-%d", epoch)})
	if err != nil {
		return &configError{err}
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	if err := pub.start(runCtx); err != nil {
		return err
	}
	num := &numbering{epoch: epoch}
	g := &gate{pub: pub, top: cfg.Topology, num: num, next: cfg.SDK.Global, bound: cfg.BarrierTimeout,
		clock: cfg.Clock, report: cfg.OnError, waiting: map[int]*barrierWait{}, told: map[int]feed.ProducerStatus{}}
	sdkCfg := cfg.SDK
	sdkCfg.Global = g
	sdkCfg.Recovery.Store = withFence(sdkCfg.Recovery.Store, epoch)
	if sdkCfg.Clock == nil {
		sdkCfg.Clock = cfg.Clock
	}
	sdk, err := feedkit.New(sdkCfg)
	if err != nil {
		_ = pub.close(context.Background())
		return &configError{fmt.Errorf("group: IngressConfig.SDK: %w", err)}
	}
	g.recover = func(producer int) error { return sdk.RecoverProducer(producer, feed.ProcessingStalled) }
	for _, interest := range cfg.Interests {
		err := sdk.AddForwardingSession(interest, func(s *concurrent.Stream) (feedkit.Forwarder, error) {
			return &forwarder{pub: pub, top: cfg.Topology, num: num, stream: s}, nil
		})
		if err != nil {
			_ = pub.close(context.Background())
			return &configError{err}
		}
	}
	acks := &acksConsumer{url: cfg.URL, top: cfg.Topology, name: fmt.Sprintf("feedkit-group-ingress-%d-acks", epoch),
		dial: 15 * time.Second, policy: backoff.Policy{Initial: 500 * time.Millisecond, Max: 30 * time.Second, Jitter: 0.5},
		clock: cfg.Clock, report: cfg.OnError, handle: g.ack}
	var consuming sync.WaitGroup
	consuming.Go(func() { acks.run(runCtx) })
	consuming.Go(func() { g.tellStatuses(runCtx, cfg.StatusInterval) })

	in.mu.Lock()
	in.active = &activation{epoch: epoch, sdk: sdk, pub: pub, gate: g}
	in.stats.Activations++
	in.stats.Active, in.stats.Epoch = true, epoch
	in.mu.Unlock()
	if cfg.OnStateChange != nil {
		cfg.OnStateChange(true, epoch)
	}

	err = sdk.Open(runCtx)
	if err == nil {
		err = in.watch(runCtx, epoch)
	}
	// The SDK first, so that its sessions' last events are confirmed before it saves
	// its recovery point; then what it published through.
	closeCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if cerr := sdk.Close(closeCtx); cerr != nil {
		cfg.OnError(fmt.Errorf("group: closing the ingress's SDK: %w", cerr))
	}
	stop()
	consuming.Wait()
	if cerr := pub.close(closeCtx); cerr != nil {
		cfg.OnError(fmt.Errorf("group: closing the ingress's publisher: %w", cerr))
	}
	in.mu.Lock()
	in.keepStatsLocked()
	in.active = nil
	in.stats.Active = false
	in.mu.Unlock()
	in.log.Info("passive", "epoch", epoch, "err", err)
	if cfg.OnStateChange != nil {
		cfg.OnStateChange(false, epoch)
	}
	return err
}

// watch returns when ctx ends or the Toggle stops saying this ingress is active in
// epoch (another took over, or the lease was lost).
func (in *Ingress) watch(ctx context.Context, epoch int64) error {
	if in.cfg.Toggle == nil {
		<-ctx.Done()
		return ctx.Err()
	}
	for in.sleep(ctx, in.cfg.ToggleInterval) {
		active, gen, err := in.cfg.Toggle.Active(ctx)
		switch {
		case err != nil:
			return fmt.Errorf("group: the Toggle failed; stepping down: %w", err)
		case !active || int64(gen) != epoch:
			return errSteppedDown
		}
	}
	return ctx.Err()
}

// Stats returns the ingress's counters.
func (in *Ingress) Stats() IngressStats {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.keepStatsLocked()
	return in.stats
}

// keepStatsLocked copies the activation's counters into the stats.
func (in *Ingress) keepStatsLocked() {
	if a := in.active; a != nil {
		ps := a.pub.stats()
		in.stats.Published, in.stats.Confirmed, in.stats.Unconfirmed = ps.Published, ps.Confirmed, ps.Unconfirmed
		in.stats.Batches, in.stats.Batched = ps.Batches, ps.Batched
		in.stats.Republished, in.stats.Returned = ps.Republished, ps.Returned
		in.stats.Connected, in.stats.Reconnects = ps.Connected, ps.Reconnects
		in.stats.Barriers = a.gate.snapshot()
	}
}

// SDK returns the SDK of the current activation, nil while passive: for its Stats and
// health. It is closed when the activation ends.
func (in *Ingress) SDK() *feedkit.SDK {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.active == nil {
		return nil
	}
	return in.active.sdk
}
