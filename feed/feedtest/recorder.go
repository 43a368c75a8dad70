package feedtest

import (
	"context"
	"fmt"
	"sync"

	"github.com/feedkit/feedkit/feed"
)

// Recorder is a feed.OddsFeedListener that records every message it receives, for
// tests: Wait blocks until a number of messages has arrived. It is safe for concurrent
// use.
type Recorder struct {
	// Hook, when set before the recorder is used, is called with each message before it
	// is recorded; it may block (to hold a listener up), fail or panic. A failing or
	// panicking hook leaves the message unrecorded.
	Hook func(m feed.Message) error

	mu         sync.Mutex
	changed    chan struct{} // closed and replaced at every record
	messages   []feed.Message
	unparsable []*feed.UnparsableMessage
}

var _ feed.OddsFeedListener = (*Recorder)(nil)

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder { return &Recorder{changed: make(chan struct{})} }

func (r *Recorder) record(m feed.Message, u *feed.UnparsableMessage) error {
	if m != nil && r.Hook != nil {
		if err := r.Hook(m); err != nil {
			return err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if m != nil {
		r.messages = append(r.messages, m)
	} else {
		r.unparsable = append(r.unparsable, u)
	}
	close(r.changed)
	r.changed = make(chan struct{})
	return nil
}

// Len returns how many messages have arrived, unparsable ones included.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.messages) + len(r.unparsable)
}

// Wait blocks until at least n messages (unparsable ones included) have arrived, or
// returns an error saying how many did when ctx ends first.
func (r *Recorder) Wait(ctx context.Context, n int) error {
	for {
		r.mu.Lock()
		got, changed := len(r.messages)+len(r.unparsable), r.changed
		r.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("feedtest: received %d messages, want %d: %w", got, n, ctx.Err())
		}
	}
}

// Messages returns the decoded messages received, in arrival order.
func (r *Recorder) Messages() []feed.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]feed.Message(nil), r.messages...)
}

// ByEvent returns the decoded messages received, grouped by event in arrival order.
func (r *Recorder) ByEvent() map[feed.URN][]feed.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	by := make(map[feed.URN][]feed.Message)
	for _, m := range r.messages {
		ev := m.MessageHeader().Event
		by[ev] = append(by[ev], m)
	}
	return by
}

// Unparsable returns the messages reported to OnUnparsableMessage, in arrival order.
func (r *Recorder) Unparsable() []*feed.UnparsableMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*feed.UnparsableMessage(nil), r.unparsable...)
}

// OnOddsChange records m.
func (r *Recorder) OnOddsChange(_ context.Context, m *feed.OddsChange) error { return r.record(m, nil) }

// OnBetStop records m.
func (r *Recorder) OnBetStop(_ context.Context, m *feed.BetStop) error { return r.record(m, nil) }

// OnBetSettlement records m.
func (r *Recorder) OnBetSettlement(_ context.Context, m *feed.BetSettlement) error {
	return r.record(m, nil)
}

// OnRollbackBetSettlement records m.
func (r *Recorder) OnRollbackBetSettlement(_ context.Context, m *feed.RollbackBetSettlement) error {
	return r.record(m, nil)
}

// OnBetCancel records m.
func (r *Recorder) OnBetCancel(_ context.Context, m *feed.BetCancel) error { return r.record(m, nil) }

// OnRollbackBetCancel records m.
func (r *Recorder) OnRollbackBetCancel(_ context.Context, m *feed.RollbackBetCancel) error {
	return r.record(m, nil)
}

// OnFixtureChange records m.
func (r *Recorder) OnFixtureChange(_ context.Context, m *feed.FixtureChange) error {
	return r.record(m, nil)
}

// OnCashout records m: a Recorder is a feed.CashoutListener.
func (r *Recorder) OnCashout(_ context.Context, m *feed.Cashout) error { return r.record(m, nil) }

// OnUnparsableMessage records m.
func (r *Recorder) OnUnparsableMessage(_ context.Context, m *feed.UnparsableMessage) error {
	return r.record(nil, m)
}
