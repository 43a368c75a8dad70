package group

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// Each kind of global event survives encodeGlobal and deliverGlobal: the recorder sees
// the call it stands for, with its argument whole.
func TestGlobalEventsRoundTrip(t *testing.T) {
	at := time.Date(2026, 1, 2, 15, 4, 5, 123456789, time.UTC)
	match := feed.URN{Prefix: "sr", Type: "match", ID: 42}
	live := feed.SessionRef{Index: 1, Interest: feed.LiveMessagesOnly}
	matches := feed.SessionRef{Index: 3, Interest: feed.SpecifiedMatchesOnly(match, feed.URN{Prefix: "sr", Type: "match", ID: 7})}
	events := []globalEvent{
		{Kind: globalProducerStatus, Status: feed.ProducerStatus{Producer: 1, Reason: feed.FirstRecoveryCompleted, Timestamp: at}},
		{Kind: globalProducerStatus, Status: feed.ProducerStatus{Producer: 3, Down: true, Delayed: true,
			Reason: feed.ProcessingQueueDelayViolation, Timestamp: at}},
		{Kind: globalProducerStatus, Status: feed.ProducerStatus{Producer: 1, Down: true, Reason: feed.ConnectionDown,
			Timestamp: at, Session: &live}},
		{Kind: globalRecoveryInitiated, Recovery: feed.RecoveryInitiated{Producer: 1, RequestID: 7, After: at}},
		{Kind: globalRecoveryInitiated, Recovery: feed.RecoveryInitiated{Producer: 3, RequestID: 9, Kind: feed.EventStatefulRecovery, Event: match}},
		{Kind: globalEventRecoveryCompleted, Completed: feed.EventRecoveryCompleted{Producer: 3, Event: match, RequestID: 9}},
		{Kind: globalConnectionDown, Session: live, Err: errors.New("broker gone")},
		{Kind: globalConnectionUp, Session: matches},
		{Kind: globalConnectionUp, Session: feed.SessionRef{}},
	}
	rec := feedtest.NewGlobalRecorder()
	for _, ev := range events {
		body, err := encodeGlobal(ev)
		require.NoError(t, err)
		require.NoError(t, deliverGlobal(context.Background(), rec, body, nil), "%s", body)
	}
	calls := rec.Calls()
	require.Len(t, calls, len(events))
	want := []string{
		"producer 1 up (FirstRecoveryCompleted)",
		"producer 3 down, delayed (ProcessingQueueDelayViolation)",
		"producer 1 down (ConnectionDown) on session 1 (live messages only)",
		"recovery #7 of producer 1 initiated from 2026-01-02T15:04:05.123456789Z",
		"event stateful recovery #9 of producer 3 initiated for sr:match:42",
		"event recovery #9 of producer 3 completed for sr:match:42",
		"connection down on session 1 (live messages only): broker gone",
		"connection up on session 3 (specified matches only (2))",
		"connection up on session 0 (all messages)",
	}
	for i, c := range calls {
		if i < len(want) {
			assert.Equal(t, want[i], c.String(), "call %d", i)
		}
	}
	for i := range 3 {
		assert.True(t, at.Equal(calls[i].Status.Timestamp), "status %d's timestamp: %v", i, calls[i].Status.Timestamp)
	}
	assert.Equal(t, feed.LiveMessagesOnly, calls[2].Status.Session.Interest)
	assert.Equal(t, events[4].Recovery, calls[4].Recovery)
	assert.Equal(t, events[5].Completed, calls[5].EventRecovery)
	assert.Equal(t, matches.Interest.Events(), calls[7].Session.Interest.Events())
	assert.Equal(t, matches.Label(), calls[7].Session.Label())
}

func TestGlobalEventsThatDoNotDecode(t *testing.T) {
	rec := feedtest.NewGlobalRecorder()
	for _, body := range []string{
		``, `{`, `[]`, `{"kind":"nope"}`, `{"kind":"producer_status"}`, `{"kind":"recovery_initiated"}`,
		`{"kind":"event_recovery_completed"}`, `{"kind":"connection_up"}`,
		`{"kind":"connection_down","session":{"index":0,"interest":"weird"}}`,
	} {
		err := deliverGlobal(context.Background(), rec, []byte(body), nil)
		assert.ErrorIs(t, err, ErrBadGlobal, "%q", body)
	}
	assert.Empty(t, rec.Calls())
	_, err := encodeGlobal(globalEvent{Kind: "nope"})
	assert.Error(t, err)
}

// The statuses sent at an interval reach the application only where they are news: a
// worker that heard every change passes none on, one that connected late passes on the
// statuses it missed, once.
func TestStatusesArePassedOnOnlyWhenNews(t *testing.T) {
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	up1 := feed.ProducerStatus{Producer: 1, Reason: feed.FirstRecoveryCompleted, Timestamp: at}
	down3 := feed.ProducerStatus{Producer: 3, Down: true, Reason: feed.AliveIntervalViolation, Timestamp: at.Add(time.Second)}
	change, err := encodeGlobal(globalEvent{Kind: globalProducerStatus, Status: up1})
	require.NoError(t, err)
	snapshot, err := encodeGlobal(globalEvent{Kind: globalStatuses, Statuses: []feed.ProducerStatus{up1, down3}})
	require.NoError(t, err)

	var early statusMemory // connected before the up
	rec := feedtest.NewGlobalRecorder()
	for _, body := range [][]byte{change, snapshot, snapshot} {
		require.NoError(t, deliverGlobal(context.Background(), rec, body, early.news))
	}
	var got []string
	for _, c := range rec.Calls() {
		got = append(got, c.String())
	}
	assert.Equal(t, []string{"producer 1 up (FirstRecoveryCompleted)", "producer 3 down (AliveIntervalViolation)"}, got,
		"the up once, the down it had not heard once")

	var late statusMemory // connected after both
	rec = feedtest.NewGlobalRecorder()
	for _, body := range [][]byte{snapshot, snapshot} {
		require.NoError(t, deliverGlobal(context.Background(), rec, body, late.news))
	}
	assert.Len(t, rec.Calls(), 2, "each status once")
}
