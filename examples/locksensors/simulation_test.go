package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/examples/locksensors/locks"
)

// cancelOn is a log output that cancels a context at the first line containing a
// string, before the logger's caller goes on.
type cancelOn struct {
	mu     sync.Mutex
	what   string
	cancel context.CancelFunc
	found  bool
}

func (c *cancelOn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if strings.Contains(string(p), c.what) {
		c.found = true
		c.cancel()
	}
	return len(p), nil
}

// seen reports whether the line was written.
func (c *cancelOn) seen() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.found
}

// syncBuffer is a bytes.Buffer safe for the demo's writes and the test's reads.
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

// TestDemoInterruptedJudgesASettledService: the demo run until Ctrl-C (as its
// doc says) is interrupted just as a sensor is found lost, with that loss's
// notification not sent yet. Its verdict must judge the service once it has settled,
// not a service stopped with its work half done.
func TestDemoInterruptedJudgesASettledService(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo for a few seconds")
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a guard against a hang
	defer cancel()
	var out syncBuffer
	logOut := &cancelOn{what: "sensor lost", cancel: cancel}
	err := run(ctx, options{addr: "127.0.0.1:0", silence: 2 * time.Second, retry: "exp", retryUnit: 100 * time.Millisecond,
		attempts: 10, simulate: true, sensors: 6, every: 50 * time.Millisecond, verbose: true}, &out, logOut)
	require.NoError(t, err, out.String())
	require.True(t, logOut.seen(), "the run ended before a sensor was found lost:\n%s", out.String())
	assert.True(t, strings.HasSuffix(out.String(), "\nOK: every client knows the latest state of every sensor it is linked to\n"), out.String())
	// At least the one that stopped the run: a machine that stalls longer than the
	// silence makes others lost too, as it would in production.
	assert.GreaterOrEqual(t, count(t, out.String(), `watched; (\d+) reported lost`), 1)
}

// failingPublisher refuses every message, as a publisher whose context ended does.
type failingPublisher struct{}

func (failingPublisher) Publish(ctx context.Context, _ []byte) error { return context.Canceled }
func (failingPublisher) Close() error                                { return nil }

// TestSimulationCountsWhatItSent: a reading whose publish failed (the simulation
// being stopped) was not sent: counting it makes settle wait its whole timeout for a
// reading that never comes, and the summary overstate what was sent.
func TestSimulationCountsWhatItSent(t *testing.T) {
	sim := &simulation{pub: failingPublisher{}, sensors: []locks.SensorID{"a", "b"}, silent: "b",
		lastState: map[locks.SensorID]int{}}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	sim.play(ctx, options{every: time.Hour, silence: time.Hour})
	assert.Zero(t, sim.readings, "readings counted as sent")
	assert.Zero(t, sim.bad, "bad messages counted as sent")
}

// TestWebhookKeepsTheNewestOfEachSensor: the demo's clients apply the receiver's rule.
// A notification that arrives after a newer one of its sensor is dropped and counted,
// a retry of one handled is a duplicate, not a late arrival, and what a client is
// judged on is what it kept, not what arrived last.
func TestWebhookKeepsTheNewestOfEachSensor(t *testing.T) {
	h, err := startWebhook("Test client", 1)
	require.NoError(t, err)
	defer h.close()
	post := func(key string, b locks.Body) int {
		t.Helper()
		body, err := json.Marshal(b)
		require.NoError(t, err)
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/notify", bytes.NewReader(body))
		req.Header.Set(locks.IdempotencyKeyHeader, key)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	door1 := locks.Body{NotificationID: 1, SensorID: "door", Event: locks.EventChanged, State: 1, Sequence: 1}
	door2 := locks.Body{NotificationID: 2, SensorID: "door", Event: locks.EventChanged, State: 0, Sequence: 2}
	gate := locks.Body{NotificationID: 3, SensorID: "gate", Event: locks.EventChanged, State: 1, Sequence: 1}
	assert.Equal(t, http.StatusServiceUnavailable, post("notification-2", door2), "refused on purpose")
	assert.Equal(t, http.StatusOK, post("notification-2", door2), "the retry")
	assert.Equal(t, http.StatusOK, post("notification-1", door1), "the older one, late")
	assert.Equal(t, http.StatusOK, post("notification-3", gate))
	assert.Equal(t, http.StatusOK, post("notification-2", door2), "a retry whose answer was lost")

	got := h.snapshot()
	assert.Equal(t, 1, got.refused)
	assert.Equal(t, 1, got.late, "arrived after a newer one of its sensor")
	assert.Equal(t, 1, got.dupes)
	kept, ok := got.kept["door"]
	require.True(t, ok)
	assert.Equal(t, door2, kept, "the newest of door, not the last to arrive")
	assert.Equal(t, gate, got.kept["gate"])
	assert.Equal(t, map[locks.Event]int{locks.EventChanged: 3}, got.events, "every notification received once")
}
