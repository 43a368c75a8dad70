package amqpconn

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHandshakeCauseTellsARefusalFromANetworkFailure(t *testing.T) {
	sock := func(readErr error) *Socket { return &Socket{readErr: readErr} }
	// RabbitMQ refuses a login by closing the socket: an end of stream or a reset keeps
	// amqp091-go's verdict.
	reset := &net.OpError{Op: "read", Err: syscall.ECONNRESET}
	assert.Same(t, amqp.ErrCredentials, handshakeCause(amqp.ErrCredentials, sock(io.EOF)))
	assert.Same(t, amqp.ErrVhost, handshakeCause(amqp.ErrVhost, sock(reset)))
	// A timeout is the network's doing, and the cause is kept.
	timeout := &net.OpError{Op: "read", Err: os.ErrDeadlineExceeded}
	err := handshakeCause(amqp.ErrCredentials, sock(timeout))
	assert.ErrorIs(t, err, ErrHandshake)
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
	assert.NotErrorIs(t, err, amqp.ErrCredentials, "no longer taken for a refusal")
	assert.ErrorIs(t, handshakeCause(amqp.ErrCredentials, sock(nil)), ErrHandshake, "no read failed: a write did")
	// Other errors pass through untouched.
	other := errors.New("dial tcp: connection refused")
	assert.Same(t, other, handshakeCause(other, sock(timeout)))
	assert.Same(t, amqp.ErrCredentials, handshakeCause(amqp.ErrCredentials, nil), "no socket: nothing to tell")
}

func TestSocketRecordsTheFirstReadError(t *testing.T) {
	client, server := net.Pipe()
	s := newSocket(client)
	go func() {
		_, _ = server.Write([]byte("x"))
		_ = server.Close()
	}()
	buf := make([]byte, 1)
	n, err := s.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.NoError(t, s.firstReadErr(), "a read that succeeded records nothing")
	select {
	case <-s.readFailed:
		t.Fatal("readFailed closed before a read failed")
	default:
	}

	_, err = s.Read(buf)
	require.ErrorIs(t, err, io.EOF)
	assert.Same(t, err, s.firstReadErr())
	_ = s.Close()
	_, later := s.Read(buf)
	require.Error(t, later)
	assert.Same(t, err, s.firstReadErr(), "the first error is kept")
	select {
	case <-s.readFailed:
	default:
		t.Fatal("readFailed still open after a read failed")
	}
}

func TestCloseAndWaitReturnsOnceTheReaderSawTheClose(t *testing.T) {
	client, server := net.Pipe()
	defer server.Close()
	s := newSocket(client)
	read := make(chan error, 1)
	go func() {
		_, err := s.Read(make([]byte, 1))
		read <- err
	}()
	start := time.Now()
	s.CloseAndWait(time.Hour)
	assert.Less(t, time.Since(start), time.Minute, "CloseAndWait waited out its timeout")
	assert.ErrorIs(t, <-read, io.ErrClosedPipe)
	assert.ErrorIs(t, s.firstReadErr(), io.ErrClosedPipe)
}

func TestCloseAndWaitGivesUpWhenNothingReads(t *testing.T) {
	client, server := net.Pipe()
	defer server.Close()
	s := newSocket(client)
	start := time.Now()
	s.CloseAndWait(20 * time.Millisecond)
	assert.GreaterOrEqual(t, time.Since(start), 20*time.Millisecond)
	_, err := server.Write([]byte("x"))
	assert.Error(t, err, "the socket is closed")
}

func TestContextOr(t *testing.T) {
	err := errors.New("declare queue: channel closed")
	assert.Same(t, err, ContextOr(t.Context(), err))
	assert.Nil(t, ContextOr(t.Context(), nil))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	assert.Same(t, context.Canceled, ContextOr(ctx, err), "the end of ctx is why the step failed")
}

func TestWithCloseNotice(t *testing.T) {
	base := errors.New("publish: channel/connection is not open")
	closed := make(chan *amqp.Error, 1)
	assert.Same(t, base, WithCloseNotice(base, closed), "no notice waiting: err as it is, at once")

	notice := &amqp.Error{Code: amqp.NotFound, Reason: "NOT_FOUND - no queue 'q'", Server: true}
	closed <- notice
	err := WithCloseNotice(base, closed)
	assert.ErrorIs(t, err, base)
	var ae *amqp.Error
	require.ErrorAs(t, err, &ae)
	assert.Same(t, notice, ae)
	assert.Contains(t, err.Error(), "(channel closed: Exception (404) Reason: \"NOT_FOUND - no queue 'q'\")")
	assert.Same(t, base, WithCloseNotice(base, closed), "the notice was taken")

	close(closed)
	assert.Same(t, base, WithCloseNotice(base, closed), "a closed notify channel adds nothing")
}
