package amqpconn

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// methodFrame is an AMQP 0-9-1 method frame on channel 0 with the given arguments.
func methodFrame(class, method uint16, args []byte) []byte {
	var p bytes.Buffer
	_ = binary.Write(&p, binary.BigEndian, class)
	_ = binary.Write(&p, binary.BigEndian, method)
	p.Write(args)
	var f bytes.Buffer
	f.WriteByte(1)
	_ = binary.Write(&f, binary.BigEndian, uint16(0))
	_ = binary.Write(&f, binary.BigEndian, uint32(p.Len()))
	f.Write(p.Bytes())
	f.WriteByte(0xCE)
	return f.Bytes()
}

// readFrame reads one whole frame and returns its class and method (0, 0 for a frame
// that is not a method).
func readFrame(c net.Conn) (class, method uint16, err error) {
	h := make([]byte, 7)
	if _, err = io.ReadFull(c, h); err != nil {
		return 0, 0, err
	}
	body := make([]byte, binary.BigEndian.Uint32(h[3:])+1)
	if _, err = io.ReadFull(c, body); err != nil {
		return 0, 0, err
	}
	if h[0] == 1 && len(body) >= 5 {
		return binary.BigEndian.Uint16(body), binary.BigEndian.Uint16(body[2:]), nil
	}
	return 0, 0, nil
}

// A broker that stops answering but whose heartbeats keep coming (a half-broken
// network, or a broker too busy to do more) never answers the graceful close, and each
// of its heartbeats makes amqp091-go push the socket's read deadline three heartbeats
// away: a close bounded by that deadline alone lasts until amqp091-go's own next
// heartbeat fails on the close's write deadline, half a heartbeat interval away (a
// stress run: a subscription's Close waited out its 30 s). CloseGracefully closes the
// socket once its timeout is up whatever the deadlines.
//
// The broker tunes a heartbeat of a minute, so that amqp091-go's own next heartbeat is
// 30 s away: a close that waits for it is caught by a bound of a second, far below
// those 30 s and far above the timeout of 100 ms.
func TestCloseGracefullyEndsWhileHeartbeatsKeepComing(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	b := newFakeBroker(t, true, func(c net.Conn) {
		tune := make([]byte, 8)
		binary.BigEndian.PutUint16(tune[0:], 0)                       // channel max
		binary.BigEndian.PutUint32(tune[2:], 131072)                  // frame max
		binary.BigEndian.PutUint16(tune[6:], 60)                      // heartbeat, seconds
		if _, err := c.Write(methodFrame(10, 30, tune)); err != nil { // connection.tune
			return
		}
		for {
			class, method, err := readFrame(c)
			if err != nil {
				return
			}
			if class == 10 && method == 40 { // connection.open
				break
			}
		}
		if _, err := c.Write(methodFrame(10, 41, []byte{0})); err != nil { // connection.open-ok
			return
		}
		go func() { // read and ignore everything, the close included
			for {
				if _, _, err := readFrame(c); err != nil {
					return
				}
			}
		}()
		heartbeat := []byte{8, 0, 0, 0, 0, 0, 0, 0xCE}
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := c.Write(heartbeat); err != nil {
					return
				}
			}
		}
	})
	d, err := Dial(context.Background(), b.url(), amqp.Config{Heartbeat: time.Minute}, waitTimeout)
	require.NoError(t, err)
	require.NoError(t, d.Release(time.Second))
	require.Equal(t, time.Minute, d.Conn.Config.Heartbeat, "amqp091-go's own heartbeat is 30 s away")

	const timeout = 100 * time.Millisecond
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- CloseGracefully(d.Conn, d.Sock, timeout) }()
	bound := time.NewTimer(time.Second)
	defer bound.Stop()
	select {
	case <-done:
	case <-bound.C:
		t.Fatal("the close did not end within a second while the broker's heartbeats kept coming")
	}
	took := time.Since(start)
	assert.GreaterOrEqual(t, took, timeout, "the broker never answers the close: the timeout ended it")
	assert.Less(t, took, time.Second)
	require.True(t, d.Conn.IsClosed())
}
