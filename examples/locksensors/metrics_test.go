package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/examples/locksensors/locks"
	"github.com/feedkit/feedkit/internal/testenv"
)

// metricNames are the service's metrics, each with its type.
var metricNames = map[string]string{
	"locks_batches_total":                         "counter",
	"locks_readings_total":                        "counter",
	"locks_notifications_created_total":           "counter",
	"locks_notification_attempts_total":           "counter",
	"locks_notification_attempt_duration_seconds": "histogram",
	"locks_notifications_total":                   "counter",
	"locks_sensors_lost_total":                    "counter",
	"locks_sensors_restored_total":                "counter",
	"locks_liveness_false_alarms_total":           "counter",
	"locks_store_errors_total":                    "counter",
	"locks_sensors_tracked":                       "gauge",
}

// failingUpdates is a Store whose next Update calls fail, as many as it is told, each
// said on failed.
type failingUpdates struct {
	locks.Store
	fail   atomic.Int32
	failed chan struct{}
}

var errStoreDown = errors.New("store down")

func (f *failingUpdates) Update(ctx context.Context, ids []locks.SensorID, fn func(map[locks.SensorID]locks.Current) (locks.Effects, error)) (int, error) {
	for {
		left := f.fail.Load()
		if left == 0 {
			return f.Store.Update(ctx, ids, fn)
		}
		if f.fail.CompareAndSwap(left, left-1) {
			f.failed <- struct{}{}
			return 0, errStoreDown
		}
	}
}

// story is what metricsStory did: its harness, with the service still running, and the
// counts the story makes.
type story struct {
	h       *harness
	store   locks.Store // the service's, under the harness's watch
	sensors []string
}

