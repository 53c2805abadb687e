package stalltest

import (
	"errors"
	"io"
	"net"
	"sync"
	"testing"
)

// Proxy forwards TCP connections to a server, and stalls them on demand
// as a hung server does: while paused, it accepts connections and reads
// what clients send, but forwards nothing either way, so every call
// through it waits with its connection open until Resume (or until its
// client gives up). A server's own processes keep running (a Postgres
// backend per connection): pausing the proxy stalls every connection,
// which a SIGSTOP of the postmaster alone would not.
type Proxy struct {
	l      net.Listener
	target string
	mu     sync.Mutex
	open   chan struct{} // closed while not paused
	conns  map[net.Conn]bool
	wg     sync.WaitGroup
}

// NewProxy listens on a loopback port and forwards to target (host:port)
// until t ends.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{l: l, target: target, open: make(chan struct{}), conns: map[net.Conn]bool{}}
	close(p.open)
	p.wg.Go(p.accept)
	t.Cleanup(p.close)
	return p
}

// Addr is the proxy's address (host:port).
func (p *Proxy) Addr() string { return p.l.Addr().String() }

// Pause stalls every connection, open or new.
func (p *Proxy) Pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.open:
		p.open = make(chan struct{})
	default: // paused already
	}
}

// Resume forwards again what was held, and what comes.
func (p *Proxy) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.open:
	default:
		close(p.open)
	}
}

// wait returns once the proxy is not paused.
func (p *Proxy) wait() {
	p.mu.Lock()
	open := p.open
	p.mu.Unlock()
	<-open
}

func (p *Proxy) accept() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.wg.Go(func() { p.serve(c) })
	}
}

// serve forwards c to the target and back.
func (p *Proxy) serve(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	if !p.track(c, up) {
		return
	}
	defer p.untrack(c, up)
	var wg sync.WaitGroup
	wg.Go(func() { p.pipe(up, c) })
	p.pipe(c, up)
	wg.Wait()
}

// pipe copies src to dst, holding each read while paused, and closes dst
// once src ends.
func (p *Proxy) pipe(dst, src net.Conn) {
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.wait()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				src.Close()
			}
			return
		}
	}
}

// track records a connection pair, or closes it if the proxy is closed.
func (p *Proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil {
		for _, c := range cs {
			c.Close()
		}
		return false
	}
	for _, c := range cs {
		p.conns[c] = true
	}
	return true
}

func (p *Proxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.conns, c)
	}
}

// close stops the proxy: no new connection, every one closed, held bytes
// dropped.
func (p *Proxy) close() {
	p.l.Close()
	p.mu.Lock()
	for c := range p.conns {
		c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
	p.Resume()
	p.wg.Wait()
}
