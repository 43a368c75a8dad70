package markets

import (
	"context"
	"fmt"
	"time"

	"github.com/feedkit/feedkit/clock"
)

// API reads documents of the Sports API. *feedapi.Client is one: it sends the
// account's access token and reports an answer other than 2xx as a *feed.APIError that
// names the URL (never the token). Tests give a client of the simulator's API
// (feedtest.Simulator.APIHandler).
type API interface {
	// Get returns the document at path (relative to the API's root, escaped, with its
	// query), refusing one larger than max bytes.
	Get(ctx context.Context, path string, max int64) ([]byte, error)
}

// Defaults of Config.
const (
	DefaultCacheSize       = 10_000
	DefaultMaxLanguages    = 8
	DefaultRefreshInterval = 6 * time.Hour
	DefaultProfileTTL      = time.Hour
	DefaultErrorTTL        = 30 * time.Second
	DefaultRefetchInterval = time.Minute
)

// Config tunes a Names. Its zero value is the defaults.
type Config struct {
	// CacheSize bounds each cache of per-key documents: single-variant market
	// descriptions, event summaries and profiles; the least recently read entry goes
	// first. 0 means DefaultCacheSize.
	CacheSize int
	// MaxLanguages bounds the languages whose market descriptions and variant lists are
	// held (each language's whole list, about a thousand markets, is one entry); the
	// language read least recently goes first. 0 means DefaultMaxLanguages.
	MaxLanguages int
	// RefreshInterval is how long descriptions and variant lists are used before they are
	// read again: on the first read after it, and if that fails the old ones go on
	// being used. 0 means DefaultRefreshInterval.
	RefreshInterval time.Duration
	// ProfileTTL is how long event summaries and player and competitor profiles are
	// kept. 0 means DefaultProfileTTL.
	ProfileTTL time.Duration
	// ErrorTTL is how long a failed request is answered again before it is retried, so
	// that names asked for many times while the API fails cost one request, not many.
	// 0 means DefaultErrorTTL.
	ErrorTTL time.Duration
	// RefetchInterval is the least time between two requests for one market's
	// descriptions made because a name was missing from them (a market or outcome the
	// feed sends before the cached descriptions know it). 0 means DefaultRefetchInterval.
	RefetchInterval time.Duration
	// Clock tells the time of cache entries; nil means the system clock.
	Clock clock.Clock
	// Observer is told of every cache read and eviction, for metrics; nil tells no one.
	Observer Observer
}

func (c *Config) setDefaults() error {
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{{"CacheSize", &c.CacheSize, DefaultCacheSize}, {"MaxLanguages", &c.MaxLanguages, DefaultMaxLanguages}} {
		if *f.v < 0 {
			return fmt.Errorf("markets: Config.%s %d must not be negative", f.name, *f.v)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	for _, f := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"RefreshInterval", &c.RefreshInterval, DefaultRefreshInterval},
		{"ProfileTTL", &c.ProfileTTL, DefaultProfileTTL},
		{"ErrorTTL", &c.ErrorTTL, DefaultErrorTTL},
		{"RefetchInterval", &c.RefetchInterval, DefaultRefetchInterval},
	} {
		if *f.v < 0 {
			return fmt.Errorf("markets: Config.%s %v must not be negative", f.name, *f.v)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	c.Clock = clock.OrReal(c.Clock)
	return nil
}