// metricsStory runs an in-memory service on a fake clock through one of everything its
// metrics count but false alarms (which take a second process): readings that change,
// repeat and come late, rejected messages, a batch the store fails, deliveries that fail
// and then succeed, a notification given up (dead), one cancelled (its client unlinked),
// three sensors lost and one of them restored. Each step waits for what it caused.
func metricsStory(t *testing.T) story {
	clk := clocktest.NewFake(t0)
	sched := locks.Logarithmic{Unit: time.Minute}
	faulty := &failingUpdates{failed: make(chan struct{}, 10)}
	var store locks.Store
	h := startService(t, serviceConfig{clock: clk, silence: time.Hour, schedule: sched, maxAttempts: 3,
		poll: 24 * time.Hour, wrapStore: func(s locks.Store) locks.Store {
			faulty.Store = s
			return faulty
		}})
	store = h.svc.store
	publish := func(bodies ...[]byte) {
		t.Helper()
		for _, b := range bodies {
			require.NoError(t, h.svc.local.Publish(t.Context(), b))
		}
	}

	// Client A refuses its first two requests; client B refuses every one.
	desk, app := newEndpoint(t, 2), newEndpoint(t, 1<<30)
	var a, b locks.Client
	h.call("POST", "/clients", map[string]string{"name": "Security desk", "url": desk.URL}, 201, &a)
	h.call("POST", "/clients", map[string]string{"name": "Facility app", "url": app.URL}, 201, &b)
	sensors := []string{"s1", "s2", "s3"}
	for _, id := range sensors {
		h.call("POST", "/sensors", map[string]string{"id": id, "address": "Svobody st. 23, room " + id}, 201, nil)
		h.call("PUT", fmt.Sprintf("/sensors/%s/clients/%d", id, a.ID), nil, 204, nil)
	}
	h.call("PUT", fmt.Sprintf("/sensors/s1/clients/%d", b.ID), nil, 204, nil)

	// Three changes and two messages rejected: four notifications (s1's to A and B), of
	// whose first attempts A's first two and B's fail.
	publish(reading("s1", 1, t0), reading("s2", 1, t0), reading("s3", 1, t0), []byte("not json"), reading("zz", 1, t0))
	h.handled(5)
	assert.Equal(t, map[locks.Status]int{locks.Pending: 3, locks.Delivered: 1}, h.attempts(4))

	// A repeat and a late reading, in a write the store fails once: the queue hands the
	// batch again after its retry delay (at most 100ms), on the clock.
	faulty.fail.Store(1)
	publish(reading("s1", 1, t0.Add(time.Second)), reading("s2", 0, t0.Add(-time.Minute)))
	select {
	case <-faulty.failed:
	case <-time.After(30 * time.Second):
		t.Fatal("the store's failure not met within 30s")
	}
	h.blockUntil(clk, idle+1) // and the queue's retry
	clk.Advance(100 * time.Millisecond)
	h.handled(2)

	// The retries: A's two are delivered, B's fails again; B's third attempt is its last.
	h.advance(clk, sched.After(1))
	assert.Equal(t, map[locks.Status]int{locks.Delivered: 2, locks.Pending: 1}, h.attempts(3))
	h.advance(clk, sched.After(2))
	assert.Equal(t, map[locks.Status]int{locks.Dead: 1}, h.attempts(1))

	// B linked to s2 too, which changes: B's notification fails, and B is unlinked before
	// its retry, which is cancelled.
	h.call("PUT", fmt.Sprintf("/sensors/s2/clients/%d", b.ID), nil, 204, nil)
	publish(reading("s2", 0, clk.Now()))
	h.handled(1)
	assert.Equal(t, map[locks.Status]int{locks.Delivered: 1, locks.Pending: 1}, h.attempts(2))
	for _, id := range []string{"s1", "s2"} {
		h.call("DELETE", fmt.Sprintf("/sensors/%s/clients/%d", id, b.ID), nil, 204, nil)
	}
	h.advance(clk, sched.After(1))
	assert.Equal(t, map[locks.Status]int{locks.Cancelled: 1}, h.attempts(1))

	// An hour of silence: the three sensors are lost, and A told; s1 is heard again.
	h.advance(clk, time.Hour)
	assert.Equal(t, map[locks.Status]int{locks.Delivered: 3}, h.attempts(3))
	publish(reading("s1", 1, clk.Now()))
	h.handled(1)
	assert.Equal(t, map[locks.Status]int{locks.Delivered: 1}, h.attempts(1))
	return story{h: h, store: store, sensors: sensors}
}

// blockUntil waits until n timers of clk are pending, for 30s at most.
func (h *harness) blockUntil(clk *clocktest.Fake, n int) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.t.Context(), 30*time.Second)
	defer cancel()
	require.NoError(h.t, clk.BlockUntilContext(ctx, n), "%d timers not pending within 30s", n)
}

// exported returns every series the registry exports, keyed `name{label="value",...}`:
// the value of a counter or a gauge, and a histogram's count and sum as name_count and
// name_sum.
func exported(t *testing.T, m *metrics) map[string]float64 {
	t.Helper()
	families, err := m.reg.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, f := range families {
		for _, s := range f.GetMetric() {
			var labels []string
			for _, l := range s.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			key := func(suffix string) string {
				if len(labels) == 0 {
					return f.GetName() + suffix
				}
				return f.GetName() + suffix + "{" + strings.Join(labels, ",") + "}"
			}
			switch {
			case s.Counter != nil:
				out[key("")] = s.GetCounter().GetValue()
			case s.Gauge != nil:
				out[key("")] = s.GetGauge().GetValue()
			case s.Histogram != nil:
				out[key("_count")] = float64(s.GetHistogram().GetSampleCount())
				out[key("_sum")] = s.GetHistogram().GetSampleSum()
			default:
				t.Errorf("%s: a series of an unexpected type", key(""))
			}
		}
	}
	return out
}

