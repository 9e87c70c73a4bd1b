package app_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/zcustody/suite/gateway/app"
)

// TestSlowClientsAreCutOff: a client that trickles its headers, or its body, loses the
// connection once the read timeouts pass, instead of holding it open.
func TestSlowClientsAreCutOff(t *testing.T) {
	t.Parallel()
	cfg := app.Config{ReadHeaderTimeout: 200 * time.Millisecond, ReadTimeout: 400 * time.Millisecond, RequestTimeout: time.Second}
	srv := app.HTTPServer(cfg, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(func() { _ = srv.Close() })
	for name, start := range map[string]string{
		"slow headers": "POST /v3/api/trading/wallets HTTP/1.1\r\nHost: gw\r\n",
		"slow body":    "POST /v3/api/trading/wallets HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
	} {
		conn, err := net.Dial("tcp", lis.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Write([]byte(start)); err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err = io.ReadAll(conn)
		var timeout net.Error
		if errors.As(err, &timeout) && timeout.Timeout() {
			t.Errorf("%s: the connection was still open after 5s", name)
		}
		if took := time.Since(began); took > 2*time.Second {
			t.Errorf("%s: cut off after %v, want about the read timeout", name, took)
		}
		conn.Close()
	}
}
