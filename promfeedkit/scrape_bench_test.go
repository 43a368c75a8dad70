package promfeedkit_test

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/promfeedkit"
	"github.com/feedkit/feedkit/recovery"
)

// The scale of BenchmarkScrape: the issue's "100 producers, 10 sessions and 1,000
// matches".
const (
	scrapeProducers = 100
	scrapeSessions  = 10
	scrapeMatches   = 1000
)

// prometheusAccept is the Accept header of a Prometheus 3 scrape with its default
// scrape_protocols (OpenMetrics 1.0.0 and 0.0.1, then the text format 1.0.0 and 0.0.4);
// it sends Accept-Encoding: gzip with it.
const prometheusAccept = "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6," +
	"application/openmetrics-text;version=0.0.1;q=0.5,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4," +
	"text/plain;version=0.0.4;q=0.3,*/*;q=0.2"

// BenchmarkScrape times one scrape of the metrics of a real SDK at the scale, and
// reports its size (bytes/scrape) and its series (series/scrape: the sample lines, a
// histogram's buckets, sum and count each one).
//
// The SDK (feedkit.New with the shared pool, Concurrent: &concurrent.Config{}) runs on the
// embedded broker, its API the simulator's. It follows 100 producers, ids 1 to 100, of
// live scope, each with an API path of its own ("p1" ... "p100"): the simulator lists them
// active in producers.xml, where the SDK reads the producers it follows. It has 10
// sessions, all of interest feed.AllMessages (the SDK accepts several sessions of one
// interest): each session reads every message, so that feedkit_session multiplies the
// per-message series by 10, the most that 10 sessions can make. The simulator runs 1,000
// matches, 10 per producer. First an alive of each producer: the SDK recovers each (the
// recovery limits raised for 100 first recoveries at once), and each is up once its
// snapshot_complete has come on every session and been processed. Then the simulator
// publishes, unpaced and seeded (every run publishes the same messages), in batches of
// 1,000 until every producer has sent a fixture_change, an odds_change and a bet_stop
// (6,000 messages), and an alive of each again. The messages are read and processed,
// and the feed is quiet while the scrapes are timed: the series are those of a running
// feed, and they stay put (only the alives' ages move; the heartbeat limit is an hour,
// so that no producer goes down meanwhile). The registry has promfeedkit's metrics only,
// not the Go runtime's.
//
// The sub-benchmarks serve the registry with promhttp.HandlerFor, as a program does,
// into an httptest.ResponseRecorder:
//
//   - text: the text format, uncompressed (Accept: text/plain;version=0.0.4): the
//     exposition's own size.
//   - text+gzip: what a Prometheus server gets from the handler of the package's
//     example (HandlerOpts{}: the text format), with its Accept header and
//     Accept-Encoding: gzip; bytes/scrape is the compressed size.
//   - openmetrics+gzip: the same with HandlerOpts.EnableOpenMetrics, which Prometheus
//     prefers.
//
// The series and bytes each metric family contributes are logged, once. Run it with
//
//	go test -run '^$' -bench Scrape -benchmem -count 5 ./promfeedkit
func BenchmarkScrape(b *testing.B) {
	reg, setup := scrapeFixture(b)
	text := promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError})
	openMetrics := promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError,
		EnableOpenMetrics: true})

	plain := serveScrape(b, text, "text/plain;version=0.0.4", "")
	series, families := countSeries(b, plain.Body.Bytes())

	for _, c := range []struct {
		name     string
		handler  http.Handler
		accept   string
		encoding string
		want     string // the Content-Type's start
	}{
		{"text", text, "text/plain;version=0.0.4", "", "text/plain"},
		{"text+gzip", text, prometheusAccept, "gzip", "text/plain"},
		{"openmetrics+gzip", openMetrics, prometheusAccept, "gzip", "application/openmetrics-text"},
	} {
		b.Run(c.name, func(b *testing.B) {
			// Logged by a sub-benchmark: a parent's log shows with -v only.
			logFamiliesOnce.Do(func() { logFamilies(b, setup, families, series, plain.Body.Len()) })
			b.ReportAllocs()
			first := serveScrape(b, c.handler, c.accept, c.encoding)
			if ct := first.Header().Get("Content-Type"); !strings.HasPrefix(ct, c.want) {
				b.Fatalf("Content-Type %q, want %s", ct, c.want)
			}
			if got := first.Header().Get("Content-Encoding"); got != c.encoding {
				b.Fatalf("Content-Encoding %q, want %q", got, c.encoding)
			}
			if c.encoding == "gzip" {
				zr, err := gzip.NewReader(bytes.NewReader(first.Body.Bytes()))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.Copy(io.Discard, zr); err != nil {
					b.Fatal(err)
				}
			}
			size := 0
			for b.Loop() {
				w := serveScrape(b, c.handler, c.accept, c.encoding)
				size = w.Body.Len()
			}
			b.ReportMetric(float64(size), "bytes/scrape")
			b.ReportMetric(float64(series), "series/scrape")
		})
	}
}

