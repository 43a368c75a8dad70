package changes_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/sportdata/changes"
)

func nop(context.Context, changes.Change) error { return nil }

// An Interval outside a minute to twelve hours is refused, naming the field; so are a
// language that is no code and a sport that is no sport.
func TestConfigRefusals(t *testing.T) {
	api := &listAPI{}
	for _, c := range []struct {
		cfg changes.Config
		err string
	}{
		{changes.Config{Interval: time.Minute - time.Nanosecond}, "changes: Config.Interval 59.999999999s must be from 1m0s to 12h0m0s"},
		{changes.Config{Interval: 12*time.Hour + time.Nanosecond}, "changes: Config.Interval 12h0m0.000000001s must be from 1m0s to 12h0m0s"},
		{changes.Config{Interval: -time.Hour}, "changes: Config.Interval -1h0m0s must be from"},
		{changes.Config{Language: "en/../../x"}, `changes: Config.Language "en/../../x" must be a language code`},
		{changes.Config{Sport: feed.MustParseURN("sr:match:1")}, "changes: Config.Sport sr:match:1 must be a sport, such as sr:sport:1"},
	} {
		_, err := changes.New(api, changes.ListenerFunc(nop), c.cfg)
		require.Error(t, err)
		assert.Contains(t, err.Error(), c.err)
	}
	for _, d := range []time.Duration{0, time.Minute, 12 * time.Hour} {
		_, err := changes.New(api, changes.ListenerFunc(nop), changes.Config{Interval: d})
		assert.NoError(t, err, d)
	}
	_, err := changes.New(nil, changes.ListenerFunc(nop), changes.Config{})
	assert.EqualError(t, err, "changes: New needs an API and a Listener")
	_, err = changes.New(api, nil, changes.Config{})
	assert.EqualError(t, err, "changes: New needs an API and a Listener")
}

// The zero Interval is an hour: the second poll comes an hour after the first.
func TestDefaultInterval(t *testing.T) {
	clk := clocktest.NewFake(start)
	api := &listAPI{}
	m, err := changes.New(api, changes.ListenerFunc(nop), changes.Config{Clock: clk})
	require.NoError(t, err)
	go func() { _ = m.Run(t.Context()) }()
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	require.NoError(t, m.Flush(t.Context()))
	clk.Advance(time.Hour - time.Nanosecond)
	require.NoError(t, m.Flush(t.Context()))
	assert.Len(t, api.asked(), 2, "one poll of two lists")
	clk.Advance(time.Nanosecond)
	require.NoError(t, m.Flush(t.Context()))
	assert.Len(t, api.asked(), 4)
}

// Run runs once; Close stops it, and it returns nil; a manager closed before Run does
// not run; Close may be called again; Flush and Poll say the manager is closed.
func TestRunAndClose(t *testing.T) {
	clk := clocktest.NewFake(start)
	m, err := changes.New(&listAPI{}, changes.ListenerFunc(nop), changes.Config{Clock: clk})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- m.Run(t.Context()) }()
	require.NoError(t, m.Flush(t.Context()))
	assert.EqualError(t, m.Run(t.Context()), "changes: Run called twice")
	require.NoError(t, m.Close(t.Context()))
	require.NoError(t, <-done, "stopped by Close")
	require.NoError(t, m.Close(t.Context()), "again")
	assert.ErrorIs(t, m.Flush(t.Context()), changes.ErrClosed)
	assert.ErrorIs(t, m.Poll(t.Context()), changes.ErrClosed)

	m, err = changes.New(&listAPI{}, changes.ListenerFunc(nop), changes.Config{Clock: clk})
	require.NoError(t, err)
	require.NoError(t, m.Close(t.Context()))
	assert.ErrorIs(t, m.Run(t.Context()), changes.ErrClosed)

	// Ended by its context, Run returns the context's error, and Flush says so.
	m, err = changes.New(&listAPI{}, changes.ListenerFunc(nop), changes.Config{Clock: clk})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	go func() { done <- m.Run(ctx) }()
	require.NoError(t, m.Flush(t.Context()))
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	clk.Advance(time.Hour)
	assert.EqualError(t, m.Flush(t.Context()), "changes: Run has returned")
	require.NoError(t, m.Close(t.Context()))
}

// Close ends the poll in progress: the listener's context ends, and the change it did
// not take is delivered by the next manager on the store, not lost.
func TestCloseDuringADelivery(t *testing.T) {
	r := newRig(t, feedtest.SimulatorConfig{Seed: 8})
	r.publish(300)
	store := changes.NewMemoryStore()
	calls := make(chan changes.Change, 1)
	var blocked changes.Change
	taken := 0
	l := changes.ListenerFunc(func(ctx context.Context, c changes.Change) error {
		if taken == 2 {
			blocked = c
			calls <- c
			<-ctx.Done()
			return ctx.Err()
		}
		taken++
		return nil
	})
	var reported []error
	m := r.manager(l, changes.Config{Store: store, OnError: func(err error) { reported = append(reported, err) }})
	done := make(chan error, 1)
	go func() { done <- m.Run(t.Context()) }()
	<-calls
	require.NoError(t, m.Close(t.Context()))
	require.NoError(t, <-done)
	assert.Empty(t, reported, "a call ended by Close is no failure")
	assert.Equal(t, uint64(2), m.Stats().Delivered)
	assert.Zero(t, m.Stats().ListenerErrors)

	rec := newRecorder(r.clock)
	m2 := r.manager(rec, changes.Config{Store: store})
	r.run(m2)
	got := rec.changes()
	require.NotEmpty(t, got)
	assert.Equal(t, blocked, got[0], "the change not taken comes first")
	assert.Len(t, got, len(r.published())-2)
}

// Poll polls at once, beside Run's schedule, and returns what went wrong.
func TestPoll(t *testing.T) {
	r := newRig(t, feedtest.SimulatorConfig{Seed: 9})
	rec := newRecorder(r.clock)
	m := r.manager(rec, changes.Config{})
	r.publish(300)
	require.NoError(t, m.Poll(t.Context()))
	assert.Equal(t, once(r.published()), rec.counts())
	r.publish(300)
	require.NoError(t, m.Poll(t.Context()))
	assert.Equal(t, once(r.published()), rec.counts())

	r.fault.Store(unavailable)
	err := m.Poll(t.Context())
	require.Error(t, err)
	assert.ErrorIs(t, err, feed.ErrServerError)
	assert.Contains(t, err.Error(), "changes: fixture changes: ")
	assert.Contains(t, err.Error(), "changes: result changes: ")

	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	require.ErrorIs(t, m.Poll(canceled), context.Canceled)
	assert.Equal(t, uint64(3), m.Stats().Polls, "a poll with an ended context is none")
	assert.False(t, errors.Is(err, context.Canceled))
}
