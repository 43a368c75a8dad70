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

const (
	// dialTimeout bounds the TCP connect and the AMQP handshake together.
	dialTimeout = 15 * time.Second
	// closeTimeout bounds a graceful AMQP close; a broker that does not answer by then
	// has the socket closed under it.
	closeTimeout = 5 * time.Second
)

// socket is the TCP connection under an AMQP connection. It is kept so that the end of a
// context can close it under amqp091-go, which watches no context while it waits on
// the network, and so that a failed handshake can tell a broker's refusal from a
// network failure by how the reads ended.
type socket struct {
	net.Conn
	mu         sync.Mutex
	readErr    error         // the first read error
	readFailed chan struct{} // closed at the first read error
}

func newSocket(c net.Conn) *socket { return &socket{Conn: c, readFailed: make(chan struct{})} }

func (s *socket) Read(p []byte) (int, error) {
	n, err := s.Conn.Read(p)
	if err != nil {
		s.mu.Lock()
		if s.readErr == nil {
			s.readErr = err
			close(s.readFailed)
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

// closeAndWait closes the socket and waits, at most closeTimeout, for amqp091-go's
// reader to see it fail: after that the reader only returns, so a Run that returns has
// left almost nothing of the connection running.
func (s *socket) closeAndWait() {
	_ = s.Close()
	t := time.NewTimer(closeTimeout)
	defer t.Stop()
	select {
	case <-s.readFailed:
	case <-t.C:
	}
}

// dialed is a new AMQP connection that ctx still guards.
type dialed struct {
	conn *amqp.Connection
	sock *socket
	stop func() bool
	ctx  context.Context
}

// release ends ctx's guard over the connection. When ctx ended first, the socket is
// being closed under the connection: release closes the connection and returns ctx's
// error.
func (d dialed) release() error {
	if d.stop() {
		return nil
	}
	d.sock.closeAndWait()
	_ = d.conn.Close()
	return d.ctx.Err()
}

// dial connects to the broker at rawURL. Until release, the end of ctx closes the socket
// under whatever is waiting (the TCP connect, a handshake, a declaration), so that a
// cancelled Run never waits out a dial timeout or a broker that stopped answering.
func dial(ctx context.Context, rawURL, connectionName string) (dialed, error) {
	var (
		mu   sync.Mutex
		sock *socket
		gone bool
	)
	deadline := time.Now().Add(dialTimeout)
	props := amqp.NewConnectionProperties()
	props.SetClientConnectionName(connectionName)
	cfg := amqp.Config{Properties: props}
	cfg.Dial = func(network, addr string) (net.Conn, error) {
		d := net.Dialer{Deadline: deadline}
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		// amqp091-go clears the deadline once the connection is open; until then, it is
		// what bounds a broker that accepted the socket and then went silent.
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
		sock = newSocket(c)
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
	conn, err := amqp.DialConfig(rawURL, cfg)
	if err != nil {
		stop()
		mu.Lock()
		defer mu.Unlock()
		if sock != nil {
			// Not closeAndWait: a handshake that failed before amqp091-go started reading
			// (TLS) would leave nothing to see the failure.
			sock.Close()
		}
		return dialed{}, contextOr(ctx, handshakeCause(err, sock))
	}
	return dialed{conn: conn, sock: sock, stop: stop, ctx: ctx}, nil
}

// contextOr returns ctx's error when ctx has ended (that is why the step failed), else err.
func contextOr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// errHandshake marks a handshake that the network, not the broker, ended.
var errHandshake = errors.New("the connection failed during the AMQP handshake")

// handshakeCause undoes a guess of amqp091-go's: a login or virtual-host step that
// failed without the broker saying why is reported as bad credentials (ErrCredentials)
// or a bad virtual host (ErrVhost). RabbitMQ refuses a login by closing the socket, so a
// read that ended that way keeps the verdict; a handshake that timed out, or failed
// without a read failing, is a network failure, worth retrying.
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

// refusal reports whether err is the broker refusing what the configuration asks for:
// the credentials, the virtual host, the permissions, or a queue declaration that
// clashes with the queue as it exists. Retrying does not help until an operator acts.
func refusal(err error) bool {
	if errors.Is(err, amqp.ErrCredentials) || errors.Is(err, amqp.ErrVhost) {
		return true
	}
	var ae *amqp.Error
	if !errors.As(err, &ae) || !ae.Server {
		return false
	}
	switch ae.Code {
	case amqp.AccessRefused, amqp.NotAllowed, amqp.PreconditionFailed:
		return true
	}
	return false
}
