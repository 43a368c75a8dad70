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
	var out bytes.Buffer
	err := run(t.Context(), []string{"-duration", "500ms", "-progress", "100ms", "-matches", "20", "-rate", "4000"}, &out)
	require.NoError(t, err, out.String())
	text := out.String()
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
	for _, args := range [][]string{{"-duration", "0s"}, {"-matches", "0"}, {"-rate", "-1"}, {"-progress", "0s"}, {"-nope"}, {"-amqp", "http://x"}} {
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
