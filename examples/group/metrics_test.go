package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/group"
	"github.com/feedkit/feedkit/promfeedkit"
)

// -http serves the worker's metrics at /metrics, a series per shard it consumes, until
// its context ends; a taken address is refused by its flag.
func TestServeMetricsServesTheWorkersShards(t *testing.T) {
	w, err := group.NewWorker(group.WorkerConfig{URL: "amqp://guest:guest@127.0.0.1:1/", Topology: group.Topology{Shards: 4},
		Shards: []int{1, 3}, Listener: newCounter(0)})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	var log bytes.Buffer
	require.NoError(t, serveMetrics(t.Context(), addr, func(m *promfeedkit.GroupMetrics) error { return m.WatchWorker(w) }, newPrinter(&log)))
	assert.Contains(t, log.String(), "metrics: http://"+addr+"/metrics")
	resp, err := http.Get("http://" + addr + "/metrics")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	for _, want := range []string{
		"feedkit_group_worker_connected 0",
		`feedkit_group_shard_deliveries_total{feedkit_shard="1"} 0`,
		`feedkit_group_shard_deliveries_total{feedkit_shard="3"} 0`,
	} {
		assert.Contains(t, string(body), want)
	}
	assert.NotContains(t, string(body), `feedkit_shard="0"`)

	err = serveMetrics(t.Context(), addr, func(*promfeedkit.GroupMetrics) error { return nil }, newPrinter(io.Discard))
	assert.ErrorContains(t, err, "-http "+addr)
	assert.True(t, strings.Contains(err.Error(), "address already in use"), err.Error())
}
