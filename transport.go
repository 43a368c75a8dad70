package feedkit

import (
	"fmt"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/rabbitmq"
)

// newAMQPTransport builds the RabbitMQ transport of Config.AMQP. The transport reports
// its errors (a broker that cannot be reached, a lost connection, a failed
// acknowledgement) to Config.OnError, after AMQP.OnError when that is set too, and logs
// them with AMQP.Logger, or Config.Logger when it is nil: Config promises every error,
// and a transport that retried in silence would hide a wrong host.
func newAMQPTransport(cfg Config) (*rabbitmq.Transport, error) {
	ac := *cfg.AMQP
	ac.OnError = bothOnError(ac.OnError, cfg.OnError)
	if ac.Logger == nil {
		ac.Logger = cfg.Logger
	}
	t, err := rabbitmq.New(ac)
	if err != nil {
		return nil, fmt.Errorf("feedkit: Config.AMQP: %w", err)
	}
	return t, nil
}

// bothOnError calls first, then second; either may be nil.
func bothOnError(first, second func(error)) func(error) {
	switch {
	case first == nil:
		return second
	case second == nil:
		return first
	}
	return func(err error) {
		first(err)
		second(err)
	}
}

// transportStats returns the counters of a RabbitMQ transport, the SDK's own or one given
// in Config.Transport; nil for any other transport.
func transportStats(t feed.Transport) *rabbitmq.Stats {
	if et, ok := t.(*envTransport); ok { // an environment's broker
		st := et.stats()
		return &st
	}
	rt, ok := t.(*rabbitmq.Transport)
	if !ok {
		return nil
	}
	st := rt.Stats()
	return &st
}
