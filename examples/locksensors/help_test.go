package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// -h and -help print the usage and exit 0, as a user asking for help expects: first a
// paragraph that says what the program does, then where its API and its metrics are,
// how to call it and the flags; a flag the command does not know exits 1 and names it.
func TestHelpPrintsUsageAndExitsZero(t *testing.T) {
	for _, arg := range []string{"-h", "-help"} {
		var out, errOut bytes.Buffer
		assert.Equal(t, 0, command([]string{arg}, &out, &errOut), arg)
		assert.True(t, strings.HasPrefix(out.String(), "Locksensors runs the lock-sensor notification service:"), "%s starts with what the program does:\n%s", arg, out.String())
		what, _, found := strings.Cut(out.String(), "\n\n")
		assert.True(t, found && strings.HasSuffix(what, "."), "%s: the first paragraph is sentences:\n%s", arg, what)
		assert.Contains(t, out.String(), "\n\nUsage: locksensors [flags]\n", arg)
		assert.Contains(t, out.String(), "-addr", arg)
		assert.Contains(t, out.String(), "also serves the service's metrics for Prometheus at /metrics.", arg)
		assert.Contains(t, out.String(), "address of the operator API and of its /metrics", arg)
		assert.Empty(t, errOut.String(), arg)
	}
	var out, errOut bytes.Buffer
	assert.Equal(t, 1, command([]string{"-nope"}, &out, &errOut))
	assert.Contains(t, out.String(), "flag provided but not defined: -nope")
	assert.Contains(t, errOut.String(), "locksensors: flag provided but not defined: -nope")
}

// -silence reads plainly, with its default said once, and is what the flags make it.
func TestSilenceFlag(t *testing.T) {
	var out bytes.Buffer
	assert.Equal(t, 0, command([]string{"-h"}, &out, &out))
	assert.Contains(t, out.String(), "-silence duration\n    \treport a sensor lost once it has sent nothing for this long (default: 3s while simulating, so that you see a loss; 1h with -simulate=false)\n")
	for _, c := range []struct {
		args []string
		want time.Duration
	}{
		{nil, 3 * time.Second},
		{[]string{"-simulate=false"}, time.Hour},
		{[]string{"-silence", "10s"}, 10 * time.Second},
		{[]string{"-simulate=false", "-silence", "2m"}, 2 * time.Minute},
	} {
		o, err := parseFlags(c.args, &out)
		require.NoError(t, err, "%v", c.args)
		assert.Equal(t, c.want, o.silence, "%v", c.args)
	}
	_, err := parseFlags([]string{"-silence", "-1s"}, &out)
	assert.EqualError(t, err, "-silence -1s must not be negative")
}
