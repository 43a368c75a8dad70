// Package promserver starts a real Prometheus server for a test, scraping the targets the
// test gives it, and asks its HTTP API what it scraped: what a dashboard or an alert
// would read. It runs the server of Debian's prometheus package (FEEDKIT_PROMETHEUS, or
// prometheus on PATH), which scripts/test.sh installs. Without one the test is skipped,
// or fails under CI=true: CI must not go green on a check it never ran.
//
// It uses the standard library only, so that the tests of any module may import it
// (promfeedkit's, the examples'): the core module does not require client_golang.
//
//	srv := promserver.Start(t, promserver.Options{Targets: []string{addr}, ScrapeInterval: 200 * time.Millisecond})
//	srv.WaitFor(`count_over_time(up{job="feedkit"}[1m]) >= 2`, time.Minute) // two scrapes
//	got, err := srv.Query(`feedkit_producer_up`)
//
// A Prometheus server has no signal for "scraped": WaitFor asks its query API again
// every 100 ms until the query's answer is not empty.
package promserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Names of the environment variables this package reads.
const (
	// PrometheusVar names the Prometheus server binary, a path or a name on PATH; unset,
	// "prometheus" from PATH. scripts/test.sh sets it.
	PrometheusVar = "FEEDKIT_PROMETHEUS"
	// CIVar marks a CI run when it equals "true", as in internal/testenv.
	CIVar = "CI"
)

// Job is the job name of the scrape configuration when Options.Job is empty: the
// targets' series carry job="feedkit".
const Job = "feedkit"

// Timings of the server's start and stop, generous for a busy machine: Prometheus is
// ready in about a second.
const (
	readyTimeout = time.Minute
	stopTimeout  = 30 * time.Second
	pollInterval = 100 * time.Millisecond
	// requestTimeout bounds one call of the HTTP API.
	requestTimeout = 30 * time.Second
	// startAttempts is how many listen addresses Start tries: the one it picks is free a
	// moment before the server binds it, and another process may take it meanwhile.
	startAttempts = 3
)

// Options says what the server scrapes.
type Options struct {
	// Targets are the host:port addresses scraped, at /metrics over HTTP.
	Targets []string
	// Job is the scrape job's name, the job label of the targets' series; empty: Job.
	Job string
	// ScrapeInterval is how often each target is scraped; 0: one second. Prometheus
	// takes intervals of milliseconds (the scrape timeout is then the interval).
	ScrapeInterval time.Duration
}

// Server is a Prometheus server started by Start; it is stopped when the test ends.
type Server struct {
	t      testing.TB
	addr   string
	logs   *syncBuffer
	exited chan struct{} // closed once the process has exited; exitErr is set then
	// exitErr is the process's exit, readable once exited is closed.
	exitErr error
	client  *http.Client
}

// Start starts a Prometheus server that scrapes o's targets, waits until it is ready
// (its /-/ready answers 200) and has tried each target once (each has an up series, 1 or
// 0: a target need not listen yet), and returns it; it is stopped, and its data removed,
// when the test ends. That takes about five seconds: the server takes up its targets
// only that long after it starts. Without a prometheus binary it skips the test, or
// fails it under CI=true (see Tool). It fails the test, with the server's output, when
// the server is not ready within a minute.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	bin := Tool(t, PrometheusVar, "prometheus")
	dir := t.TempDir()
	config := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(config, []byte(configText(o)), 0o600); err != nil {
		t.Fatalf("promserver: %v", err)
	}
	for attempt := 1; ; attempt++ {
		s := launch(t, bin, config, filepath.Join(dir, fmt.Sprintf("data%d", attempt)))
		err := s.waitReady()
		if err == nil {
			s.waitForTargets(o)
			return s
		}
		// The address picked was free a moment ago; if another process took it since,
		// the server exits at once saying so, and another address is tried.
		if s.hasExited() && strings.Contains(s.Logs(), "address already in use") && attempt < startAttempts {
			continue
		}
		t.Fatalf("promserver: %v\n%s", err, s.Logs())
	}
}

// configText is the server's configuration: one scrape job of o's targets.
func configText(o Options) string {
	job := o.Job
	if job == "" {
		job = Job
	}
	interval := o.ScrapeInterval
	if interval <= 0 {
		interval = time.Second
	}
	targets := make([]string, len(o.Targets))
	for i, target := range o.Targets {
		targets[i] = fmt.Sprintf("%q", target)
	}
	// Durations in milliseconds, which Prometheus's duration syntax takes.
	return fmt.Sprintf("global:\n  scrape_interval: %dms\nscrape_configs:\n  - job_name: %q\n    static_configs:\n      - targets: [%s]\n",
		interval.Milliseconds(), job, strings.Join(targets, ", "))
}

