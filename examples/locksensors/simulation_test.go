package main

import (
	"bytes"
	"context"
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
	assert.Contains(t, out.String(), "every client knows every linked sensor's latest state")
	// At least the one that stopped the run: a machine that stalls longer than the
	// silence makes others lost too, as it would in production.
	assert.GreaterOrEqual(t, count(t, out.String(), `sensors watched, (\d+) lost`), 1)
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
