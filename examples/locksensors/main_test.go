package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDemo runs the command as README says, in memory, with the simulated sensors and
// clients, until its story is told: the silent sensor found lost and heard again (the
// interruption a user's Ctrl-C would be), and checks its verdict.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo for a few seconds")
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a guard against a hang
	defer cancel()
	var out syncBuffer
	heard := &cancelOn{what: "the silent sensor, found lost, is heard again", cancel: cancel}
	err := run(ctx, options{addr: "127.0.0.1:0", silence: time.Second, retry: "exp", retryUnit: 100 * time.Millisecond,
		attempts: 10, simulate: true, sensors: 6, every: 50 * time.Millisecond, verbose: true}, &out, heard)
	require.NoError(t, err, out.String())
	require.True(t, heard.seen(), "the run ended before the silent sensor was heard again:\n%s", out.String())
	text := out.String()
	assert.True(t, strings.HasSuffix(text, "\nOK: every client knows the latest state of every sensor it is linked to\n"), "the verdict is last:\n%s", text)
	assert.Contains(t, text, "; 3 bad messages refused.\n", "the three bad messages, no more")
	// However many came out of order (0 to a few), each client says so.
	assert.Len(t, regexp.MustCompile(`notifications; (\d+ of them came after newer news of their sensor and were|1 of them came after newer news of its sensor and was) dropped`).FindAllString(text, -1), 2,
		"each client's count of late notifications:\n%s", text)
	// At least the silent sensor: a machine that stalls longer than the silence makes
	// others lost (and restored) too, as it would in production.
	assert.GreaterOrEqual(t, count(t, text, `(\d+) heard again after being lost`), 1)
	assert.GreaterOrEqual(t, count(t, text, `watched; (\d+) reported lost`), 1)
	// Why the clients' counts differ is said, in the terms of the run.
	assert.Contains(t, text, "Client 2, Facility app, at ")
	assert.Contains(t, text, "linked to 3 of the 6 sensors; it answers its first 3 requests with 503")
	assert.Contains(t, text, "The clients' counts differ because the Security desk is linked to all 6 sensors and the Facility app to 3 of the 6 sensors;")
	assertNoLineTwice(t, text)
}

// assertNoLineTwice fails when a line of text, other than an empty one, is printed twice.
func assertNoLineTwice(t *testing.T, text string) {
	t.Helper()
	seen := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		if line != "" {
			assert.False(t, seen[line], "printed twice: %q", line)
			seen[line] = true
		}
	}
}

// A failed verdict is the last line, with each problem above it when there are several,
// and the error returned says it was told.
func TestVerdict(t *testing.T) {
	var out bytes.Buffer
	const ok = "OK: every client knows the latest state of every sensor it is linked to"
	err := verdict(&out, ok, []error{errors.New("2 notifications still pending")})
	assert.Equal(t, "FAILED: 2 notifications still pending\n", out.String())
	assert.True(t, errors.As(err, new(reported)))
	out.Reset()
	err = verdict(&out, ok, []error{errors.New("one"), errors.New("two")})
	assert.Equal(t, "problem: one\nproblem: two\nFAILED: 2 problems, listed above\n", out.String())
	assert.ErrorContains(t, err, "two")
	out.Reset()
	assert.NoError(t, verdict(&out, ok, nil))
	assert.Equal(t, ok+"\n", out.String())
}

// Without -simulate there is nothing to check: the run says what the service did and,
// last, that it stopped cleanly. The run ends when the output says the API is served.
func TestServiceAloneEndsWithAVerdict(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a guard against a hang
	defer cancel()
	out := &cancelOnOutput{what: "operator API: http://", cancel: cancel}
	require.NoError(t, run(ctx, options{addr: "127.0.0.1:0", retry: "exp", retryUnit: time.Second}, out, io.Discard))
	text := out.String()
	assert.Contains(t, text, "\nStored 0 readings and refused 0 bad messages; delivered 0 notifications; 0 still pending.\n")
	assert.True(t, strings.HasSuffix(text, "\nOK: the service stopped cleanly\n"), text)
}

// cancelOnOutput is a run's output that cancels its context once it has printed what.
type cancelOnOutput struct {
	syncBuffer
	what   string
	cancel context.CancelFunc
}

func (c *cancelOnOutput) Write(p []byte) (int, error) {
	n, err := c.syncBuffer.Write(p)
	if strings.Contains(c.String(), c.what) {
		c.cancel()
	}
	return n, err
}

// count returns the number the pattern's group finds in out.
func count(t *testing.T, out, pattern string) int {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(out)
	require.Len(t, m, 2, "%q not in:\n%s", pattern, out)
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	return n
}

func TestBadFlagsAreNamed(t *testing.T) {
	err := run(t.Context(), options{addr: "127.0.0.1:0", retry: "linear", retryUnit: time.Second}, io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-retry")
	err = run(t.Context(), options{addr: "127.0.0.1:0", retry: "exp", retryUnit: time.Second, pgURL: "postgres://%zz"}, io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-pg")
	err = run(t.Context(), options{addr: "nonsense", retry: "exp", retryUnit: time.Second}, io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-addr")
}
