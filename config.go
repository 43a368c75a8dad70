package feedkit

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/markets"
	"github.com/feedkit/feedkit/feed/rabbitmq"
	"github.com/feedkit/feedkit/recovery"
)

// Config configures an SDK. Sessions and a transport (Transport or AMQP) are required,
// and the recovery API (RecoveryAPI.BaseURL) unless recoveries are disabled (by
// Recovery.Disabled or RecoveryEnabledEnv).
type Config struct {
	// Environment and AccessToken set the SDK up as Sportradar's SDKs do: the broker and
	// the API come from the environment (Integration, Production, Replay, or a
	// CustomEnvironment such as the simulator's), the token logs in to both, and Open
	// reads the account's details from the API (whoami), which give the broker's virtual
	// host. With Environment set, leave AMQP and RecoveryAPI's BaseURL and AccessToken
	// unset; Transport, when set, replaces the environment's broker. nil sets nothing.
	Environment *Environment
	// AccessToken is the account's access token; required with Environment.
	AccessToken string
	// TokenExpiryWarning is how long before the token expires Open warns of it (to
	// OnError and the log), from the expiry the API gives; 0 means
	// DefaultTokenExpiryWarning, a negative value turns the warning off.
	TokenExpiryWarning time.Duration
	// Transport is what the sessions consume from: a *rabbitmq.Transport, or an embedded
	// *feedtest.Broker for tests and development. The caller owns it.
	Transport feed.Transport
	// AMQP, used when Transport is nil, configures a RabbitMQ transport that the SDK
	// creates and owns. Its errors reach OnError (after AMQP.OnError, if set) and are
	// logged with AMQP.Logger, or Logger when that is nil; Stats().Transport has its
	// counters.
	AMQP *rabbitmq.Config
	// Node is this SDK instance's node id: recovery replies are routed to it alone.
	Node feed.NodeID
	// Sessions lists the sessions, one per message interest (all messages, live only,
	// prematch only, ...), each with its listener. At least one.
	Sessions []SessionConfig
	// Global receives connection changes, producer status changes and recovery
	// initiations; nil ignores them. Producer ups are held back until every message of
	// the recovery behind them has been processed.
	Global feed.GlobalEventsListener
	// RecoveryAPI configures the recovery API client (BaseURL, AccessToken, HTTP client,
	// timeout); its Node is set from Node.
	RecoveryAPI feed.RecoveryClientConfig
	// Recovery tunes the recovery manager: producers (with the recovery API, Open follows
	// the account's active producers from the API, and Producers is the fallback when the
	// API cannot list them; DisabledProducers are never followed), heartbeat limits, rate limits,
	// ledger and store, the check interval, disabling recoveries (which the environment
	// variable RecoveryEnabledEnv overrides). What the manager is wired to comes from the
	// fields above: the recovery API client from RecoveryAPI, Global, Node, and the count
	// of Sessions. Its Account defaults to one derived from RecoveryAPI.AccessToken, so
	// that every process of one account shares the rate limits of a shared Ledger; its
	// OnError and Logger default to the SDK's.
	//
	// Its Store keeps the producer records a restarted process recovers from. The default
	// keeps them in memory: a restart knows nothing of its producers and recovers the
	// last Recovery.AssumedDowntime only (10 minutes by default; "nothing known" in
	// recovery.RecoveryFrom), so what the feed sent before, settlements and cancels
	// included, is never seen; Open logs a warning when recoveries are on with such a
	// store. Set a recovery.FileStore (one process) or a pgstore.Store (PostgreSQL) to
	// recover from the last record however long the process was stopped, up to the
	// producer's recovery window.
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
	// refresh and retry intervals); its zero value is the defaults. Its Clock defaults
	// to Recovery.Clock.
	Names markets.Config
	// QueueSize bounds each session's serial queue, when Concurrent is nil; 0 means
	// feed.DefaultQueueSize.
	QueueSize int
	// MaxBodySize is the largest message body accepted; 0 means feed.DefaultMaxBodySize.
	MaxBodySize int
	// OnError receives every error any part of the SDK reports; it must be safe for
	// concurrent use. nil ignores them.
	OnError func(error)
	// Logger logs what the SDK does; nil is silent.
	Logger *slog.Logger
}

// SessionConfig is one session of an SDK.
type SessionConfig struct {
	// Interest selects the session's messages; the zero value is feed.AllMessages.
	Interest feed.MessageInterest
	// Listener receives the session's event messages. Required.
	Listener feed.OddsFeedListener
}

func (c *Config) check() error {
	// The environment fills in the transport and the API, which the checks below need.
	if err := c.applyEnvironment(); err != nil {
		return err
	}
	switch {
	case c.Transport == nil && c.AMQP == nil:
		return errors.New("feedkit: Config.Transport and Config.AMQP are both nil: set one")
	case c.Transport != nil && c.AMQP != nil:
		return errors.New("feedkit: Config.Transport and Config.AMQP are both set: set one")
	case len(c.Sessions) == 0:
		return errors.New("feedkit: Config.Sessions is empty")
	case c.Concurrent != nil && c.QueueSize != 0:
		return errors.New("feedkit: Config.QueueSize is for serial delivery; with Config.Concurrent set, set Concurrent.QueueSize")
	}
	for i, s := range c.Sessions {
		if s.Listener == nil {
			return fmt.Errorf("feedkit: Config.Sessions[%d].Listener is nil", i)
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
