package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// -h and -help print the usage and exit 0, as a user asking for help expects: first a
// paragraph that says what the program does, then how to call it and the flags; a flag
// the command does not know exits 1 and names it.
func TestHelpPrintsUsageAndExitsZero(t *testing.T) {
	for _, arg := range []string{"-h", "-help"} {
		var out, errOut bytes.Buffer
		assert.Equal(t, 0, command([]string{arg}, &out, &errOut), arg)
		assert.True(t, strings.HasPrefix(out.String(), "Workflow runs orders"), "%s starts with what the program does:\n%s", arg, out.String())
		what, _, found := strings.Cut(out.String(), "\n\n")
		assert.True(t, found && strings.HasSuffix(what, "."), "%s: the first paragraph is sentences:\n%s", arg, what)
		assert.Contains(t, out.String(), "\n\nUsage: workflow [flags]\n", arg)
		assert.Contains(t, out.String(), "-processes", arg)
		assert.Empty(t, errOut.String(), arg)
	}
	var out, errOut bytes.Buffer
	assert.Equal(t, 1, command([]string{"-nope"}, &out, &errOut))
	assert.Contains(t, out.String(), "flag provided but not defined: -nope")
	assert.Contains(t, errOut.String(), "workflow: flag provided but not defined: -nope")
}
