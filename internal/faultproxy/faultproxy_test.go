package faultproxy_test

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/internal/faultproxy"
)

// waitTimeout bounds every wait for something that should happen at once on
// loopback; hitting it means the test failed, not that the machine is slow:
// it is generous enough that a slow, busy machine never reaches it.
const waitTimeout = time.Minute

// startEcho starts a server on 127.0.0.1:0 that echoes every connection
// back to itself, and returns its address. Cleanup stops it and waits for
// its goroutines.
func startEcho(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			})
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// newProxy starts a proxy to target that is closed when the test ends.
func newProxy(t *testing.T, target string) *faultproxy.Proxy {
	t.Helper()
	p, err := faultproxy.New(target)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, p.Close()) })
	return p
}

// dial connects to the proxy; the connection is closed when the test ends.
func dial(t *testing.T, p *faultproxy.Proxy) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// roundTrip sends msg through c and requires it echoed back unchanged.
func roundTrip(t *testing.T, c net.Conn, msg string) {
	t.Helper()
	require.NoError(t, c.SetDeadline(time.Now().Add(waitTimeout)))
	_, err := io.WriteString(c, msg)
	require.NoError(t, err)
	got := make([]byte, len(msg))
	_, err = io.ReadFull(c, got)
	require.NoError(t, err)
	require.Equal(t, msg, string(got))
}

// requireClosed requires that the peer of c has closed or reset it.
func requireClosed(t *testing.T, c net.Conn) error {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(waitTimeout)))
	_, err := c.Read(make([]byte, 1))
	require.Error(t, err)
	require.False(t, errors.Is(err, os.ErrDeadlineExceeded), "connection still open: %v", err)
	return err
}

func waitCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	t.Cleanup(cancel)
	return ctx
}

func TestForwardRoundTrip(t *testing.T) {
	p := newProxy(t, startEcho(t))
	require.True(t, strings.HasPrefix(p.Addr(), "127.0.0.1:"), p.Addr())

	c := dial(t, p)
	roundTrip(t, c, "hello")
	roundTrip(t, c, strings.Repeat("x", 200<<10)) // bigger than one copy chunk

	assert.Equal(t, faultproxy.Stats{Accepted: 1, Active: 1}, p.Stats())
}

func TestRefuseAndAccept(t *testing.T) {
	p := newProxy(t, startEcho(t))
	addr := p.Addr()
	c := dial(t, p)
	roundTrip(t, c, "before")

	require.NoError(t, p.Refuse())
	requireClosed(t, c)
	_, err := net.Dial("tcp", addr)
	require.ErrorIs(t, err, syscall.ECONNREFUSED)
	assert.Equal(t, faultproxy.Stats{Accepted: 1, Active: 0, Cut: 1}, p.Stats())
	require.NoError(t, p.Refuse(), "refusing twice")

	require.NoError(t, p.Accept())
	require.NoError(t, p.Accept(), "accepting twice")
	require.Equal(t, addr, p.Addr())
	roundTrip(t, dial(t, p), "after")
	assert.Equal(t, int64(2), p.Stats().Accepted)
}

func TestCut(t *testing.T) {
	p := newProxy(t, startEcho(t))
	c1 := dial(t, p)
	c2 := dial(t, p)
	roundTrip(t, c1, "one")
	roundTrip(t, c2, "two")

	p.Cut()
	err := requireClosed(t, c1)
	assert.ErrorIs(t, err, syscall.ECONNRESET, "Cut should reset, not close cleanly")
	requireClosed(t, c2)
	assert.Equal(t, faultproxy.Stats{Accepted: 2, Active: 0, Cut: 2}, p.Stats())

	roundTrip(t, dial(t, p), "three")
	assert.Equal(t, faultproxy.Stats{Accepted: 3, Active: 1, Cut: 2}, p.Stats())
}

