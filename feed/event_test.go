package feed_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
)

func testdataBody(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

type ctxKey struct{}

// callRecorder records the last listener call: its method, message and context value.
// failWith and panicWith make every method fail or panic after recording.
type callRecorder struct {
	method   string
	msg      any
	ctxValue any
	failWith error
	panicOn  any
}

func (r *callRecorder) rec(ctx context.Context, method string, m any) error {
	r.method, r.msg, r.ctxValue = method, m, ctx.Value(ctxKey{})
	if r.panicOn != nil {
		panic(r.panicOn)
	}
	return r.failWith
}

func (r *callRecorder) OnOddsChange(ctx context.Context, m *feed.OddsChange) error {
	return r.rec(ctx, "OnOddsChange", m)
}

func (r *callRecorder) OnBetStop(ctx context.Context, m *feed.BetStop) error {
	return r.rec(ctx, "OnBetStop", m)
}

func (r *callRecorder) OnBetSettlement(ctx context.Context, m *feed.BetSettlement) error {
	return r.rec(ctx, "OnBetSettlement", m)
}

func (r *callRecorder) OnRollbackBetSettlement(ctx context.Context, m *feed.RollbackBetSettlement) error {
	return r.rec(ctx, "OnRollbackBetSettlement", m)
}

func (r *callRecorder) OnBetCancel(ctx context.Context, m *feed.BetCancel) error {
	return r.rec(ctx, "OnBetCancel", m)
}

func (r *callRecorder) OnRollbackBetCancel(ctx context.Context, m *feed.RollbackBetCancel) error {
	return r.rec(ctx, "OnRollbackBetCancel", m)
}

func (r *callRecorder) OnFixtureChange(ctx context.Context, m *feed.FixtureChange) error {
	return r.rec(ctx, "OnFixtureChange", m)
}

func (r *callRecorder) OnCashout(ctx context.Context, m *feed.Cashout) error {
	return r.rec(ctx, "OnCashout", m)
}

func (r *callRecorder) OnUnparsableMessage(ctx context.Context, m *feed.UnparsableMessage) error {
	return r.rec(ctx, "OnUnparsableMessage", m)
}

// eventMessageFixtures are the fixtures of the event message types and the listener
// method each goes to.
var eventMessageFixtures = []struct {
	file, key, method string
}{
	{"odds_change.xml", "hi.-.live.odds_change.1.sr:match.16470657.-", "OnOddsChange"},
	{"bet_stop.xml", "hi.-.live.bet_stop.1.sr:match.16470657.-", "OnBetStop"},
	{"bet_settlement.xml", "lo.pre.-.bet_settlement.1.sr:match.16470657.-", "OnBetSettlement"},
	{"rollback_bet_settlement.xml", "lo.pre.-.rollback_bet_settlement.1.sr:match.16470657.-", "OnRollbackBetSettlement"},
	{"bet_cancel.xml", "hi.-.live.bet_cancel.1.sr:match.16470657.-", "OnBetCancel"},
	{"rollback_bet_cancel.xml", "hi.-.live.rollback_bet_cancel.1.sr:match.16470657.-", "OnRollbackBetCancel"},
	{"fixture_change.xml", "lo.pre.-.fixture_change.1.sr:stage.42.-", "OnFixtureChange"},
	{"cashout.xml", "hi.-.live.cashout.1.sr:match.16470657.-", "OnCashout"},
}

func routedEvent(t *testing.T, key string, body []byte) feed.Event {
	t.Helper()
	k, err := feed.ParseRoutingKey(key)
	require.NoError(t, err)
	return feed.Event{RawKey: key, Key: k, Body: body, ReceivedAt: time.Date(2025, 11, 26, 10, 20, 0, 5, time.UTC)}
}

func TestDeliverCallsTheMethodOfEachMessageType(t *testing.T) {
	seen := map[feed.MessageType]bool{}
	for _, f := range eventMessageFixtures {
		t.Run(f.method, func(t *testing.T) {
			ev := routedEvent(t, f.key, testdataBody(t, f.file))
			want, err := feed.Decode(ev.Key.Type, ev.Body)
			require.NoError(t, err)
			want.MessageHeader().ReceivedAt = ev.ReceivedAt
			l := &callRecorder{}
			ctx := context.WithValue(t.Context(), ctxKey{}, "mine")

			require.NoError(t, feed.Deliver(ctx, l, &ev))

			assert.Equal(t, f.method, l.method)
			assert.Equal(t, want, l.msg, "the decoded message, with ReceivedAt from the event")
			require.Implements(t, (*feed.Message)(nil), l.msg)
			assert.Equal(t, ev.ReceivedAt, l.msg.(feed.Message).MessageHeader().ReceivedAt)
			assert.Equal(t, "mine", l.ctxValue, "the listener gets Deliver's context")
		})
		seen[routedEvent(t, f.key, nil).Key.Type] = true
	}
	for _, typ := range feed.MessageTypes() {
		assert.Equal(t, !typ.IsSystem(), seen[typ], "%s is covered exactly when it is an event message", typ)
	}
}

func TestEventDecodeSetsReceivedAt(t *testing.T) {
	ev := routedEvent(t, "hi.-.live.bet_stop.1.sr:match.16470657.-", testdataBody(t, "bet_stop.xml"))
	m, err := ev.Decode()
	require.NoError(t, err)
	assert.Equal(t, ev.ReceivedAt, m.MessageHeader().ReceivedAt)

	ev.Err = feed.ErrBodyTooLarge
	m, err = ev.Decode()
	assert.Nil(t, m)
	assert.Same(t, feed.ErrBodyTooLarge, err, "an event's Err is returned as it is")
}

func TestDeliverGivesAnEventWithErrToOnUnparsableMessage(t *testing.T) {
	body := testdataBody(t, "bet_stop.xml")
	ev := routedEvent(t, "hi.-.live.bet_stop.1.sr:match.16470657.-", body)
	reason := &feed.DecodeError{Type: feed.MessageBetStop, Msg: "rejected upstream"}
	ev.Err = reason
	l := &callRecorder{}

	err := feed.Deliver(t.Context(), l, &ev)

	require.Error(t, err)
	assert.ErrorIs(t, err, feed.ErrMalformedMessage)
	assert.Same(t, reason, err, "Deliver returns the reason itself")
	assert.Equal(t, "OnUnparsableMessage", l.method)
	assert.Equal(t, &feed.UnparsableMessage{
		RoutingKey: ev.RawKey,
		Body:       body,
		ReceivedAt: ev.ReceivedAt,
		Event:      feed.URN{Prefix: "sr", Type: "match", ID: 16470657},
		Err:        reason,
	}, l.msg)
}

func TestDeliverGivesAMalformedRoutingKeyToOnUnparsableMessage(t *testing.T) {
	const raw = "hi.-.live.bet_stop.one.sr:match.1.-"
	_, kerr := feed.ParseRoutingKey(raw)
	require.Error(t, kerr)
	ev := feed.Event{RawKey: raw, Body: []byte("<bet_stop/>"), ReceivedAt: time.UnixMilli(5), Err: kerr}
	l := &callRecorder{}

	err := feed.Deliver(t.Context(), l, &ev)

	assert.Same(t, kerr, err)
	var rke *feed.RoutingKeyError
	assert.ErrorAs(t, err, &rke)
	assert.ErrorIs(t, err, feed.ErrMalformedMessage, "a bad key makes the message unparsable")
	assert.Equal(t, "OnUnparsableMessage", l.method)
	assert.Equal(t, &feed.UnparsableMessage{RoutingKey: raw, Body: ev.Body, ReceivedAt: ev.ReceivedAt, Err: kerr}, l.msg,
		"no event: the key could not be parsed")
}

func TestDeliverGivesAnUndecodableBodyToOnUnparsableMessage(t *testing.T) {
	body := []byte(`<bet_stop product="1" timestamp="1"/>`) // no event_id
	ev := routedEvent(t, "hi.-.live.bet_stop.1.sr:match.7.-", body)
	l := &callRecorder{}

	err := feed.Deliver(t.Context(), l, &ev)

	require.Error(t, err)
	assert.ErrorIs(t, err, feed.ErrMalformedMessage)
	var de *feed.DecodeError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, feed.MessageBetStop, de.Type)
	var le *feed.ListenerError
	assert.False(t, errors.As(err, &le), "the listener accepted the unparsable message")

	assert.Equal(t, "OnUnparsableMessage", l.method)
	u, ok := l.msg.(*feed.UnparsableMessage)
	require.True(t, ok)
	assert.Equal(t, ev.RawKey, u.RoutingKey)
	assert.Equal(t, body, u.Body)
	assert.Equal(t, ev.ReceivedAt, u.ReceivedAt)
	assert.Equal(t, feed.URN{Prefix: "sr", Type: "match", ID: 7}, u.Event, "from the routing key")
	assert.Same(t, err, u.Err, "the listener sees the error Deliver returns")
}

