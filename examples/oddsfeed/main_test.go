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
	err := run(t.Context(), []string{"-duration", "500ms", "-progress", "100ms", "-matches", "20", "-rate", "4000", "-threads", threads}, &out)
	require.NoError(t, err, out.String())
	text := out.String()
	if threads == "0" {
		assert.Contains(t, text, "serial dispatch")
		assert.NotContains(t, text, "messages per worker")
	} else {
		assert.Contains(t, text, threads+" workers")
		assert.Regexp(t, `messages per worker\s+\d+–\d+\n`, text)
	}
	assert.Contains(t, text, "summary")
	assert.Regexp(t, `lost\s+0\n`, text)
	assert.Regexp(t, `out of order\s+0\n`, text)
	assert.Regexp(t, `unparsable\s+0\n`, text)
	m := regexp.MustCompile(`event messages\s+(\d+)`).FindStringSubmatch(text)
	require.Len(t, m, 2, text)
	n, _ := strconv.Atoi(m[1])
	assert.Greater(t, n, 100, "the feed flowed")
	assert.Contains(t, text, "odds_change")
}

func TestRunRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-duration", "0s"}, {"-matches", "0"}, {"-rate", "-1"}, {"-progress", "0s"}, {"-threads", "-1"}, {"-nope"}, {"-amqp", "http://x"}} {
		var out bytes.Buffer
		assert.Error(t, run(t.Context(), args, &out), "%v", args)
	}
}

func TestRunOnRabbitMQ(t *testing.T) {
	url := testenv.AMQPVhost(t)
	var out bytes.Buffer
	err := run(t.Context(), []string{"-amqp", url, "-duration", "500ms", "-progress", "100ms", "-matches", "20", "-rate", "4000"}, &out)
	require.NoError(t, err, out.String())
	text := out.String()
	assert.Contains(t, text, "on RabbitMQ (exchange unifiedfeed)")
	assert.Regexp(t, `lost\s+0\n`, text)
	assert.Regexp(t, `out of order\s+0\n`, text)
	assert.Regexp(t, `connection losses\s+0\n`, text)
	m := regexp.MustCompile(`event messages\s+(\d+)`).FindStringSubmatch(text)
	require.Len(t, m, 2, text)
	n, _ := strconv.Atoi(m[1])
	assert.Greater(t, n, 100, "the feed flowed through the broker")
}
