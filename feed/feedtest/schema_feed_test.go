package feedtest_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// The message types of the simulator's traffic: every one must be among the messages the
// schema test validates.
var simulatedTypes = []feed.MessageType{
	feed.MessageFixtureChange, feed.MessageOddsChange, feed.MessageBetStop, feed.MessageBetSettlement,
	feed.MessageRollbackBetSettlement, feed.MessageBetCancel, feed.MessageRollbackBetCancel,
	feed.MessageAlive, feed.MessageSnapshotComplete,
}

// Every message the simulator publishes is valid by the feed's published schema,
// UnifiedFeed.xsd: the live stream of a live, a prematch and a virtual producer until
// every type has gone out, alives subscribed and not, and the replays of a producer's and
// an event's recoveries with their snapshot_complete.
func TestSimulatorMessagesMatchThePublishedSchema(t *testing.T) {
	lint := xmllint(t)
	sim := newSimulator(t, discard{}, feedtest.SimulatorConfig{Matches: 4, Seed: 36, Rate: feedtest.Unlimited,
		Clock: clocktest.NewFake(t0), Producers: schemaTestProducers()})
	publishUntilEveryType(t, sim)
	for _, subscribed := range []bool{true, false} {
		require.NoError(t, sim.SendAlive(t.Context(), 1, subscribed))
	}
	recoverAll(t, sim)

	sent := sim.Sent()
	docs := make([]document, len(sent))
	for i, s := range sent {
		docs[i] = document{name: fmt.Sprintf("message %d (%s)", i, s.Key), schema: xsdFeed, body: s.Body}
	}
	requireMessageKinds(t, sent)
	requireValid(t, docs, validate(t, lint, docs), nil)
	t.Logf("%d feed messages validated", len(docs))
}

// publishUntilEveryType publishes until the simulator's traffic has sent every event
// message type of its scripts; the seed makes that a fixed number of messages.
func publishUntilEveryType(t *testing.T, sim *feedtest.Simulator) {
	t.Helper()
	for range 100 {
		require.NoError(t, sim.Publish(t.Context(), 500))
		seen := make(map[feed.MessageType]bool)
		for _, s := range sim.Sent() {
			seen[s.Key.Type] = true
		}
		if seen[feed.MessageRollbackBetCancel] && seen[feed.MessageRollbackBetSettlement] {
			return
		}
	}
	t.Fatal("50000 messages without a rollback of both kinds")
}

// recoverAll asks for a recovery of each kind, of the live producer and its first match,
// and waits for the replays.
func recoverAll(t *testing.T, sim *feedtest.Simulator) {
	t.Helper()
	var match feed.URN
	for _, s := range sim.Sent() {
		if s.Key.Type == feed.MessageOddsChange && s.Message.MessageHeader().Producer == 1 {
			match = s.Key.Event
			break
		}
	}
	require.False(t, match.IsZero())
	srv := httptest.NewServer(sim.RecoveryHandler())
	t.Cleanup(srv.Close)
	for i, path := range []string{
		"/v1/liveodds/recovery/initiate_request?request_id=%d&node_id=2",
		"/v1/liveodds/odds/events/" + match.String() + "/initiate_request?request_id=%d",
		"/v1/liveodds/stateful_messages/events/" + match.String() + "/initiate_request?request_id=%d",
	} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+fmt.Sprintf(path, 101+i), nil)
		require.NoError(t, err)
		req.Header.Set("x-access-token", feedtest.DefaultAccessToken)
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusAccepted, resp.StatusCode, path)
	}
	sim.WaitReplays()
}

// requireMessageKinds checks that the messages include every type of the traffic and
// the forms that write other parts of the schema: a live odds change with its event
// status, a prematch one without, an alive that says unsubscribed, a virtual event, and
// replays tagged with their request.
func requireMessageKinds(t *testing.T, sent []feedtest.Sent) {
	t.Helper()
	types := make(map[feed.MessageType]int)
	var withStatus, withoutStatus, unsubscribed, virtual, replayed int
	for _, s := range sent {
		types[s.Key.Type]++
		switch m := s.Message.(type) {
		case *feed.OddsChange:
			if m.EventStatus != nil {
				withStatus++
			} else {
				withoutStatus++
			}
		case *feed.Alive:
			if !m.Subscribed {
				unsubscribed++
			}
		}
		if s.Key.Event.Prefix == "vf" {
			virtual++
		}
		if s.Replay && s.Message.MessageHeader().RequestID != 0 {
			replayed++
		}
	}
	for _, typ := range simulatedTypes {
		require.Positive(t, types[typ], "no %s among the messages", typ)
	}
	require.Positive(t, withStatus, "a live odds_change with sport_event_status")
	require.Positive(t, withoutStatus, "a prematch odds_change without sport_event_status")
	require.Equal(t, 1, unsubscribed, "one alive with subscribed=0")
	require.Positive(t, virtual, "a virtual producer's message")
	require.Positive(t, replayed, "replayed messages with a request_id")
	require.Equal(t, 3, types[feed.MessageSnapshotComplete], "a snapshot_complete per recovery")
	require.True(t, slices.ContainsFunc(sent, func(s feedtest.Sent) bool { return s.Key.Node == feed.Node(2) }),
		"the producer's replay is routed to its node")
}
