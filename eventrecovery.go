package feedkit

import (
	"context"
	"fmt"

	"github.com/feedkit/feedkit/feed"
)

// RecoverEvent asks the feed to resend the current odds of one event of a producer and
// returns the request's id. The replayed messages reach the sessions' listeners like any
// other, with the id in their header's RequestID; Config.Global hears
// OnRecoveryInitiated (with the event), then OnEventRecoveryCompleted once every replayed
// message has been processed, by the concurrent listener or serially. The request counts
// against the account's recovery limits (see recovery.Manager.RecoverEvent, which says
// how, and the errors it returns); it needs the feed's API (Config.API or an
// Environment) and an open SDK.
func (s *SDK) RecoverEvent(ctx context.Context, producer int, event feed.URN) (int64, error) {
	id, err := s.manager.RecoverEvent(ctx, producer, event)
	if err != nil {
		return 0, fmt.Errorf("feedkit: %w", err)
	}
	return id, nil
}

// RecoverEventStateful is RecoverEvent for the event's stateful messages: its bet
// settlements, cancellations and their rollbacks.
func (s *SDK) RecoverEventStateful(ctx context.Context, producer int, event feed.URN) (int64, error) {
	id, err := s.manager.RecoverEventStateful(ctx, producer, event)
	if err != nil {
		return 0, fmt.Errorf("feedkit: %w", err)
	}
	return id, nil
}
