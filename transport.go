package feedkit

import (
	"fmt"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
	"github.com/feedkit/feedkit/feed/rabbitmq"
)

// newAMQPTransport builds the RabbitMQ transport of Config.AMQP (the environment's broker,
// or the host's). Its errors reach Config.OnError through the sessions, as every
// transport's do; AMQP.OnError, when set, hears them too, from the transport itself. It
// logs with AMQP.Logger, or Config.Logger when that is nil. The feed's own broker takes
// its virtual host from the API client at the first Subscribe.
func newAMQPTransport(cfg Config, api *feedapi.Client) (*rabbitmq.Transport, error) {
	ac := *cfg.AMQP
	if ac.Logger == nil {
		ac.Logger = cfg.Logger
	}
	ac.Clock = cfg.Clock
	ac.Observer = cfg.Observer
	field := "Config.AMQP"
	if cfg.Environment != nil {
		field = fmt.Sprintf("Config.Environment (%s)", cfg.Environment.Name)
		if cfg.Environment.vhostFromAPI() && api != nil {
			ac.VirtualHostSource = api
		}
	}
	t, err := rabbitmq.New(ac)
	if err != nil {
		return nil, fmt.Errorf("feedkit: %s: %w", field, err)
	}
	return t, nil
}

// transportStats returns the counters of a RabbitMQ transport, the SDK's own or one given
// in Config.Transport; nil for any other transport.
func transportStats(t feed.Transport) *rabbitmq.Stats {
	rt, ok := t.(*rabbitmq.Transport)
	if !ok {
		return nil
	}
	st := rt.Stats()
	return &st
}
