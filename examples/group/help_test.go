package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// -h and -help print the usage and exit 0, as a user asking for help expects: first a
// sentence saying what the program does, then how to run it, its roles and the flags. A
// flag the command does not know exits 1 and names it.
func TestHelpPrintsUsageAndExitsZero(t *testing.T) {
	for _, arg := range []string{"-h", "-help"} {
		var out, errOut bytes.Buffer
		assert.Equal(t, 0, command([]string{arg}, &out, &errOut), arg)
		assert.True(t, strings.HasPrefix(out.String(), "group runs the feed through a group of processes on RabbitMQ"), "%s starts with what the program does:\n%s", arg, out.String())
		assert.Contains(t, out.String(), "\nUsage: group [flags]", arg)
		assert.Contains(t, out.String(), "\nRoles:\n  all ", arg)
		assert.Contains(t, out.String(), "-role", arg)
		assert.Contains(t, out.String(), "-shards", arg)
		assert.Empty(t, errOut.String(), arg)
	}
	var out, errOut bytes.Buffer
	assert.Equal(t, 1, command([]string{"-nope"}, &out, &errOut))
	assert.Contains(t, out.String(), "flag provided but not defined: -nope")
	assert.Contains(t, errOut.String(), "group: flag provided but not defined: -nope")
}
