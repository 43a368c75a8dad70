package concurrent

import (
	"context"
	"errors"
	"log/slog"

	"github.com/feedkit/feedkit/feed"
)

// reporter sends delivery errors to the host: to Config.OnError and to Config.Logger.
type reporter struct {
	onError func(error)
	log     *slog.Logger
}

func (r reporter) report(ctx context.Context, err error) {
	var le *feed.ListenerError
	switch {
	case errors.As(err, &le) && le.Panic != nil:
		r.log.LogAttrs(ctx, slog.LevelError, "concurrent: listener panicked",
			slog.String("method", le.Method), slog.String("event", le.Event.String()),
			slog.Any("panic", le.Panic), slog.String("stack", string(le.Stack)))
	case errors.As(err, &le):
		r.log.LogAttrs(ctx, slog.LevelError, "concurrent: listener failed",
			slog.String("method", le.Method), slog.String("event", le.Event.String()), slog.Any("err", le.Err))
	default:
		r.log.LogAttrs(ctx, slog.LevelWarn, "concurrent: unparsable message", slog.Any("err", err))
	}
	if r.onError != nil {
		r.callOnError(ctx, err)
	}
}

// callOnError keeps a panicking error callback from taking a worker down.
func (r reporter) callOnError(ctx context.Context, err error) {
	defer func() {
		if p := recover(); p != nil {
			r.log.LogAttrs(ctx, slog.LevelError, "concurrent: OnError panicked", slog.Any("panic", p), slog.Any("err", err))
		}
	}()
	r.onError(err)
}
