package feedkit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
)

// DefaultTokenExpiryWarning is Config.TokenExpiryWarning's default: a week's notice to
// renew the access token.
const DefaultTokenExpiryWarning = 7 * 24 * time.Hour

// ErrTokenExpiring matches, with errors.Is, the warning Open reports to Config.OnError
// when the access token expires within Config.TokenExpiryWarning.
var ErrTokenExpiring = errors.New("feedkit: the access token expires soon")

// BookmakerDetails returns what the feed's API said of the account at Open (whoami): the
// bookmaker id, the broker's virtual host, when the access token expires, and how far the
// API server's clock is from this machine's. It reports false before Open, without the
// API, or when Open could not read them (which it reported to Config.OnError).
func (s *SDK) BookmakerDetails() (feedapi.BookmakerDetails, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.details == nil {
		return feedapi.BookmakerDetails{}, false
	}
	return *s.details, true
}

// tokenField names the config field the access token came from, for errors.
func (s *SDK) tokenField() string {
	if s.cfg.Environment != nil {
		return "Config.AccessToken"
	}
	return "Config.API.AccessToken"
}

// checkAccount reads the account's details from the API (whoami) at Open and logs them:
// a refused token fails Open, and a token about to expire or a clock far from the API's
// is warned of. Any other failure is only reported: the broker's virtual host, when it
// needs the account's, is asked of the API again when the sessions subscribe.
func (s *SDK) checkAccount(ctx context.Context) error {
	d, err := s.api.WhoAmI(ctx)
	switch {
	case errors.Is(err, feed.ErrUnauthorized) || errors.Is(err, feed.ErrForbidden):
		return fmt.Errorf("the feed's API refused the access token (%s): %w", s.tokenField(), err)
	case err != nil && ctx.Err() != nil:
		return fmt.Errorf("reading the account's details (whoami): %w", err)
	case err != nil:
		s.warn(ctx, fmt.Errorf("feedkit: the account's details could not be read from the feed's API (whoami): %w", err))
		return nil
	}
	s.details = &d
	attrs := []slog.Attr{slog.Int("bookmaker_id", d.BookmakerID), slog.String("virtual_host", d.VirtualHost),
		slog.Time("token_expires_at", d.ExpireAt)}
	if d.HasClockOffset {
		attrs = append(attrs, slog.Duration("clock_offset", d.ClockOffset))
	}
	if s.cfg.Environment != nil {
		attrs = append(attrs, slog.String("environment", s.cfg.Environment.Name))
	}
	s.logger.LogAttrs(ctx, slog.LevelInfo, "feedkit: bookmaker details", attrs...)
	s.warnTokenExpiry(ctx, d)
	s.warnClockOffset(ctx, d)
	return nil
}

// warnTokenExpiry warns when the token expires within Config.TokenExpiryWarning.
func (s *SDK) warnTokenExpiry(ctx context.Context, d feedapi.BookmakerDetails) {
	margin := s.cfg.TokenExpiryWarning
	if margin == 0 {
		margin = DefaultTokenExpiryWarning
	}
	now := clock.OrReal(s.cfg.Clock).Now()
	if margin > 0 && !d.ExpireAt.IsZero() && d.ExpireAt.Sub(now) <= margin {
		s.warn(ctx, fmt.Errorf("%w: it expires at %s, in %v (Config.TokenExpiryWarning %v); renew it",
			ErrTokenExpiring, d.ExpireAt.UTC().Format(time.RFC3339), d.ExpireAt.Sub(now).Round(time.Second), margin))
	}
}

// warnClockOffset warns when the API server's clock is more than Config.ClockOffsetWarning
// from this machine's.
func (s *SDK) warnClockOffset(ctx context.Context, d feedapi.BookmakerDetails) {
	limit := s.cfg.ClockOffsetWarning
	if limit == 0 {
		limit = DefaultClockOffsetWarning
	}
	if limit < 0 || !d.HasClockOffset || d.ClockOffset.Abs() <= limit {
		return
	}
	way := "ahead of"
	if d.ClockOffset < 0 {
		way = "behind"
	}
	s.warn(ctx, fmt.Errorf("%w: the API server's clock is %v %s this machine's (Config.ClockOffsetWarning %v); the processing delay and the recovery points are measured on the feed's clock: synchronise this machine's (NTP)",
		ErrClockOffset, d.ClockOffset.Abs().Round(100*time.Millisecond), way, limit))
}

// warn logs err at warning level and reports it to Config.OnError.
func (s *SDK) warn(ctx context.Context, err error) {
	s.logger.LogAttrs(ctx, slog.LevelWarn, err.Error())
	if s.cfg.OnError != nil {
		s.cfg.OnError(err)
	}
}
