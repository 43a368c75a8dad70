// Package faultproxy is a loopback TCP proxy that integration tests put
// between one client and a shared server (the RabbitMQ test broker) to
// inject network faults into that client's connection alone.
//
// Stopping or partitioning the real broker would break every other test
// that uses it at the same time; pointing a single client at a Proxy and
// switching the proxy between states gives the same symptoms — refused
// dials, reset connections, a silent peer — to that client only.
package faultproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// Re-listening on a port just released can fail for a moment; these bound
// how long Accept keeps trying before it gives up.
const (
	listenAttempts = 20
	listenBackoff  = 25 * time.Millisecond
)

// Stats counts what a Proxy has done, so a test can check that its fault
// really hit a connection rather than trusting timing.
type Stats struct {
	// Accepted is the number of client connections accepted in total.
	Accepted int64
	// Active is the number of proxied connections open now.
	Active int
	// Cut is the number of connections closed by Cut, Refuse or Close, as
	// opposed to ones either peer closed itself.
	Cut int64
	// Held is the number of copy loops that hold bytes at a frozen proxy:
	// read from one side, not written to the other until Thaw.
	Held int
}

// Proxy forwards connections from a fixed loopback address to a target.
// Its methods are safe for concurrent use.
type Proxy struct {
	target string
	addr   string
	ctx    context.Context // cancelled by Close, to abort dials to the target
	cancel context.CancelFunc
	wg     sync.WaitGroup // every goroutine the proxy starts

	mu sync.Mutex
	// cond is broadcast on every change a waiter may care about: a frozen
	// copy loop waits for Thaw or its link to close, WaitActive,
	// WaitAccepted and WaitHeld wait for the counters.
	cond     *sync.Cond
	ln       net.Listener // nil while refusing
	links    map[*link]struct{}
	frozen   bool
	closed   bool
	accepted int64
	cut      int64
	held     int // copy loops waiting at the gate with bytes in hand
}

// link is one proxied connection: the client's side and the target's side.
type link struct {
	client   net.Conn
	upstream net.Conn // nil until the dial to the target succeeds
	closed   bool
}

// New starts a proxy listening on 127.0.0.1 on a free port, forwarding
// every accepted connection to target (host:port). Nothing is dialled until
// a client connects, so target need not be up yet.
func New(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faultproxy: listen: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{
		target: target,
		addr:   ln.Addr().String(),
		ctx:    ctx,
		cancel: cancel,
		ln:     ln,
		links:  make(map[*link]struct{}),
	}
	p.cond = sync.NewCond(&p.mu)
	p.wg.Go(func() { p.serve(ln) })
	return p, nil
}

// Addr returns the address clients dial. It stays the same for the proxy's
// whole life, so a client configured once reconnects to it after Refuse and
// Accept just as it would to a restarted broker.
func (p *Proxy) Addr() string { return p.addr }

// Refuse makes the proxy look like a broker that is down: it stops
// listening, so new dials get "connection refused", and resets every open
// connection. The port is not given up for good; Accept takes it back.
func (p *Proxy) Refuse() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return net.ErrClosed
	}
	var err error
	if p.ln != nil {
		err = p.ln.Close()
		p.ln = nil
	}
	p.cutLocked()
	return err
}

// Accept makes the broker "up" again after Refuse: it listens on the same
// port and forwards new connections. It does nothing if the proxy is
// already accepting.
func (p *Proxy) Accept() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return net.ErrClosed
	}
	if p.ln != nil {
		return nil
	}
	var err error
	for range listenAttempts {
		var ln net.Listener
		if ln, err = net.Listen("tcp", p.addr); err == nil {
			p.ln = ln
			p.wg.Go(func() { p.serve(ln) })
			return nil
		}
		time.Sleep(listenBackoff)
	}
	return fmt.Errorf("faultproxy: listen again on %s: %w", p.addr, err)
}

// Cut resets every open connection, as a dropped network path or a killed
// broker connection would, while new connections are still accepted.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutLocked()
}

// Freeze stops forwarding in both directions while leaving connections
// open: a partition or a silent peer, which only heartbeats or timeouts can
// detect. Bytes already read are held, not dropped, and connections
// accepted meanwhile are frozen too.
func (p *Proxy) Freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.frozen = true
}

// Thaw resumes forwarding after Freeze, delivering the held bytes in order.
func (p *Proxy) Thaw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.frozen = false
	p.cond.Broadcast()
}

// Stats returns a snapshot of the proxy's counters.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Stats{Accepted: p.accepted, Active: len(p.links), Cut: p.cut, Held: p.held}
}

