package feedtest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"golang.org/x/time/rate"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/feed"
)

// Simulator defaults.
const (
	DefaultMatches       = 100
	DefaultRate          = 1000 // event messages per second
	DefaultAliveInterval = 10 * time.Second
	DefaultHistoryBytes  = 64 << 20
	DefaultHistoryAge    = time.Hour
	DefaultAccessToken   = "feedtest-token"
)

// Unlimited is a SimulatorConfig.Rate that publishes as fast as the Publisher takes messages.
const Unlimited = float64(rate.Inf)

// SimulatorConfig configures a Simulator. The zero value is usable.
type SimulatorConfig struct {
	// Matches is how many matches are running at any time; 0 means DefaultMatches.
	Matches int
	// Rate is the event messages published per second over all matches; 0 means
	// DefaultRate, Unlimited means no pacing.
	Rate float64
	// Producers send the traffic, each match belonging to one of them in turn; nil means
	// LO (live) and Ctrl (prematch) of feed.DefaultProducers.
	Producers []feed.Producer
	// AliveInterval is the time between two alives of a producer; 0 means
	// DefaultAliveInterval.
	AliveInterval time.Duration
	// HistoryBytes bounds the history of published messages, which Sent returns and
	// recovery replays resend, by the size of the message bodies it holds (plus a small
	// fixed cost per message); 0 means DefaultHistoryBytes. Beyond it the oldest are
	// forgotten first, so that a long run's memory stays flat.
	HistoryBytes int
	// HistoryAge bounds the history by age: messages published longer ago are forgotten;
	// 0 means DefaultHistoryAge. A recovery request whose after reaches back past what the
	// history still holds is refused with 400, as the feed's API refuses a request it
	// cannot serve, rather than answered with a replay that misses messages.
	HistoryAge time.Duration
	// AccessToken is what the recovery API expects in x-access-token; "" means
	// DefaultAccessToken.
	AccessToken string
	// Seed makes the traffic reproducible; runs with the same seed and calls publish the
	// same messages (timestamps aside).
	Seed uint64
	// Clock stamps and paces the messages; nil is the wall clock. (a clocktest.Fake in tests).
	Clock clock.Clock
}

// Sent is a message the simulator published, as its record.
type Sent struct {
	Key     feed.RoutingKey
	Message feed.Message
	Body    []byte
	// Replay is true for messages sent in answer to a recovery request.
	Replay bool
}

// SimulatorStats counts what a simulator published.
type SimulatorStats struct {
	Events   uint64 `json:"events"` // event messages of the live stream
	Alives   uint64 `json:"alives"`
	Replayed uint64 `json:"replayed"` // messages sent in answer to recovery requests, snapshot_complete included
}

// Simulator publishes realistic odds-feed traffic for a set of matches, alive messages per
// producer, and recovery replays; it injects faults on demand and records what it sent.
type Simulator struct {
	pub      Publisher
	cfg      SimulatorConfig
	clock    clock.Clock
	limiter  *rate.Limiter
	producer map[int]feed.Producer

	mu         sync.Mutex
	rng        *rand.Rand
	matches    []*simMatch
	nextID     int64
	nextRound  int // which producer gets the next new match
	history    *history
	delay      time.Duration
	silenced   map[int]bool // producers whose alives are stopped
	failures   []recoveryFailure
	recoveries []RecoveryRequest

	stats    SimulatorStats
	apiStats apiCounter // requests to the API, by route (APIRequests)

	// publishing holds a token while a live publish is in progress: one at a time, so that
	// each match's messages and the alives go in time order. A channel rather than a
	// mutex, so that a goroutine waiting its turn gives up when its context ends, and is
	// durably blocked in a synctest bubble (a test can wait until it waits).
	publishing chan struct{}
	replaying  int        // replays in progress, guarded by mu
	replayed   *sync.Cond // signalled on mu when replaying drops
}

