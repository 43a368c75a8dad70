package main

import (
	"bytes"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/internal/testenv"
)

func TestRunPrintsASummaryWithNothingLost(t *testing.T) {
	for _, threads := range []string{"10", "0"} {
		t.Run("threads="+threads, func(t *testing.T) { testRunSummary(t, threads) })
	}
}

// The run is scripted by the feed's events, not by a stopwatch, so the story below holds
// on a machine of any speed; the assertions hold however far the run got in its time.
func testRunSummary(t *testing.T, threads string) {
	var out bytes.Buffer
	err := run(t.Context(), []string{"-duration", "3s", "-outage", "1s", "-progress", "500ms", "-matches", "20", "-rate", "2000", "-threads", threads}, &out)
	require.NoError(t, err, out.String())
	text := out.String()
	// The story of the outage, in order: each step is printed before it is taken, and
	// the run ends only once the producer is up again after it.
	assert.Regexp(t, `(?s)recovery #\d+ requested for producer 1.*producer 1 up \(FirstRecoveryCompleted\)`+
		`.*outage: alives stop and the connection drops for 1s.*producer 1 down \(\w+\)`+
		`.*outage over.*recovery #\d+ requested for producer 1.*producer 1 up \(ReturnedFromInactivity\), after processing \d+ replayed messages`, text)
	requested, completed := count(t, text, "recoveries requested"), count(t, text, "recoveries completed")
	assert.GreaterOrEqual(t, requested, 2, "the first recovery and the outage's")
	assert.GreaterOrEqual(t, completed, 2)
	assert.LessOrEqual(t, completed, requested)
	assert.GreaterOrEqual(t, count(t, text, "connection losses"), 1)
	lostInOutage, replayed := count(t, text, "messages lost in the outage"), count(t, text, "of which replayed")
	assert.GreaterOrEqual(t, replayed, lostInOutage, "every message lost in the outage came back in a replay")
	if threads == "0" {
		assert.Contains(t, text, "serial delivery")
		assert.NotContains(t, text, "messages per worker")
	} else {
		assert.Contains(t, text, threads+" workers")
		assert.Regexp(t, `messages per worker\s+\d+–\d+\n`, text)
	}
	assertNothingLost(t, text)
}

// assertNothingLost checks the summary's accounts: every event message sent was received,
// live or replayed, and each match's live messages in order.
func assertNothingLost(t *testing.T, text string) {
	t.Helper()
	assert.Contains(t, text, "summary")
	assert.Equal(t, 0, count(t, text, "lost"))
	assert.Equal(t, 0, count(t, text, "out of order"))
	assert.Equal(t, 0, count(t, text, "unparsable"))
	sent, received := count(t, text, "event messages sent"), count(t, text, "event messages received")
	assert.Positive(t, sent, "the feed flowed")
	assert.Equal(t, sent+count(t, text, "received more than once"), received, "each message sent arrived once, and the copies are counted")
}

// count returns the figure of a summary line.
func count(t *testing.T, text, label string) int {
	t.Helper()
	m := regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(label) + `\s+(\d+)$`).FindStringSubmatch(text)
	require.Len(t, m, 2, "no summary line %q in:\n%s", label, text)
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	return n
}

func TestRunRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-duration", "0s"}, {"-matches", "0"}, {"-rate", "-1"}, {"-progress", "0s"}, {"-threads", "-1"}, {"-outage", "-1s"}, {"-outage", "100ms"}, {"-nope"}, {"-amqp", "http://x"}} {
		var out bytes.Buffer
		assert.Error(t, run(t.Context(), args, &out), "%v", args)
	}
}

func TestRunOnRabbitMQ(t *testing.T) {
	url := testenv.AMQPVhost(t)
	var out bytes.Buffer
	err := run(t.Context(), []string{"-amqp", url, "-duration", "3s", "-outage", "1s", "-progress", "500ms", "-matches", "20", "-rate", "2000"}, &out)
	require.NoError(t, err, out.String())
	text := out.String()
	assert.Contains(t, text, "on RabbitMQ (exchange unifiedfeed)")
	assert.Equal(t, 0, count(t, text, "connection losses"))
	assert.Regexp(t, `(?s)outage: alives stop for 1s.*producer 1 down \(\w+\)`+
		`.*outage over.*producer 1 up \(ReturnedFromInactivity\)`, text)
	assertNothingLost(t, text)
}
