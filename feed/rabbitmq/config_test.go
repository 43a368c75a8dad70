package rabbitmq

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/internal/amqpconn"
	"github.com/feedkit/feedkit/internal/backoff"
)

const (
	plainURL  = "amqp://guest:guest@localhost:5672/"
	secureURL = "amqps://stgmq.betradar.com:5671"
)

// mustResolve resolves cfg, failing the test on an error.
func mustResolve(t *testing.T, cfg Config) *settings {
	t.Helper()
	s, err := resolve(cfg)
	require.NoError(t, err)
	require.NotNil(t, s)
	return s
}

func TestResolveRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name   string
		cfg    Config
		field  string // the field the error must name
		want   string // a further part of the message
		secret string // what the message must not show
	}{
		{name: "no URL", cfg: Config{}, field: "URL", want: "required"},
		{name: "not an AMQP scheme", cfg: Config{URL: "http://user:s3cret@host/"}, field: "URL", want: "scheme", secret: "s3cret"},
		{name: "bad escape", cfg: Config{URL: "amqp://user:s3cret@host:5672/%zz"}, field: "URL", want: "does not parse", secret: "s3cret"},
		{name: "white space in the password", cfg: Config{URL: "amqp://user:s3 cret@host:5672/"}, field: "URL", want: "whitespace", secret: "cret"},
		{name: "bad port", cfg: Config{URL: "amqps://user:s3cret@host:port/"}, field: "URL", want: "does not parse", secret: "s3cret"},
		{name: "negative Prefetch", cfg: Config{URL: plainURL, Prefetch: -1}, field: "Prefetch", want: "negative"},
		{name: "Prefetch above AMQP's limit", cfg: Config{URL: plainURL, Prefetch: 65536}, field: "Prefetch", want: "65535"},
		{name: "negative Heartbeat", cfg: Config{URL: plainURL, Heartbeat: -time.Second}, field: "Heartbeat", want: "negative"},
		{name: "Heartbeat not whole seconds", cfg: Config{URL: plainURL, Heartbeat: 1500 * time.Millisecond}, field: "Heartbeat", want: "whole seconds"},
		{name: "Heartbeat below a second", cfg: Config{URL: plainURL, Heartbeat: time.Millisecond}, field: "Heartbeat", want: "whole seconds"},
		{name: "negative DialTimeout", cfg: Config{URL: plainURL, DialTimeout: -time.Second}, field: "DialTimeout", want: "negative"},
		{name: "negative ReconnectDelay", cfg: Config{URL: plainURL, ReconnectDelay: -time.Second}, field: "ReconnectDelay", want: "negative"},
		{name: "negative MaxReconnectDelay", cfg: Config{URL: plainURL, MaxReconnectDelay: -time.Second}, field: "MaxReconnectDelay", want: "negative"},
		{
			name:  "MaxReconnectDelay below ReconnectDelay",
			cfg:   Config{URL: plainURL, ReconnectDelay: 5 * time.Second, MaxReconnectDelay: time.Second},
			field: "MaxReconnectDelay", want: "at least ReconnectDelay (5s)",
		},
		{
			name:  "MaxReconnectDelay below the default ReconnectDelay",
			cfg:   Config{URL: plainURL, MaxReconnectDelay: time.Millisecond},
			field: "MaxReconnectDelay", want: "at least ReconnectDelay (500ms)",
		},
		{name: "space in Exchange", cfg: Config{URL: plainURL, Exchange: "unified feed"}, field: "Exchange", want: "white space"},
		{name: "tab in Exchange", cfg: Config{URL: plainURL, Exchange: "feed\t"}, field: "Exchange", want: "white space"},
		{name: "newline in Exchange", cfg: Config{URL: plainURL, Exchange: "feed\n"}, field: "Exchange", want: "white space"},
		{name: "TLS with amqp", cfg: Config{URL: plainURL, TLS: &tls.Config{}}, field: "TLS", want: "not amqps"},
		{name: "InsecureSkipVerify with amqp", cfg: Config{URL: plainURL, InsecureSkipVerify: true}, field: "InsecureSkipVerify", want: "not amqps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := resolve(tt.cfg)
			require.Error(t, err)
			assert.Nil(t, s)
			assert.Regexp(t, `^rabbitmq\.Config\.`+regexp.QuoteMeta(tt.field)+`\b`, err.Error(), "the error starts with the field's name")
			assert.Contains(t, err.Error(), tt.want)
			if tt.secret != "" {
				assert.NotContains(t, err.Error(), tt.secret, "the error shows the password")
			}
		})
	}
}