// launch runs the server on a free loopback address, with its data in data, and stops it
// when the test ends. It fails the test when the process does not start.
func launch(t testing.TB, bin, config, data string) *Server {
	t.Helper()
	s := &Server{t: t, addr: FreeLoopbackAddr(t), logs: &syncBuffer{}, exited: make(chan struct{}),
		client: &http.Client{Timeout: requestTimeout}}
	cmd := exec.Command(bin, "--config.file="+config, "--storage.tsdb.path="+data,
		"--web.listen-address="+s.addr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = s.logs, s.logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("promserver: start %s: %v", bin, err)
	}
	go func() {
		s.exitErr = cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(stopTimeout):
			_ = cmd.Process.Kill()
			<-s.exited
		}
	})
	return s
}

// waitReady waits until the server's /-/ready answers 200, for at most readyTimeout.
func (s *Server) waitReady() error {
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	var last error
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL()+"/-/ready", nil)
		if err != nil {
			return err
		}
		resp, err := s.client.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("/-/ready answered %s", resp.Status)
		}
		last = err
		select {
		case <-s.exited:
			return fmt.Errorf("prometheus exited before it was ready: %v", s.exitErr)
		case <-ctx.Done():
			return fmt.Errorf("prometheus not ready within %v: %v", readyTimeout, last)
		case <-tick.C:
		}
	}
}

// waitForTargets waits until the server has tried to scrape each of o's targets, for at
// most readyTimeout, and fails the test if it has not by then.
func (s *Server) waitForTargets(o Options) {
	s.t.Helper()
	if len(o.Targets) == 0 {
		return
	}
	job := o.Job
	if job == "" {
		job = Job
	}
	s.WaitFor(fmt.Sprintf("count(up{job=%q}) >= %d", job, len(o.Targets)), readyTimeout)
}

// hasExited reports whether the server's process has exited.
func (s *Server) hasExited() bool {
	select {
	case <-s.exited:
		return true
	default:
		return false
	}
}

// Addr returns the host:port the server's web UI and API listen on.
func (s *Server) Addr() string { return s.addr }

// URL returns the server's base URL, http://host:port.
func (s *Server) URL() string { return "http://" + s.addr }

// Logs returns what the server has printed so far (warnings and errors only), for a
// failing test's message.
func (s *Server) Logs() string { return s.logs.String() }

// Query evaluates the PromQL expression q now (/api/v1/query) and returns its instant
// vector: one sample per series, none when nothing matches. A query whose result is
// not a vector (a scalar or a string) is an error.
func (s *Server) Query(q string) ([]Sample, error) {
	var samples []Sample
	err := s.api("/api/v1/query", url.Values{"query": {q}}, "vector", &samples)
	return samples, err
}

// QueryRange evaluates the PromQL expression q at every step from start to end
// (/api/v1/query_range) and returns its range vector: one series per label set, with a
// point at each step where the series had a value (a series that went stale, its
// target's scrapes failing, has none).
func (s *Server) QueryRange(q string, start, end time.Time, step time.Duration) ([]Series, error) {
	var series []Series
	err := s.api("/api/v1/query_range", url.Values{
		"query": {q},
		"start": {formatTime(start)},
		"end":   {formatTime(end)},
		"step":  {fmt.Sprintf("%dms", step.Milliseconds())},
	}, "matrix", &series)
	return series, err
}

// WaitFor asks the server to evaluate q every 100 ms until its answer is a vector that
// is not empty, and returns that answer: a condition is written into q, as in
// `count_over_time(up{job="feedkit"}[1m]) >= 2` (two scrapes so far). It fails the test,
// with the server's output and the last error, when within passes first or the server
// exits. Like t.Fatal, call it from the test's goroutine.
func (s *Server) WaitFor(q string, within time.Duration) []Sample {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	var last error
	for {
		got, err := s.Query(q)
		if err == nil && len(got) > 0 {
			return got
		}
		last = err
		select {
		case <-s.exited:
			s.t.Fatalf("promserver: prometheus exited while waiting for %s: %v\n%s", q, s.exitErr, s.Logs())
		case <-ctx.Done():
			s.t.Fatalf("promserver: %s still empty after %v (last error: %v)\n%s", q, within, last, s.Logs())
		case <-tick.C:
		}
	}
}

