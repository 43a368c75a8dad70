package feedkit

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
	"github.com/feedkit/feedkit/feed/markets"
	"github.com/feedkit/feedkit/feed/rabbitmq"
	"github.com/feedkit/feedkit/feed/sportdata"
	"github.com/feedkit/feedkit/internal/durcheck"
	"github.com/feedkit/feedkit/recovery"
)

// Config configures an SDK. The broker comes from Environment, Transport or AMQP, and
// the feed's API from Environment or API (needed unless recoveries are disabled, by
// Recovery.Disabled or RecoveryEnabledEnv). The listeners are not here: add a session
// for each with SDK.AddSession, after New, so that they can use what New built (the
// names, the API client).
type Config struct {
	// Environment and AccessToken set the SDK up as Sportradar's SDKs do: the broker and
	// the API come from the environment (Integration, Production, Replay, or a
	// CustomEnvironment), the token logs in to both, and the broker's virtual host is
	// the account's, which the API tells (whoami). With Environment set, leave API's
	// BaseURL and AccessToken unset; AMQP may tune the environment's broker, and
	// Transport replaces it. nil sets nothing.
	Environment *Environment
	// AccessToken is the account's access token; required with Environment.
	AccessToken string
	// TokenExpiryWarning is how long before the token expires Open warns of it (to
	// OnError and the log), from the expiry the API gives; 0 means
	// DefaultTokenExpiryWarning, a negative value turns the warning off.
	TokenExpiryWarning time.Duration
	// ClockOffsetWarning is how far the API server's clock may be from this machine's
	// before Open warns of it (ErrClockOffset, to OnError and the log): the feed stamps
	// its messages with its own clock, and the processing delay and the recovery points
	// are measured against it. 0 means DefaultClockOffsetWarning, a negative value turns
	// the warning off.
	ClockOffsetWarning time.Duration
	// Transport is what the sessions consume from: a *rabbitmq.Transport built by the
	// host, or an embedded *feedtest.Broker for tests and development. The caller owns
	// it. The errors it meets and goes on from (failed connects, lost connections)
	// reach OnError through the sessions, as those of a transport the SDK builds do.
	// Config.Observer does not reach it: give a RabbitMQ transport of your own the same
	// observer in its rabbitmq.Config.Observer.
	Transport feed.Transport
	// AMQP configures a RabbitMQ transport that the SDK builds and owns, when Transport
	// is nil. With Environment, its URL, AccessToken, VirtualHost and VirtualHostSource
	// must be empty (the environment gives them) and the rest tunes the connection
	// (TLS, Prefetch, ...). Its errors reach OnError (and AMQP.OnError, if set) and are
	// logged with AMQP.Logger, or Logger when that is nil; Stats().Transport has its
	// counters.
	AMQP *rabbitmq.Config
	// Node is this SDK instance's node id: recovery replies are routed to it alone.
	Node feed.NodeID
	// Global receives connection changes, producer status changes and recovery
	// initiations; nil ignores them. Producer ups are held back until every message of
	// the recovery behind them has been processed.
	Global feed.GlobalEventsListener
	// API configures the client of the feed's API (SDK.API): its BaseURL and AccessToken
	// unless Environment gives them, and its HTTP client, timeout, retries and
	// OnResponse hook. Its Node and Clock are set from Node and Clock.
	API feedapi.Config
	// Recovery tunes the recovery manager: the fallback producers (Open follows the
	// account's active producers, which the API lists; Producers is what it follows when
	// the API cannot list them, and gives heartbeat limits the API does not),
	// DisabledProducers, heartbeat limits, rate limits, ledger and store, the check
	// interval, disabling recoveries (which RecoveryEnabledEnv overrides). Its Account
	// defaults to one derived from the access token, so that every process of one
	// account shares the rate limits of a shared Ledger; its OnError and Logger default
	// to the SDK's, and its Clock must be left nil (set Clock).
	//
	// Its Store keeps the producer records a restarted process recovers from. The default
	// keeps them in memory: a restart knows nothing of its producers and recovers the
	// last Recovery.AssumedDowntime only (10 minutes by default), so what the feed sent
	// before, settlements and cancels included, is never seen; Open warns of it. Set a
	// recovery.FileStore (one process) or a pgstore.Store (PostgreSQL) to recover from the
	// last record however long the process was stopped, up to the producer's recovery
	// window.
	Recovery recovery.Config
	// Concurrent, when set, delivers the sessions' messages through the concurrent
	// listener: matches in parallel, each match's messages in order (&concurrent.Config{}
	// for its defaults). The sessions share one concurrent.Pool: Threads is the number of
	// workers in all, not per session, and QueueSize bounds the tasks waiting over all
	// sessions; a match's messages keep their order across sessions. nil delivers
	// serially, each session one listener call at a time in arrival order. Producer ups
	// are held back until the recovery's messages are processed either way.
	Concurrent *concurrent.Config
	// Names tunes the market and outcome names that SDK.Names gives (cache sizes,
	// refresh and retry intervals); its zero value is the defaults. Leave its Clock nil.
	Names markets.Config
	// SportData tunes the sport data that SDK.SportData gives (languages, cache sizes,
	// time to live, what a partly failed read returns); its zero value is the defaults.
	// Leave its Clock and Observer nil.
	SportData sportdata.Config
	// QueueSize bounds each session's serial queue, when Concurrent is nil; 0 means
	// feed.DefaultQueueSize.
	QueueSize int
	// MaxBodySize is the largest message body accepted; 0 means feed.DefaultMaxBodySize.
	MaxBodySize int
	// MaxUpHold bounds how long a producer's up may be held back while the messages of
	// the recovery behind it are processed (or, in a forwarding session, handed on). Past
	// it the listeners are taken to be stuck on the recovery: the producer is reported
	// down with the reason feed.ProcessingStalled (the up held is dropped) and recovered
	// again from its recovery point, and that recovery's completion brings the next up,
	// held back likewise. 0 means DefaultMaxUpHold; a negative value turns the bound off,
	// holding an up for as long as its recovery's messages take.
	MaxUpHold time.Duration
	// Clock is the time of everything the SDK builds (the recovery manager, the API
	// client, the names' caches, its RabbitMQ transport); nil is the wall clock. A test
	// passes a clocktest.Fake here and moves time instead of sleeping.
	Clock clock.Clock
	// Observer is told of what every part of the SDK does, for metrics; nil tells no
	// one. The SDK hands it to everything it builds: leave the Observer of API,
	// Recovery, Concurrent, Names and AMQP nil.
	Observer Observer
	// OnDelivery, when set, sees every message each session receives, as it came and
	// before anything is made of it (feed.SessionConfig.OnDelivery); Config.API's
	// OnResponse sees every answer of the API. A recording.Writer's RecordDelivery and
	// RecordResponse fit them. It is called on the transports' reading goroutines: it
	// must be quick and safe for concurrent use.
	OnDelivery func(session feed.SessionRef, d feed.Delivery)
	// OnError receives every error any part of the SDK reports; it must be safe for
	// concurrent use. nil ignores them.
	OnError func(error)
	// Logger logs what the SDK does; nil is silent.
	Logger *slog.Logger
}

