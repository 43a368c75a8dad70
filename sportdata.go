package feedkit

import (
	"context"
	"fmt"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/sportdata"
)

// newSportData gives the SDK its sport data provider, read through the feed's API
// client; nil without one.
func (s *SDK) newSportData() error {
	if s.api == nil {
		return nil
	}
	cfg := s.cfg.SportData
	cfg.Clock = s.cfg.Clock
	cfg.Observer = s.cfg.Observer
	p, err := sportdata.New(s.api, cfg)
	if err != nil {
		return fmt.Errorf("feedkit: Config.SportData: %w", err)
	}
	s.sport = p
	return nil
}

// SportData returns the events, fixtures, competitors, players and schedules of the
// Sports API, cached and merged across languages; nil when the SDK has no API. Every
// session tells it of each fixture_change as it arrives, before the listener is called,
// so that a listener reading the fixture in OnFixtureChange reads the changed one.
func (s *SDK) SportData() *sportdata.Provider { return s.sport }

// followFixtures tells the sport data provider of each fixture_change a session
// receives, from its routing key: before the dispatcher queues it, whatever decodes it.
type followFixtures struct {
	feed.Dispatcher
	sport *sportdata.Provider
}

func (f followFixtures) Dispatch(ctx context.Context, ev feed.Event) error {
	if ev.Err == nil && ev.Key.Type == feed.MessageFixtureChange && !ev.Key.Event.IsZero() {
		f.sport.FixtureChanged(ev.Key.Event)
	}
	return f.Dispatcher.Dispatch(ctx, ev)
}