// NewSimulator returns a simulator publishing to p.
func NewSimulator(p Publisher, cfg SimulatorConfig) (*Simulator, error) {
	if p == nil {
		return nil, errors.New("feedtest: NewSimulator: publisher is nil")
	}
	switch {
	case cfg.Matches < 0:
		return nil, fmt.Errorf("feedtest: SimulatorConfig.Matches %d must not be negative", cfg.Matches)
	case cfg.Rate < 0 || math.IsNaN(cfg.Rate):
		return nil, fmt.Errorf("feedtest: SimulatorConfig.Rate %v must be a number of messages per second", cfg.Rate)
	case cfg.AliveInterval < 0:
		return nil, fmt.Errorf("feedtest: SimulatorConfig.AliveInterval %v must not be negative", cfg.AliveInterval)
	case cfg.HistoryBytes < 0:
		return nil, fmt.Errorf("feedtest: SimulatorConfig.HistoryBytes %d must not be negative", cfg.HistoryBytes)
	case cfg.HistoryAge < 0:
		return nil, fmt.Errorf("feedtest: SimulatorConfig.HistoryAge %v must not be negative", cfg.HistoryAge)
	}
	if cfg.Matches == 0 {
		cfg.Matches = DefaultMatches
	}
	if cfg.Rate == 0 {
		cfg.Rate = DefaultRate
	}
	if cfg.AliveInterval == 0 {
		cfg.AliveInterval = DefaultAliveInterval
	}
	if cfg.HistoryBytes == 0 {
		cfg.HistoryBytes = DefaultHistoryBytes
	}
	if cfg.HistoryAge == 0 {
		cfg.HistoryAge = DefaultHistoryAge
	}
	if cfg.AccessToken == "" {
		cfg.AccessToken = DefaultAccessToken
	}
	if cfg.Producers == nil {
		for _, id := range []int{1, 3} {
			p, _ := feed.LookupProducer(feed.DefaultProducers(), id)
			cfg.Producers = append(cfg.Producers, p)
		}
	}
	if len(cfg.Producers) == 0 {
		return nil, errors.New("feedtest: SimulatorConfig.Producers is empty")
	}
	s := &Simulator{
		pub:      p,
		cfg:      cfg,
		clock:    clock.OrReal(cfg.Clock),
		producer: make(map[int]feed.Producer),
		rng:      rand.New(rand.NewPCG(cfg.Seed, 0x5eed)),
		nextID:   1_000_000,
		silenced: make(map[int]bool),
		history:  newHistory(cfg.HistoryBytes, cfg.HistoryAge),

		publishing: make(chan struct{}, 1),
	}
	s.replayed = sync.NewCond(&s.mu)
	for _, p := range cfg.Producers {
		if err := p.Validate(); err != nil {
			return nil, fmt.Errorf("feedtest: SimulatorConfig.Producers: %w", err)
		}
		s.producer[p.ID] = p
	}
	burst := max(1, int(min(cfg.Rate, 1e6)/50)) // about 20 ms of traffic at a time
	s.limiter = rate.NewLimiter(rate.Limit(cfg.Rate), burst)
	for range cfg.Matches {
		s.matches = append(s.matches, s.newMatchLocked())
	}
	return s, nil
}

// Producers returns the producers the simulator publishes for.
func (s *Simulator) Producers() []feed.Producer {
	return append([]feed.Producer(nil), s.cfg.Producers...)
}

// Run publishes paced event traffic and each producer's alives until ctx ends, then waits
// for recovery replays in progress. The alives go at once, then every AliveInterval, and
// also whenever a queue is bound, when the Publisher says so (a Broker, or a Publisher
// with its QueueBound method): a session opened after Run began hears its producers at
// once, not an AliveInterval later, and a test need not order the two. It returns nil when ctx was cancelled, or the first
// publishing error.
func (s *Simulator) Run(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return s.aliveLoop(gctx) })
	g.Go(func() error {
		for {
			if err := s.Publish(gctx, 1); err != nil {
				return err
			}
		}
	})
	err := g.Wait()
	s.WaitReplays()
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	return err
}

// Publish publishes n event messages at the configured rate and returns when they are
// published. Each match's messages go out in order.
func (s *Simulator) Publish(ctx context.Context, n int) error {
	for range n {
		if err := s.pace(ctx); err != nil {
			return err
		}
		if err := s.beginPublish(ctx); err != nil {
			return err
		}
		err := s.publishNext(ctx)
		s.endPublish()
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *Simulator) pace(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := s.clock.Now()
	r := s.limiter.ReserveN(now, 1)
	d := r.DelayFrom(now)
	if d <= time.Millisecond {
		return nil // a sub-millisecond wait costs more than it smooths; the limiter keeps the average
	}
	t := s.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		r.CancelAt(s.clock.Now()) // give the unused token back
		return ctx.Err()
	}
}

// beginPublish waits for the live publish in progress, if any, to end, or for ctx to end;
// a nil error makes the caller's publish the one in progress, until endPublish.
func (s *Simulator) beginPublish(ctx context.Context) error {
	select {
	case s.publishing <- struct{}{}:
		return nil
	default:
	}
	select {
	case s.publishing <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// endPublish ends the live publish beginPublish began.
func (s *Simulator) endPublish() { <-s.publishing }

func (s *Simulator) publishNext(ctx context.Context) error {
	s.mu.Lock()
	i := s.rng.IntN(len(s.matches))
	m := s.matches[i]
	msg, ok := m.next(s.rng, s.stampLocked())
	for !ok {
		m = s.newMatchLocked()
		s.matches[i] = m
		msg, ok = m.next(s.rng, s.stampLocked())
	}
	key := m.key(msg.Type(), feed.NodeID{})
	s.mu.Unlock()
	return s.send(ctx, key, msg, false)
}

func (s *Simulator) newMatchLocked() *simMatch {
	p := s.cfg.Producers[s.nextRound%len(s.cfg.Producers)]
	s.nextRound++
	s.nextID++
	return newSimMatch(s.rng, s.nextID, p)
}

// send encodes, records and publishes one message. It records first, so that a recovery
// requested while the message is being published replays it too (it may then arrive twice,
// as with the real feed, but is never missing from both).
func (s *Simulator) send(ctx context.Context, key feed.RoutingKey, msg feed.Message, replay bool) error {
	body := Marshal(msg)
	s.mu.Lock()
	seq := s.history.add(key, body, msg.MessageHeader(), replay, s.clock.Now())
	s.mu.Unlock()
	err := s.pub.Publish(ctx, key.String(), body)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.history.unrecord(seq)
		return fmt.Errorf("feedtest: publish %s: %w", key, err)
	}
	switch {
	case replay:
		s.stats.Replayed++
	case key.Type == feed.MessageAlive:
		s.stats.Alives++
	default:
		s.stats.Events++
	}
	return nil
}

// Stats returns the simulator's counters.
func (s *Simulator) Stats() SimulatorStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// Sent returns the messages published so far that the history still holds, oldest first.
func (s *Simulator) Sent() []Sent {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Sent, 0, s.history.len())
	s.history.each(func(r *record) { out = append(out, r.sent()) })
	return out
}