func TestResolveURLErrorsNameTheURLField(t *testing.T) {
	// The URL messages go on with a colon, not a space: check the prefix exactly.
	_, err := resolve(Config{URL: "amqp://user:s3cret@host:5672/%zz"})
	require.Error(t, err)
	assert.Equal(t,
		"rabbitmq.Config.URL: not an amqp:// or amqps:// URL: it does not parse (reserved characters in the user name or password, such as / ? # @ :, must be percent-encoded)",
		err.Error())

	_, err = resolve(Config{URL: "amqp://user:s3 cret@host:5672/"})
	require.Error(t, err)
	assert.Equal(t, "rabbitmq.Config.URL: not an amqp:// or amqps:// URL: URI must not contain whitespace", err.Error())

	_, err = resolve(Config{})
	require.Error(t, err)
	assert.Equal(t, "rabbitmq.Config.URL is required", err.Error())
}

func TestResolveAcceptsTheLimits(t *testing.T) {
	s := mustResolve(t, Config{URL: plainURL, Prefetch: 65535, Heartbeat: 2 * time.Second, Exchange: "a.b-c_d"})
	assert.Equal(t, 65535, s.Prefetch)
	assert.Equal(t, 2*time.Second, s.Heartbeat)
	assert.Equal(t, "a.b-c_d", s.Exchange)

	s = mustResolve(t, Config{URL: plainURL, ReconnectDelay: time.Second, MaxReconnectDelay: time.Second})
	assert.Equal(t, time.Second, s.MaxReconnectDelay, "MaxReconnectDelay may equal ReconnectDelay")

	s = mustResolve(t, Config{URL: secureURL, TLS: &tls.Config{}, InsecureSkipVerify: true})
	assert.True(t, s.InsecureSkipVerify)
	assert.Equal(t, "amqps", s.uri.Scheme)
}

func TestResolveAppliesDefaults(t *testing.T) {
	s := mustResolve(t, Config{URL: plainURL})
	assert.Equal(t, "unifiedfeed", s.Exchange)
	assert.Equal(t, DefaultExchange, s.Exchange)
	assert.Equal(t, 1000, s.Prefetch)
	assert.Equal(t, 10*time.Second, s.Heartbeat)
	assert.Equal(t, DefaultDialTimeout, s.DialTimeout)
	assert.Equal(t, DefaultReconnectDelay, s.ReconnectDelay)
	assert.Equal(t, DefaultMaxReconnectDelay, s.MaxReconnectDelay)
	assert.Equal(t, "feedkit", s.ConnectionName)
	assert.Equal(t, DefaultConnectionName, s.ConnectionName)
	assert.NotNil(t, s.clock, "nil Clock means the wall clock")
	assert.NotNil(t, s.log, "nil Logger means a silent one")
	assert.Equal(t, backoff.Policy{Initial: DefaultReconnectDelay, Max: DefaultMaxReconnectDelay, Jitter: reconnectJitter}, s.backoff)
	assert.Equal(t, "localhost", s.uri.Host)
	assert.Equal(t, 5672, s.uri.Port)
	assert.Equal(t, "amqp", s.uri.Scheme)
}

func TestResolveKeepsExplicitValues(t *testing.T) {
	cfg := Config{
		URL:                "amqps://user:pass@mq.example.com:5671/vh",
		AccessToken:        "token",
		VirtualHost:        "/unifiedfeed/12345",
		Exchange:           "mine",
		DeclareExchange:    true,
		InsecureSkipVerify: true,
		Prefetch:           7,
		Heartbeat:          3 * time.Second,
		DialTimeout:        4 * time.Second,
		ReconnectDelay:     5 * time.Second,
		MaxReconnectDelay:  6 * time.Second,
		ConnectionName:     "mine-connection",
	}
	s := mustResolve(t, cfg)
	assert.Equal(t, cfg.URL, s.URL)
	assert.Equal(t, "token", s.AccessToken)
	assert.Equal(t, "/unifiedfeed/12345", s.VirtualHost)
	assert.Equal(t, "mine", s.Exchange)
	assert.True(t, s.DeclareExchange)
	assert.True(t, s.InsecureSkipVerify)
	assert.Equal(t, 7, s.Prefetch)
	assert.Equal(t, 3*time.Second, s.Heartbeat)
	assert.Equal(t, 4*time.Second, s.DialTimeout)
	assert.Equal(t, 5*time.Second, s.ReconnectDelay)
	assert.Equal(t, 6*time.Second, s.MaxReconnectDelay)
	assert.Equal(t, "mine-connection", s.ConnectionName)
	assert.Equal(t, backoff.Policy{Initial: 5 * time.Second, Max: 6 * time.Second, Jitter: reconnectJitter}, s.backoff)
	assert.Equal(t, "mq.example.com", s.uri.Host)
	assert.Equal(t, 5671, s.uri.Port)
	assert.Equal(t, "vh", s.uri.Vhost)
}

