package rabbitmq

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// socket is the TCP connection under an AMQP connection. The transport keeps it because
// amqp091-go holds its locks while it writes: a write stuck on a silent network blocks
// amqp091-go's own shutdown, and only a deadline or a close of the socket frees it.
type socket struct {
	net.Conn
	mu      sync.Mutex
	readErr error // the first read error
}

func (s *socket) Read(p []byte) (int, error) {
	n, err := s.Conn.Read(p)
	if err != nil {
		s.mu.Lock()
		if s.readErr == nil {
			s.readErr = err
		}
		s.mu.Unlock()
	}
	return n, err
}

func (s *socket) firstReadErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.readErr
}

// dialed is a new AMQP connection whose setup ctx still bounds.
type dialed struct {
	conn *amqp.Connection
	sock *socket
	stop func() bool
	ctx  context.Context
}

// release ends ctx's hold on the connection. If ctx ended first, the socket is being
// closed under the connection: release closes it and returns ctx's error.
func (d dialed) release() error {
	if d.stop() {
		return nil
	}
	_ = d.conn.Close()
	return d.ctx.Err()
}

// dial connects to the broker. Until release, the end of ctx closes the socket under
// whatever step is waiting (the TCP connect, a handshake, a declaration), so that Close
// never waits out a dial timeout or a broker that stopped answering.
func (s *settings) dial(ctx context.Context) (dialed, error) {
	var (
		mu   sync.Mutex
		sock *socket
		gone bool
	)
	// One deadline for the TCP connect and both handshakes: DialTimeout bounds them all.
	deadline := time.Now().Add(s.DialTimeout)
	cfg := s.amqpConfig()
	cfg.Dial = func(network, addr string) (net.Conn, error) {
		d := net.Dialer{Deadline: deadline}
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		// The handshakes are not heartbeat-guarded yet; amqp091-go clears this deadline
		// once the connection is open.
		if err := c.SetDeadline(deadline); err != nil {
			c.Close()
			return nil, err
		}
		mu.Lock()
		defer mu.Unlock()
		if gone {
			c.Close()
			return nil, ctx.Err()
		}
		sock = &socket{Conn: c}
		return sock, nil
	}
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		gone = true
		if sock != nil {
			sock.Close()
		}
	})
	conn, err := amqp.DialConfig(s.URL, cfg)
	if err != nil {
		stop()
		mu.Lock()
		defer mu.Unlock()
		return dialed{}, contextOr(ctx, fmt.Errorf("connect: %w", handshakeCause(err, sock)))
	}
	return dialed{conn: conn, sock: sock, stop: stop, ctx: ctx}, nil
}

// errHandshake marks a handshake that the network, not the broker, ended.
var errHandshake = errors.New("the connection failed during the AMQP handshake")

// handshakeCause undoes a guess of amqp091-go's: any failure during the login or the
// virtual-host step that the broker did not explain is reported as bad credentials
// (ErrCredentials) or a bad virtual host (ErrVhost). RabbitMQ refuses a login by closing
// the socket (an end of stream, or a reset when our frames are still unread), so those
// keep the verdict; a handshake that timed out, or failed without a read failing, is a
// network failure, worth retrying.
func handshakeCause(err error, sock *socket) error {
	if sock == nil || !(errors.Is(err, amqp.ErrCredentials) || errors.Is(err, amqp.ErrVhost)) {
		return err
	}
	readErr := sock.firstReadErr()
	var ne net.Error
	switch {
	case readErr == nil:
		return errHandshake
	case errors.Is(readErr, os.ErrDeadlineExceeded), errors.As(readErr, &ne) && ne.Timeout():
		return fmt.Errorf("%w: %w", errHandshake, readErr)
	}
	return err
}