func TestFreezeHoldsBytesUntilThaw(t *testing.T) {
	p := newProxy(t, startEcho(t))
	c := dial(t, p)
	roundTrip(t, c, "warm") // both copy loops are running before the freeze

	p.Freeze()
	_, err := io.WriteString(c, "hello ")
	require.NoError(t, err)
	_, err = io.WriteString(c, "world")
	require.NoError(t, err)
	late := dial(t, p) // accepted while frozen, so frozen too
	_, err = io.WriteString(late, "late")
	require.NoError(t, err)

	// Both clients' bytes have reached the proxy and wait at its gate: they have
	// not crossed it, so the echo server has nothing to send back either. (An
	// absence watched for a while would prove less, and depend on the while.)
	require.NoError(t, p.WaitHeld(waitCtx(t), 2))
	require.NoError(t, p.WaitActive(waitCtx(t), 2))
	assert.Equal(t, faultproxy.Stats{Accepted: 2, Active: 2, Held: 2}, p.Stats())

	p.Thaw()
	for conn, want := range map[net.Conn]string{c: "hello world", late: "late"} {
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(waitTimeout)))
		got := make([]byte, len(want))
		_, err = io.ReadFull(conn, got)
		require.NoError(t, err)
		assert.Equal(t, want, string(got))
	}
	roundTrip(t, c, "again")
	assert.Zero(t, p.Stats().Held)
}

func TestCutWhileFrozen(t *testing.T) {
	p := newProxy(t, startEcho(t))
	c := dial(t, p)
	roundTrip(t, c, "warm")

	p.Freeze()
	_, err := io.WriteString(c, "held")
	require.NoError(t, err)
	require.NoError(t, p.WaitHeld(waitCtx(t), 1))
	p.Cut() // must release the copy loop waiting at the gate
	requireClosed(t, c)
	require.NoError(t, p.WaitActive(waitCtx(t), 0))
	require.NoError(t, p.WaitHeld(waitCtx(t), 0))
}

func TestWaitActiveAndAccepted(t *testing.T) {
	p := newProxy(t, startEcho(t))
	ctx := waitCtx(t)

	accepted := make(chan error, 1)
	go func() { accepted <- p.WaitAccepted(ctx, 2) }()
	c1 := dial(t, p)
	c2 := dial(t, p)
	require.NoError(t, <-accepted)
	require.NoError(t, p.WaitActive(ctx, 2))

	c1.Close()
	c2.Close()
	require.NoError(t, p.WaitActive(ctx, 0), "proxy should notice clients hanging up")
	require.NoError(t, p.WaitAccepted(ctx, 2), "Accepted never goes down")

	// Five connections never come: only the end of its context ends the wait.
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, p.WaitActive(short, 5), context.DeadlineExceeded)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, p.WaitAccepted(cancelled, 10), context.Canceled)
}

func TestTargetDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	target := ln.Addr().String()
	require.NoError(t, ln.Close())

	p := newProxy(t, target)
	requireClosed(t, dial(t, p))
	require.NoError(t, p.WaitActive(waitCtx(t), 0))
	assert.Equal(t, faultproxy.Stats{Accepted: 1}, p.Stats())
}

func TestCloseStopsEverything(t *testing.T) {
	p, err := faultproxy.New(startEcho(t))
	require.NoError(t, err)
	c1 := dial(t, p)
	roundTrip(t, c1, "one")
	p.Freeze()
	c2 := dial(t, p)
	_, err = io.WriteString(c2, "held")
	require.NoError(t, err)
	require.NoError(t, p.WaitHeld(waitCtx(t), 1)) // a copy loop is parked at the gate
	require.NoError(t, p.WaitActive(waitCtx(t), 2))

	require.NoError(t, p.Close())
	// Close has returned, so none of the proxy's goroutines may remain, but for the
	// instant one that has called its WaitGroup's Done takes to leave its last frame.
	buf := make([]byte, 1<<20)
	ctx := waitCtx(t)
	for stacks := ""; ; {
		stacks = string(buf[:runtime.Stack(buf, true)])
		if !strings.Contains(stacks, "internal/faultproxy.(*Proxy)") {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("Close has returned, yet a goroutine of the proxy remains:\n%s", stacks)
		case <-time.After(5 * time.Millisecond):
		}
	}

	requireClosed(t, c1)
	requireClosed(t, c2)
	assert.Equal(t, faultproxy.Stats{Accepted: 2, Active: 0, Cut: 2}, p.Stats())
	_, err = net.Dial("tcp", p.Addr())
	require.ErrorIs(t, err, syscall.ECONNREFUSED)
	require.ErrorIs(t, p.Accept(), net.ErrClosed)
	require.ErrorIs(t, p.Refuse(), net.ErrClosed)
	require.NoError(t, p.Close(), "closing twice")
}
