package rabbitmq

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/feedkit/feedkit/feed"
)

// Transport consumes the feed from a RabbitMQ broker: each Subscribe opens a connection
// of its own with one channel and one server-named, exclusive, auto-delete queue. It is
// safe for concurrent use.
type Transport struct {
	s     *settings
	stats transportCounters

	mu       sync.Mutex
	resolved *settings // s with the virtual host of VirtualHostSource, once known
}

var _ feed.Transport = (*Transport)(nil)

// New validates cfg and returns a Transport. It does not connect: each Subscribe does.
func New(cfg Config) (*Transport, error) {
	s, err := resolve(cfg)
	if err != nil {
		return nil, err
	}
	return &Transport{s: s}, nil
}

// Stats counts what a transport's subscriptions did, all of them together. It encodes to
// JSON with snake_case names; LastErrorAt is RFC 3339, left out when no error happened.
type Stats struct {
	// Connected is how many subscriptions have a link up and consuming now.
	Connected int64 `json:"connected"`
	// Connects counts the links made: connections established and consuming, first ones
	// and reconnections.
	Connects uint64 `json:"connects"`
	// ReconnectAttempts counts the attempts made in the background: after a first attempt
	// that failed, and after each lost link, whether they succeeded or not.
	ReconnectAttempts uint64 `json:"reconnect_attempts"`
	// FailedAttempts counts the connection attempts that failed, first ones included.
	FailedAttempts uint64 `json:"failed_attempts"`
	// ConnectionDrops counts the established links lost (not counting Close).
	ConnectionDrops uint64 `json:"connection_drops"`
	// Delivered counts the messages handed to the receivers, and Bytes their bodies'
	// bytes.
	Delivered uint64 `json:"delivered"`
	Bytes     uint64 `json:"bytes"`
	// AckErrors counts the acknowledgements that failed (the connection was going down).
	AckErrors uint64 `json:"ack_errors"`
	// Blocked counts the times the broker blocked a connection (a resource alarm).
	Blocked uint64 `json:"blocked"`
	// LastError is the last error reported to Config.OnError, and LastErrorAt when, on
	// the transport's clock; "" and zero when there was none.
	LastError   string    `json:"last_error,omitempty"`
	LastErrorAt time.Time `json:"last_error_at,omitzero"`
}

type transportCounters struct {
	connected                                                                 atomic.Int64
	connects, reconnects, failed, drops, delivered, bytes, ackErrors, blocked atomic.Uint64

	mu        sync.Mutex
	lastErr   string
	lastErrAt time.Time
}

// Stats returns the transport's counters.
func (t *Transport) Stats() Stats {
	c := &t.stats
	st := Stats{
		Connected:         c.connected.Load(),
		Connects:          c.connects.Load(),
		ReconnectAttempts: c.reconnects.Load(),
		FailedAttempts:    c.failed.Load(),
		ConnectionDrops:   c.drops.Load(),
		Delivered:         c.delivered.Load(),
		Bytes:             c.bytes.Load(),
		AckErrors:         c.ackErrors.Load(),
		Blocked:           c.blocked.Load(),
	}
	c.mu.Lock()
	st.LastError, st.LastErrorAt = c.lastErr, c.lastErrAt
	c.mu.Unlock()
	return st
}

// recordError keeps err as the last error, for Stats.
func (c *transportCounters) recordError(err error, at time.Time) {
	c.mu.Lock()
	c.lastErr, c.lastErrAt = err.Error(), at
	c.mu.Unlock()
}

