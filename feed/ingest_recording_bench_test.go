package feed_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/rabbitmq"
	"github.com/feedkit/feedkit/feed/recording"
	"github.com/feedkit/feedkit/internal/ingestbench"
)

// BenchmarkIngestRecording measures what recording costs ingest: the session of
// BenchmarkIngestRabbitMQ (RabbitMQ → transport → session → decoding → a listener that
// only counts), with a recording.Writer on its OnDelivery writing to a file, against
// the same session without one, measured before and after it in the same run.
// Target (issue 37): recording-overhead at most 0.05.
//
//	./scripts/test.sh go test -run '^$' -bench IngestRecording -benchtime 100000x -count 6 ./feed
func BenchmarkIngestRecording(b *testing.B) {
	_, cfg, publish := ingestFeed(b)
	b.StopTimer()
	before := measureSession(b, cfg, publish, nil)
	f, err := os.Create(filepath.Join(b.TempDir(), "feed.rec"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	w, err := recording.NewWriter(f, recording.WriterOptions{})
	if err != nil {
		b.Fatal(err)
	}
	with := measureSession(b, cfg, publish, w.RecordDelivery)
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	if got := w.Stats().Frames; got < int64(b.N) {
		b.Fatalf("recorded %d of %d messages", got, b.N)
	}
	after := measureSession(b, cfg, publish, nil)
	plain := (before.MsgsPerSec + after.MsgsPerSec) / 2
	b.ReportMetric(with.MsgsPerSec, "msgs/s")
	b.ReportMetric(plain, "plain-msgs/s")
	b.ReportMetric(1-with.MsgsPerSec/plain, "recording-overhead")
	b.ReportMetric(float64(with.CPUPerMsg.Nanoseconds())/1e3, "cpu-us/msg")
	b.ReportMetric(float64((before.CPUPerMsg+after.CPUPerMsg).Nanoseconds())/2e3, "plain-cpu-us/msg")
}

// measureSession is measureSDK with a raw delivery hook, nil for none.
func measureSession(b *testing.B, cfg rabbitmq.Config, publish func(int), hook func(feed.SessionRef, feed.Delivery)) ingestbench.Rate {
	tr, err := rabbitmq.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	l := ingestbench.NewCountingListener(b.N)
	up := ingestbench.NewUpSignal()
	s, err := feed.NewSession(tr, feed.SessionConfig{Listener: l, Global: up, OnDelivery: hook})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Open(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.Close(context.Background()) }()
	<-up.C
	publish(b.N)
	held := s.Stats().Received
	w := ingestbench.Start()
	b.StartTimer()
	close(l.Gate)
	<-l.Done
	b.StopTimer()
	return w.End(b.N - int(held))
}
