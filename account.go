package feedkit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/feed"
)

// DefaultTokenExpiryWarning is Config.TokenExpiryWarning's default: a week's notice to
// renew the access token.
const DefaultTokenExpiryWarning = 7 * 24 * time.Hour

// ErrTokenExpiring matches, with errors.Is, the warning Open reports to Config.OnError
// when the access token expires within Config.TokenExpiryWarning.
var ErrTokenExpiring = errors.New("feedkit: the access token expires soon")

// tokenField names the config field the access token came from, for errors.
func (s *SDK) tokenField() string {
	if s.cfg.Environment != nil {
		return "Config.AccessToken"
	}
	return "Config.RecoveryAPI.AccessToken"
}

// refused reports whether err is the API refusing the access token.
func refused(err error) bool {
	return errors.Is(err, feed.ErrUnauthorized) || errors.Is(err, feed.ErrForbidden)
}

// checkAccount reads the account's details from the API (whoami) at Open and logs them:
// a refused token fails Open, a token about to expire is warned of, and the environment's
// broker gets its virtual host. Without an environment's broker a failure to read them
// is only reported; with one it fails Open, since the virtual host is unknown.
func (s *SDK) checkAccount(ctx context.Context) error {
	d, err := s.api.WhoAmI(ctx)
	env, _ := s.transport.(*envTransport)
	switch {
	case refused(err):
		return fmt.Errorf("the feed's API refused the access token (%s): %w", s.tokenField(), err)
	case err != nil && (env != nil || ctx.Err() != nil):
		return fmt.Errorf("reading the account's details (whoami), which give the broker's virtual host: %w", err)
	case err != nil:
		s.warn(ctx, fmt.Errorf("feedkit: the account's details could not be read from the feed's API (whoami): %w", err))
		return nil
	}
	attrs := []slog.Attr{slog.Int("bookmaker_id", d.BookmakerID), slog.String("virtual_host", d.VirtualHost),
		slog.Time("token_expires_at", d.ExpireAt)}
	if s.cfg.Environment != nil {
		attrs = append(attrs, slog.String("environment", s.cfg.Environment.Name))
	}
	s.logger.LogAttrs(ctx, slog.LevelInfo, "feedkit: bookmaker details", attrs...)
	if env != nil {
		env.setVirtualHost(d.VirtualHost)
	}
	margin := s.cfg.TokenExpiryWarning
	if margin == 0 {
		margin = DefaultTokenExpiryWarning
	}
	now := clock.OrReal(s.cfg.Recovery.Clock).Now()
	if margin > 0 && !d.ExpireAt.IsZero() && d.ExpireAt.Sub(now) <= margin {
		s.warn(ctx, fmt.Errorf("%w: it expires at %s, in %v (Config.TokenExpiryWarning %v); renew it",
			ErrTokenExpiring, d.ExpireAt.UTC().Format(time.RFC3339), d.ExpireAt.Sub(now).Round(time.Second), margin))
	}
	return nil
}

// warn logs err at warning level and reports it to Config.OnError.
func (s *SDK) warn(ctx context.Context, err error) {
	s.logger.LogAttrs(ctx, slog.LevelWarn, err.Error())
	if s.cfg.OnError != nil {
		s.cfg.OnError(err)
	}
}