func TestResolveKeepsLoggerOnErrorAndClock(t *testing.T) {
	var reported error
	logger := slog.New(slog.DiscardHandler)
	clk := clocktest.NewFake(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	s := mustResolve(t, Config{URL: plainURL, OnError: func(err error) { reported = err }, Logger: logger, Clock: clk})
	require.NotNil(t, s.OnError)
	s.OnError(io.EOF)
	assert.Equal(t, io.EOF, reported, "OnError is the caller's")
	assert.Same(t, logger, s.log)
	assert.Equal(t, clock.Clock(clk), s.clock)
}

func TestResolveMaxReconnectDelayDefault(t *testing.T) {
	tests := []struct {
		reconnect, wantMax time.Duration
	}{
		{reconnect: 0, wantMax: 30 * time.Second},
		{reconnect: 10 * time.Second, wantMax: 30 * time.Second},
		{reconnect: 30 * time.Second, wantMax: 30 * time.Second},
		{reconnect: 45 * time.Second, wantMax: 45 * time.Second},
		{reconnect: time.Hour, wantMax: time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.reconnect.String(), func(t *testing.T) {
			s := mustResolve(t, Config{URL: plainURL, ReconnectDelay: tt.reconnect})
			assert.Equal(t, tt.wantMax, s.MaxReconnectDelay)
			assert.Equal(t, tt.wantMax, s.backoff.Max)
			assert.GreaterOrEqual(t, s.MaxReconnectDelay, s.ReconnectDelay)
		})
	}
}

func TestAMQPConfigAccessToken(t *testing.T) {
	s := mustResolve(t, Config{URL: "amqps://ignored:ignored@stgmq.betradar.com:5671", AccessToken: "my-token"})
	cfg := s.amqpConfig()
	require.Len(t, cfg.SASL, 1)
	plain, ok := cfg.SASL[0].(*amqp.PlainAuth)
	require.True(t, ok, "SASL[0] is %T, want *amqp.PlainAuth", cfg.SASL[0])
	assert.Equal(t, "my-token", plain.Username)
	assert.Equal(t, "", plain.Password)
	assert.Equal(t, "PLAIN", plain.Mechanism())
	assert.Equal(t, "\x00my-token\x00", plain.Response(), "the token is the user name, the password empty")

	s = mustResolve(t, Config{URL: "amqp://user:pass@localhost:5672/"})
	assert.Nil(t, s.amqpConfig().SASL, "without a token amqp091-go logs in with the URL's credentials")
}

func TestAMQPConfigVirtualHost(t *testing.T) {
	s := mustResolve(t, Config{URL: "amqps://stgmq.betradar.com:5671/fromurl", VirtualHost: "/unifiedfeed/12345"})
	assert.Equal(t, "/unifiedfeed/12345", s.amqpConfig().Vhost)

	s = mustResolve(t, Config{URL: "amqps://stgmq.betradar.com:5671/fromurl"})
	assert.Equal(t, "", s.amqpConfig().Vhost, "empty: amqp091-go takes the URL's")
	assert.Equal(t, "fromurl", s.uri.Vhost)
}

func TestAMQPConfigTLS(t *testing.T) {
	t.Run("default", func(t *testing.T) {
		s := mustResolve(t, Config{URL: secureURL})
		cfg := s.amqpConfig()
		require.NotNil(t, cfg.TLSClientConfig)
		assert.GreaterOrEqual(t, cfg.TLSClientConfig.MinVersion, uint16(tls.VersionTLS12))
		assert.False(t, cfg.TLSClientConfig.InsecureSkipVerify)
		assert.Nil(t, cfg.TLSClientConfig.RootCAs, "nil RootCAs: the system roots")
		// amqp091-go writes ServerName into the config it is given: each attempt gets its own.
		again := s.amqpConfig()
		assert.NotSame(t, cfg.TLSClientConfig, again.TLSClientConfig)
	})
	t.Run("InsecureSkipVerify", func(t *testing.T) {
		s := mustResolve(t, Config{URL: secureURL, InsecureSkipVerify: true})
		cfg := s.amqpConfig()
		require.NotNil(t, cfg.TLSClientConfig)
		assert.True(t, cfg.TLSClientConfig.InsecureSkipVerify)
		assert.GreaterOrEqual(t, cfg.TLSClientConfig.MinVersion, uint16(tls.VersionTLS12))
	})
	t.Run("caller's config is cloned", func(t *testing.T) {
		pool := x509.NewCertPool()
		mine := &tls.Config{ServerName: "x", RootCAs: pool, MinVersion: tls.VersionTLS13}
		s := mustResolve(t, Config{URL: secureURL, TLS: mine})
		got := s.amqpConfig().TLSClientConfig
		require.NotNil(t, got)
		assert.NotSame(t, mine, got)
		assert.Equal(t, "x", got.ServerName)
		assert.Same(t, pool, got.RootCAs)
		assert.Equal(t, uint16(tls.VersionTLS13), got.MinVersion)
		assert.False(t, got.InsecureSkipVerify)

		got.ServerName = "y" // as amqp091-go would when ServerName is empty
		got.InsecureSkipVerify = true
		got.RootCAs = nil
		assert.Equal(t, "x", mine.ServerName)
		assert.False(t, mine.InsecureSkipVerify)
		assert.Same(t, pool, mine.RootCAs)

		again := s.amqpConfig().TLSClientConfig
		assert.NotSame(t, got, again)
		assert.Equal(t, "x", again.ServerName, "a later attempt starts from the caller's config again")
	})
	t.Run("caller's config with InsecureSkipVerify", func(t *testing.T) {
		mine := &tls.Config{ServerName: "x"}
		s := mustResolve(t, Config{URL: secureURL, TLS: mine, InsecureSkipVerify: true})
		got := s.amqpConfig().TLSClientConfig
		require.NotNil(t, got)
		assert.True(t, got.InsecureSkipVerify)
		assert.Equal(t, "x", got.ServerName)
		assert.False(t, mine.InsecureSkipVerify, "the caller's config is never modified")
	})
	t.Run("amqp", func(t *testing.T) {
		s := mustResolve(t, Config{URL: plainURL})
		assert.Nil(t, s.amqpConfig().TLSClientConfig)
	})
}

func TestAMQPConfigProperties(t *testing.T) {
	s := mustResolve(t, Config{URL: plainURL, ConnectionName: "odds-consumer-1", Heartbeat: 4 * time.Second})
	cfg := s.amqpConfig()
	assert.Equal(t, "odds-consumer-1", cfg.Properties["connection_name"])
	assert.Equal(t, "feedkit", cfg.Properties["product"])
	assert.Equal(t, 4*time.Second, cfg.Heartbeat)
	assert.Nil(t, cfg.Dial, "dial sets its own dialer")

	s = mustResolve(t, Config{URL: plainURL})
	cfg = s.amqpConfig()
	assert.Equal(t, DefaultConnectionName, cfg.Properties["connection_name"])
	assert.Equal(t, DefaultHeartbeat, cfg.Heartbeat)

	// Each attempt gets properties of its own: amqp091-go may write into them.
	cfg.Properties["connection_name"] = "changed"
	assert.Equal(t, DefaultConnectionName, s.amqpConfig().Properties["connection_name"])
}

func TestRedactedURL(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{
			name: "password hidden",
			cfg:  Config{URL: "amqps://user:s3cret@mq.example.com:5671/vh"},
			want: `amqps://mq.example.com:5671 (vhost "vh")`,
		},
		{
			name: "VirtualHost override",
			cfg:  Config{URL: "amqps://user:s3cret@stgmq.betradar.com:5671/vh", VirtualHost: "/unifiedfeed/12345"},
			want: `amqps://stgmq.betradar.com:5671 (vhost "/unifiedfeed/12345")`,
		},
		{
			name: "default port and vhost",
			cfg:  Config{URL: "amqp://localhost"},
			want: `amqp://localhost:5672 (vhost "/")`,
		},
		{
			name: "percent-encoded password",
			cfg:  Config{URL: "amqp://user:s3%2Fcret@localhost:5672/"},
			want: `amqp://localhost:5672 (vhost "/")`,
		},
		{
			name: "access token",
			cfg:  Config{URL: "amqps://stgmq.betradar.com:5671", AccessToken: "s3cret", VirtualHost: "/unifiedfeed/1"},
			want: `amqps://stgmq.betradar.com:5671 (vhost "/unifiedfeed/1")`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustResolve(t, tt.cfg).redactedURL()
			assert.Equal(t, tt.want, got)
			assert.NotContains(t, got, "s3cret")
			assert.NotContains(t, got, "s3/cret")
			assert.NotContains(t, got, "user")
		})
	}
}

