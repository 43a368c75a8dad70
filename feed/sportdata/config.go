package sportdata

import (
	"context"
	"fmt"
	"time"

	"github.com/feedkit/feedkit/clock"
)

// API reads documents of the Sports API. *feedapi.Client is one: it sends the account's
// access token and reports an answer other than 2xx as a *feed.APIError that names the
// URL. Tests give a client of the simulator's API (feedtest.Simulator.APIHandler).
type API interface {
	// Get returns the document at path (relative to the API's root, escaped, with its
	// query), refusing one larger than max bytes.
	Get(ctx context.Context, path string, max int64) ([]byte, error)
}

// Defaults of Config.
const (
	DefaultCacheSize    = 10_000
	DefaultMaxLanguages = 4
	DefaultTTL          = time.Hour
	DefaultErrorTTL     = 30 * time.Second
	DefaultLanguage     = "en"
)

// ErrorPolicy says what a read in several languages returns when some of them fail.
type ErrorPolicy int

const (
	// ReturnError returns the zero value with the error: a host gets the entity whole or
	// not at all. It is the default.
	ReturnError ErrorPolicy = iota
	// ReturnPartial returns what could be read (the languages that succeeded) with the
	// error, for a host that prefers some names to none. With no language read, the
	// value is zero as under ReturnError.
	ReturnPartial
)

// Config tunes a Provider. Its zero value is the defaults.
type Config struct {
	// Languages are read when a call names none; nil means DefaultLanguage alone.
	Languages []string
	// CacheSize bounds each cache (summaries, fixtures, competitors, players) in
	// entities; the one read least recently goes first. 0 means DefaultCacheSize.
	CacheSize int
	// MaxLanguages bounds the languages one entity holds; a read in one more starts the
	// entity again from that language. 0 means DefaultMaxLanguages.
	MaxLanguages int
	// TTL is how long a language read is used before it is read again. 0 means
	// DefaultTTL.
	TTL time.Duration
	// ErrorTTL is how long a failed read is answered again before it is retried. 0
	// means DefaultErrorTTL.
	ErrorTTL time.Duration
	// Errors says what a read in several languages returns when some fail.
	Errors ErrorPolicy
	// Clock tells the time of cache entries; nil means the system clock.
	Clock clock.Clock
	// Observer is told of every cache read and eviction; nil tells no one.
	Observer Observer
}

func (c *Config) setDefaults() error {
	if c.CacheSize < 0 {
		return fmt.Errorf("sportdata: Config.CacheSize %d must not be negative", c.CacheSize)
	}
	if c.MaxLanguages < 0 {
		return fmt.Errorf("sportdata: Config.MaxLanguages %d must not be negative", c.MaxLanguages)
	}
	if c.TTL < 0 {
		return fmt.Errorf("sportdata: Config.TTL %v must not be negative", c.TTL)
	}
	if c.ErrorTTL < 0 {
		return fmt.Errorf("sportdata: Config.ErrorTTL %v must not be negative", c.ErrorTTL)
	}
	if c.Errors != ReturnError && c.Errors != ReturnPartial {
		return fmt.Errorf("sportdata: Config.Errors %d is no ErrorPolicy", c.Errors)
	}
	for i, l := range c.Languages {
		if !validLang(l) {
			return fmt.Errorf("sportdata: Config.Languages[%d] %q is no language code", i, l)
		}
	}
	if c.CacheSize == 0 {
		c.CacheSize = DefaultCacheSize
	}
	if c.MaxLanguages == 0 {
		c.MaxLanguages = DefaultMaxLanguages
	}
	if len(c.Languages) > c.MaxLanguages {
		return fmt.Errorf("sportdata: Config.Languages has %d languages, more than Config.MaxLanguages %d", len(c.Languages), c.MaxLanguages)
	}
	if c.TTL == 0 {
		c.TTL = DefaultTTL
	}
	if c.ErrorTTL == 0 {
		c.ErrorTTL = DefaultErrorTTL
	}
	if len(c.Languages) == 0 {
		c.Languages = []string{DefaultLanguage}
	}
	c.Clock = clock.OrReal(c.Clock)
	return nil
}

// validLang accepts the API's language codes: "en", "de", "zht", "sr-Latn", ...: letters,
// digits and dashes, which need no escaping in a path.
func validLang(l string) bool {
	if l == "" || len(l) > 16 {
		return false
	}
	for _, c := range []byte(l) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}
