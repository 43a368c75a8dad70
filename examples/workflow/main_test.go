package main

import (
	"bytes"
	"regexp"
	"strconv"
	"testing"

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
			assert.Regexp(t, `orders started again\s+60 got their process, 0 created\n`, text,
				"a restarted starter's starts, keyed by order id, start nothing twice")
			assert.Regexp(t, `orders finished\s+60/60\n`, text)
			assert.Regexp(t, `tasks decided\s+180\n`, text, "each task decided once")
			assert.Positive(t, number(t, text, `work timeouts repaired\s+(\d+)`), "hung actors' tasks were taken back")
			assert.Regexp(t, `mass recovery \w+: 60/60 checked, 0 repaired, 0 errors`, text)
		})
	}
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
