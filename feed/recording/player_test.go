package recording_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/recording"
)

// played returns the deliveries a receiver was handed.
func played(r *feedtest.ReceiverRecorder) []feed.Delivery {
	var out []feed.Delivery
	for _, c := range r.Calls() {
		if c.Kind == feedtest.CallReceive {
			out = append(out, c.Delivery)
		}
	}
	return out
}

func deliveries(fs []recording.Frame) []feed.Delivery {
	var out []feed.Delivery
	for _, f := range fs {
		if f.Kind == recording.Delivery {
			out = append(out, feed.Delivery{RoutingKey: f.RoutingKey, Body: f.Body, ReceivedAt: f.At})
		}
	}
	return out
}

// Every delivery of the recording is handed to every session whose bindings match it,
// in the recorded order; API responses are not deliveries.
func TestPlayerHandsEveryDeliveryToMatchingSessions(t *testing.T) {
	fs := frames(500)
	b, _ := write(t, fs, recording.WriterOptions{BlockSize: 4 << 10})
	p, err := recording.NewPlayer(bytes.NewReader(b), recording.PlayerOptions{})
	require.NoError(t, err)
	all, one := feedtest.NewReceiverRecorder(), feedtest.NewReceiverRecorder()
	_, err = p.Subscribe(t.Context(), []string{"#"}, all)
	require.NoError(t, err)
	_, err = p.Subscribe(t.Context(), []string{"*.*.*.*.*.sr:match.1003.#"}, one)
	require.NoError(t, err)
	require.NoError(t, p.Play(t.Context()))

	want := deliveries(fs)
	assert.Equal(t, want, played(all))
	var only []feed.Delivery
	for _, d := range want {
		if bytes.Contains([]byte(d.RoutingKey), []byte("sr:match.1003.")) {
			only = append(only, d)
		}
	}
	require.NotEmpty(t, only)
	assert.Equal(t, only, played(one))
	st := p.Stats()
	assert.Equal(t, int64(len(fs)), st.Read)
	assert.Equal(t, int64(len(want)), st.Played)
	assert.Equal(t, int64(len(want)+len(only)), st.Handed)
	assert.Zero(t, st.Unrouted)
	assert.Equal(t, feedtest.CallReceiverUp, all.Calls()[0].Kind, "told the connection is up first")
}

// The filters: a time range, some events (with the system messages), some types.
func TestPlayerFilters(t *testing.T) {
	fs := frames(300)
	b, _ := write(t, fs, recording.WriterOptions{})
	from, to := t0.Add(50*time.Millisecond), t0.Add(150*time.Millisecond)
	match := feed.URN{Prefix: "sr", Type: "match", ID: 1005}
	p, err := recording.NewPlayer(bytes.NewReader(b), recording.PlayerOptions{From: from, To: to, Events: []feed.URN{match}, Types: []feed.MessageType{feed.MessageOddsChange}})
	require.NoError(t, err)
	r := feedtest.NewReceiverRecorder()
	_, err = p.Subscribe(t.Context(), []string{"#"}, r)
	require.NoError(t, err)
	require.NoError(t, p.Play(t.Context()))
	var want []feed.Delivery
	for _, d := range deliveries(fs) {
		if !d.ReceivedAt.Before(from) && d.ReceivedAt.Before(to) && bytes.Contains([]byte(d.RoutingKey), []byte("sr:match.1005.")) {
			want = append(want, d)
		}
	}
	require.NotEmpty(t, want)
	assert.Equal(t, want, played(r))
	assert.Equal(t, int64(len(deliveries(fs))-len(want)), p.Stats().Skipped)
}

// At Speed 2 the Player waits half as long as the recording did between two messages,
// on its clock; Step plays a given number.
func TestPlayerPaceAndStep(t *testing.T) {
	fs := []recording.Frame{
		{Kind: recording.Delivery, At: t0, RoutingKey: "hi.-.live.alive.-.-.-.-", Body: []byte(`<alive product="1" timestamp="1" subscribed="1"/>`)},
		{Kind: recording.Delivery, At: t0.Add(time.Second), RoutingKey: "hi.-.live.alive.-.-.-.-", Body: []byte(`<alive product="1" timestamp="2" subscribed="1"/>`)},
	}
	b, _ := write(t, fs, recording.WriterOptions{})
	clk := clocktest.NewFake(t0)
	p, err := recording.NewPlayer(bytes.NewReader(b), recording.PlayerOptions{Speed: 2, Clock: clk})
	require.NoError(t, err)
	r := feedtest.NewReceiverRecorder()
	_, err = p.Subscribe(t.Context(), []string{"#"}, r)
	require.NoError(t, err)
	n, err := p.Step(t.Context(), 1)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Len(t, played(r), 1)

	done := make(chan int)
	go func() {
		n, _ := p.Step(context.Background(), 5)
		done <- n
	}()
	clk.BlockUntil(1) // the Player waits for the second message's time
	clk.Advance(499 * time.Millisecond)
	assert.Len(t, played(r), 1, "not before half a second")
	clk.Advance(time.Millisecond)
	assert.Equal(t, 1, <-done, "one more, then the end")
	assert.Equal(t, deliveries(fs), played(r))
}

// A torn recording plays every whole block, then says where it stopped.
func TestPlayerOfATornRecording(t *testing.T) {
	fs := frames(400)
	b, blocks := write(t, fs, recording.WriterOptions{BlockSize: 4 << 10})
	cut := b[:blocks[len(blocks)-1]+10]
	p, err := recording.NewPlayer(bytes.NewReader(cut), recording.PlayerOptions{})
	require.NoError(t, err)
	r := feedtest.NewReceiverRecorder()
	_, err = p.Subscribe(t.Context(), []string{"#"}, r)
	require.NoError(t, err)
	err = p.Play(t.Context())
	var torn *recording.TornError
	require.ErrorAs(t, err, &torn)
	whole, _ := readAll(t, b[:blocks[len(blocks)-1]])
	assert.Equal(t, deliveries(whole), played(r))
}

func TestPlayerOptionsRefused(t *testing.T) {
	b, _ := write(t, frames(1), recording.WriterOptions{})
	_, err := recording.NewPlayer(bytes.NewReader(b), recording.PlayerOptions{Speed: -1})
	assert.ErrorContains(t, err, "PlayerOptions.Speed -1")
	_, err = recording.NewPlayer(bytes.NewReader(b), recording.PlayerOptions{From: t0, To: t0.Add(-time.Second)})
	assert.ErrorContains(t, err, "PlayerOptions.To")
	_, err = recording.NewPlayer(bytes.NewReader([]byte("nope")), recording.PlayerOptions{})
	assert.ErrorIs(t, err, recording.ErrNotRecording)
}
