package recovery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/internal/backoff"
	"github.com/feedkit/feedkit/internal/durcheck"
)

// Defaults of Config.
const (
	DefaultCheckInterval      = 15 * time.Second
	DefaultRecoveryTimeout    = time.Hour
	DefaultMaxProcessingDelay = 20 * time.Second
	DefaultRetryInitial       = time.Second
	DefaultRetryMax           = 2 * time.Minute
	DefaultAccount            = "default"
)

// ErrNoRequester is returned by NewManager without a Requester while recoveries are
// enabled.
var ErrNoRequester = errors.New("recovery: NewManager: the Requester is nil and recoveries are enabled (Config.Disabled is false)")

// Requester sends recovery requests to the feed's API; *feedapi.Client is one.
type Requester interface {
	InitiateRecovery(ctx context.Context, p feed.Producer, after time.Time, requestID int64) error
}

// ProducerSource lists the producers the account receives, as the feed's API describes
// them (producers.xml); *feedapi.Client is one. Open reads it (Config.ProducerSource).
type ProducerSource interface {
	Producers(ctx context.Context) ([]feed.Producer, error)
}

// Config holds a Manager's tunables, each with a default: its zero value. What the
// manager cannot work without, or what an assembler wires in, is an argument of
// NewManager instead. A duration below its field's floor (a
// minute for MaxRecoveryLength, a second for AssumedDowntime and RecoveryTimeout, a
// millisecond for the others) is refused: it is a number written without its unit
// (RecoveryTimeout: 60 is 60ns), not a setting.
type Config struct {
	// Producers are the producers to follow without a ProducerSource, or when it fails;
	// nil means feed.DefaultProducers(). Messages of other producers are counted and
	// ignored.
	Producers []feed.Producer
	// ProducerSource, when set, is where Open reads the producers to follow: the
	// account's, from the feed's API (the SDK sets its API client). A producer it lists
	// that Producers lists too keeps the HeartbeatLimit given there, which the API does
	// not describe. When it cannot be read, Open follows Producers instead and reports why
	// to OnError; a refused access token (feed.ErrUnauthorized, feed.ErrForbidden), or
	// Open's ctx ending, fails Open.
	ProducerSource ProducerSource
	// DisabledProducers are the ids of producers not to follow, whether they come from
	// Producers or from the ProducerSource: they are not recovered, not waited for and not
	// reported, and their system messages are counted (Stats.DisabledProducer) and
	// ignored.
	DisabledProducers []int
	// Account names the feed account in the Ledger: the rate limits are shared by every
	// node and process of one account. "" means DefaultAccount.
	Account string
	// Disabled skips the recoveries the manager would request: the producer becomes
	// healthy at once instead, and NewManager needs no Requester. (The root package's SDK
	// lets the FEEDKIT_RECOVERY_ENABLED environment variable override it; this package
	// reads no environment.)
	Disabled bool
	// MaxRecoveryLength is the longest span a recovery goes back; 0 means
	// DefaultMaxRecoveryLength. A producer's MaxRecoveryWindow, when shorter, wins.
	MaxRecoveryLength time.Duration
	// AssumedDowntime is how far back the recovery of a producer goes when nothing is
	// known about it (rule 2b of RecoveryFrom: no record in the Store, or one with neither
	// a disconnection nor a subscription); 0 means DefaultAssumedDowntime. It is the
	// downtime a process restarted with a MemoryStore assumes, whatever its real one: set
	// it longer if your restarts take longer, or better, a Store that persists.
	AssumedDowntime time.Duration
	// CheckInterval is how often missing heartbeats, recovery timeouts and processing
	// delays are checked; 0 means DefaultCheckInterval.
	CheckInterval time.Duration
	// HeartbeatLimits overrides the producers' HeartbeatLimit, by producer id: the longest
	// silence allowed, between two alives or since the last one at a check. A silence of
	// exactly the limit keeps the producer healthy; a longer one, by 1ns already,
	// disconnects it (see the package doc).
	HeartbeatLimits map[int]time.Duration
	// RecoveryTimeout is how long a recovery may wait for its snapshot_complete before it
	// is requested again; 0 means DefaultRecoveryTimeout.
	RecoveryTimeout time.Duration
	// MaxProcessingDelay is how late, against the feed's timestamps, live messages may be
	// processed before the producer is reported down (ProcessingQueueDelayViolation); 0
	// means DefaultMaxProcessingDelay, a negative value turns the check off.
	MaxProcessingDelay time.Duration
	// AdvancePastFailures lets the recovery point move past a message whose listener
	// call returned an error or panicked. By default such a message holds the point at its
	// timestamp (see ListenerFailed), so that the next recovery replays it: listeners must
	// be idempotent anyway, as recoveries overlap live traffic.
	AdvancePastFailures bool
	// Limits are the account's rate limits; nil means DefaultLimits().
	Limits Limits
	// Ledger counts the account's requests; nil means a MemoryLedger of this manager.
	Ledger Ledger
	// Store persists producer records; nil means a MemoryStore of this manager. With
	// recoveries enabled and the records in memory, Open logs a warning: a restarted
	// process knows nothing of its producers and recovers the last AssumedDowntime only.
	Store Store
	// RetryInitial and RetryMax bound the exponential backoff between attempts of a
	// request the API failed; 0 means DefaultRetryInitial and DefaultRetryMax.
	RetryInitial, RetryMax time.Duration
	// Clock is the source of time; nil is the wall clock. (a clocktest.Fake in tests).
	Clock clock.Clock
	// OnError receives every error the manager reports: malformed system messages,
	// refused and failed requests, store failures. Called from the manager's goroutine.
	OnError func(error)
	// Logger logs what the manager does; nil is silent.
	Logger *slog.Logger
	// Observer is told of status changes, alives and recoveries, for metrics; nil tells
	// no one.
	Observer Observer
}

