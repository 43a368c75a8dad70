package amqpconn

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waitTimeout bounds every wait of these tests: a dial that hangs fails its test.
const waitTimeout = 30 * time.Second

// fakeBroker is a listener that plays the first steps of an AMQP handshake and then
// does what after decides, to put a dial in states a real broker reaches only by
// accident. Its URL has credentials so that amqp091-go offers PLAIN.
type fakeBroker struct {
	ln       net.Listener
	accepted chan struct{} // a send for each connection accepted
}

// newFakeBroker listens on loopback; each connection reads the protocol header, sends
// connection.start when sendStart is set, reads whatever comes next and hands the
// connection to after.
func newFakeBroker(t *testing.T, sendStart bool, after func(net.Conn)) *fakeBroker {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	b := &fakeBroker{ln: ln, accepted: make(chan struct{}, 16)}
	var (
		conns []net.Conn // closed once the listener is
		wg    sync.WaitGroup
	)
	t.Cleanup(func() {
		_ = ln.Close()
		wg.Wait()
	})
	wg.Go(func() {
		defer func() {
			for _, c := range conns {
				_ = c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
			b.accepted <- struct{}{}
			go func() {
				header := make([]byte, 8)
				if _, err := io.ReadFull(c, header); err != nil {
					return
				}
				if sendStart {
					if _, err := c.Write(connectionStart()); err != nil {
						return
					}
					// The start-ok, all of it, so that closing the socket after it is a clean
					// end of stream: a frame header, then its payload and frame end.
					h := make([]byte, 7)
					if _, err := io.ReadFull(c, h); err != nil {
						return
					}
					if _, err := io.ReadFull(c, make([]byte, binary.BigEndian.Uint32(h[3:])+1)); err != nil {
						return
					}
				}
				after(c)
			}()
		}
	})
	return b
}

func (b *fakeBroker) url() string { return "amqp://user:pass@" + b.ln.Addr().String() + "/" }

// connectionStart is an AMQP 0-9-1 connection.start method frame offering PLAIN.
func connectionStart() []byte {
	var p bytes.Buffer
	_ = binary.Write(&p, binary.BigEndian, uint16(10)) // class connection
	_ = binary.Write(&p, binary.BigEndian, uint16(10)) // method start
	p.Write([]byte{0, 9})                              // version 0-9
	_ = binary.Write(&p, binary.BigEndian, uint32(0))  // server properties: an empty table
	for _, s := range []string{"PLAIN", "en_US"} {     // mechanisms, locales
		_ = binary.Write(&p, binary.BigEndian, uint32(len(s)))
		p.WriteString(s)
	}
	var f bytes.Buffer
	f.WriteByte(1)                                    // a method frame
	_ = binary.Write(&f, binary.BigEndian, uint16(0)) // on channel 0
	_ = binary.Write(&f, binary.BigEndian, uint32(p.Len()))
	f.Write(p.Bytes())
	f.WriteByte(0xCE) // frame end
	return f.Bytes()
}

// dialAsync runs Dial on a goroutine of its own and returns its result's channel.
func dialAsync(ctx context.Context, url string, timeout time.Duration) <-chan error {
	res := make(chan error, 1)
	go func() {
		d, err := Dial(ctx, url, amqp.Config{}, timeout)
		if err == nil {
			_ = d.Release(time.Second)
			_ = d.Conn.Close()
			err = errors.New("the dial succeeded")
		}
		res <- err
	}()
	return res
}

func awaitDial(t *testing.T, res <-chan error) error {
	t.Helper()
	select {
	case err := <-res:
		return err
	case <-time.After(waitTimeout):
		t.Fatal("Dial did not return")
		return nil
	}
}

// A broker that answered and then went silent after the login: amqp091-go calls that
// bad credentials, Dial a network failure.
func TestDialReportsAStalledLoginAsAHandshakeFailure(t *testing.T) {
	b := newFakeBroker(t, true, func(net.Conn) {})
	start := time.Now()
	err := awaitDial(t, dialAsync(t.Context(), b.url(), 300*time.Millisecond))
	assert.ErrorIs(t, err, ErrHandshake)
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
	assert.NotErrorIs(t, err, amqp.ErrCredentials)
	assert.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond, "the deadline ended it")
}

// A broker that closes the socket after the login refuses it, as RabbitMQ does: the
// verdict stays.
func TestDialKeepsARefusedLogin(t *testing.T) {
	b := newFakeBroker(t, true, func(c net.Conn) { _ = c.Close() })
	err := awaitDial(t, dialAsync(t.Context(), b.url(), waitTimeout))
	assert.ErrorIs(t, err, amqp.ErrCredentials)
	assert.NotErrorIs(t, err, ErrHandshake)
}

// The end of ctx closes the socket under a handshake that would otherwise wait out
// the dial timeout.
func TestDialEndsWithItsContextMidHandshake(t *testing.T) {
	for _, sendStart := range []bool{false, true} {
		b := newFakeBroker(t, sendStart, func(net.Conn) {})
		ctx, cancel := context.WithCancel(t.Context())
		res := dialAsync(ctx, b.url(), time.Hour)
		select {
		case <-b.accepted:
		case <-time.After(waitTimeout):
			t.Fatal("Dial did not connect")
		}
		cancel()
		assert.Same(t, context.Canceled, awaitDial(t, res), "sendStart %v", sendStart)
	}
}

func TestDialWithAnEndedContext(t *testing.T) {
	b := newFakeBroker(t, true, func(net.Conn) {})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	assert.Same(t, context.Canceled, awaitDial(t, dialAsync(ctx, b.url(), time.Hour)))

	ctx, cancel = context.WithTimeout(t.Context(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	assert.Equal(t, context.DeadlineExceeded, awaitDial(t, dialAsync(ctx, b.url(), time.Hour)))
}
