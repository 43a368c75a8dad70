package feedkit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/rabbitmq"
)

// Environment is where the feed is: the broker the sessions consume from and the API the
// SDK reads the account, its producers and its recoveries from. Set Config.Environment
// and Config.AccessToken and the SDK needs nothing else to connect.
type Environment struct {
	// Name names the environment in logs and errors.
	Name string
	// AMQPHost and AMQPPort are the broker's address; TLS connects with amqps (the
	// feed's brokers take TLS only, on port 5671).
	AMQPHost string
	AMQPPort int
	TLS      bool
	// APIBaseURL is the root of the feed's API, such as https://api.betradar.com.
	APIBaseURL string
}

// Sportradar's environments, as its SDKs know them. Replay, the replay server's broker,
// is paired with the integration API, as in Sportradar's SDKs.
var (
	Integration = Environment{Name: "integration", AMQPHost: "stgmq.betradar.com", AMQPPort: 5671, TLS: true,
		APIBaseURL: "https://stgapi.betradar.com"}
	Production = Environment{Name: "production", AMQPHost: "mq.betradar.com", AMQPPort: 5671, TLS: true,
		APIBaseURL: "https://api.betradar.com"}
	Replay = Environment{Name: "replay", AMQPHost: "replaymq.betradar.com", AMQPPort: 5671, TLS: true,
		APIBaseURL: "https://stgapi.betradar.com"}
)

// CustomEnvironment is an environment of your own, named "custom": a broker and an API
// that speak the feed's protocols, such as a proxy's or the simulator's (with the
// simulator on an embedded broker, give Config.Transport too; amqpHost may then be "").
func CustomEnvironment(amqpHost string, amqpPort int, tls bool, apiBaseURL string) Environment {
	return Environment{Name: "custom", AMQPHost: amqpHost, AMQPPort: amqpPort, TLS: tls, APIBaseURL: apiBaseURL}
}

// AMQPURL returns the broker's URL, without credentials or virtual host:
// amqps://host:port/ (amqp:// without TLS).
func (e Environment) AMQPURL() string {
	scheme := "amqp"
	if e.TLS {
		scheme = "amqps"
	}
	return scheme + "://" + net.JoinHostPort(e.AMQPHost, strconv.Itoa(e.AMQPPort)) + "/"
}

// applyEnvironment fills in the API, and the transport unless one is given, from
// Config.Environment, refusing a config that sets them twice.
func (c *Config) applyEnvironment() error {
	if c.Environment == nil {
		if c.AccessToken != "" {
			return errors.New("feedkit: Config.AccessToken is set without Config.Environment: set the environment, or the token in AMQP and RecoveryAPI")
		}
		return nil
	}
	e := *c.Environment
	switch {
	case c.AccessToken == "":
		return fmt.Errorf("feedkit: Config.AccessToken is empty: the %s environment needs the account's token", e.Name)
	case c.AMQP != nil:
		return errors.New("feedkit: Config.AMQP and Config.Environment are both set: the environment gives the broker (set Transport to use another)")
	case c.RecoveryAPI.BaseURL != "":
		return errors.New("feedkit: Config.RecoveryAPI.BaseURL and Config.Environment are both set: the environment gives the API")
	case c.RecoveryAPI.AccessToken != "":
		return errors.New("feedkit: Config.RecoveryAPI.AccessToken and Config.Environment are both set: Config.AccessToken is the token")
	case e.APIBaseURL == "":
		return fmt.Errorf("feedkit: Config.Environment (%s): APIBaseURL is empty", e.Name)
	case c.Transport == nil && e.AMQPHost == "":
		return fmt.Errorf("feedkit: Config.Environment (%s): AMQPHost is empty and Config.Transport is nil", e.Name)
	case c.Transport == nil && (e.AMQPPort <= 0 || e.AMQPPort > 65535):
		return fmt.Errorf("feedkit: Config.Environment (%s): AMQPPort %d is not a port", e.Name, e.AMQPPort)
	}
	c.RecoveryAPI.BaseURL, c.RecoveryAPI.AccessToken = e.APIBaseURL, c.AccessToken
	if c.Transport == nil {
		t, err := newEnvTransport(*c)
		if err != nil {
			return err
		}
		c.Transport = t
	}
	return nil
}

// envTransport is the RabbitMQ transport of an environment. The broker's virtual host
// is the account's, which Open learns from the API (whoami) before the sessions
// subscribe, so the transport is made at the first Subscribe.
type envTransport struct {
	cfg rabbitmq.Config // all but the virtual host

	mu    sync.Mutex
	vhost string // set by Open from whoami
	t     *rabbitmq.Transport
}

func newEnvTransport(c Config) (*envTransport, error) {
	rc := rabbitmq.Config{URL: c.Environment.AMQPURL(), AccessToken: c.AccessToken,
		OnError: c.OnError, Logger: c.Logger}
	probe := rc
	probe.VirtualHost = "/"
	if _, err := rabbitmq.New(probe); err != nil { // refuse a bad environment at New
		return nil, fmt.Errorf("feedkit: Config.Environment (%s): %w", c.Environment.Name, err)
	}
	return &envTransport{cfg: rc}, nil
}

// setVirtualHost records the account's virtual host.
func (e *envTransport) setVirtualHost(vhost string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.vhost = vhost
}

// config returns the transport's config with the virtual host, once known.
func (e *envTransport) config() (rabbitmq.Config, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	c := e.cfg
	c.VirtualHost = e.vhost
	return c, e.vhost != ""
}

// Subscribe makes the transport, the first time, and subscribes with it.
func (e *envTransport) Subscribe(ctx context.Context, bindings []string, r feed.Receiver) (feed.Subscription, error) {
	e.mu.Lock()
	if e.t == nil {
		if e.vhost == "" {
			e.mu.Unlock()
			return nil, errors.New("feedkit: the broker's virtual host is not known yet: the account's details (whoami) are read at Open")
		}
		c := e.cfg
		c.VirtualHost = e.vhost
		t, err := rabbitmq.New(c)
		if err != nil {
			e.mu.Unlock()
			return nil, fmt.Errorf("feedkit: the environment's broker: %w", err)
		}
		e.t = t
	}
	t := e.t
	e.mu.Unlock()
	return t.Subscribe(ctx, bindings, r)
}

// stats returns the transport's counters, zero before the first Subscribe.
func (e *envTransport) stats() rabbitmq.Stats {
	e.mu.Lock()
	t := e.t
	e.mu.Unlock()
	if t == nil {
		return rabbitmq.Stats{}
	}
	return t.Stats()
}
