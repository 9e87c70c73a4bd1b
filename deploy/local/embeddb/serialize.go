package embeddb

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Wire-protocol message bounds (MongoDB's and FerretDB's maxMessageSizeBytes).
const (
	headerLen     = 16
	maxMessageLen = 48_000_000
)

// serializer is a TCP relay in front of FerretDB that lets one write at a time reach it.
//
// FerretDB v1 runs a conditional update or findAndModify as "query, then replace by _id",
// with nothing in between that re-checks the filter, so racing guarded updates can all
// report ModifiedCount 1. MongoDB makes each single-document write atomic; running the
// writes one by one gives the embedded server the same guarantee. Reads run alongside each
// other and alongside the one write (SQLite in WAL mode lets them), each seeing a document
// before or after a write, never half of one, as on MongoDB. FerretDB answers every request
// with exactly one reply (it ignores moreToCome and has no exhaust cursors), so a command is
// one request message followed by one reply message.
type serializer struct {
	ln      net.Listener
	backend string

	cmdMu     sync.RWMutex // held while a write is at FerretDB, read-held while a read is
	profileMu sync.Mutex
	profile   io.Writer // nil when not profiling

	connsMu sync.Mutex
	conns   map[net.Conn]struct{} // nil once closed
	wg      sync.WaitGroup
}

func newSerializer(addr, backend string, profile io.Writer) (*serializer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	s := &serializer{ln: ln, backend: backend, profile: profile, conns: map[net.Conn]struct{}{}}
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
	name, coll := commandOf(req)
	if readOnly[name] || (name == "aggregate" && !writesOut(req)) {
		s.cmdMu.RLock()
		defer s.cmdMu.RUnlock()
	} else {
		s.cmdMu.Lock()
		defer s.cmdMu.Unlock()
	}
	start := time.Now()
	if _, err := backend.Write(req); err != nil {
		return nil, err
	}
	res, err := readMessage(br)
	if s.profile != nil && err == nil {
		s.profileMu.Lock()
		_, _ = fmt.Fprintf(s.profile, "%s %s %d\n", name, coll, time.Since(start).Microseconds())
		s.profileMu.Unlock()
	}
	return res, err
}

// writesOut reports whether an aggregate's pipeline may write ($out or $merge key).
func writesOut(req []byte) bool {
	return bytes.Contains(req, []byte("$out\x00")) || bytes.Contains(req, []byte("$merge\x00"))
}

// readOnly names the commands that change nothing (the suite's reads and the driver's
// handshakes); every other command, unknown ones included, runs alone.
var readOnly = map[string]bool{
	"find": true, "getMore": true, "killCursors": true, "count": true, "distinct": true,
	"ping": true, "hello": true, "isMaster": true, "ismaster": true, "buildInfo": true, "buildinfo": true,
	"listCollections": true, "listIndexes": true, "listDatabases": true, "endSessions": true,
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

// Wire-protocol opcode and section kind of a command (OP_MSG with its body document).
const (
	opMsg       = 2013
	sectionBody = 0
)

// commandOf names an OP_MSG command and the collection it addresses (the body's first
// element and its string value); "?" for what it cannot read.
func commandOf(msg []byte) (name, coll string) {
	name, coll = "?", "-"
	// header (16 bytes; opcode at 12), flag bits (4), section kind (1), body document.
	if len(msg) < headerLen+5 || binary.LittleEndian.Uint32(msg[12:16]) != opMsg || msg[headerLen+4] != sectionBody {
		return name, coll
	}
	body := msg[headerLen+5:]
	if len(body) < 4 || int(binary.LittleEndian.Uint32(body)) > len(body) {
		return name, coll
	}
	elems, err := bson.Raw(body[:binary.LittleEndian.Uint32(body)]).Elements()
	if err != nil || len(elems) == 0 {
		return name, coll
	}
	name = elems[0].Key()
	if v, ok := elems[0].Value().StringValueOK(); ok {
		coll = v
	}
	return name, coll
}
