package rabbitmq

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/internal/amqpconn"
	"github.com/feedkit/feedkit/internal/backoff"
)

// Defaults for the zero fields of Config.
const (
	// DefaultExchange is the topic exchange of the Unified Odds Feed.
	DefaultExchange = "unifiedfeed"
	// DefaultPrefetch is how many unacknowledged messages the broker sends ahead.
	DefaultPrefetch = 1000
	// DefaultHeartbeat is the AMQP heartbeat interval; a peer silent for three of them
	// is taken for dead.
	DefaultHeartbeat = 10 * time.Second
	// DefaultDialTimeout bounds the TCP connect plus the TLS and AMQP handshakes.
	DefaultDialTimeout = 15 * time.Second
	// DefaultReconnectDelay is the wait before the first reconnection attempt.
	DefaultReconnectDelay = 500 * time.Millisecond
	// DefaultMaxReconnectDelay caps the wait between reconnection attempts.
	DefaultMaxReconnectDelay = 30 * time.Second
	// DefaultConnectionName is the connection name the broker shows for feedkit.
	DefaultConnectionName = "feedkit"
)

// closeTimeout bounds a graceful AMQP close; a peer that does not answer by then (a
// partitioned network) has its socket closed under it. It also bounds how long a
// connection whose setup ctx ended waits for amqp091-go's reader to see its socket
// closed (amqpconn.Dialed.Release).
const closeTimeout = time.Second

// reconnectJitter spreads reconnection attempts, so that clients that lost the same
// broker do not all come back at the same instants.
const reconnectJitter = 0.5

// Config configures a Transport. URL is required; every other field has a default.
type Config struct {
	// URL is the broker's address, amqp://user:pass@host:port/vhost or amqps://... for
	// TLS (verified against the system roots unless TLS or InsecureSkipVerify say
	// otherwise). The Unified Odds Feed is amqps://stgmq.betradar.com:5671 (integration)
	// and amqps://mq.betradar.com:5671 (production).
	URL string
	// AccessToken, when set, logs in with the token as user name and an empty password,
	// as the Unified Odds Feed expects; it replaces credentials in URL.
	AccessToken string
	// VirtualHost, when set, replaces the virtual host in URL. The Unified Odds Feed's is
	// "/unifiedfeed/<bookmaker id>".
	VirtualHost string
	// VirtualHostSource, when set (and VirtualHost is not), gives the virtual host at the
	// first Subscribe: the account's, which the feed's API tells (a *feedapi.Client is
	// one; the SDK sets it when the environment's broker is the feed's). The answer is
	// kept for every later connection.
	VirtualHostSource VirtualHostSource
	// Exchange is the topic exchange the session queues are bound to; "" means
	// DefaultExchange.
	Exchange string
	// DeclareExchange declares Exchange (a durable topic exchange) if it is missing, for
	// brokers of your own; the Unified Odds Feed's exchange exists and may not be declared.
	DeclareExchange bool
	// TLS is the TLS configuration for amqps URLs (root CAs, client certificates); nil
	// means the system roots. It is cloned, never modified.
	TLS *tls.Config
	// InsecureSkipVerify turns off verification of the broker's certificate. It exists
	// for test brokers with self-signed certificates; never set it in production.
	InsecureSkipVerify bool
	// Prefetch is how many unacknowledged messages the broker sends ahead of the
	// consumer (AMQP basic.qos); 0 means DefaultPrefetch. Messages are acknowledged once
	// the session has taken them, in batches.
	Prefetch int
	// Heartbeat is the AMQP heartbeat interval; 0 means DefaultHeartbeat. A heartbeat
	// in the URL (?heartbeat=n) takes precedence, as in amqp091-go.
	Heartbeat time.Duration
	// DialTimeout bounds connecting, all of it: TCP, TLS and the AMQP handshake; 0 means
	// DefaultDialTimeout.
	DialTimeout time.Duration
	// ReconnectDelay is the wait before the first reconnection attempt; each later wait
	// doubles, up to MaxReconnectDelay, with random jitter. 0 means DefaultReconnectDelay.
	ReconnectDelay time.Duration
	// MaxReconnectDelay caps the wait between attempts; 0 means DefaultMaxReconnectDelay.
	MaxReconnectDelay time.Duration
	// ConnectionName is shown by the broker's management tools for every connection of
	// this transport; "" means DefaultConnectionName.
	ConnectionName string
	// OnError receives every error the transport meets and recovers from: failed
	// connection attempts, lost connections, acknowledgements that failed. It is called
	// from the transport's goroutines and must be safe for concurrent use.
	OnError func(error)
	// Logger logs the same errors and the connection's life; nil is silent.
	Logger *slog.Logger

	// Clock paces reconnection attempts; nil is the wall clock. (a clocktest.Fake in tests).
	Clock clock.Clock
	// Observer is told of links made and lost and attempts failed, for metrics; nil tells
	// no one.
	Observer Observer
}

// VirtualHostSource tells the broker's virtual host of an account: the feed's API does
// (whoami.xml), and *feedapi.Client is one.
type VirtualHostSource interface {
	VirtualHost(ctx context.Context) (string, error)
}

// settings is a validated Config with its defaults applied.
type settings struct {
	Config
	uri     amqp.URI
	backoff backoff.Policy
	clock   clock.Clock
	log     *slog.Logger
}

