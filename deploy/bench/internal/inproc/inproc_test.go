package inproc_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/zcustody/suite/deploy/bench/internal/data"
	"github.com/zcustody/suite/deploy/bench/internal/inproc"
)

// Profile the gateway's hot paths with
//
//	go test -run '^$' -bench Read -cpuprofile cpu.out ./deploy/bench/internal/inproc

func start(tb testing.TB) *inproc.Harness {
	tb.Helper()
	h, err := inproc.Start(context.Background(), tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := h.Close(); err != nil {
			tb.Error(err)
		}
	})
	return h
}

func TestGatewayAnswersThroughStubs(t *testing.T) {
	h := start(t)
	tests := []struct {
		name, user, path string
		body             []byte
	}{
		{"read", data.Viewer, inproc.ReadPath, []byte(inproc.ReadBody)},
		{"write", data.Maker, inproc.WritePath, inproc.WriteBody()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := h.Client(tt.user)
			if err != nil {
				t.Fatal(err)
			}
			status, body, err := c.Do(http.MethodPost, tt.path, tt.body)
			if err != nil {
				t.Fatal(err)
			}
			if status != http.StatusOK {
				t.Fatalf("POST %s = %d %s, want 200", tt.path, status, body)
			}
		})
	}
}

func BenchmarkGatewayRead(b *testing.B) {
	h := start(b)
	h.Gateway(data.Viewer, inproc.ReadPath, func() []byte { return []byte(inproc.ReadBody) })(b)
}

func BenchmarkDirectRead(b *testing.B) {
	h := start(b)
	h.Direct(data.Viewer, h.DirectRead)(b)
}

func BenchmarkGatewayWrite(b *testing.B) {
	h := start(b)
	h.Gateway(data.Maker, inproc.WritePath, inproc.WriteBody)(b)
}

func BenchmarkDirectWrite(b *testing.B) {
	h := start(b)
	call, err := h.DirectWrite()
	if err != nil {
		b.Fatal(err)
	}
	h.Direct(data.Maker, call)(b)
}
