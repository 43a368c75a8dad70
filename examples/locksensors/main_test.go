package main

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDemo runs the command as README says, shortened: in memory, with the simulated
// sensors and clients, and checks its verdict.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo for 4 seconds")
	}
	var out bytes.Buffer
	err := run(t.Context(), options{addr: "127.0.0.1:0", silence: time.Second, retry: "exp", retryUnit: 100 * time.Millisecond,
		attempts: 10, simulate: true, sensors: 6, every: 50 * time.Millisecond, duration: 4 * time.Second}, &out, io.Discard)
	require.NoError(t, err, out.String())
	assert.Contains(t, out.String(), "every client knows every linked sensor's latest state")
	assert.Contains(t, out.String(), "3 refused; 1 restored")
	assert.Contains(t, out.String(), "1 lost")
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
