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

func testRunSummary(t *testing.T, threads string) {
	var out bytes.Buffer
	err := run(t.Context(), []string{"-duration", "3s", "-outage", "1s", "-progress", "500ms", "-matches", "20", "-rate", "2000", "-threads", threads}, &out)
	require.NoError(t, err, out.String())
	text := out.String()
	// The story of the outage, in order.
	assert.Regexp(t, `(?s)recovery #\d+ requested for producer 1.*producer 1 up \(FirstRecoveryCompleted\)`+
		`.*outage: alives stopped and the connection dropped for 1s.*producer 1 down \((ConnectionDown|AliveIntervalViolation)\)`+
		`.*outage over.*recovery #\d+ requested for producer 1.*producer 1 up \(ReturnedFromInactivity\), after processing \d+ replayed messages`, text)
	assert.Regexp(t, `recoveries requested\s+2\n`, text)
	assert.Regexp(t, `recoveries completed\s+2\n`, text)
	m := regexp.MustCompile(`messages lost in the outage\s+(\d+)`).FindStringSubmatch(text)
	require.Len(t, m, 2, text)
	lostInOutage, _ := strconv.Atoi(m[1])
	assert.Greater(t, lostInOutage, 100, "the outage lost messages, which the recovery brought back")
	if threads == "0" {
		assert.Contains(t, text, "serial delivery")
		assert.NotContains(t, text, "messages per worker")
	} else {
		assert.Contains(t, text, threads+" workers")
		assert.Regexp(t, `messages per worker\s+\d+–\d+\n`, text)
	}
	assert.Contains(t, text, "summary")
	assert.Regexp(t, `lost\s+0\n`, text)
	assert.Regexp(t, `out of order\s+0\n`, text)
	assert.Regexp(t, `unparsable\s+0\n`, text)
	m = regexp.MustCompile(`event messages\s+(\d+)`).FindStringSubmatch(text)
	require.Len(t, m, 2, text)
	n, _ := strconv.Atoi(m[1])
	assert.Greater(t, n, 100, "the feed flowed")
	assert.Contains(t, text, "odds_change")
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
	assert.Regexp(t, `lost\s+0\n`, text)
	assert.Regexp(t, `out of order\s+0\n`, text)
	assert.Regexp(t, `connection losses\s+0\n`, text)
	assert.Contains(t, text, "outage: alives stopped for 1s")
	assert.Regexp(t, `producer 1 down \(AliveIntervalViolation\)`, text)
	assert.Regexp(t, `producer 1 up \(ReturnedFromInactivity\)`, text)
	m := regexp.MustCompile(`event messages\s+(\d+)`).FindStringSubmatch(text)
	require.Len(t, m, 2, text)
	n, _ := strconv.Atoi(m[1])
	assert.Greater(t, n, 100, "the feed flowed through the broker")
}
