// Package fault holds the fault injectors of the fault tests (deploy/local/fault): a
// loopback TCP proxy a test cuts and restores, and a gRPC relay that lets a test hold, fail
// or swallow the answer of single calls between two services.
package fault

import (
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// Proxy forwards TCP connections from a loopback address to an upstream address. Cut
// closes every connection and refuses new ones (the upstream is gone, as a host whose
// server stopped); Restore accepts again on the same address.
type Proxy struct {
	upstream string
	addr     string

	mu    sync.Mutex
	lis   net.Listener // nil while cut
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// NewProxy listens on a free port of 127.0.0.1 and forwards to upstream.
func NewProxy(upstream string) (*Proxy, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("proxy listen: %w", err)
	}
	p := &Proxy{upstream: upstream, addr: lis.Addr().String(), conns: map[net.Conn]struct{}{}}
	p.serve(lis)
	return p, nil
}

// Addr is the proxy's address (host:port), stable across Cut and Restore.
func (p *Proxy) Addr() string { return p.addr }

// Cut closes the listener and every open connection, both sides: clients see their
// connections reset and new ones refused until Restore.
func (p *Proxy) Cut() {
	p.mu.Lock()
	lis := p.lis
	p.lis = nil
	conns := p.conns
	p.conns = map[net.Conn]struct{}{}
	p.mu.Unlock()
	if lis != nil {
		_ = lis.Close()
	}
	for c := range conns {
		_ = c.Close()
	}
}

// Restore listens again on the same address. It retries briefly: the port was just freed.
func (p *Proxy) Restore() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lis != nil {
		return nil
	}
	var err error
	for range 50 {
		var lis net.Listener
		if lis, err = net.Listen("tcp", p.addr); err == nil {
			p.serveLocked(lis)
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("proxy restore %s: %w", p.addr, err)
}

// Close cuts the proxy for good and waits for its goroutines.
func (p *Proxy) Close() {
	p.Cut()
	p.wg.Wait()
}

func (p *Proxy) serve(lis net.Listener) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.serveLocked(lis)
}

func (p *Proxy) serveLocked(lis net.Listener) {
	p.lis = lis
	p.wg.Go(func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			p.wg.Go(func() { p.relay(lis, c) })
		}
	})
}

// relay pipes one client connection to a new upstream connection until either side ends
// or the proxy is cut.
func (p *Proxy) relay(lis net.Listener, client net.Conn) {
	up, err := net.DialTimeout("tcp", p.upstream, 2*time.Second)
	if err != nil {
		_ = client.Close()
		return
	}
	if !p.track(lis, client, up) {
		_ = client.Close()
		_ = up.Close()
		return
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		// Half-close is not worth the states it adds here: either direction ending ends both.
		_ = dst.Close()
		_ = src.Close()
		done <- struct{}{}
	}
	go pipe(up, client)
	go pipe(client, up)
	<-done
	<-done
	p.untrack(client, up)
}

// track registers the pair unless the listener that accepted client was cut meanwhile.
func (p *Proxy) track(lis net.Listener, conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lis != lis {
		return false
	}
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *Proxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		delete(p.conns, c)
	}
}