func TestResolveRefusesURLsItWouldMisread(t *testing.T) {
	for url, want := range map[string]string{
		"amqp://user:1234/x@host:5672/":       "percent-encoded as %2F",
		"amqps://h/?cacertfile=/etc/ca.pem":   "set Config.TLS",
		"amqps://h/?server_name_indication=x": "set Config.TLS",
		"amqp://h/?connection_timeout=100":    "set Config.DialTimeout",
	} {
		_, err := resolve(Config{URL: url})
		require.Error(t, err, url)
		assert.True(t, strings.HasPrefix(err.Error(), "rabbitmq.Config.URL: "), err.Error())
		assert.Contains(t, err.Error(), want)
		assert.NotContains(t, err.Error(), "1234", "no piece of the password")
	}
}

func TestPermanent(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"ErrCredentials", amqp.ErrCredentials, true},
		{"ErrVhost", amqp.ErrVhost, true},
		{"ErrSASL", amqp.ErrSASL, true},
		{"wrapped ErrCredentials", fmt.Errorf("dial: %w", amqp.ErrCredentials), true},
		{"wrapped ErrVhost", fmt.Errorf("dial: %w", amqp.ErrVhost), true},
		{"wrapped ErrSASL", fmt.Errorf("dial: %w", amqp.ErrSASL), true},
		{"access refused", &amqp.Error{Code: amqp.AccessRefused, Reason: "ACCESS_REFUSED"}, true},
		{"not allowed", &amqp.Error{Code: amqp.NotAllowed, Reason: "NOT_ALLOWED - vhost not found"}, true},
		{"wrapped not allowed", fmt.Errorf("open: %w", &amqp.Error{Code: amqp.NotAllowed}), true},
		{"unknown authority", x509.UnknownAuthorityError{}, true},
		{"hostname mismatch", x509.HostnameError{Host: "mq.example.com"}, true},
		{"invalid certificate", x509.CertificateInvalidError{Reason: x509.Expired}, true},
		{"certificate verification", &tls.CertificateVerificationError{}, true},
		{"certificate verification of an unknown authority", &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}, true},
		{"TLS to a plain port", tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, true},
		{"wrapped TLS to a plain port", fmt.Errorf("handshake: %w", tls.RecordHeaderError{}), true},

		{"connection refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, false},
		{"EOF", io.EOF, false},
		{"unexpected EOF", io.ErrUnexpectedEOF, false},
		{"exchange not found", &amqp.Error{Code: amqp.NotFound, Reason: "NOT_FOUND - no exchange 'unifiedfeed'"}, true},
		{"connection limit", &amqp.Error{Code: amqp.NotAllowed, Reason: "NOT_ALLOWED - access to vhost '/' refused for user 'guest': connection limit (10) is reached"}, false},
		{"handshake cut by the network", fmt.Errorf("connect: %w", amqpconn.ErrHandshake), false},
		{
			"handshake timed out",
			fmt.Errorf("connect: %w: %w", amqpconn.ErrHandshake, &net.OpError{Op: "read", Err: os.ErrDeadlineExceeded}),
			false,
		},
		{"connection forced", &amqp.Error{Code: amqp.ConnectionForced, Server: true}, false},
		{"closed", amqp.ErrClosed, false},
		{"deadline", context.DeadlineExceeded, false},
		{"cancelled", context.Canceled, false},
		{"other", errors.New("something else"), false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, permanent(tt.err), "permanent(%v)", tt.err)
		})
	}
}
