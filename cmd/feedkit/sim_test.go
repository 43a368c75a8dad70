package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/rabbitmq"
	"github.com/feedkit/feedkit/internal/testenv"
)

// The simulator as its own process: a session on RabbitMQ receives its feed, and its
// API answers with the simulator's token; interrupted, it ends with status 0.
func TestSimPublishesToRabbitMQAndServesItsAPI(t *testing.T) {
	url := testenv.AMQPURL(t)
	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	exchange := "feedkit-sim-" + hex.EncodeToString(suffix[:])

	// The consumer first, on the exchange the simulator will declare.
	tr, err := rabbitmq.New(rabbitmq.Config{URL: url, Exchange: exchange, DeclareExchange: true, ConnectionName: "feedkit-sim-test"})
	require.NoError(t, err)
	rec := feedtest.NewRecorder()
	s, err := feed.NewSession(tr, feed.SessionConfig{Listener: rec})
	require.NoError(t, err)
	require.NoError(t, s.Open(t.Context()))
	t.Cleanup(func() { _ = s.Close(context.Background()) })

	ctx, cancel := context.WithCancel(t.Context())
	out, w := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"sim", "-amqp", url, "-exchange", exchange, "-http", "127.0.0.1:0", "-rate", "2000", "-matches", "5"}, w, io.Discard)
		w.Close()
	}()
	lines := bufio.NewScanner(out)
	require.True(t, lines.Scan(), "the simulator says where it is")
	first := lines.Text()
	require.Contains(t, first, "its API at http://")
	api := strings.Fields(first[strings.Index(first, "http://"):])[0]

	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, api+"/v1/users/whoami.xml", nil)
	require.NoError(t, err)
	req.Header.Set("x-access-token", feedtest.DefaultAccessToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	require.NoError(t, rec.Wait(t.Context(), 200), "the session receives the simulator's feed")
	cancel()
	go func() { _, _ = io.Copy(io.Discard, out) }()
	assert.Equal(t, 0, <-done)
}