// api calls the HTTP API's path with the form, checks that it succeeded with a result of
// the type want, and decodes the result into result.
func (s *Server) api(path string, form url.Values, want string, result any) error {
	query := form.Get("query")
	resp, err := s.client.PostForm(s.URL()+path, form)
	if err != nil {
		return fmt.Errorf("query %s: %w", query, err)
	}
	defer resp.Body.Close()
	var r struct {
		Status    string `json:"status"`
		ErrorType string `json:"errorType"`
		Error     string `json:"error"`
		Data      struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return fmt.Errorf("query %s: %s: %w", query, resp.Status, err)
	}
	switch {
	case r.Status != "success":
		return fmt.Errorf("query %s: %s: %s: %s", query, r.Status, r.ErrorType, r.Error)
	case r.Data.ResultType != want:
		return fmt.Errorf("query %s: a %s, not a %s", query, r.Data.ResultType, want)
	}
	if err := json.Unmarshal(r.Data.Result, result); err != nil {
		return fmt.Errorf("query %s: %w", query, err)
	}
	return nil
}

// Sample is one series' value in an instant vector.
type Sample struct {
	Metric map[string]string // the series' labels, __name__ included
	Point
}

func (s *Sample) UnmarshalJSON(b []byte) error {
	var v struct {
		Metric map[string]string `json:"metric"`
		Value  Point             `json:"value"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	s.Metric, s.Point = v.Metric, v.Value
	return nil
}

// Series is one series of a range vector: its values over the range.
type Series struct {
	Metric map[string]string `json:"metric"` // the series' labels, __name__ included
	Points []Point           `json:"values"`
}

// Point is a value at a time.
type Point struct {
	Time  time.Time // to the millisecond, as Prometheus keeps it
	Value string    // as Prometheus writes it: "1", "0.5", "NaN", "+Inf"
}

// UnmarshalJSON reads a point as the API writes it: [seconds since the epoch, "value"].
func (p *Point) UnmarshalJSON(b []byte) error {
	var v [2]json.RawMessage
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("a point: %w", err)
	}
	var sec float64
	if err := json.Unmarshal(v[0], &sec); err != nil {
		return fmt.Errorf("a point's time: %w", err)
	}
	if err := json.Unmarshal(v[1], &p.Value); err != nil {
		return fmt.Errorf("a point's value: %w", err)
	}
	p.Time = time.UnixMilli(int64(math.Round(sec * 1000)))
	return nil
}

// formatTime writes t as the API reads it: seconds since the epoch, to the millisecond.
func formatTime(t time.Time) string {
	return fmt.Sprintf("%.3f", float64(t.UnixMilli())/1000)
}

// Tool returns the program that the environment variable names (a path or a name on
// PATH), or name on PATH when the variable is unset or blank. Without it the test
// skips, or fails under CI=true: CI must not go green on a check it never ran. A
// variable that names no program fails the test always, since someone meant it to run.
func Tool(t testing.TB, variable, name string) string {
	t.Helper()
	path, v, msg := findTool(variable, name, os.LookupEnv, exec.LookPath)
	switch v {
	case skip:
		t.Skipf("%s", msg)
	case fail:
		t.Fatalf("%s", msg)
	}
	return path
}

// verdict is what a test does about a program it needs.
type verdict int

const (
	use  verdict = iota // found: the test goes on with it
	skip                // missing outside CI
	fail                // missing under CI, or the variable names no program
)

// findTool is Tool with the environment and exec.LookPath given, so that every case is
// testable: it returns the path, or what to do and why.
func findTool(variable, name string, lookup func(string) (string, bool), lookPath func(string) (string, error)) (string, verdict, string) {
	if v, ok := lookup(variable); ok && strings.TrimSpace(v) != "" {
		path, err := lookPath(strings.TrimSpace(v))
		if err != nil {
			return "", fail, fmt.Sprintf("%s=%s: %v", variable, v, err)
		}
		return path, use, ""
	}
	path, err := lookPath(name)
	if err == nil {
		return path, use, ""
	}
	msg := fmt.Sprintf("%s not found: set %s or put it on PATH (Debian's prometheus package has it; ./scripts/test.sh installs it)", name, variable)
	if ci, _ := lookup(CIVar); ci == "true" {
		return "", fail, msg + "; under CI=true this test may not skip"
	}
	return "", skip, msg
}

// FreeLoopbackAddr returns a loopback address with a port free a moment ago, for a
// server that takes no port 0 or must be told its address before it starts.
func FreeLoopbackAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("promserver: %v", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatalf("promserver: %v", err)
	}
	return addr
}

// syncBuffer is a server's output, written by the process's copiers and read by a
// failing test while the server may still run.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
