package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

// -h and -help print the usage and exit 0, as a user asking for help expects; a flag the
// command does not know exits 1 and names it.
func TestHelpPrintsUsageAndExitsZero(t *testing.T) {
	for _, arg := range []string{"-h", "-help"} {
		var out, errOut bytes.Buffer
		assert.Equal(t, 0, command([]string{arg}, &out, &errOut), arg)
		assert.Contains(t, out.String(), "Usage of workflow:", arg)
		assert.Contains(t, out.String(), "-processes", arg)
		assert.Empty(t, errOut.String(), arg)
	}
	var out, errOut bytes.Buffer
	assert.Equal(t, 1, command([]string{"-nope"}, &out, &errOut))
	assert.Contains(t, out.String(), "flag provided but not defined: -nope")
	assert.Contains(t, errOut.String(), "workflow: flag provided but not defined: -nope")
}
