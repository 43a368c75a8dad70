package concurrent

import (
	"fmt"
	"log/slog"
)

// Defaults of Config.
const (
	DefaultThreads      = 10
	DefaultQueueSize    = 10_000
	DefaultTimingSample = 64
)

// maxThreads is a sanity bound: more workers than this is a configuration mistake (a
// misplaced digit), not a plan.
const maxThreads = 1 << 14

// Config configures a Pool, or a Dispatcher with a pool of its own. The zero value
// of each field means its default.
type Config struct {
	// Threads is the number of workers, for all the pool's listeners; 0 means
	// DefaultThreads.
	Threads int
	// QueueSize bounds the tasks waiting for a worker, over all matches and listeners; 0
	// means DefaultQueueSize. At the bound, the dispatching side blocks until a worker takes a
	// task: no task is ever dropped. A match whose listener calls stall keeps its own
	// tasks waiting, so if it stalls long enough to fill the queue, every match waits.
	QueueSize int
	// HandleErrorsAsynchronously says where a message that cannot be routed (a malformed
	// routing key, an oversized body) reaches OnUnparsableMessage: on a worker, in order
	// with the other messages of its match (true, the default when nil), or at once on the
	// goroutine that dispatches it, the transport's reading goroutine in a session (false).
	// A body that fails to decode is found on a worker either way. It is a pointer so that
	// the zero Config keeps the safe default; new(false) turns it off.
	HandleErrorsAsynchronously *bool
	// OnError receives every delivery error: unparsable messages (after the listener's
	// OnUnparsableMessage) and *feed.ListenerError for listener calls that failed or
	// panicked. It is called from the workers, concurrently.
	OnError func(error)
	// Logger logs the same errors; nil is silent.
	Logger *slog.Logger
	// Name labels the pool in what Observer is told ("" is allowed).
	Name string
	// Observer is told of every listener call, for metrics; nil tells no one.
	Observer Observer
	// TimingSample is how many calls go between two whose queue wait and duration are
	// measured for Observer (Call.Timed): the first call, then one in TimingSample, over
	// all the pool's listeners; 0 means DefaultTimingSample, 1 times every call. A timed
	// call reads the clock three times, about 100 ns: a fifth to a third of the pool's
	// own work per call.
	TimingSample int
}

// timingSample checks a TimingSample (field names it in the error) and applies its
// default; it returns 0, no timing, when there is no observer to tell.
func timingSample(field string, n int, obs Observer) (int, error) {
	switch {
	case n < 0:
		return 0, fmt.Errorf("concurrent: %s %d must not be negative (0 means %d, 1 times every call)",
			field, n, DefaultTimingSample)
	case obs == nil:
		return 0, nil
	case n == 0:
		return DefaultTimingSample, nil
	}
	return n, nil
}

// settings is a Config with its defaults applied.
type settings struct {
	threads, queueSize int
	asyncErrors        bool
	onError            func(error)
	logger             *slog.Logger
	name               string
	observer           Observer
	sample             int // Config.TimingSample; 0 when there is no observer
}

func (c Config) resolve() (settings, error) {
	s := settings{threads: c.Threads, queueSize: c.QueueSize, asyncErrors: true,
		onError: c.OnError, logger: c.Logger, name: c.Name, observer: c.Observer}
	var err error
	if s.sample, err = timingSample("Config.TimingSample", c.TimingSample, c.Observer); err != nil {
		return s, err
	}
	switch {
	case c.Threads < 0 || c.Threads > maxThreads:
		return s, fmt.Errorf("concurrent: Config.Threads %d must be between 1 and %d (0 means %d)",
			c.Threads, maxThreads, DefaultThreads)
	case c.QueueSize < 0:
		return s, fmt.Errorf("concurrent: Config.QueueSize %d must not be negative (0 means %d)",
			c.QueueSize, DefaultQueueSize)
	}
	if s.threads == 0 {
		s.threads = DefaultThreads
	}
	if s.queueSize == 0 {
		s.queueSize = DefaultQueueSize
	}
	if c.HandleErrorsAsynchronously != nil {
		s.asyncErrors = *c.HandleErrorsAsynchronously
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	return s, nil
}
