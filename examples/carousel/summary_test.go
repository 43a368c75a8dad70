package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/carousel"
)

// summaryOf prints o's summary and returns it with the error printSummary returned.
func summaryOf(o outcome) (string, error) {
	var out bytes.Buffer
	err := printSummary(&out, o)
	return out.String(), err
}

// lastLine is the last line of out.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	return lines[len(lines)-1]
}

func oneCycle(m carousel.CycleMetadata) carousel.Status {
	return carousel.Status{Active: true, Cycles: []carousel.CycleStatus{{ID: "articles-whole",
		Config: carousel.CycleConfig{Type: carousel.ThrottledWholeCollection}, Metadata: m}}}
}

// The summary's durations are rounded for people, a cycle whose source works reads "ok"
// (not the "stopped" every cycle is in once the run is over), and the verdict comes last.
func TestSummaryOfAHealthyRun(t *testing.T) {
	out, err := summaryOf(outcome{
		status: oneCycle(carousel.CycleMetadata{Iteration: 2, Completed: 3, Total: 56,
			Throttle: 64285714285 * time.Nanosecond, States: []carousel.State{carousel.Stopped}}),
		republished: map[string]int{"articles-whole": 3}, local: true,
		got: receipt{total: 3, distinct: 3, byOrigin: map[string]int{"demo-cms": 3}}})
	require.NoError(t, err)
	assert.Regexp(t, `articles-whole\s+ThrottledWholeCollection\s+2\s+3/56\s+0\s+1m4s\s+ok\n`, out)
	assert.NotContains(t, out, "stopped]")
	assert.Contains(t, out, "  by origin: demo-cms 3\n")
	assert.Equal(t, "OK: 3 items republished to the local notifier, which accepted every one", lastLine(out))
}

// A failed run says FAILED, last, with what failed, and the error says printSummary has
// told it; a cycle whose source fails is named with its error.
func TestSummaryOfAFailedRun(t *testing.T) {
	for _, c := range []struct {
		name string
		o    outcome
		want string
	}{
		{"refused", outcome{republished: map[string]int{"articles-whole": 2}, local: true, got: receipt{total: 2, bad: 1}},
			"FAILED: the notifier refused 1 request"},
		{"nothing", outcome{local: true}, "FAILED: nothing was republished"},
		{"all failed", outcome{failed: 9}, "FAILED: nothing was republished; 9 items failed to republish (the warnings say why)"},
		{"run error", outcome{republished: map[string]int{"articles-whole": 2}, err: errors.New("the store broke")},
			"FAILED: the store broke"},
	} {
		c.o.status = oneCycle(carousel.CycleMetadata{Errors: 1, LastError: "the notifier did not answer",
			States: []carousel.State{carousel.Stopped, carousel.Unhealthy}})
		out, err := summaryOf(c.o)
		assert.Equal(t, c.want, lastLine(out), c.name)
		assert.True(t, errors.As(err, new(reported)), "%s: %v", c.name, err)
		assert.Contains(t, out, "  articles-whole: the notifier did not answer\n", c.name)
		assert.Regexp(t, `\s1\s+0s\s+failing\n`, out, c.name)
	}
}

// With an external notifier the verdict names where the items went, and says how many
// failed.
func TestSummaryWithAnExternalNotifier(t *testing.T) {
	out, err := summaryOf(outcome{status: oneCycle(carousel.CycleMetadata{}), republished: map[string]int{"articles-whole": 1},
		notifierURL: "http://example.test/notify"})
	require.NoError(t, err)
	assert.NotContains(t, out, "local notifier")
	assert.Equal(t, "OK: 1 item republished to http://example.test/notify", lastLine(out))
	out, err = summaryOf(outcome{status: oneCycle(carousel.CycleMetadata{}), republished: map[string]int{"articles-whole": 4},
		failed: 2, notifierURL: "http://example.test/notify"})
	require.NoError(t, err)
	assert.Equal(t, "OK: 4 items republished to http://example.test/notify; 2 failed to republish (the warnings say why)", lastLine(out))
}

// No line of a summary is printed twice.
func TestSummaryHasNoDuplicateLine(t *testing.T) {
	out, _ := summaryOf(outcome{status: oneCycle(carousel.CycleMetadata{}), republished: map[string]int{"articles-whole": 1},
		local: true, got: receipt{total: 1, distinct: 1, byOrigin: map[string]int{"demo-cms": 1}}})
	seen := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		if line != "" {
			assert.False(t, seen[line], "printed twice: %q", line)
			seen[line] = true
		}
	}
}

// A progress line counts what was republished, by cycle, and what failed.
func TestProgressLine(t *testing.T) {
	var out bytes.Buffer
	printProgress(&out, 2000312*time.Microsecond, oneCycle(carousel.CycleMetadata{}), map[string]int{"articles-whole": 40}, 0)
	assert.Equal(t, "after 2s: 40 items republished so far (articles-whole 40)\n", out.String())
	out.Reset()
	st := oneCycle(carousel.CycleMetadata{})
	st.Active = false
	printProgress(&out, 4*time.Second, st, nil, 3)
	assert.Equal(t, "after 4s: 0 items republished so far (articles-whole 0); 3 failed to republish; passive: another instance holds the lease\n", out.String())
}
