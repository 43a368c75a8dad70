package feedkit

import (
	"fmt"

	"github.com/feedkit/feedkit/feed/markets"
)

// newNames gives the SDK its market and outcome names, read through the feed's API
// client; nil without one.
func (s *SDK) newNames() error {
	if s.api == nil {
		return nil
	}
	cfg := s.cfg.Names
	cfg.Clock = s.cfg.Clock
	cfg.Observer = s.cfg.Observer
	n, err := markets.New(s.api, cfg)
	if err != nil {
		return fmt.Errorf("feedkit: Config.Names: %w", err)
	}
	s.names = n
	return nil
}

// Names returns the market and outcome names of the Sports API, for listeners to name
// what the feed sends by id (market 18 with total=2.5 is "Total 2.5", its outcome 12 "over
// 2.5"); nil when the SDK has no API (Config.Environment or Config.API). Names
// are read when first asked for, never while a message is decoded.
func (s *SDK) Names() *markets.Names { return s.names }