// resolve validates cfg, naming the first field that is wrong, and applies the defaults.
func resolve(cfg Config) (*settings, error) {
	const prefix = "rabbitmq.Config."
	// ParseURL's errors never quote the URL, which may hold a password, and it refuses
	// the '@' in the virtual host that an unencoded '/' in the password leaves.
	uri, err := amqpconn.ParseURL(prefix, cfg.URL)
	if err != nil {
		return nil, err
	}
	switch {
	case uri.CACertFile != "" || uri.CertFile != "" || uri.KeyFile != "" || uri.ServerName != "":
		return nil, errors.New(prefix + "URL: TLS options in the URL (cacertfile, certfile, keyfile, server_name_indication) are not used: set Config.TLS")
	case uri.ConnectionTimeout != 0:
		return nil, errors.New(prefix + "URL: connection_timeout in the URL is not used: set Config.DialTimeout")
	case cfg.VirtualHost != "" && cfg.VirtualHostSource != nil:
		return nil, errors.New(prefix + "VirtualHost and VirtualHostSource are both set: set one")
	case cfg.Prefetch < 0:
		return nil, fmt.Errorf("%sPrefetch %d must not be negative", prefix, cfg.Prefetch)
	case cfg.Prefetch > 65535:
		return nil, fmt.Errorf("%sPrefetch %d exceeds AMQP's limit of 65535", prefix, cfg.Prefetch)
	case cfg.Heartbeat < 0:
		return nil, fmt.Errorf("%sHeartbeat %v must not be negative", prefix, cfg.Heartbeat)
	case cfg.Heartbeat%time.Second != 0:
		return nil, fmt.Errorf("%sHeartbeat %v must be whole seconds (AMQP counts in seconds)", prefix, cfg.Heartbeat)
	case cfg.DialTimeout < 0:
		return nil, fmt.Errorf("%sDialTimeout %v must not be negative", prefix, cfg.DialTimeout)
	case cfg.ReconnectDelay < 0:
		return nil, fmt.Errorf("%sReconnectDelay %v must not be negative", prefix, cfg.ReconnectDelay)
	case cfg.MaxReconnectDelay < 0:
		return nil, fmt.Errorf("%sMaxReconnectDelay %v must not be negative", prefix, cfg.MaxReconnectDelay)
	case strings.ContainsAny(cfg.Exchange, " \t\r\n"):
		return nil, fmt.Errorf("%sExchange %q must not contain white space", prefix, cfg.Exchange)
	case cfg.TLS != nil && uri.Scheme != "amqps":
		return nil, fmt.Errorf("%sTLS is set but URL's scheme is %s, not amqps", prefix, uri.Scheme)
	case cfg.InsecureSkipVerify && uri.Scheme != "amqps":
		return nil, fmt.Errorf("%sInsecureSkipVerify is set but URL's scheme is %s, not amqps", prefix, uri.Scheme)
	}
	s := &settings{Config: cfg, uri: uri, clock: clock.OrReal(cfg.Clock), log: cfg.Logger}
	if s.Exchange == "" {
		s.Exchange = DefaultExchange
	}
	if s.Prefetch == 0 {
		s.Prefetch = DefaultPrefetch
	}
	if s.Heartbeat == 0 {
		s.Heartbeat = DefaultHeartbeat
	}
	if s.DialTimeout == 0 {
		s.DialTimeout = DefaultDialTimeout
	}
	if s.ReconnectDelay == 0 {
		s.ReconnectDelay = DefaultReconnectDelay
	}
	if s.MaxReconnectDelay == 0 {
		s.MaxReconnectDelay = max(DefaultMaxReconnectDelay, s.ReconnectDelay)
	}
	if s.ConnectionName == "" {
		s.ConnectionName = DefaultConnectionName
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.backoff = backoff.Policy{Initial: s.ReconnectDelay, Max: s.MaxReconnectDelay, Jitter: reconnectJitter}
	if err := s.backoff.Validate(prefix + "Reconnect"); err != nil {
		// Only Max < Initial can fail here: the names line up with the fields.
		return nil, fmt.Errorf("%sMaxReconnectDelay %v must be at least ReconnectDelay (%v)", prefix, s.MaxReconnectDelay, s.ReconnectDelay)
	}
	return s, nil
}

// amqpConfig is the amqp091-go configuration of one connection attempt. It is built
// per attempt because amqp091-go writes into the tls.Config it is given.
func (s *settings) amqpConfig() amqp.Config {
	props := amqp.NewConnectionProperties()
	props.SetClientConnectionName(s.ConnectionName)
	props["product"] = "feedkit"
	cfg := amqp.Config{
		Heartbeat:  s.Heartbeat,
		Properties: props,
		Vhost:      s.VirtualHost, // "" lets amqp091-go take the URL's
	}
	if s.AccessToken != "" {
		cfg.SASL = []amqp.Authentication{&amqp.PlainAuth{Username: s.AccessToken}}
	}
	if s.uri.Scheme == "amqps" {
		var t *tls.Config
		if s.TLS != nil {
			t = s.TLS.Clone()
		} else {
			t = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		if s.InsecureSkipVerify {
			t.InsecureSkipVerify = true
		}
		cfg.TLSClientConfig = t
	}
	return cfg
}

// redactedURL is the broker's address without the credentials, for errors and logs,
// with the virtual host the transport really uses: VirtualHost when it is set.
func (s *settings) redactedURL() string {
	u := s.uri
	if s.VirtualHost != "" {
		u.Vhost = s.VirtualHost
	}
	return amqpconn.RedactedURL(u)
}
