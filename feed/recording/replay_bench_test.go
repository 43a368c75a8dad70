package recording_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/recording"
	"github.com/feedkit/feedkit/internal/benchratio"
	"github.com/feedkit/feedkit/recovery"
)

// BenchmarkReplay plays 20,000 messages of the simulator's traffic through the SDK to a
// listener that does nothing (serial delivery, every message decoded): from a recording
// by a Player, and from the embedded broker, which has them published to it; the
// benchmark's loop is the Player's, and x-of-broker is how many times faster it is than
// the broker, measured in the same run.
func BenchmarkReplay(b *testing.B) {
	fs := traffic(b, 20_000)
	var file bytes.Buffer
	w, err := recording.NewWriter(&file, recording.WriterOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range fs {
		if err := w.Append(f); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	// run plays the traffic through a new SDK on transport t, started by start.
	run := func(t feed.Transport, start func() error) {
		sdk, err := feedkit.New(feedkit.Config{Transport: t, Node: feed.Node(1), Recovery: recovery.Config{Disabled: true}})
		if err != nil {
			b.Fatal(err)
		}
		if err := sdk.AddSession(feed.AllMessages, feed.BaseOddsFeedListener{}); err != nil {
			b.Fatal(err)
		}
		if err := sdk.Open(ctx); err != nil {
			b.Fatal(err)
		}
		if err := start(); err != nil {
			b.Fatal(err)
		}
		if err := sdk.Flush(ctx); err != nil {
			b.Fatal(err)
		}
		if got := sdk.Stats().Sessions[0].Received; got != uint64(len(fs)) {
			b.Fatalf("the session received %d of %d messages", got, len(fs))
		}
		if err := sdk.Close(ctx); err != nil {
			b.Fatal(err)
		}
	}
	player := func() {
		p, err := recording.NewPlayer(bytes.NewReader(file.Bytes()), recording.PlayerOptions{})
		if err != nil {
			b.Fatal(err)
		}
		run(p, func() error { return p.Play(ctx) })
	}
	broker := func() {
		br := feedtest.NewBroker(feedtest.BrokerOptions{})
		defer br.Close()
		run(br, func() error {
			for _, f := range fs {
				if err := br.Publish(ctx, f.RoutingKey, f.Body); err != nil {
					return err
				}
			}
			return br.Flush(ctx)
		})
	}
	ratio := benchratio.InTurn(player, broker)
	b.ReportAllocs()
	for b.Loop() {
		player()
	}
	b.ReportMetric(float64(len(fs))*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(ratio, "x-of-broker")
}