// WaitHeld blocks until exactly n copy loops hold bytes at the frozen
// proxy's gate or ctx ends: from then on those bytes have certainly reached
// the proxy and not crossed it, which no wait on the far side can tell.
func (p *Proxy) WaitHeld(ctx context.Context, n int) error {
	return p.wait(ctx, func() bool { return p.held == n })
}

// WaitActive blocks until exactly n proxied connections are open or ctx
// ends, so a test can wait for a client to (re)connect or give up without
// sleeping.
func (p *Proxy) WaitActive(ctx context.Context, n int) error {
	return p.wait(ctx, func() bool { return len(p.links) == n })
}

// WaitAccepted blocks until at least n connections have been accepted in
// total or ctx ends. Unlike WaitActive it cannot miss a connection that
// opened and closed again before the test looked.
func (p *Proxy) WaitAccepted(ctx context.Context, n int64) error {
	return p.wait(ctx, func() bool { return p.accepted >= n })
}

// Close stops listening, resets every connection and returns once every
// goroutine the proxy started has exited, so tests can check for leaks.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	var err error
	if p.ln != nil {
		err = p.ln.Close()
		p.ln = nil
	}
	p.cutLocked()
	p.mu.Unlock()
	p.cancel()
	p.wg.Wait()
	return err
}

// wait blocks until done, called with p.mu held, reports true or ctx ends.
func (p *Proxy) wait(ctx context.Context, done func() bool) error {
	// The broadcast takes p.mu, so it cannot slip in between our ctx check
	// and cond.Wait and be lost.
	woken := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(woken)
		p.mu.Lock()
		defer p.mu.Unlock()
		p.cond.Broadcast()
	})
	// If the wake-up has already started, wait for it: no goroutine of the
	// proxy may outlive the call that made it (Close promises as much).
	defer func() {
		if !stop() {
			<-woken
		}
	}()
	p.mu.Lock()
	defer p.mu.Unlock()
	for !done() {
		if err := ctx.Err(); err != nil {
			return err
		}
		p.cond.Wait()
	}
	return nil
}

// serve accepts connections on ln until Refuse or Close closes it.
func (p *Proxy) serve(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.ln != ln { // refused or closed while this one was being accepted
			p.mu.Unlock()
			abort(c)
			continue
		}
		l := &link{client: c}
		p.links[l] = struct{}{}
		p.accepted++
		p.cond.Broadcast()
		p.wg.Go(func() { p.handle(l) })
		p.mu.Unlock()
	}
}

// handle dials the target for l and forwards both ways until either side
// ends. The link is registered before the dial so Cut and Close reach it.
func (p *Proxy) handle(l *link) {
	var d net.Dialer
	up, err := d.DialContext(p.ctx, "tcp", p.target)
	p.mu.Lock()
	if err != nil || l.closed {
		p.dropLocked(l, false)
		p.mu.Unlock()
		if up != nil {
			abort(up)
		}
		return
	}
	l.upstream = up
	p.mu.Unlock()
	p.wg.Go(func() { p.pipe(l, up, l.client) })
	p.pipe(l, l.client, up)
}

// pipe copies src to dst, passing every chunk through the freeze gate, and
// closes the whole link when either side fails, since a half-dead
// connection is not a fault an AMQP client is expected to see.
func (p *Proxy) pipe(l *link, dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.gate(l) {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				err = werr
			}
		}
		if err != nil {
			p.mu.Lock()
			p.dropLocked(l, !errors.Is(err, io.EOF))
			p.mu.Unlock()
			return
		}
	}
}

// gate waits while the proxy is frozen, counted in held, and reports
// whether l is still open. The caller holds bytes it has read.
func (p *Proxy) gate(l *link) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.frozen && !l.closed {
		p.held++
		p.cond.Broadcast() // WaitHeld
		for p.frozen && !l.closed {
			p.cond.Wait()
		}
		p.held--
		p.cond.Broadcast()
	}
	return !l.closed
}

// cutLocked resets every open link and counts it as cut.
func (p *Proxy) cutLocked() {
	for l := range p.links {
		p.dropLocked(l, true)
		p.cut++
	}
}

// dropLocked closes both sides of l, once. With reset the peers see a
// connection reset, which is what a crashed broker or broken path produces.
func (p *Proxy) dropLocked(l *link, reset bool) {
	if l.closed {
		return
	}
	l.closed = true
	delete(p.links, l)
	for _, c := range []net.Conn{l.client, l.upstream} {
		switch {
		case c == nil:
		case reset:
			abort(c)
		default:
			c.Close()
		}
	}
	p.cond.Broadcast() // wakes gates blocked on l and WaitActive
}

// abort closes c with SO_LINGER 0 so the peer gets a RST instead of a FIN.
func abort(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	c.Close()
}
