package feedkit_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/recording"
	"github.com/feedkit/feedkit/recovery"
)

// A Writer on the SDK's raw hooks records every message each session received, once, as
// it came, and every answer of the API: counted against what the simulator sent.
func TestRecordingASessionKeepsEveryDeliveryAndResponse(t *testing.T) {
	f := newSimFeed(t, 5, 0)
	broker, sim, clk, env, apiURL := f.broker, f.sim, f.clock, f.env, f.api

	var file bytes.Buffer
	w, err := recording.NewWriter(&file, recording.WriterOptions{BlockSize: 4 << 10})
	require.NoError(t, err)
	sdk, err := feedkit.New(feedkit.Config{
		Environment: &env, AccessToken: feedtest.DefaultAccessToken,
		Transport: broker, Node: feed.Node(1), Clock: clk,
		OnDelivery: w.RecordDelivery,
		API:        feedapi.Config{OnResponse: w.RecordResponse},
	})
	require.NoError(t, err)
	rec := feedtest.NewRecorder()
	require.NoError(t, sdk.AddSession(feed.AllMessages, rec))
	t.Cleanup(func() { _ = sdk.Close(context.Background()) })
	require.NoError(t, sdk.Open(t.Context()))

	const messages = 300
	require.NoError(t, sim.Publish(t.Context(), messages))
	require.NoError(t, rec.Wait(t.Context(), messages))
	require.NoError(t, sdk.Flush(t.Context()))
	require.NoError(t, sdk.Close(t.Context()))
	require.NoError(t, w.Close())
	require.NoError(t, w.Err())

	r, err := recording.NewReader(&file)
	require.NoError(t, err)
	delivered := make(map[string]int) // by routing key and body
	var responses []recording.Frame
	for {
		f, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		switch f.Kind {
		case recording.Delivery:
			assert.Equal(t, 0, f.Session)
			delivered[f.RoutingKey+"\n"+string(f.Body)]++
		case recording.APIResponse:
			responses = append(responses, f)
		}
	}
	// A match's messages can repeat byte for byte (two bet_stops in one millisecond):
	// what was sent and what was recorded are compared as counts of each.
	sent := make(map[string]int)
	for _, s := range sim.Sent() {
		sent[s.Key.String()+"\n"+string(s.Body)]++
	}
	assert.Equal(t, sent, delivered, "every message sent recorded, as many times as sent")
	total := 0
	for _, n := range delivered {
		total += n
	}
	assert.Equal(t, int(sdk.Stats().Sessions[0].Received), total, "every message the session received")
	require.NotEmpty(t, responses)
	urls := make(map[string]int)
	for _, f := range responses {
		urls[f.Method+" "+f.URL[len(apiURL):]] = f.Status
	}
	assert.Equal(t, 200, urls["GET /v1/users/whoami.xml"])
	assert.Equal(t, 200, urls["GET /v1/descriptions/producers.xml"])
}

// record runs the simulator through an SDK whose raw hooks a Writer sits on, and returns
// the recording and the messages its listener was called with, in order (serial
// delivery: one call at a time in arrival order).
func record(t *testing.T, messages int) ([]byte, []feed.Message) {
	t.Helper()
	f := newSimFeed(t, 8, 37)
	broker, sim, clk := f.broker, f.sim, f.clock
	var file bytes.Buffer
	w, err := recording.NewWriter(&file, recording.WriterOptions{BlockSize: 8 << 10})
	require.NoError(t, err)
	sdk, err := feedkit.New(feedkit.Config{
		Transport: broker, Node: feed.Node(1), Clock: clk,
		Recovery:   recovery.Config{Disabled: true},
		OnDelivery: w.RecordDelivery,
	})
	require.NoError(t, err)
	rec := feedtest.NewRecorder()
	require.NoError(t, sdk.AddSession(feed.AllMessages, rec))
	require.NoError(t, sdk.Open(t.Context()))
	require.NoError(t, sim.Publish(t.Context(), messages))
	require.NoError(t, rec.Wait(t.Context(), messages))
	require.NoError(t, sdk.Close(t.Context()))
	require.NoError(t, w.Close())
	return file.Bytes(), rec.Messages()
}

// replay plays a recording through a new SDK and returns its listener's calls.
func replay(t *testing.T, file []byte, opts recording.PlayerOptions) []feed.Message {
	t.Helper()
	p, err := recording.NewPlayer(bytes.NewReader(file), opts)
	require.NoError(t, err)
	sdk, err := feedkit.New(feedkit.Config{Transport: p, Node: feed.Node(1), Clock: clocktest.NewFake(envEpoch),
		Recovery: recovery.Config{Disabled: true}})
	require.NoError(t, err)
	rec := feedtest.NewRecorder()
	require.NoError(t, sdk.AddSession(feed.AllMessages, rec))
	require.NoError(t, sdk.Open(t.Context()))
	require.NoError(t, p.Play(t.Context()))
	require.NoError(t, sdk.Flush(t.Context()))
	require.NoError(t, sdk.Close(t.Context()))
	return rec.Messages()
}

// A recording played through a new SDK calls its listener with the same messages in the
// same order as the live feed did, every time it is played; a filtered play calls it
// with that event's messages alone, in their order.
func TestReplayThroughTheSDKIsTheLiveRunAgain(t *testing.T) {
	file, live := record(t, 400)
	require.Len(t, live, 400)
	first := replay(t, file, recording.PlayerOptions{})
	requireSameCalls(t, live, first)
	requireSameCalls(t, first, replay(t, file, recording.PlayerOptions{}))

	event := live[0].MessageHeader().Event
	var want []feed.Message
	for _, m := range live {
		if m.MessageHeader().Event == event {
			want = append(want, m)
		}
	}
	requireSameCalls(t, want, replay(t, file, recording.PlayerOptions{Events: []feed.URN{event}}))
}

// requireSameCalls checks that two runs called the listener with the same messages in
// the same order. A recording keeps a receipt time to the nanosecond in UTC, without the
// live clock's monotonic reading: the times are compared as instants.
func requireSameCalls(t *testing.T, want, got []feed.Message) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		w, g := want[i].MessageHeader(), got[i].MessageHeader()
		require.True(t, w.ReceivedAt.Equal(g.ReceivedAt), "call %d: received at %v, then %v", i, w.ReceivedAt, g.ReceivedAt)
		wr, gr := w.ReceivedAt, g.ReceivedAt
		w.ReceivedAt, g.ReceivedAt = time.Time{}, time.Time{}
		require.Equal(t, want[i], got[i], "call %d", i)
		w.ReceivedAt, g.ReceivedAt = wr, gr
	}
}
