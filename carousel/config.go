package carousel

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/feedkit/feedkit/clock"
)

// Config tunes a Scheduler. Every field has a default: what a scheduler cannot work
// without, its Source and its Publisher, are NewScheduler's arguments.
type Config struct {
	// Store keeps cycle metadata across restarts; nil is a FileStore at MetadataFile.
	Store MetadataStore
	// MetadataFile is the JSON file of the default Store; "" is
	// "carousel-metadata.json" in the working directory.
	MetadataFile string
	// Toggle says whether this instance is active, and numbers its activations to fence
	// the progress it saves; nil is always active, as generation 0: for a single
	// instance, whose saves need no fence.
	Toggle Toggle
	// ToggleInterval is how often Run asks the Toggle; 0 is 5s.
	ToggleInterval time.Duration
	// CheckpointInterval is how often a running cycle's metadata is saved; 0 is 30s. It
	// is saved as well when the cycle stops, when the scheduler shuts down, and at the
	// end of every iteration.
	CheckpointInterval time.Duration
	// PageSize is how many items a cycle lists from the Source at a time; 0 is 100.
	PageSize int
	// RetryInitial and RetryMax bound the capped exponential backoff (with jitter) with
	// which an unhealthy cycle retries its Source; 0 is 1s and 5m.
	RetryInitial, RetryMax time.Duration
	// StopWhenUnhealthy makes a cycle whose Source fails stop (and stay stopped until
	// resumed), as the Financial Times' publish-carousel does, instead of retrying.
	StopWhenUnhealthy bool
	// PublishTimeout bounds one Publish call, retries included, and each metadata save;
	// 0 is 1m (carouselhttp.Publisher's default attempts fit in it).
	PublishTimeout time.Duration
	// Logger receives the scheduler's logs; nil discards them.
	Logger *slog.Logger
	// Clock is the source of time; nil is the wall clock. (a clocktest.Fake in tests).
	Clock clock.Clock
	// Observer is told what the cycles do, for metrics; nil tells no one.
	Observer Observer
}

// withDefaults validates c and fills in the defaults, naming the first bad field.
func (c Config) withDefaults() (Config, error) {
	bad := func(field string, v any, problem string) (Config, error) {
		return Config{}, fmt.Errorf("carousel: Config.%s %v %s: %w", field, v, problem, ErrInvalidConfig)
	}
	switch {
	case c.ToggleInterval < 0:
		return bad("ToggleInterval", c.ToggleInterval, "must not be negative")
	case c.CheckpointInterval < 0:
		return bad("CheckpointInterval", c.CheckpointInterval, "must not be negative")
	case c.PageSize < 0:
		return bad("PageSize", c.PageSize, "must not be negative")
	case c.RetryInitial < 0:
		return bad("RetryInitial", c.RetryInitial, "must not be negative")
	case c.RetryMax < 0:
		return bad("RetryMax", c.RetryMax, "must not be negative")
	case c.PublishTimeout < 0:
		return bad("PublishTimeout", c.PublishTimeout, "must not be negative")
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.ToggleInterval, 5*time.Second)
	def(&c.CheckpointInterval, 30*time.Second)
	def(&c.RetryInitial, time.Second)
	def(&c.RetryMax, 5*time.Minute)
	def(&c.PublishTimeout, time.Minute)
	if c.RetryMax < c.RetryInitial {
		return bad("RetryMax", c.RetryMax, fmt.Sprintf("must be at least RetryInitial (%v)", c.RetryInitial))
	}
	if c.PageSize == 0 {
		c.PageSize = 100
	}
	if c.Store == nil {
		if c.MetadataFile == "" {
			c.MetadataFile = "carousel-metadata.json"
		}
		c.Store = NewFileStore(c.MetadataFile)
	}
	if c.Toggle == nil {
		c.Toggle = ToggleFunc(func(context.Context) (bool, Generation, error) { return true, 0, nil })
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	c.Clock = clock.OrReal(c.Clock)
	return c, nil
}