// The metrics account for what the service did, exactly: each is the Stats counter it
// stands for, whose values are what the story made; the notifications created are
// those in the store, and the attempts' durations those the store recorded.
func TestMetricsAccountForTheStats(t *testing.T) {
	s := metricsStory(t)
	h := s.h
	st := h.svc.stats()
	assert.Equal(t, locks.IngestStats{Batches: uint64(h.handledN), Readings: 7, Changed: 4, Same: 2, Stale: 1, Rejected: 2,
		Restored: 1, Notifications: 7, StoreErrors: 1}, st.Ingest)
	assert.Equal(t, locks.NotifierStats{Attempts: 14, Delivered: 8, Failed: 5, Dead: 1, Cancelled: 1}, st.Notify)
	assert.Equal(t, locks.LivenessStats{Tracked: 3, Lost: 3}, st.Liveness)
	assert.Equal(t, 0, st.Pending, "every notification ended")

	// What the store holds: every notification created, and every attempt's duration.
	created := 0
	took := map[locks.AttemptOutcome]float64{}
	for _, id := range s.sensors {
		notes, err := s.store.Notifications(t.Context(), locks.SensorID(id), locks.Range{Limit: locks.MaxLimit})
		require.NoError(t, err)
		created += len(notes)
		for _, n := range notes {
			for _, a := range n.History {
				outcome := locks.AttemptFailed
				switch {
				case a.Delivered():
					outcome = locks.AttemptDelivered
				case n.Status == locks.Dead && a.N == len(n.History):
					outcome = locks.AttemptDead
				}
				took[outcome] += a.Duration.Seconds()
			}
		}
	}
	require.Equal(t, 10, created, "7 by the ingester, 3 lost")

	f := func(v uint64) float64 { return float64(v) }
	in, no, live := st.Ingest, st.Notify, st.Liveness
	want := map[string]float64{
		"locks_batches_total":                                                          f(in.Batches),
		`locks_readings_total{locks_outcome="changed"}`:                                f(in.Changed),
		`locks_readings_total{locks_outcome="same"}`:                                   f(in.Same),
		`locks_readings_total{locks_outcome="stale"}`:                                  f(in.Stale),
		`locks_readings_total{locks_outcome="rejected"}`:                               f(in.Rejected),
		"locks_notifications_created_total":                                            float64(created),
		`locks_notification_attempts_total{locks_outcome="delivered"}`:                 f(no.Delivered),
		`locks_notification_attempts_total{locks_outcome="failed"}`:                    f(no.Failed),
		`locks_notification_attempts_total{locks_outcome="dead"}`:                      f(no.Dead),
		`locks_notification_attempt_duration_seconds_count{locks_outcome="delivered"}`: f(no.Delivered),
		`locks_notification_attempt_duration_seconds_count{locks_outcome="failed"}`:    f(no.Failed),
		`locks_notification_attempt_duration_seconds_count{locks_outcome="dead"}`:      f(no.Dead),
		`locks_notifications_total{locks_outcome="delivered"}`:                         f(no.Delivered),
		`locks_notifications_total{locks_outcome="dead"}`:                              f(no.Dead),
		`locks_notifications_total{locks_outcome="cancelled"}`:                         f(no.Cancelled),
		"locks_sensors_lost_total":                                                     f(live.Lost),
		"locks_sensors_restored_total":                                                 f(in.Restored),
		"locks_liveness_false_alarms_total":                                            f(live.FalseAlarms),
		`locks_store_errors_total{locks_part="ingester"}`:                              f(in.StoreErrors),
		`locks_store_errors_total{locks_part="notifier"}`:                              f(no.Errors),
		`locks_store_errors_total{locks_part="liveness"}`:                              f(live.Errors),
		"locks_sensors_tracked":                                                        float64(live.Tracked),
	}
	got := exported(t, h.svc.metrics)
	// The durations' sums, added in another order than the store's: equal but for the
	// floating point's rounding. (On the fake clock an attempt takes what the clock's
	// time is past the microsecond it starts on, as the store records it.)
	for _, o := range []locks.AttemptOutcome{locks.AttemptDelivered, locks.AttemptFailed, locks.AttemptDead} {
		key := fmt.Sprintf("locks_notification_attempt_duration_seconds_sum{locks_outcome=%q}", o)
		if assert.Contains(t, got, key) {
			assert.InDelta(t, took[o], got[key], 1e-12, key)
			delete(got, key)
		}
	}
	// Every other series, and no more: no label names a sensor, a client or a notification.
	assert.Equal(t, want, got)
	assert.Equal(t, f(no.Attempts), got[`locks_notification_attempts_total{locks_outcome="delivered"}`]+
		got[`locks_notification_attempts_total{locks_outcome="failed"}`]+got[`locks_notification_attempts_total{locks_outcome="dead"}`])
	assert.Equal(t, f(in.Readings), got[`locks_readings_total{locks_outcome="changed"}`]+
		got[`locks_readings_total{locks_outcome="same"}`]+got[`locks_readings_total{locks_outcome="stale"}`])
	assert.Equal(t, got["locks_notifications_created_total"], got[`locks_notifications_total{locks_outcome="delivered"}`]+
		got[`locks_notifications_total{locks_outcome="dead"}`]+got[`locks_notifications_total{locks_outcome="cancelled"}`],
		"every notification created ended once")
}

