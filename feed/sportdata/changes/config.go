package changes

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/feed"
)

// API reads documents of the Sports API. *feedapi.Client is one: it sends the account's
// access token and reports an answer other than 2xx as a *feed.APIError that names the
// URL (never the token). Tests give a client of the simulator's API
// (feedtest.Simulator.APIHandler).
type API interface {
	// Get returns the document at path (relative to the API's root, escaped, with its
	// query), refusing one larger than max bytes.
	Get(ctx context.Context, path string, max int64) ([]byte, error)
}

// Defaults and bounds of Config.
const (
	DefaultInterval = time.Hour
	// MinInterval and MaxInterval bound Config.Interval, as Sportradar's SDKs bound
	// theirs: the lists change slowly enough that polling more often than a minute only
	// costs requests, and they reach back a day, so that twelve hours leaves a missed
	// poll room to be made up.
	MinInterval     = time.Minute
	MaxInterval     = 12 * time.Hour
	DefaultLanguage = "en"
)

// Config tunes a Manager. Its zero value is the defaults.
type Config struct {
	// Interval is the time between two polls of the lists, from MinInterval to
	// MaxInterval; 0 means DefaultInterval. A poll that fails is tried again at the next.
	Interval time.Duration
	// Language is the {lang} of the lists' paths; "" means DefaultLanguage. The lists
	// name events by id, so the language changes nothing but the request.
	Language string
	// Sport, when set (sr:sport:1), asks only for the changes of events of that sport
	// (the API's sportId); the zero URN asks for every sport.
	Sport feed.URN
	// Store keeps how far each list has been delivered, so that a restarted manager
	// neither misses a change nor delivers one twice; nil means a new MemoryStore, which
	// a restarted process does not have.
	Store Store
	// Clock times the polls; nil means the wall clock.
	Clock clock.Clock
	// OnError receives every error the manager meets and goes on from: a failed request
	// or an unreadable list, a listener's failure, a store's. nil ignores them; Stats
	// counts them either way.
	OnError func(error)
	// Logger logs each poll's outcome; nil is silent.
	Logger *slog.Logger
}

// resolve checks c and returns it with its defaults filled in.
func (c Config) resolve() (Config, error) {
	switch {
	case c.Interval == 0:
		c.Interval = DefaultInterval
	case c.Interval < MinInterval || c.Interval > MaxInterval:
		return Config{}, fmt.Errorf("changes: Config.Interval %v must be from %v to %v", c.Interval, MinInterval, MaxInterval)
	}
	if c.Language == "" {
		c.Language = DefaultLanguage
	}
	for _, r := range c.Language {
		if (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && r != '-' && r != '_' {
			return Config{}, fmt.Errorf("changes: Config.Language %q must be a language code such as \"en\" or \"pt-BR\"", c.Language)
		}
	}
	if !c.Sport.IsZero() && c.Sport.Type != "sport" {
		return Config{}, fmt.Errorf("changes: Config.Sport %s must be a sport, such as sr:sport:1", c.Sport)
	}
	if c.Store == nil {
		c.Store = NewMemoryStore()
	}
	c.Clock = clock.OrReal(c.Clock)
	if c.OnError == nil {
		c.OnError = func(error) {}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, nil
}