func TestDeliverWhenOnUnparsableMessageFails(t *testing.T) {
	errStore := errors.New("store down")
	tests := []struct {
		name      string
		l         *callRecorder
		wantPanic bool
	}{
		{"returns an error", &callRecorder{failWith: errStore}, false},
		{"panics", &callRecorder{panicOn: "unparsable boom"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := routedEvent(t, "hi.-.live.odds_change.1.sr:match.8.-", []byte("garbage"))

			var err error
			require.NotPanics(t, func() { err = feed.Deliver(t.Context(), tt.l, &ev) })

			require.Error(t, err)
			assert.ErrorIs(t, err, feed.ErrMalformedMessage, "the decode error")
			assert.Equal(t, tt.wantPanic, errors.Is(err, feed.ErrListenerPanic))
			assert.Equal(t, !tt.wantPanic, errors.Is(err, errStore))
			var le *feed.ListenerError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, "OnUnparsableMessage", le.Method)
			assert.Equal(t, feed.URN{Prefix: "sr", Type: "match", ID: 8}, le.Event)
			if tt.wantPanic {
				assert.Equal(t, "unparsable boom", le.Panic)
			}
			var joined interface{ Unwrap() []error }
			require.ErrorAs(t, err, &joined, "errors.Join of the decode error and the listener's")
			assert.Len(t, joined.Unwrap(), 2)
		})
	}
}

