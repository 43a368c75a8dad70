package feed

import (
	"context"
	"errors"
	"log/slog"
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