// Forgotten returns how many published messages the history no longer holds.
func (s *Simulator) Forgotten() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.history.forgotten
}

// EventsByMatch returns the event messages of the live stream (not the replays) that the
// history holds, grouped by event in the order they were published.
func (s *Simulator) EventsByMatch() map[feed.URN][]Sent {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[feed.URN][]Sent)
	s.history.each(func(r *record) {
		if r.isLiveEvent() {
			out[r.key.Event] = append(out[r.key.Event], r.sent())
		}
	})
	return out
}

// stampLocked returns the time to stamp a new message with: now, less the delay the feed
// is running late by.
func (s *Simulator) stampLocked() time.Time {
	return s.clock.Now().Add(-s.delay).Truncate(time.Millisecond).UTC()
}

// SetDelay makes the feed late: from now on messages carry timestamps d in the past, as
// when the feed or the broker falls behind. 0 restores on-time traffic. (A match's
// timestamps never go backwards, so right after a larger delay is set a match that has just
// published keeps its last timestamp until the delayed clock passes it.)
func (s *Simulator) SetDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// StopAlives stops the alive messages of a producer, as when it goes down.
func (s *Simulator) StopAlives(producerID int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.silenced[producerID] = true
}

// ResumeAlives resumes the alive messages of a producer.
func (s *Simulator) ResumeAlives(producerID int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.silenced, producerID)
}

// SendAlive publishes one alive of a producer at once. subscribed false is the feed saying
// the consumer is no longer subscribed and must recover.
func (s *Simulator) SendAlive(ctx context.Context, producerID int, subscribed bool) error {
	if _, ok := s.producer[producerID]; !ok {
		return fmt.Errorf("feedtest: SendAlive: unknown producer %d", producerID)
	}
	// Stamped and sent in turn with the event messages, as the feed's stream is in time
	// order: an alive never overtakes a message stamped before it. A consumer recovers
	// from the last alive it processed, so a message that did, and was then lost, would
	// be in no replay.
	if err := s.beginPublish(ctx); err != nil {
		return err
	}
	defer s.endPublish()
	s.mu.Lock()
	stamp := s.stampLocked()
	s.mu.Unlock()
	msg := &feed.Alive{Header: feed.Header{Producer: producerID, Timestamp: stamp}, Subscribed: subscribed}
	return s.send(ctx, feed.RoutingKey{Type: feed.MessageAlive}, msg, false)
}

// DropConnection drops the publisher's connections for d, if the publisher can (the
// Broker can): sessions see the connection go down and come back up, and what is
// published meanwhile is lost to them.
func (s *Simulator) DropConnection(ctx context.Context, d time.Duration) error {
	c, ok := s.pub.(interface {
		DropConnection(context.Context, time.Duration) error
	})
	if !ok {
		return fmt.Errorf("feedtest: DropConnection: %T cannot drop connections", s.pub)
	}
	return c.DropConnection(ctx, d)
}

// queueBinder is a Publisher that says when a queue is bound; the Broker is one.
type queueBinder interface {
	QueueBound() <-chan struct{}
}

func (s *Simulator) aliveLoop(ctx context.Context) error {
	t := s.clock.NewTicker(s.cfg.AliveInterval)
	defer t.Stop()
	binder, _ := s.pub.(queueBinder)
	for {
		// Taken before the alives go: a queue bound while they are sent gets them again,
		// never none.
		var bound <-chan struct{} // nil, never ready, without a binder
		if binder != nil {
			bound = binder.QueueBound()
		}
		for _, p := range s.cfg.Producers {
			s.mu.Lock()
			silenced := s.silenced[p.ID]
			s.mu.Unlock()
			if silenced {
				continue
			}
			if err := s.SendAlive(ctx, p.ID, true); err != nil {
				return err
			}
		}
		select {
		case <-t.C():
		case <-bound:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
