package feed

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
)

// reporter sends the errors of a session or dispatcher to the host: to its callback, and
// to its logger (silent when none is set).
type reporter struct {
	onError func(error)
	log     *slog.Logger
}

func newReporter(onError func(error), log *slog.Logger) reporter {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return reporter{onError: onError, log: log}
}

func (r reporter) report(ctx context.Context, err error) {
	if err == nil {
		return
	}
	var le *ListenerError
	switch {
	case errors.As(err, &le) && le.Panic != nil:
		r.log.LogAttrs(ctx, slog.LevelError, "feed: listener panicked",
			slog.String("method", le.Method), slog.String("event", le.Event.String()),
			slog.Any("panic", le.Panic), slog.String("stack", string(le.Stack)))
	case errors.As(err, &le):
		r.log.LogAttrs(ctx, slog.LevelError, "feed: listener failed",
			slog.String("method", le.Method), slog.String("event", le.Event.String()), slog.Any("err", le.Err))
	case errors.Is(err, ErrMalformedMessage) || errors.Is(err, ErrBodyTooLarge):
		r.log.LogAttrs(ctx, slog.LevelWarn, "feed: unparsable message", slog.Any("err", err))
	default:
		r.log.LogAttrs(ctx, slog.LevelError, "feed: error", slog.Any("err", err))
	}
	if r.onError != nil {
		r.callOnError(ctx, err)
	}
}

// callOnError keeps a panicking error callback from taking down the goroutine that reports.
func (r reporter) callOnError(ctx context.Context, err error) {
	defer func() {
		if p := recover(); p != nil {
			r.log.LogAttrs(ctx, slog.LevelError, "feed: OnError panicked", slog.Any("panic", p), slog.Any("err", err))
		}
	}()
	r.onError(err)
}

// DeliveryReporter reports and counts what Deliver and Call return: unparsable messages,
// and listener calls that failed or panicked. Dispatchers use it so that they all report
// alike, to an error callback (a panic in it is logged and ignored) and to a logger. It is
// safe for concurrent use.
type DeliveryReporter struct {
	rep                          reporter
	unparsable, failed, panicked atomic.Uint64
}

// DeliveryErrorCounts is what a DeliveryReporter has counted.
type DeliveryErrorCounts struct {
	Unparsable uint64 // messages given to OnUnparsableMessage
	Failed     uint64 // listener calls that returned an error
	Panicked   uint64 // listener calls that panicked
}

// NewDeliveryReporter returns a reporter that calls onError (if not nil) and logs to
// logger (if not nil) for every error it is given.
func NewDeliveryReporter(onError func(error), logger *slog.Logger) *DeliveryReporter {
	return &DeliveryReporter{rep: newReporter(onError, logger)}
}

// Report counts err and passes it on; a nil err is ignored.
func (r *DeliveryReporter) Report(ctx context.Context, err error) {
	if err == nil {
		return
	}
	if errors.Is(err, ErrMalformedMessage) || errors.Is(err, ErrBodyTooLarge) {
		r.unparsable.Add(1)
	}
	var le *ListenerError
	if errors.As(err, &le) {
		if le.Panic != nil {
			r.panicked.Add(1)
		} else {
			r.failed.Add(1)
		}
	}
	r.rep.report(ctx, err)
}

// Counts returns the counts so far.
func (r *DeliveryReporter) Counts() DeliveryErrorCounts {
	return DeliveryErrorCounts{Unparsable: r.unparsable.Load(), Failed: r.failed.Load(), Panicked: r.panicked.Load()}
}
