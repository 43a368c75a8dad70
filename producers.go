package feedkit

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/feedkit/feedkit/feed"
)

// openManager checks the account (checkAccount), then opens the recovery manager on the producers of the account, as the feed's
// API describes them (producers.xml): a producer the account does not receive (inactive)
// is not followed, so it is never reported disconnected for ever. Without the API, or
// when the API fails, the manager follows Config.Recovery.Producers (feed.DefaultProducers
// when nil): the offline fallback, with a warning. A token the API refuses fails Open.
func (s *SDK) openManager(ctx context.Context) error {
	if s.api == nil {
		return s.manager.Open(ctx)
	}
	if err := s.checkAccount(ctx); err != nil {
		return err
	}
	descs, err := s.api.ProducerDescriptions(ctx)
	switch {
	case refused(err):
		return fmt.Errorf("the feed's API refused the access token (%s): %w", s.tokenField(), err)
	case err != nil && ctx.Err() != nil:
		return fmt.Errorf("reading the account's producers: %w", err)
	case err != nil:
		s.warn(ctx, fmt.Errorf("feedkit: the account's producers could not be read from the feed's API; following Config.Recovery.Producers instead: %w", err))
		return s.manager.Open(ctx)
	}
	return s.manager.OpenWithProducers(ctx, s.accountProducers(ctx, descs))
}

// accountProducers returns the active producers of descs. A producer also listed in
// Config.Recovery.Producers keeps the heartbeat limit given there, which the API does not
// describe.
func (s *SDK) accountProducers(ctx context.Context, descs []feed.ProducerDescription) []feed.Producer {
	known := s.cfg.Recovery.Producers
	if known == nil {
		known = feed.DefaultProducers()
	}
	list := make([]feed.Producer, 0, len(descs))
	var active, inactive []int
	for _, d := range descs {
		if !d.Active {
			inactive = append(inactive, d.ID)
			continue
		}
		p := d.Producer
		if k, ok := feed.LookupProducer(known, p.ID); ok {
			p.HeartbeatLimit = k.HeartbeatLimit
		}
		list = append(list, p)
		active = append(active, p.ID)
	}
	s.logger.LogAttrs(ctx, slog.LevelInfo, "feedkit: producers of the account, from the feed's API",
		slog.Any("active", active), slog.Any("inactive", inactive), slog.Any("disabled", s.cfg.Recovery.DisabledProducers))
	return list
}