// serveScrape serves one scrape request of h, with the Accept and Accept-Encoding given.
func serveScrape(b *testing.B, h http.Handler, accept, encoding string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Accept", accept)
	if encoding != "" {
		req.Header.Set("Accept-Encoding", encoding)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		b.Fatalf("scrape: status %d: %s", w.Code, w.Body)
	}
	return w
}

// family is what one metric family takes of a text scrape.
type family struct {
	name   string
	series int
	bytes  int // its HELP and TYPE lines included
}

// countSeries counts the sample lines of a text scrape, in all and by family (the family
// of the HELP and TYPE lines before them), and the bytes of each family.
func countSeries(b *testing.B, body []byte) (int, []family) {
	var fams []family
	total := 0
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		// A family begins with its HELP line, or its TYPE line when it has no HELP.
		for _, prefix := range []string{"# HELP ", "# TYPE "} {
			if name, ok := strings.CutPrefix(line, prefix); ok {
				name, _, _ = strings.Cut(name, " ")
				if len(fams) == 0 || fams[len(fams)-1].name != name {
					fams = append(fams, family{name: name})
				}
			}
		}
		if len(fams) == 0 {
			b.Fatalf("the scrape begins with a sample: %q", line)
		}
		f := &fams[len(fams)-1]
		f.bytes += len(line) + 1
		if line != "" && !strings.HasPrefix(line, "#") {
			f.series++
			total++
		}
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	return total, fams
}

// logFamiliesOnce logs the families of the first run only: the others, with -count, have
// the same.
var logFamiliesOnce sync.Once

// logFamilies logs the setup, then the families' series and bytes, the largest first.
func logFamilies(b *testing.B, setup string, fams []family, series, size int) {
	slices.SortFunc(fams, func(x, y family) int { return cmp.Compare(y.bytes, x.bytes) })
	var sb strings.Builder
	sb.WriteString(setup + "\n")
	fmt.Fprintf(&sb, "a text scrape: %d bytes, %d series, %d families\n", size, series, len(fams))
	fmt.Fprintf(&sb, "%-46s %7s %9s\n", "family", "series", "bytes")
	// One line each for the largest, the rest on one line: without -v, the testing
	// package shows the first 10 lines of a benchmark's log only.
	const apart = 5
	for i, f := range fams {
		switch {
		case i < apart:
			fmt.Fprintf(&sb, "%-46s %7d %9d\n", f.name, f.series, f.bytes)
		case i == apart:
			fmt.Fprintf(&sb, "the others (series, bytes): %s %d %d", f.name, f.series, f.bytes)
		default:
			fmt.Fprintf(&sb, "; %s %d %d", f.name, f.series, f.bytes)
		}
	}
	b.Log(sb.String())
}

