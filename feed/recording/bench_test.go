package recording_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/recording"
)

// traffic is n messages of the simulator's live and prematch traffic, as deliveries.
func traffic(b *testing.B, n int) []recording.Frame {
	b.Helper()
	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	b.Cleanup(broker.Close)
	var ps []feed.Producer
	for _, id := range []int{1, 3} {
		p, _ := feed.LookupProducer(feed.DefaultProducers(), id)
		ps = append(ps, p)
	}
	clk := clocktest.NewFake(t0)
	sim, err := feedtest.NewSimulator(broker, feedtest.SimulatorConfig{Producers: ps, Matches: 50, Rate: feedtest.Unlimited, Clock: clk, Seed: 37, HistoryBytes: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	if err := sim.Publish(context.Background(), n); err != nil {
		b.Fatal(err)
	}
	var out []recording.Frame
	for _, s := range sim.Sent() {
		out = append(out, recording.Frame{Kind: recording.Delivery, At: s.Message.MessageHeader().Timestamp, RoutingKey: s.Key.String(), Body: s.Body})
	}
	return out
}

// BenchmarkWriter records the simulator's traffic: disk-bytes/msg against raw-bytes/msg,
// the bodies alone.
func BenchmarkWriter(b *testing.B) {
	fs := traffic(b, 20_000)
	raw := 0
	for _, f := range fs {
		raw += len(f.Body)
	}
	var disk int64
	b.SetBytes(int64(raw))
	b.ReportAllocs()
	for b.Loop() {
		w, err := recording.NewWriter(io.Discard, recording.WriterOptions{})
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
		disk = w.Stats().WrittenBytes
	}
	b.ReportMetric(float64(disk)/float64(len(fs)), "disk-bytes/msg")
	b.ReportMetric(float64(raw)/float64(len(fs)), "raw-bytes/msg")
}

// BenchmarkCodecs compresses one block of the simulator's traffic with the codecs the
// format could use: the choice of zstd at its fastest level is this measurement's.
func BenchmarkCodecs(b *testing.B) {
	var block []byte
	for _, f := range traffic(b, 2_000) {
		block = append(block, f.RoutingKey...)
		block = append(block, f.Body...)
		if len(block) > recording.DefaultBlockSize {
			break
		}
	}
	run := func(name string, compress func([]byte) []byte) {
		b.Run(name, func(b *testing.B) {
			var out []byte
			b.SetBytes(int64(len(block)))
			for b.Loop() {
				out = compress(block)
			}
			b.ReportMetric(float64(len(block))/float64(len(out)), "ratio")
		})
	}
	for _, lvl := range []zstd.EncoderLevel{zstd.SpeedFastest, zstd.SpeedDefault} {
		enc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(lvl), zstd.WithEncoderConcurrency(1))
		var dst []byte
		run("zstd-"+lvl.String(), func(src []byte) []byte { dst = enc.EncodeAll(src, dst[:0]); return dst })
	}
	for _, lvl := range []int{gzip.BestSpeed, gzip.DefaultCompression} {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, lvl)
		name := map[int]string{gzip.BestSpeed: "gzip-fastest", gzip.DefaultCompression: "gzip-default"}[lvl]
		run(name, func(src []byte) []byte {
			buf.Reset()
			zw.Reset(&buf)
			_, _ = zw.Write(src)
			_ = zw.Close()
			return buf.Bytes()
		})
	}
}
