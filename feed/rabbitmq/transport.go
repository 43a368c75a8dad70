package rabbitmq

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/feedkit/feedkit/feed"
)

// Transport consumes the feed from a RabbitMQ broker: each Subscribe opens a connection
// of its own with one channel and one server-named, exclusive, auto-delete queue. It is
// safe for concurrent use.
type Transport struct {
	s     *settings
	stats transportCounters
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

// Stats counts what a transport's subscriptions did, all of them together.
type Stats struct {
	Connects        uint64 // connections established and consuming, first ones and reconnections
	FailedAttempts  uint64 // connection attempts that failed
	ConnectionDrops uint64 // established connections lost (not counting Close)
	Delivered       uint64 // messages handed to the receivers
	AckErrors       uint64 // acknowledgements that failed (the connection was going down)
	Blocked         uint64 // times the broker blocked the connection (a resource alarm)
}

type transportCounters struct {
	connects, failed, drops, delivered, ackErrors, blocked atomic.Uint64
}

// Stats returns the transport's counters.
func (t *Transport) Stats() Stats {
	c := &t.stats
	return Stats{
		Connects:        c.connects.Load(),
		FailedAttempts:  c.failed.Load(),
		ConnectionDrops: c.drops.Load(),
		Delivered:       c.delivered.Load(),
		AckErrors:       c.ackErrors.Load(),
		Blocked:         c.blocked.Load(),
	}
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
	sub := newSubscription(t, append([]string(nil), bindings...), r)
	l, err := sub.connect(ctx)
	if err != nil {
		if permanent(err) {
			sub.cancel()
			return nil, fmt.Errorf("rabbitmq: subscribe to %s: %w", t.s.redactedURL(), err)
		}
		if ctx.Err() != nil {
			sub.cancel()
			return nil, ctx.Err()
		}
		t.stats.failed.Add(1)
		sub.report(fmt.Errorf("rabbitmq: connect to %s (will retry): %w", t.s.redactedURL(), err))
	}
	go sub.run(l)
	return sub, nil
}

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
