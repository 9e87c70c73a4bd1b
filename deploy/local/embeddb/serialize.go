package embeddb

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
)

// Wire-protocol message bounds (MongoDB's and FerretDB's maxMessageSizeBytes).
const (
	headerLen     = 16
	maxMessageLen = 48_000_000
)

// serializer is a TCP relay in front of FerretDB that lets one command at a time reach it.
//
// FerretDB v1 runs a conditional update or findAndModify as "query, then replace by _id",
// with nothing in between that re-checks the filter, so racing guarded updates can all
// report ModifiedCount 1. MongoDB makes each single-document write atomic; running the
// commands one by one gives the embedded server the same guarantee. FerretDB answers
// every request with exactly one reply (it ignores moreToCome and has no exhaust cursors),
// so a command is one request message followed by one reply message.
type serializer struct {
	ln      net.Listener
	backend string

	cmdMu sync.Mutex // held while a command is at FerretDB

	connsMu sync.Mutex
	conns   map[net.Conn]struct{} // nil once closed
	wg      sync.WaitGroup
}

func newSerializer(addr, backend string) (*serializer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	s := &serializer{ln: ln, backend: backend, conns: map[net.Conn]struct{}{}}
	s.wg.Go(s.accept)
	return s, nil
}

func (s *serializer) addr() string { return s.ln.Addr().String() }

// close stops accepting, drops every relayed connection and waits for the relays.
func (s *serializer) close() {
	_ = s.ln.Close()
	s.connsMu.Lock()
	for c := range s.conns {
		_ = c.Close()
	}
	s.conns = nil
	s.connsMu.Unlock()
	s.wg.Wait()
}

func (s *serializer) accept() {
	for {
		client, err := s.ln.Accept()
		if err != nil {
			return // closed
		}
		s.wg.Go(func() { s.relay(client) })
	}
}

// track registers c for close; it reports false (and closes c) once the serializer is closed.
func (s *serializer) track(c net.Conn) bool {
	s.connsMu.Lock()
	defer s.connsMu.Unlock()
	if s.conns == nil {
		_ = c.Close()
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *serializer) untrack(c net.Conn) {
	_ = c.Close()
	s.connsMu.Lock()
	delete(s.conns, c)
	s.connsMu.Unlock()
}

func (s *serializer) relay(client net.Conn) {
	if !s.track(client) {
		return
	}
	defer s.untrack(client)
	backend, err := net.Dial("tcp", s.backend)
	if err != nil || !s.track(backend) {
		return
	}
	defer s.untrack(backend)
	cr, br := bufio.NewReader(client), bufio.NewReader(backend)
	for {
		req, err := readMessage(cr)
		if err != nil {
			return
		}
		res, err := s.roundTrip(backend, br, req)
		if err != nil {
			return
		}
		if _, err := client.Write(res); err != nil {
			return
		}
	}
}

func (s *serializer) roundTrip(backend io.Writer, br *bufio.Reader, req []byte) ([]byte, error) {
	s.cmdMu.Lock()
	defer s.cmdMu.Unlock()
	if _, err := backend.Write(req); err != nil {
		return nil, err
	}
	return readMessage(br)
}

// readMessage reads one length-prefixed wire-protocol message.
func readMessage(r io.Reader) ([]byte, error) {
	var prefix [4]byte
	if _, err := io.ReadFull(r, prefix[:]); err != nil {
		return nil, err
	}
	n := binary.LittleEndian.Uint32(prefix[:])
	if n < headerLen || n > maxMessageLen {
		return nil, errors.New("bad wire message length")
	}
	msg := make([]byte, n)
	copy(msg, prefix[:])
	if _, err := io.ReadFull(r, msg[4:]); err != nil {
		return nil, err
	}
	return msg, nil
}