// findTool returns the program that the variable names, or name on PATH. Without it the
// test skips, or fails under CI=true: CI must not go green on a check it never ran.
func findTool(t *testing.T, variable, name string) string {
	t.Helper()
	if p := os.Getenv(variable); p != "" {
		return p
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	msg := name + " not found: set " + variable + " or put it on PATH (Debian's prometheus package has it; ./scripts/test.sh installs it)"
	if os.Getenv(testenv.CIVar) == "true" {
		t.Fatal(msg + "; under CI=true this test may not skip")
	}
	t.Skip(msg)
	return ""
}

// get makes a request of the service and returns the answer's status, headers and body.
func get(t *testing.T, method, url, accept string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, nil)
	require.NoError(t, err)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, body
}

// seriesLabel is a label of a series in Prometheus's text format.
var seriesLabel = regexp.MustCompile(`[{,]([a-zA-Z_][a-zA-Z0-9_]*)="`)

// /metrics, scraped over HTTP from the running service after the story, has every
// metric with its help and type, labelled by outcome and part only, with the story's
// counts, and passes promtool's lint: names, units, suffixes, helps and types as
// Prometheus would have them.
func TestMetricsScrapePassesPromtoolCheckMetrics(t *testing.T) {
	promtool := findTool(t, "FEEDKIT_PROMTOOL", "promtool")
	s := metricsStory(t)
	code, header, body := get(t, http.MethodGet, s.h.url+"/metrics", "text/plain;version=0.0.4")
	require.Equal(t, http.StatusOK, code, "%s", body)
	assert.True(t, strings.HasPrefix(header.Get("Content-Type"), "text/plain"), header.Get("Content-Type"))
	text := "\n" + string(body)
	for name, typ := range metricNames {
		assert.Contains(t, text, "\n# HELP "+name+" ", "the scrape has no help for %s", name)
		assert.Contains(t, text, "\n# TYPE "+name+" "+typ+"\n", "the scrape has no %s %s", typ, name)
	}
	var labels []string
	for _, m := range seriesLabel.FindAllStringSubmatch(text, -1) {
		if m[1] != "le" && !slices.Contains(labels, m[1]) {
			labels = append(labels, m[1])
		}
	}
	slices.Sort(labels)
	assert.Equal(t, []string{labelOutcome, labelPart}, labels, "no label names a sensor, a client or a notification")
	for _, line := range []string{
		`locks_readings_total{locks_outcome="rejected"} 2`,
		`locks_notification_attempts_total{locks_outcome="failed"} 5`,
		`locks_notification_attempt_duration_seconds_count{locks_outcome="delivered"} 8`,
		`locks_notifications_total{locks_outcome="dead"} 1`,
		`locks_notifications_total{locks_outcome="cancelled"} 1`,
		`locks_sensors_lost_total 3`,
		`locks_sensors_restored_total 1`,
		`locks_store_errors_total{locks_part="ingester"} 1`,
		`locks_sensors_tracked 3`,
	} {
		assert.Contains(t, text, "\n"+line+"\n")
	}

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	out, err := cmd.CombinedOutput()
	assert.NoError(t, err, "promtool check metrics:\n%s\non the scrape:\n%s", out, body)
	assert.Empty(t, strings.TrimSpace(string(out)), "promtool's findings")
}