// settings is a Config with its defaults applied, and the manager's wiring.
type settings struct {
	Config
	enabled   bool
	disabled  map[int]bool // Config.DisabledProducers
	retry     backoff.Policy
	requester Requester
	listener  feed.GlobalEventsListener // nil ignores the news
	node      feed.NodeID
	sessions  int
	inMemory  bool // the records go with the process (a MemoryStore)
}

func (c Config) resolve() (settings, error) {
	s := settings{Config: c, enabled: !c.Disabled}
	if s.Producers == nil {
		s.Producers = feed.DefaultProducers()
	}
	if err := s.checkProducers("Config.Producers", s.Producers); err != nil {
		return s, err
	}
	seen := make(map[int]bool, len(s.Producers))
	for _, p := range s.Producers {
		seen[p.ID] = true
	}
	disabled := make(map[int]bool, len(c.DisabledProducers))
	for i, id := range c.DisabledProducers {
		if id <= 0 {
			return s, fmt.Errorf("recovery: Config.DisabledProducers[%d]: id %d must be positive", i, id)
		}
		if disabled[id] {
			return s, fmt.Errorf("recovery: Config.DisabledProducers[%d]: producer %d listed twice", i, id)
		}
		disabled[id] = true
	}
	s.disabled = disabled
	for id, d := range c.HeartbeatLimits {
		if !seen[id] {
			return s, fmt.Errorf("recovery: Config.HeartbeatLimits[%d]: no such producer in Config.Producers", id)
		}
		if d <= 0 {
			return s, fmt.Errorf("recovery: Config.HeartbeatLimits[%d] %v must be positive", id, d)
		}
		if err := durcheck.AtLeast(fmt.Sprintf("Config.HeartbeatLimits[%d]", id), d, minHeartbeatLimit); err != nil {
			return s, fmt.Errorf("recovery: %w", err)
		}
	}
	durations := []struct {
		name     string
		v        *time.Duration
		def, min time.Duration
	}{
		{"MaxRecoveryLength", &s.MaxRecoveryLength, DefaultMaxRecoveryLength, time.Minute},
		{"AssumedDowntime", &s.AssumedDowntime, DefaultAssumedDowntime, time.Second},
		{"CheckInterval", &s.CheckInterval, DefaultCheckInterval, time.Millisecond},
		{"RecoveryTimeout", &s.RecoveryTimeout, DefaultRecoveryTimeout, time.Second},
		{"RetryInitial", &s.RetryInitial, DefaultRetryInitial, time.Millisecond},
		{"RetryMax", &s.RetryMax, DefaultRetryMax, time.Millisecond},
	}
	for _, d := range durations {
		switch {
		case *d.v < 0:
			return s, fmt.Errorf("recovery: Config.%s %v must not be negative (0 means %v)", d.name, *d.v, d.def)
		case *d.v == 0:
			*d.v = d.def
		}
		if err := durcheck.AtLeast("Config."+d.name, *d.v, d.min); err != nil {
			return s, fmt.Errorf("recovery: %w", err)
		}
	}
	if s.MaxProcessingDelay == 0 {
		s.MaxProcessingDelay = DefaultMaxProcessingDelay
	}
	if s.MaxProcessingDelay > 0 {
		if err := durcheck.AtLeast("Config.MaxProcessingDelay", s.MaxProcessingDelay, time.Millisecond); err != nil {
			return s, fmt.Errorf("recovery: %w", err)
		}
	}
	s.retry = backoff.Policy{Initial: s.RetryInitial, Max: s.RetryMax, Jitter: 0.5}
	if err := s.retry.Validate("recovery: Config.Retry"); err != nil {
		return s, err
	}
	if s.Limits == nil {
		s.Limits = DefaultLimits()
	}
	if err := s.Limits.Validate(); err != nil {
		return s, fmt.Errorf("recovery: Config.%s", strings.TrimPrefix(err.Error(), "recovery: "))
	}
	if s.Account == "" {
		s.Account = DefaultAccount
	}
	if s.Ledger == nil {
		s.Ledger = NewMemoryLedger()
	}
	if s.Store == nil {
		s.Store = NewMemoryStore()
	}
	_, s.inMemory = s.Store.(*MemoryStore)
	s.Clock = clock.OrReal(s.Clock)
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	return s, nil
}

// checkProducers reports a producer of list that cannot be followed, or one listed twice,
// naming it as where[i].
func (s *settings) checkProducers(where string, list []feed.Producer) error {
	seen := make(map[int]bool, len(list))
	for i, p := range list {
		if err := p.Validate(); err != nil {
			return fmt.Errorf("recovery: %s[%d]: %w", where, i, err)
		}
		if seen[p.ID] {
			return fmt.Errorf("recovery: %s[%d]: producer %d listed twice", where, i, p.ID)
		}
		seen[p.ID] = true
	}
	return nil
}

// heartbeatLimit returns producer p's heartbeat limit.
func (s *settings) heartbeatLimit(p feed.Producer) time.Duration {
	if d, ok := s.HeartbeatLimits[p.ID]; ok {
		return d
	}
	return p.HeartbeatLimit
}

// maxLength returns how far back a recovery of p may go.
func (s *settings) maxLength(p feed.Producer) time.Duration {
	return min(s.MaxRecoveryLength, p.MaxRecoveryWindow)
}

// minHeartbeatLimit is the shortest heartbeat limit taken: below it, a duration was surely
// meant in another unit.
const minHeartbeatLimit = time.Millisecond