// scrapeFixture returns the registry of the metrics of an SDK set up as BenchmarkScrape
// says, and a line on the setup. The SDK and its servers are closed when b ends.
func scrapeFixture(b *testing.B) (*prometheus.Registry, string) {
	b.Helper()
	start := time.Now()
	ctx, cancel := context.WithTimeout(b.Context(), time.Minute)
	defer cancel()

	producers := make([]feed.Producer, scrapeProducers)
	for i := range producers {
		id := i + 1
		producers[i] = feed.Producer{ID: id, Name: "P" + strconv.Itoa(id), Description: "Producer " + strconv.Itoa(id),
			APIPath: "p" + strconv.Itoa(id), Scope: feed.ScopeLive, MaxRecoveryWindow: 72 * time.Hour,
			// Longer than a run of the benchmark, which sends no alives while it times:
			// no producer goes down meanwhile, and the series stay those of the setup.
			HeartbeatLimit: time.Hour}
	}
	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	b.Cleanup(broker.Close)
	sim, err := feedtest.NewSimulator(broker, feedtest.SimulatorConfig{Matches: scrapeMatches,
		Rate: feedtest.Unlimited, Producers: producers, Seed: 34})
	if err != nil {
		b.Fatal(err)
	}
	api := httptest.NewServer(sim.APIHandler(feedtest.Account{}))
	b.Cleanup(api.Close)
	env := feedkit.CustomEnvironment("", api.URL)

	reg := prometheus.NewRegistry()
	m, err := promfeedkit.New(reg)
	if err != nil {
		b.Fatal(err)
	}
	ups := newUpWaiter(scrapeProducers)
	var errs errorCount
	sdk, err := feedkit.New(feedkit.Config{Environment: &env, AccessToken: feedtest.DefaultAccessToken,
		Transport: broker, Node: feed.Node(1), Observer: m, Concurrent: &concurrent.Config{},
		Global: ups, OnError: errs.add,
		Recovery: recovery.Config{
			// The producers' heartbeat limits, which producers.xml does not give.
			Producers: producers,
			// 100 first recoveries at once, which the feed's limits per account would
			// spread over hours.
			Limits: recovery.Limits{{Windows: []recovery.Window{{Length: time.Hour, Max: 10 * scrapeProducers}}}},
		}})
	if err != nil {
		b.Fatal(err)
	}
	for range scrapeSessions {
		if err := sdk.AddSession(feed.AllMessages, feed.BaseOddsFeedListener{}); err != nil {
			b.Fatal(err)
		}
	}
	b.Cleanup(func() { _ = sdk.Close(context.Background()) })
	if err := m.WatchSDK(sdk); err != nil {
		b.Fatal(err)
	}
	if err := sdk.Open(ctx); err != nil {
		b.Fatal(err)
	}

	// An alive of each producer: the SDK recovers each, and each is up once its
	// snapshot_complete has come on every session and been processed.
	sendAlives := func() {
		for _, p := range producers {
			if err := sim.SendAlive(ctx, p.ID, true); err != nil {
				b.Fatal(err)
			}
		}
	}
	sendAlives()
	if err := ups.wait(ctx); err != nil {
		b.Fatalf("waiting for the producers to be up: %v (%d of %d up)", err, ups.count(), scrapeProducers)
	}

	// The matches' traffic, until every producer has sent each of the types wanted.
	wanted := []feed.MessageType{feed.MessageFixtureChange, feed.MessageOddsChange, feed.MessageBetStop}
	for {
		if err := sim.Publish(ctx, 1000); err != nil {
			b.Fatal(err)
		}
		if everyProducerSent(sim, producers, wanted) {
			break
		}
	}
	sendAlives() // the alives after the traffic, as the feed sends them every 10 s
	if err := broker.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	if err := sdk.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	for _, p := range sdk.Stats().Producers {
		if !p.Up {
			b.Fatalf("producer %d is down after the traffic", p.Producer)
		}
	}
	if n := errs.count(); n > 0 {
		b.Fatalf("the SDK reported %d errors, the first: %v", n, errs.first())
	}
	st := sim.Stats()
	return reg, fmt.Sprintf("set up in %v: %d producers up, %d sessions, %d matches; the simulator sent %d event messages, %d alives, %d replayed",
		time.Since(start).Round(time.Millisecond), ups.count(), scrapeSessions, scrapeMatches, st.Events, st.Alives, st.Replayed)
}

// everyProducerSent reports whether every producer has published a message of each type
// of types.
func everyProducerSent(sim *feedtest.Simulator, producers []feed.Producer, types []feed.MessageType) bool {
	sent := map[int]map[feed.MessageType]bool{}
	for _, s := range sim.Sent() {
		if s.Replay {
			continue
		}
		p := s.Message.MessageHeader().Producer
		if sent[p] == nil {
			sent[p] = map[feed.MessageType]bool{}
		}
		sent[p][s.Key.Type] = true
	}
	for _, p := range producers {
		for _, t := range types {
			if !sent[p.ID][t] {
				return false
			}
		}
	}
	return true
}

// upWaiter is a GlobalEventsListener that tells when every producer is up.
type upWaiter struct {
	feed.BaseGlobalEventsListener
	want int
	all  chan struct{} // closed once want producers are up

	mu sync.Mutex
	up map[int]bool
}

func newUpWaiter(want int) *upWaiter {
	return &upWaiter{want: want, all: make(chan struct{}), up: map[int]bool{}}
}

// OnProducerStatusChange implements feed.GlobalEventsListener.
func (w *upWaiter) OnProducerStatusChange(_ context.Context, s feed.ProducerStatus) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if s.Down {
		delete(w.up, s.Producer)
		return
	}
	w.up[s.Producer] = true
	if len(w.up) == w.want {
		select {
		case <-w.all:
		default:
			close(w.all)
		}
	}
}

// wait returns once every producer has been up, or ctx's error.
func (w *upWaiter) wait(ctx context.Context) error {
	select {
	case <-w.all:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (w *upWaiter) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.up)
}

// errorCount keeps the errors the SDK reports.
type errorCount struct {
	mu   sync.Mutex
	errs []error
}

func (e *errorCount) add(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.errs = append(e.errs, err)
}

func (e *errorCount) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.errs)
}

func (e *errorCount) first() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.errs) == 0 {
		return nil
	}
	return e.errs[0]
}