// addrOutput is a run's output that sends the address the run says it serves on.
type addrOutput struct {
	syncBuffer
	addr chan string
	sent bool
}

var servesOn = regexp.MustCompile(`operator API: http://(\S+)/sensors  \(metrics: http://(\S+)/metrics;`)

func (a *addrOutput) Write(p []byte) (int, error) {
	n, err := a.syncBuffer.Write(p)
	if m := servesOn.FindStringSubmatch(a.String()); m != nil && !a.sent && m[1] == m[2] {
		a.sent = true
		a.addr <- m[1]
	}
	return n, err
}

// The command serves /metrics on -addr next to the operator API, whose routes and
// errors are as before: /metrics answers GET and HEAD, refuses other methods in the
// API's JSON, and is the only path it takes.
func TestRunServesMetricsNextToTheAPI(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a guard against a hang
	defer cancel()
	out := &addrOutput{addr: make(chan string, 1)}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, options{addr: "127.0.0.1:0", retry: "exp", retryUnit: time.Second}, out, io.Discard)
	}()
	var base string
	select {
	case addr := <-out.addr:
		base = "http://" + addr
	case err := <-done:
		t.Fatalf("the run ended before it served: %v\n%s", err, out.String())
	}

	code, header, body := get(t, http.MethodGet, base+"/metrics", "")
	assert.Equal(t, http.StatusOK, code)
	assert.True(t, strings.HasPrefix(header.Get("Content-Type"), "text/plain"), header.Get("Content-Type"))
	text := "\n" + string(body)
	for name, typ := range metricNames {
		assert.Contains(t, text, "\n# TYPE "+name+" "+typ+"\n")
	}
	assert.Contains(t, text, "\nlocks_sensors_tracked 0\n")
	code, _, body = get(t, http.MethodHead, base+"/metrics", "")
	assert.Equal(t, http.StatusOK, code)
	assert.Empty(t, body)
	code, header, body = get(t, http.MethodPost, base+"/metrics", "")
	assert.Equal(t, http.StatusMethodNotAllowed, code)
	assert.Equal(t, "GET, HEAD", header.Get("Allow"))
	assert.JSONEq(t, `{"error":"method POST is not allowed on /metrics (allowed: GET, HEAD)"}`, string(body))
	code, _, body = get(t, http.MethodGet, base+"/metrics/more", "")
	assert.Equal(t, http.StatusNotFound, code)
	assert.JSONEq(t, `{"error":"no such resource: /metrics/more"}`, string(body))

	code, _, body = get(t, http.MethodGet, base+"/health", "")
	assert.Equal(t, http.StatusOK, code)
	assert.JSONEq(t, `{"status":"ok"}`, string(body))
	code, _, body = get(t, http.MethodGet, base+"/sensors", "")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, string(body), `"sensors":`)
	code, _, body = get(t, http.MethodGet, base+"/stats", "")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, string(body), `"ingest":`)
	code, header, _ = get(t, http.MethodPost, base+"/health", "")
	assert.Equal(t, http.StatusMethodNotAllowed, code)
	assert.Equal(t, "GET, HEAD", header.Get("Allow"))

	cancel()
	require.NoError(t, <-done, out.String())
	assert.True(t, strings.HasSuffix(out.String(), "\nOK: the service stopped cleanly\n"), out.String())
}
