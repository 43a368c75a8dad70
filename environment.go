package feedkit

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/feedkit/feedkit/feed/rabbitmq"
)

// Environment is where the feed is: the broker the sessions consume from and the API the
// SDK reads the account, its producers and its recoveries from. Set Config.Environment
// and Config.AccessToken and the SDK needs nothing else to connect.
type Environment struct {
	// Name names the environment in logs and errors.
	Name string
	// AMQPURL is the broker: amqps://host:port/ (amqp:// without TLS). Without
	// credentials in it, the SDK logs in with the access token, as the feed's brokers
	// expect, and the virtual host is the account's, which the API tells, unless the URL
	// names one. With credentials (amqp://user:password@host/vhost, a RabbitMQ of your
	// own or a relay), the broker is not the feed's: the SDK logs in with them and uses
	// the URL's virtual host ("/" when it names none), while the API still takes the
	// token.
	AMQPURL string
	// APIBaseURL is the root of the feed's API, such as https://api.betradar.com.
	APIBaseURL string
}

// Sportradar's environments, as its SDKs know them. Replay, the replay server's broker,
// is paired with the integration API, as in Sportradar's SDKs.
var (
	Integration = Environment{Name: "integration", AMQPURL: "amqps://stgmq.betradar.com:5671/",
		APIBaseURL: "https://stgapi.betradar.com"}
	Production = Environment{Name: "production", AMQPURL: "amqps://mq.betradar.com:5671/",
		APIBaseURL: "https://api.betradar.com"}
	Replay = Environment{Name: "replay", AMQPURL: "amqps://replaymq.betradar.com:5671/",
		APIBaseURL: "https://stgapi.betradar.com"}
)

// CustomEnvironment is an environment of your own, named "custom": a broker and an API
// that speak the feed's protocols, such as a relay's or the simulator's. amqpURL is read
// as Environment.AMQPURL says; with the simulator on an embedded broker, give
// Config.Transport too and amqpURL may be "".
func CustomEnvironment(amqpURL, apiBaseURL string) Environment {
	return Environment{Name: "custom", AMQPURL: amqpURL, APIBaseURL: apiBaseURL}
}

// applyEnvironment fills in the API and, unless Transport is given, the broker's config
// from Config.Environment, refusing a config that sets them twice. The virtual host of
// the feed's own broker comes from the API client, which New builds next
// (vhostFromAPI).
func (c *Config) applyEnvironment() error {
	if c.Environment == nil {
		if c.AccessToken != "" {
			return errors.New("feedkit: Config.AccessToken is set without Config.Environment: set the environment, or the token in Config.API and Config.AMQP")
		}
		return nil
	}
	e := *c.Environment
	switch {
	case c.AccessToken == "":
		return fmt.Errorf("feedkit: Config.AccessToken is empty: the %s environment needs the account's token", e.Name)
	case c.API.BaseURL != "":
		return errors.New("feedkit: Config.API.BaseURL and Config.Environment are both set: the environment gives the API")
	case c.API.AccessToken != "":
		return errors.New("feedkit: Config.API.AccessToken and Config.Environment are both set: Config.AccessToken is the token")
	case e.APIBaseURL == "":
		return fmt.Errorf("feedkit: Config.Environment (%s): APIBaseURL is empty", e.Name)
	case c.Transport != nil && c.AMQP != nil:
		return errors.New("feedkit: Config.Transport and Config.AMQP are both set: Transport replaces the environment's broker, which AMQP would tune")
	}
	c.API.BaseURL, c.API.AccessToken = e.APIBaseURL, c.AccessToken
	if c.Transport != nil {
		return nil
	}
	ac, err := e.broker(c.AMQP, c.AccessToken)
	if err != nil {
		return fmt.Errorf("feedkit: Config.Environment (%s): %w", e.Name, err)
	}
	c.AMQP = ac
	return nil
}

// broker returns the RabbitMQ config of the environment's broker: tune's tunables with
// the environment's URL and login. Its VirtualHostSource is left for New to set when
// vhostFromAPI says so.
func (e Environment) broker(tune *rabbitmq.Config, token string) (*rabbitmq.Config, error) {
	var ac rabbitmq.Config
	if tune != nil {
		ac = *tune
		switch {
		case ac.URL != "":
			return nil, errors.New("Config.AMQP.URL is set: the environment gives the broker's URL")
		case ac.AccessToken != "":
			return nil, errors.New("Config.AMQP.AccessToken is set: Config.AccessToken is the token")
		case ac.VirtualHost != "" || ac.VirtualHostSource != nil:
			return nil, errors.New("Config.AMQP's virtual host is set: the environment gives it (in AMQPURL, or from the API)")
		}
	}
	if e.AMQPURL == "" {
		return nil, errors.New("AMQPURL is empty and Config.Transport is nil")
	}
	u, err := url.Parse(e.AMQPURL)
	if err != nil || (u.Scheme != "amqp" && u.Scheme != "amqps") || u.Host == "" {
		return nil, fmt.Errorf("AMQPURL %q is not an amqp:// or amqps:// URL", redact(e.AMQPURL))
	}
	ac.URL = e.AMQPURL
	if u.User == nil {
		ac.AccessToken = token
	}
	return &ac, nil
}

// vhostFromAPI reports whether the environment's broker is the feed's own, whose virtual
// host the API tells: no credentials and no virtual host in its URL.
func (e Environment) vhostFromAPI() bool {
	u, err := url.Parse(e.AMQPURL)
	return err == nil && u.User == nil && (u.Path == "" || u.Path == "/")
}

// redact hides the password of a URL for an error.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