// Subscribe connects, declares a queue bound to the exchange with bindings and consumes
// from it, handing every message to r on a goroutine of the subscription's own.
//
// The first connection attempt runs within ctx. If the broker refuses the credentials,
// the virtual host or the certificate, or the exchange is missing, Subscribe returns that
// error: retrying would not help. If the broker cannot be reached, Subscribe returns a working subscription all
// the same and keeps trying in the background, with backoff; r is told ConnectionUp once
// the queue is consuming. A connection lost later is reported with ConnectionDown and
// re-established the same way, on a new queue (messages published in between are lost
// to this subscription: the recovery API fetches them).
func (t *Transport) Subscribe(ctx context.Context, bindings []string, r feed.Receiver) (feed.Subscription, error) {
	if len(bindings) == 0 {
		return nil, errors.New("rabbitmq: Subscribe: no bindings")
	}
	if r == nil {
		return nil, errors.New("rabbitmq: Subscribe: receiver is nil")
	}
	s, err := t.settings(ctx)
	if err != nil {
		return nil, err
	}
	sub := newSubscription(t, s, append([]string(nil), bindings...), r)
	l, err := sub.connect(ctx)
	if err != nil {
		if permanent(err) {
			sub.cancel()
			return nil, fmt.Errorf("rabbitmq: subscribe to %s: %w", s.redactedURL(), err)
		}
		if ctx.Err() != nil {
			sub.cancel()
			return nil, ctx.Err()
		}
		err = fmt.Errorf("rabbitmq: connect to %s (will retry): %w", s.redactedURL(), err)
		t.attemptFailed(err)
		sub.report(err)
	}
	go sub.run(l)
	return sub, nil
}

// attemptFailed counts a connection attempt that failed (Stats.FailedAttempts) and
// tells the observer. An attempt refused for good at Subscribe (a wrong configuration)
// is Subscribe's error, and neither.
func (t *Transport) attemptFailed(err error) {
	t.stats.failed.Add(1)
	if o := t.s.Observer; o != nil {
		o.TransportAttemptFailed(err)
	}
}

// settings returns the transport's settings with the virtual host its VirtualHostSource
// gives, asking it the first time.
func (t *Transport) settings(ctx context.Context) (*settings, error) {
	if t.s.VirtualHostSource == nil {
		return t.s, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.resolved != nil {
		return t.resolved, nil
	}
	vhost, err := t.s.VirtualHostSource.VirtualHost(ctx)
	if err != nil {
		return nil, fmt.Errorf("rabbitmq: the virtual host (Config.VirtualHostSource): %w", err)
	}
	if vhost == "" {
		return nil, errors.New("rabbitmq: the virtual host (Config.VirtualHostSource) is empty")
	}
	s := *t.s
	s.VirtualHost = vhost
	t.resolved = &s
	return t.resolved, nil
}

// ReconnectBound is the longest a subscription that lost its link goes without an
// attempt to make a new one: the longest wait between attempts (MaxReconnectDelay) and
// an attempt's own bound (DialTimeout). A health check that sees no attempt for longer
// knows the transport is stuck, not reconnecting.
func (t *Transport) ReconnectBound() time.Duration { return t.s.MaxReconnectDelay + t.s.DialTimeout }

// permanent reports whether a failed first attempt means the configuration is wrong,
// so that retrying would only hide the mistake.
func permanent(err error) bool {
	var (
		unknownCA x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
		verifyErr *tls.CertificateVerificationError
		amqpErr   *amqp.Error
		recordErr tls.RecordHeaderError
	)
	switch {
	case errors.Is(err, amqp.ErrCredentials), errors.Is(err, amqp.ErrVhost), errors.Is(err, amqp.ErrSASL):
		return true
	case errors.As(err, &verifyErr), errors.As(err, &unknownCA), errors.As(err, &hostname), errors.As(err, &invalid):
		return true
	case errors.As(err, &recordErr):
		// A TLS client speaking to a plain-AMQP port: amqps:// to the wrong port.
		return true
	case errors.As(err, &amqpErr):
		// 403: the user may not use a resource; 404: the exchange is missing (set
		// DeclareExchange for a broker of your own); 530: the virtual host is missing or
		// not the user's, unless it is a connection limit, which passes.
		switch amqpErr.Code {
		case amqp.AccessRefused, amqp.NotFound:
			return true
		case amqp.NotAllowed:
			return !strings.Contains(amqpErr.Reason, "limit")
		}
	}
	return false
}