func TestDeliverReportsAFailingListener(t *testing.T) {
	errRefused := errors.New("refused")
	ev := routedEvent(t, "hi.-.live.bet_stop.1.sr:match.16470657.-", testdataBody(t, "bet_stop.xml"))

	err := feed.Deliver(t.Context(), &callRecorder{failWith: errRefused}, &ev)

	var le *feed.ListenerError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "OnBetStop", le.Method)
	assert.Equal(t, feed.URN{Prefix: "sr", Type: "match", ID: 16470657}, le.Event)
	assert.Same(t, errRefused, le.Err)
	assert.Nil(t, le.Panic)
	assert.ErrorIs(t, err, errRefused)
	assert.NotErrorIs(t, err, feed.ErrListenerPanic)
	assert.NotErrorIs(t, err, feed.ErrMalformedMessage)
}

func TestDeliverRecoversAPanickingListener(t *testing.T) {
	ev := routedEvent(t, "hi.-.live.odds_change.1.sr:match.16470657.-", testdataBody(t, "odds_change.xml"))
	panicValue := errors.New("nil map write")

	var err error
	require.NotPanics(t, func() { err = feed.Deliver(t.Context(), &callRecorder{panicOn: panicValue}, &ev) })

	var le *feed.ListenerError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "OnOddsChange", le.Method)
	assert.Same(t, panicValue, le.Panic)
	assert.Nil(t, le.Err)
	assert.Contains(t, string(le.Stack), "callRecorder", "the stack of the panic")
	assert.ErrorIs(t, err, feed.ErrListenerPanic)
	assert.NotErrorIs(t, err, panicValue, "a panic value is not an error in the chain")
}

