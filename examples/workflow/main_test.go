package main

import (
	"bytes"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/internal/pgtest"
)

func TestRunRepairsEveryOrder(t *testing.T) {
	for _, store := range []string{"memory", "postgres"} {
		t.Run(store, func(t *testing.T) {
			// -timeout is a guard against a hang: the run ends when every order has finished.
			args := []string{"-processes", "60", "-hang", "0.1", "-late", "0.1", "-crash", "0.1", "-timeout", "2m"}
			if store == "postgres" {
				args = append(args, "-pg", pgtest.URL(t))
			}
			var out bytes.Buffer
			require.NoError(t, run(t.Context(), args, &out), out.String())
			text := out.String()
			assert.Contains(t, text, ": 60 of those starts got the order's process, 0 created another.\n",
				"a restarted starter's starts, keyed by order id, start nothing twice")
			assert.Contains(t, text, "\n180 tasks were decided", "each task decided once")
			assert.Positive(t, number(t, text, `The recovery service took (\d+) tasks back after their work timeout`), "hung actors' tasks were taken back")
			assert.Contains(t, text, "  60/60 orders checked, 0 repaired, 0 errors\n")
			assert.Regexp(t, `\nOK: all 60 orders finished in \S+\n$`, text, "the verdict is the last line")
			// Every line of the summary and of the job's progress is printed once (the
			// progress lines while the orders run differ by their time).
			seen := map[string]bool{}
			for _, line := range strings.Split(text, "\n") {
				if line != "" {
					assert.False(t, seen[line], "printed twice: %q", line)
					seen[line] = true
				}
			}
		})
	}
}

// The verdict is one line, OK or FAILED with how many orders did not finish; a failure
// is not told a second time on stderr.
func TestVerdict(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, verdict(&out, 60, 60, 1230*time.Millisecond))
	assert.Equal(t, "OK: all 60 orders finished in 1.23s\n", out.String())
	out.Reset()
	err := verdict(&out, 57, 60, time.Minute)
	assert.Equal(t, "FAILED: 3 of 60 orders did not finish in 1m0s\n", out.String())
	assert.EqualError(t, err, "3 of 60 orders did not finish in 1m0s")
	assert.True(t, errors.As(err, new(reported)), "command prints it no more")
}

func TestRunRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-processes", "0"}, {"-actors", "0"}, {"-work-timeout", "0s"}, {"-hang", "0.9"}, {"-crash", "-1"}, {"-timeout", "0s"}, {"-nope"}} {
		var out bytes.Buffer
		assert.Error(t, run(t.Context(), args, &out), "%v", args)
	}
}

func number(t *testing.T, text, pattern string) int {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(text)
	require.Len(t, m, 2, text)
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	return n
}
