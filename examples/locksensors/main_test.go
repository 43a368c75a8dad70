package main

import (
	"context"
	"io"
	"regexp"
	"strconv"
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
	assert.Contains(t, out.String(), "every client knows every linked sensor's latest state")
	assert.Contains(t, out.String(), "3 refused;", "the three bad messages, no more")
	// However many came out of order (0 to a few), each client says so.
	assert.Len(t, regexp.MustCompile(`received; \d+ arrived after a newer one of their sensor and were dropped`).FindAllString(out.String(), -1), 2,
		"each client's count of late notifications:\n%s", out.String())
	// At least the silent sensor: a machine that stalls longer than the silence makes
	// others lost (and restored) too, as it would in production.
	assert.GreaterOrEqual(t, count(t, out.String(), `refused; (\d+) restored`), 1)
	assert.GreaterOrEqual(t, count(t, out.String(), `sensors watched, (\d+) lost`), 1)
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
