package concurrent

import (
	"context"

	"github.com/feedkit/feedkit/feed"
)

// The feed.OddsFeedListener methods queue a decoded message as a task of its event. Each
// returns once the message is queued: nil, ctx.Err() while waiting for room, or
// feed.ErrDispatcherClosed after Close. What the customer's listener returns for it is
// reported later, through Config.OnError.

// OnOddsChange queues m for the customer's OnOddsChange.
func (c *Dispatcher) OnOddsChange(ctx context.Context, m *feed.OddsChange) error {
	return c.submitMessage(ctx, m)
}

// OnBetStop queues m for the customer's OnBetStop.
func (c *Dispatcher) OnBetStop(ctx context.Context, m *feed.BetStop) error {
	return c.submitMessage(ctx, m)
}

// OnBetSettlement queues m for the customer's OnBetSettlement.
func (c *Dispatcher) OnBetSettlement(ctx context.Context, m *feed.BetSettlement) error {
	return c.submitMessage(ctx, m)
}

// OnRollbackBetSettlement queues m for the customer's OnRollbackBetSettlement.
func (c *Dispatcher) OnRollbackBetSettlement(ctx context.Context, m *feed.RollbackBetSettlement) error {
	return c.submitMessage(ctx, m)
}

// OnBetCancel queues m for the customer's OnBetCancel.
func (c *Dispatcher) OnBetCancel(ctx context.Context, m *feed.BetCancel) error {
	return c.submitMessage(ctx, m)
}

// OnRollbackBetCancel queues m for the customer's OnRollbackBetCancel.
func (c *Dispatcher) OnRollbackBetCancel(ctx context.Context, m *feed.RollbackBetCancel) error {
	return c.submitMessage(ctx, m)
}

// OnFixtureChange queues m for the customer's OnFixtureChange.
func (c *Dispatcher) OnFixtureChange(ctx context.Context, m *feed.FixtureChange) error {
	return c.submitMessage(ctx, m)
}

// OnCashout queues m for the customer's OnCashout, if its listener is a
// feed.CashoutListener; for one that is not, the task does nothing.
func (c *Dispatcher) OnCashout(ctx context.Context, m *feed.Cashout) error {
	return c.submitMessage(ctx, m)
}

// OnUnparsableMessage passes m on to the customer's OnUnparsableMessage, on a worker in
// order with m's event or at once, as Config.HandleErrorsAsynchronously says.
func (c *Dispatcher) OnUnparsableMessage(ctx context.Context, m *feed.UnparsableMessage) error {
	ev := feed.Event{RawKey: m.RoutingKey, Body: m.Body, ReceivedAt: m.ReceivedAt, Err: m.Err}
	ev.Key.Event = m.Event
	if ev.Err == nil {
		ev.Err = feed.ErrMalformedMessage // an unparsable message always says why; keep it routed as one
	}
	return c.Dispatch(ctx, ev)
}