// DefaultClockOffsetWarning is Config.ClockOffsetWarning's default. The API's Date header
// counts whole seconds, so an offset below two seconds cannot be told from none.
const DefaultClockOffsetWarning = 5 * time.Second

// DefaultMaxUpHold is Config.MaxUpHold's default: as long as a recovery may wait for its
// snapshot_complete (recovery.DefaultRecoveryTimeout). A recovery whose messages take
// longer to process has listeners stuck, or far too slow for the feed.
const DefaultMaxUpHold = time.Hour

// ErrClockOffset matches, with errors.Is, the warning Open reports to Config.OnError when
// the API server's clock is more than Config.ClockOffsetWarning from this machine's.
var ErrClockOffset = errors.New("feedkit: the feed's clock and this machine's differ")

func (c *Config) check() error {
	switch {
	case c.Recovery.Clock != nil:
		return errors.New("feedkit: Config.Recovery.Clock is set: set Config.Clock, which the SDK hands to everything it builds")
	case c.Names.Clock != nil:
		return errors.New("feedkit: Config.Names.Clock is set: set Config.Clock, which the SDK hands to everything it builds")
	case c.API.Clock != nil:
		return errors.New("feedkit: Config.API.Clock is set: set Config.Clock, which the SDK hands to everything it builds")
	case c.Recovery.Observer != nil || c.Names.Observer != nil || c.API.Observer != nil ||
		(c.Concurrent != nil && c.Concurrent.Observer != nil) || (c.AMQP != nil && c.AMQP.Observer != nil):
		return errors.New("feedkit: an Observer is set in a part's config: set Config.Observer, which the SDK hands to everything it builds")
	case c.API.Node != (feed.NodeID{}):
		return errors.New("feedkit: Config.API.Node is set: set Config.Node, which the SDK hands to the API client")
	}
	if err := c.applyEnvironment(); err != nil {
		return err
	}
	switch {
	case c.Transport == nil && c.AMQP == nil:
		return errors.New("feedkit: Config.Transport and Config.AMQP are both nil: set one, or Config.Environment")
	case c.Transport != nil && c.AMQP != nil && c.Environment == nil:
		return errors.New("feedkit: Config.Transport and Config.AMQP are both set: set one")
	case c.AMQP != nil && c.AMQP.Clock != nil:
		return errors.New("feedkit: Config.AMQP.Clock is set: set Config.Clock, which the SDK hands to everything it builds")
	case c.QueueSize < 0:
		return fmt.Errorf("feedkit: Config.QueueSize %d must not be negative", c.QueueSize)
	case c.Concurrent != nil && c.QueueSize != 0:
		return errors.New("feedkit: Config.QueueSize is for serial delivery; with Config.Concurrent set, set Concurrent.QueueSize")
	case c.MaxBodySize < 0:
		return fmt.Errorf("feedkit: Config.MaxBodySize %d must not be negative (0 means feed.DefaultMaxBodySize)", c.MaxBodySize)
	}
	if c.MaxUpHold > 0 {
		if err := durcheck.AtLeast("Config.MaxUpHold", c.MaxUpHold, time.Second); err != nil {
			return fmt.Errorf("feedkit: %w (0 means DefaultMaxUpHold, a negative value no bound)", err)
		}
	}
	return nil
}

// accountOf names the account of an access token without keeping the token: processes
// with the same token share rate limits.
func accountOf(token string) string {
	if token == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(token))
	return "token-" + hex.EncodeToString(sum[:8])
}
