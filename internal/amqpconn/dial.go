package amqpconn

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

// Socket is the TCP connection under an AMQP connection. Callers keep it because
// amqp091-go cannot be trusted with the network on its own:
//
//   - It watches no context while it waits on the network, so the end of a context can
//     only reach it by closing the socket under it.
//   - It writes while holding its locks, and its shutdown takes the same locks: a write
//     stuck on a silent network would keep even the heartbeat timeout from ending the
//     connection. Only a deadline (SetWriteDeadline, SetDeadline) or a Close frees it.
//   - A failed handshake is told from a broker's refusal by how the reads ended, which
//     only the socket sees.
//
// Its net.Conn methods are the connection's own; Read also records the first error.
type Socket struct {
	net.Conn
	mu         sync.Mutex
	readErr    error         // the first read error
	readFailed chan struct{} // closed at the first read error
}

func newSocket(c net.Conn) *Socket { return &Socket{Conn: c, readFailed: make(chan struct{})} }

// Read reads from the connection and records the first error, which tells how the
// broker or the network ended the connection.
func (s *Socket) Read(p []byte) (int, error) {
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

func (s *Socket) firstReadErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.readErr
}

// CloseAndWait closes the socket and waits, at most timeout, for amqp091-go's reader to
// see a read fail: after that the reader only returns, so a caller that shuts a
// connection down this way leaves almost nothing of it running. The timeout covers a
// socket nobody reads (a handshake that failed before amqp091-go started reading).
func (s *Socket) CloseAndWait(timeout time.Duration) {
	_ = s.Close()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-s.readFailed:
	case <-t.C:
	}
}

// Dialed is a new AMQP connection that the context given to Dial still guards: the end
// of that context closes Sock under whatever is waiting, until Release.
type Dialed struct {
	// Conn is the open connection.
	Conn *amqp.Connection
	// Sock is the socket under Conn.
	Sock *Socket

	stop func() bool
	ctx  context.Context
}

// Release ends the context's guard over the connection; call it once the caller's setup
// on the connection (channels, declarations) is done, or has failed. When the context
// ended first, its socket is being closed under the connection: Release waits, at most
// closeTimeout, for amqp091-go's reader to see that, closes the connection and returns
// the context's error.
func (d Dialed) Release(closeTimeout time.Duration) error {
	if d.stop() {
		return nil
	}
	d.Sock.CloseAndWait(closeTimeout)
	_ = d.Conn.Close()
	return d.ctx.Err()
}

// Dial connects to the broker at url with cfg, within timeout: one deadline bounds the
// TCP connect, TLS and the AMQP handshake together. Until Release, the end of ctx
// closes the socket under whatever step is waiting (the TCP connect, a handshake, the
// caller's declarations), so that a caller that is closing never waits out timeout or
// a broker that stopped answering.
//
// cfg.Dial is replaced; every other field of cfg is amqp091-go's to use. A failed
// dial returns ctx's error when ctx ended (that is why it failed), and ErrHandshake
// where amqp091-go would have blamed the credentials or the virtual host for a network
// failure.
func Dial(ctx context.Context, url string, cfg amqp.Config, timeout time.Duration) (Dialed, error) {
	var (
		mu   sync.Mutex
		sock *Socket
		gone bool
	)
	deadline := time.Now().Add(timeout)
	cfg.Dial = func(network, addr string) (net.Conn, error) {
		d := net.Dialer{Deadline: deadline}
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		// The handshakes are not heartbeat-guarded yet: until amqp091-go clears this
		// deadline, once the connection is open, it is what bounds a broker that
		// accepted the socket and then went silent.
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
	conn, err := amqp.DialConfig(url, cfg)
	if err != nil {
		stop()
		mu.Lock()
		defer mu.Unlock()
		if sock != nil {
			// amqp091-go leaves the socket open on some failures (a TLS configuration it
			// could not build, a SASL mechanism the broker does not offer). Not
			// CloseAndWait: a handshake that failed before amqp091-go started reading
			// (TLS) would leave nothing to see the failure.
			sock.Close()
		}
		return Dialed{}, ContextOr(ctx, handshakeCause(err, sock))
	}
	return Dialed{Conn: conn, Sock: sock, stop: stop, ctx: ctx}, nil
}

// ContextOr returns ctx's error when ctx has ended, else err: a step that failed while
// its context ended most likely failed because the context closed the socket under it,
// and the caller asked for that.
func ContextOr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// ErrHandshake marks a handshake that the network, not the broker, ended: a failure
// worth retrying, unlike the bad credentials amqp091-go would have reported.
var ErrHandshake = errors.New("the connection failed during the AMQP handshake")

// handshakeCause undoes a guess of amqp091-go's: any failure during the login or the
// virtual-host step that the broker did not explain is reported as bad credentials
// (ErrCredentials) or a bad virtual host (ErrVhost). RabbitMQ refuses a login by closing
// the socket (an end of stream, or a reset when our frames are still unread), so those
// keep the verdict; a handshake that timed out, or failed without a read failing, is a
// network failure, worth retrying.
func handshakeCause(err error, sock *Socket) error {
	if sock == nil || !(errors.Is(err, amqp.ErrCredentials) || errors.Is(err, amqp.ErrVhost)) {
		return err
	}
	readErr := sock.firstReadErr()
	var ne net.Error
	switch {
	case readErr == nil:
		return ErrHandshake
	case errors.Is(readErr, os.ErrDeadlineExceeded), errors.As(readErr, &ne) && ne.Timeout():
		return fmt.Errorf("%w: %w", ErrHandshake, readErr)
	}
	return err
}

// WithCloseNotice returns err with the broker's reason for closing a channel added, when
// the channel's close notice is already waiting on closed (as registered with
// Channel.NotifyClose): an operation that failed because the broker closed the channel
// then says why the broker did, which the operation's own error does not. It takes the
// notice off closed, and never waits for one.
func WithCloseNotice(err error, closed <-chan *amqp.Error) error {
	select {
	case e, ok := <-closed:
		if ok && e != nil {
			return fmt.Errorf("%w (channel closed: %w)", err, e)
		}
	default:
	}
	return err
}

// CloseGracefully closes conn with an AMQP close bounded by timeout, then closes its
// socket; it returns the close's error (amqp.ErrClosed when the connection was closed
// already). The bound is a timer that closes the socket, not a deadline on it: amqp091-go
// moves the read deadline three heartbeats ahead each time a frame arrives, so a broker
// whose heartbeats still come but which answers nothing else would hold a close bounded by
// a deadline for as long as its heartbeats come.
func CloseGracefully(conn *amqp.Connection, sock *Socket, timeout time.Duration) error {
	cut := time.AfterFunc(timeout, func() { _ = sock.Close() })
	defer cut.Stop()
	err := conn.CloseDeadline(time.Now().Add(timeout))
	_ = sock.Close()
	return err
}