func TestCallRefusesSystemMessages(t *testing.T) {
	for _, m := range []feed.Message{
		&feed.Alive{Header: feed.Header{Producer: 1}},
		&feed.SnapshotComplete{Header: feed.Header{Producer: 1, RequestID: 3}},
	} {
		l := &callRecorder{}
		err := feed.Call(t.Context(), l, m)
		require.Error(t, err, "%s", m.Type())
		assert.Contains(t, err.Error(), m.Type().String()+" is not an event message")
		assert.Empty(t, l.method, "no listener method was called")
	}
}

func TestCallDeliversADecodedMessage(t *testing.T) {
	m := &feed.FixtureChange{Header: feed.Header{Producer: 3, Event: feed.MustParseURN("sr:stage:42")}, ChangeType: 2}
	l := &callRecorder{}

	require.NoError(t, feed.Call(t.Context(), l, m))

	assert.Equal(t, "OnFixtureChange", l.method)
	assert.Same(t, m, l.msg)
}

func TestListenerErrorMessage(t *testing.T) {
	event := feed.MustParseURN("sr:match:1234")
	tests := []struct {
		name string
		err  *feed.ListenerError
		want string
	}{
		{"error with event", &feed.ListenerError{Method: "OnBetStop", Event: event, Err: errors.New("refused")},
			"feed: OnBetStop for sr:match:1234: refused"},
		{"error without event", &feed.ListenerError{Method: "OnUnparsableMessage", Err: errors.New("refused")},
			"feed: OnUnparsableMessage: refused"},
		{"panic with event", &feed.ListenerError{Method: "OnOddsChange", Event: event, Panic: "boom"},
			"feed: OnOddsChange for sr:match:1234 panicked: boom"},
		{"panic without event", &feed.ListenerError{Method: "OnUnparsableMessage", Panic: 42},
			"feed: OnUnparsableMessage panicked: 42"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.err.Error())
		})
	}
}

func TestListenerErrorIsAndUnwrap(t *testing.T) {
	inner := errors.New("refused")
	failed := &feed.ListenerError{Method: "OnBetStop", Err: inner}
	panicked := &feed.ListenerError{Method: "OnBetStop", Panic: "boom"}

	assert.Same(t, inner, failed.Unwrap())
	assert.Nil(t, panicked.Unwrap())

	assert.ErrorIs(t, failed, inner)
	assert.NotErrorIs(t, failed, feed.ErrListenerPanic)
	assert.ErrorIs(t, panicked, feed.ErrListenerPanic)
	assert.NotErrorIs(t, panicked, inner)
	assert.False(t, panicked.Is(errors.New("feed: listener panicked")), "only the sentinel itself matches")

	wrapped := errors.Join(errors.New("other"), panicked)
	assert.ErrorIs(t, wrapped, feed.ErrListenerPanic, "found through wrapping")
	var le *feed.ListenerError
	require.ErrorAs(t, wrapped, &le)
	assert.Same(t, panicked, le)
}

// Deliver itself must cost nothing beyond the decode: the listener call, its recover and
// the dispatch on the message type add no allocation.
func TestDeliverAllocatesNoMoreThanDecode(t *testing.T) {
	ev := routedEvent(t, "hi.-.live.bet_stop.1.sr:match.16470657.-", testdataBody(t, "bet_stop.xml"))
	ctx := t.Context()
	var l feed.OddsFeedListener = feed.BaseOddsFeedListener{}

	decode := testing.AllocsPerRun(200, func() {
		if _, err := feed.Decode(feed.MessageBetStop, ev.Body); err != nil {
			panic(err)
		}
	})
	deliver := testing.AllocsPerRun(200, func() {
		if err := feed.Deliver(ctx, l, &ev); err != nil {
			panic(err)
		}
	})

	assert.Positive(t, decode, "the decode allocates the message")
	assert.Equal(t, decode, deliver, "Deliver allocates %v times, its decode %v", deliver, decode)
}
